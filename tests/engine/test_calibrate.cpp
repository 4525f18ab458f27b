#include "engine/calibrate.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <set>

#include "agents/agent.hpp"
#include "agents/bundle_tools.hpp"
#include "agents/decorators.hpp"
#include "agents/reference_agents.hpp"
#include "agents/sim_profile_file.hpp"
#include "datasets/questions.hpp"
#include "core/error.hpp"
#include "engine/runner.hpp"
#include "engine/spec.hpp"
#include "reports/record.hpp"
#include "retrieval/tokens.hpp"
#include "tests/engine/run_fixture.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::engine {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;

fs::path demo() { return test::source_dir() / "datasets/bundles/demo"; }

std::vector<std::string> demo_questions() {
  std::vector<std::string> out;
  const auto set = datasets::load_questions(test::source_dir() / "datasets/experiments/questions/demo.yaml");
  for (const auto& q : set.questions) out.push_back(q.text);
  return out;
}

// Lends a model to a RecordingModel, which owns what it wraps.
class Borrowed : public agents::ChatModel {
 public:
  explicit Borrowed(agents::ChatModel& model) : model_(model) {}
  agents::ChatResponse chat(const agents::ChatRequest& r) override { return model_.chat(r); }
  std::string name() const override { return model_.name(); }

 private:
  agents::ChatModel& model_;
};

// Records `model` answering every demo question, one cassette per question.
fs::path record(agents::ChatModel& model, const std::string& name) {
  const fs::path dir = test::fresh_dir("calibrate-" + name);
  retrieval::Bundle bundle = retrieval::Bundle::load(demo());
  agents::ToolsOptions options;
  options.include = {"browse", "search", "open", "follow"};
  agents::BundleTools tools(bundle, options);
  const auto questions = demo_questions();
  for (std::size_t i = 0; i < questions.size(); ++i) {
    agents::RecordingModel recorder(std::make_unique<Borrowed>(model), dir / fmt::format("q{:02}.jsonl", i), {});
    agents::run_agent(recorder, tools, questions[i]);
  }
  return dir;
}

TEST(Calibrate, ObservesACallsBehaviourFromItsMessages) {
  using agents::Message;
  using agents::Role;
  const std::vector<agents::ToolSpec> tools = {{"search", "", "{}"}, {"open", "", "{}"}, {"follow", "", "{}"}};
  const std::vector<Message> after = {
      {Role::assistant, "", {{"1", "search", R"({"query":"slow cypher query","k":8})"}}, {}, {}},
      {Role::tool, "[]", {}, "1", {}},
      {Role::assistant, "", {{"2", "open", R"({"concept_id":"a"})"}, {"3", "open", R"({"concept_id":"b"})"}}, {}, {}},
      {Role::assistant, "", {{"4", "search", R"({"query":"cypher index rebuild","k":8})"}}, {}, {}},
      {Role::assistant, "", {{"5", "open", R"({"concept_id":"c"})"}}, {}, {}},
      {Role::assistant, "", {{"6", "open", R"({"concept_id":"d"})"}}, {}, {}},
      {Role::assistant, "", {{"7", "follow", R"({"concept_id":"c"})"}, {"8", "open", R"({"concept_id" : "a"})"}}, {}, {}},
      {Role::assistant, "", {{"9", "open", R"({"concept_id":"e"})"}}, {}, {}},
      {Role::assistant, "four words of answer", {}, {}, {}}};
  auto bytes = retrieval::make_counter("o200k_base");
  const Observed o = observe("Why is my Cypher query slow?", tools, after, *bytes);
  EXPECT_EQ(o.searches, 2);
  EXPECT_EQ(o.opens_per_search, (std::vector<int>{2, 2}));  // the open after the follow is the follow's
  EXPECT_EQ(o.multi_open_searches, 2);
  EXPECT_EQ(o.parallel_searches, 1);
  EXPECT_EQ(o.dropped, (std::vector<int>{2}));  // "query", "slow"
  EXPECT_EQ(o.added, (std::vector<int>{2}));    // "index", "rebuild"
  EXPECT_TRUE(o.followed);
  EXPECT_EQ(o.follows, 1);
  EXPECT_EQ(o.repeats, 0);
  EXPECT_EQ(o.rereads, 1);  // open a again, whatever the spacing of its JSON
  EXPECT_EQ(o.neighbour_opens, 1);  // e
  EXPECT_FALSE(o.followed_covered);  // no open result holds the question's terms
  EXPECT_EQ(o.tool_turns, 7);
  EXPECT_EQ(o.search_k, (std::vector<int>{8, 8}));
  EXPECT_EQ(o.answer_tokens, 4);
}

TEST(Calibrate, RecoversTheOverheadsAndTheBehaviourOfAProfiledSim) {
  auto counter = retrieval::make_counter("o200k_base");
  const agents::SimOptions truth = agents::parse_sim_profile(
      "searches: 2\nadd_terms: 1\nopens_per_search: {1: 1, 2: 1}\nparallel_opens: 1\nfollow_rate: 0\n"
      "seed_variation: false\nanswer_tokens: 120\n"
      "overheads: {per_message: 5, per_tool_call: 4, reply_priming: 3, per_tool: 7, tools_end: 12}\n",
      "truth.yaml");
  agents::SimModel sim(truth, *counter);
  const Recordings rec = read_recordings({record(sim, "truth")});
  ASSERT_EQ(rec.conversations.size(), 12u);
  EXPECT_EQ(rec.files, 12u);
  const Fit fit = fit_profile(rec.conversations, rec.samples, *counter);
  const agents::SimProfile& p = fit.options.profile;
  EXPECT_EQ(p.searches, agents::CountDistribution::always(2));
  // Opens of one and two per search (two in one turn, so messages and tool
  // calls vary apart and both overheads are identifiable).
  ASSERT_TRUE(p.opens_per_search);
  ASSERT_EQ(p.opens_per_search->weights.size(), 2u);
  EXPECT_EQ(p.opens_per_search->weights[0].first, 1);
  EXPECT_EQ(p.opens_per_search->weights[1].first, 2);
  EXPECT_DOUBLE_EQ(p.opens_per_search->weights[0].second + p.opens_per_search->weights[1].second, 1.0);
  EXPECT_EQ(p.parallel_opens, 1.0);
  EXPECT_EQ(p.follow_rate, 0);
  EXPECT_EQ(p.overheads.per_message, 5);
  EXPECT_EQ(p.overheads.per_tool_call, 4);
  EXPECT_EQ(p.overheads.content_ratio, 1.0);
  // The same tools in every request: only their sum is identifiable, and it is exact.
  EXPECT_LT(fit.overheads.mean_abs_error_fitted, 0.001);
  EXPECT_GT(fit.overheads.mean_abs_error_default, fit.overheads.mean_abs_error_fitted);
  // Replayed with the very profile that made them, the recordings come back exactly.
  retrieval::Bundle bundle = retrieval::Bundle::load(demo());
  const std::vector<CheckRow> rows = check_profile(truth, rec.conversations, {&bundle}, {"demo"}, *counter, 0);
  ASSERT_EQ(rows.size(), 12u);
  for (const CheckRow& r : rows) {
    EXPECT_EQ(r.sim_input, r.real_input) << r.question;
    EXPECT_EQ(r.sim_calls, r.real_calls) << r.question;
    EXPECT_EQ(r.sim_output, r.real_output) << r.question;
  }
}

TEST(Calibrate, ObservesRepeatsRereadsAndWhatFollowsAFollow) {
  using agents::Message;
  using agents::Role;
  const std::vector<agents::ToolSpec> tools = {{"search", "", "{}"}, {"open", "", "{}"}, {"follow", "", "{}"}};
  const std::string search = R"({"query":"cypher query slow","k":3})";
  const std::vector<Message> after = {
      {Role::assistant, "", {{"1", "search", search}}, {}, {}},
      {Role::tool, "[]", {}, "1", {}},
      {Role::assistant, "", {{"2", "open", R"({"concept_id":"a"})"}, {"3", "open", R"({"concept_id":"b"})"}}, {}, {}},
      {Role::tool, "A Cypher QUERY is slow", {}, "2", {}},
      {Role::tool, "nothing", {}, "3", {}},
      {Role::assistant, "", {{"4", "search", search}}, {}, {}},  // again, later: a search of its own
      {Role::assistant, "", {{"5", "search", search}}, {}, {}},  // again, right after: a repeat
      {Role::assistant, "", {{"6", "follow", R"({"concept_id":"a"})"}, {"7", "follow", R"({"concept_id":"b"})"}}, {}, {}},
      {Role::assistant, "", {{"8", "open", R"({"concept_id":"c"})"}, {"9", "open", R"({"concept_id":"d"})"}}, {}, {}},
      {Role::assistant, "", {{"10", "open", R"({"concept_id":"a"})"}}, {}, {}},  // a read again
      {Role::assistant, "answer", {}, {}, {}}};
  auto counter = retrieval::make_counter("o200k_base");
  const Observed o = observe("Why is my Cypher query slow?", tools, after, *counter);
  EXPECT_EQ(o.searches, 2);
  EXPECT_EQ(o.opens_per_search, (std::vector<int>{2, 0}));
  EXPECT_EQ(o.repeats, 1);
  EXPECT_EQ(o.rereads, 1);
  EXPECT_EQ(o.follows, 2);
  EXPECT_EQ(o.neighbour_opens, 2);
  EXPECT_TRUE(o.followed_covered);  // a's body holds cypher, query and slow
}

TEST(Calibrate, RecoversFollowsRereadsAndReplaysThemExactly) {
  auto counter = retrieval::make_counter("o200k_base");
  const agents::SimOptions truth = agents::parse_sim_profile(
      "opens_per_search: 2\nfollow_when_covered: true\nfollow_concepts: 2\nneighbour_opens: 2\nrereads: 1\n"
      "seed_variation: false\n",
      "truth.yaml");
  agents::SimModel sim(truth, *counter);
  const Recordings rec = read_recordings({record(sim, "follows")});
  const Fit fit = fit_profile(rec.conversations, rec.samples, *counter);
  const agents::SimProfile& p = fit.options.profile;
  EXPECT_EQ(p.follow_concepts, agents::CountDistribution::always(2));
  EXPECT_EQ(p.rereads, agents::CountDistribution::always(1));
  EXPECT_EQ(p.repeats, agents::CountDistribution::always(0));
  EXPECT_TRUE(p.follow_when_covered);
  EXPECT_EQ(p.follow_rate, 1.0);
  EXPECT_LE(p.neighbour_opens.mean(), 2.0);
  retrieval::Bundle bundle = retrieval::Bundle::load(demo());
  const std::vector<CheckRow> rows = check_profile(truth, rec.conversations, {&bundle}, {"demo"}, *counter, 0);
  ASSERT_EQ(rows.size(), 12u);
  for (const CheckRow& r : rows) {
    EXPECT_EQ(r.sim_input, r.real_input) << r.question;
    EXPECT_EQ(r.real.follows, 2) << r.question;
    EXPECT_EQ(r.real.rereads, 1) << r.question;
  }
}

TEST(Calibrate, AFittedProfileMovesSimTowardsAReferenceAgent) {
  auto counter = retrieval::make_counter("o200k_base");
  auto scout = agents::make_reference_agent("scout", *counter);
  const Recordings rec = read_recordings({record(*scout, "scout")});
  ASSERT_EQ(rec.conversations.size(), 12u);
  Fit fit = fit_profile(rec.conversations, rec.samples, *counter);
  EXPECT_GT(fit.options.profile.searches.mean(), 1.5);
  EXPECT_EQ(fit.options.profile.follow_rate, 0);
  EXPECT_LT(fit.overheads.mean_abs_error_fitted, fit.overheads.mean_abs_error_default);
  retrieval::Bundle bundle = retrieval::Bundle::load(demo());
  std::int64_t real = 0, fitted = 0, plain = 0;
  for (const CheckRow& r : check_profile(fit.options, rec.conversations, {&bundle}, {"demo"}, *counter, 1)) {
    real += r.real_input;
    fitted += r.sim_input;
  }
  for (const CheckRow& r : check_profile(agents::SimOptions{}, rec.conversations, {&bundle}, {"demo"}, *counter, 1))
    plain += r.sim_input;
  add_check_columns(fit, check_profile(fit.options, rec.conversations, {&bundle}, {"demo"}, *counter, 1));
  ASSERT_TRUE(fit.parameters.front().check_real);
  EXPECT_DOUBLE_EQ(*fit.parameters.front().check_real, fit.parameters.front().observed);  // same set
  EXPECT_LT(std::abs(fitted - real), std::abs(plain - real)) << real << " " << fitted << " " << plain;
}

TEST(Calibrate, TheFitExpressesDiversFollowsAndReread) {
  auto counter = retrieval::make_counter("o200k_base");
  auto diver = agents::make_reference_agent("diver", *counter);
  const Recordings rec = read_recordings({record(*diver, "diver")});
  const Fit fit = fit_profile(rec.conversations, rec.samples, *counter);
  const agents::SimProfile& p = fit.options.profile;
  // diver lists the neighbours of the first two concepts it read, whatever they
  // cover, opens matching ones and reads the first concept again.
  EXPECT_EQ(p.follow_concepts, agents::CountDistribution::always(2));
  EXPECT_EQ(p.rereads, agents::CountDistribution::always(1));
  EXPECT_EQ(p.repeats, agents::CountDistribution::always(0));
  EXPECT_EQ(p.follow_rate, 1.0);
  EXPECT_EQ(p.browse_rate, 1.0);
  retrieval::Bundle bundle = retrieval::Bundle::load(demo());
  for (const CheckRow& r : check_profile(fit.options, rec.conversations, {&bundle}, {"demo"}, *counter, 1)) {
    EXPECT_EQ(r.sim.follows, 2) << r.question;
    EXPECT_EQ(r.sim.rereads, 1) << r.question;
  }
}

TEST(Calibrate, ReadsARunFolderTurnByTurnFromItsTranscripts) {
  const fs::path dir = test::fresh_dir("calibrate-run-folder");
  test::write_file(dir / "p.yaml",
                   "searches: 2\nopens_per_search: {1: 1, 2: 1}\nparallel_opens: 1\nfollow_rate: 0\nseed_variation: false\n"
                   "overheads: {per_message: 5, per_tool_call: 4}\n");
  const ExperimentSpec spec = load_spec(write_spec(dir, 40, 4), {"models=[sim:p.yaml]", "paths.agent.tools=[[search, open]]",
                                                                 "paths.agent.max_turns=20", "cache_models=[none]"});
  run_experiment(spec, quiet(dir / "out"));
  std::size_t agent_trials = 0, turns = 0;
  std::int64_t agent_input = 0;
  for (const auto& r : reports::read_run_dir(dir / "out").records) {
    turns += r.turns.size();
    if (r.config.kind != reports::PathKind::agent) continue;
    ++agent_trials;
    for (const auto& t : r.turns) agent_input += t.input_tokens.value_or(0);
  }
  const Recordings rec = read_recordings({dir / "out"});
  EXPECT_EQ(rec.files, 1u);
  ASSERT_EQ(rec.conversations.size(), agent_trials);
  EXPECT_EQ(rec.samples.size(), turns);  // the context trials' calls too
  std::int64_t rebuilt_input = 0;
  for (const Recording& r : rec.conversations) {
    EXPECT_EQ(r.after_question.back().role, agents::Role::assistant);
    EXPECT_TRUE(r.after_question.back().tool_calls.empty()) << "the answer comes last";
    for (const CallSample& c : r.calls) rebuilt_input += *c.usage.input_tokens;
  }
  EXPECT_EQ(rebuilt_input, agent_input);
  auto counter = retrieval::make_counter("o200k_base");
  const Fit fit = fit_profile(rec.conversations, rec.samples, *counter);
  EXPECT_EQ(fit.options.profile.searches, agents::CountDistribution::always(2));
  EXPECT_EQ(fit.options.profile.overheads.per_message, 5);
  EXPECT_EQ(fit.options.profile.overheads.per_tool_call, 4);
  // Rebuilt requests are the requests sim billed: the fitted overheads reproduce every call.
  EXPECT_LT(fit.overheads.mean_abs_error_fitted, 0.001);
  // Another model's run folder holds nothing of this one.
  EXPECT_TRUE(read_recordings({dir / "out"}, "openai:gpt-4o").conversations.empty());
}

TEST(Calibrate, FitsTheContextPathsAnswerLengthFromItsTrialsApartFromTheAgents) {
  const fs::path dir = test::fresh_dir("calibrate-context-answers");
  const std::string truth_yaml = "answer_tokens: 400\nanswer_tokens_spread: 0\ncontext_answer_tokens: 40\nseed_variation: false\n";
  test::write_file(dir / "p.yaml", truth_yaml);
  const ExperimentSpec spec = load_spec(write_spec(dir, 40, 6), {"models=[sim:p.yaml]", "paths.agent.tools=[[search, open]]",
                                                                 "cache_models=[none]"});
  run_experiment(spec, quiet(dir / "out"));
  std::multiset<std::string> recorded, read;  // the context trials' answers
  for (const auto& r : reports::read_run_dir(dir / "out").records)
    if (r.config.kind == reports::PathKind::context) recorded.insert(r.answer);
  const Recordings rec = read_recordings({dir / "out"});
  ASSERT_EQ(rec.context_answers.size(), 12u);  // two budgets, six questions
  auto counter = retrieval::make_counter("o200k_base");
  double sum = 0;
  for (const ContextAnswer& c : rec.context_answers) {
    read.insert(c.answer);
    EXPECT_TRUE(c.call.request.tools.empty());
    EXPECT_FALSE(c.question.empty());
    sum += static_cast<double>(counter->count(c.answer));
  }
  EXPECT_EQ(read, recorded);
  const double mean = sum / static_cast<double>(rec.context_answers.size());
  const Fit fit = fit_profile(rec.conversations, rec.samples, *counter, rec.context_answers);
  ASSERT_TRUE(fit.options.profile.context_answer);
  EXPECT_EQ(fit.options.profile.context_answer->mean, static_cast<std::size_t>(std::llround(mean)));
  EXPECT_NEAR(mean, 40.0, 20.0);                  // about the truth's target
  EXPECT_GT(fit.options.answer_tokens, 150u);      // the agent path's answers are fitted apart
  // Without context answers the profile leaves the context path at answer_tokens.
  EXPECT_FALSE(fit_profile(rec.conversations, rec.samples, *counter).options.profile.context_answer);
  // Replaying the recorded prompts with the truth gives back every recorded answer's length.
  Fit checked = fit;
  add_context_check(checked, agents::parse_sim_profile(truth_yaml, "truth.yaml"), rec.context_answers, *counter, 1);
  const ParameterFit& row = checked.parameters.back();
  EXPECT_EQ(row.name, "context answer tokens");
  EXPECT_DOUBLE_EQ(row.observed, mean);
  ASSERT_TRUE(row.check_real && row.check_sim);
  EXPECT_DOUBLE_EQ(*row.check_real, mean);
  EXPECT_DOUBLE_EQ(*row.check_sim, mean);
}

TEST(Calibrate, BadRecordingsNameTheFileAndLine) {
  const fs::path dir = test::fresh_dir("calibrate-bad");
  test::write_file(dir / "a.jsonl", "{\"hash\": \"0\", \"request\": {}, \"response\": {}}\nnot json\n");
  try {
    read_recordings({dir / "a.jsonl"});
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("a.jsonl:1"));
  }
  fs::create_directories(dir / "empty");
  try {
    read_recordings({dir / "empty"});
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("holds no .jsonl cassette"));
  }
  EXPECT_THROW(read_recordings({dir / "missing"}), InputError);
  // A line that is JSON but not an exchange names its place too.
  test::write_file(dir / "b.jsonl", "{\"hash\": \"0\", \"request\": {\"messages\": 3}, \"response\": {}}\n");
  try {
    read_recordings({dir / "b.jsonl"});
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("b.jsonl:1"));
  }
  // A run folder without its records: which model answered is unknown.
  fs::create_directories(dir / "run");
  test::write_file(dir / "run" / "transcripts.jsonl.zst", "");
  try {
    read_recordings({dir / "run"});
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("results.jsonl"));
  }
}

}  // namespace
}  // namespace okfbench::engine
