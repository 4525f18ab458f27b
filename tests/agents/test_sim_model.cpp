#include "agents/sim_model.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <map>
#include <regex>
#include <set>

#include "agents/agent.hpp"
#include "agents/context_prompt.hpp"
#include "agents/sim_answer.hpp"
#include "reports/graders.hpp"
#include "retrieval/context.hpp"
#include "retrieval/search.hpp"
#include "retrieval/tokens.hpp"
#include "tests/agents/fake_kb.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::agents {
namespace {
using nlohmann::json;

constexpr const char* kQuestion = "A Cypher query got slow after a replica change. What should I do?";

TEST(SimModel, SearchesOpensCloseHitsFollowsForUncoveredTermsAndCites) {
  ByteCounter counter;
  SimModel sim({}, counter);
  FakeKb kb(FakeKb::Style::grafito, kGrafito);
  AgentRun run = run_agent(sim, kb, kQuestion);
  std::vector<std::string> expected{
      R"(search {"k":5,"query":"A Cypher query got slow after a replica change. What should I do?"})",
      R"(open {"concept_id":"runbooks/slow"})",
      R"(open {"concept_id":"glossary/index"})",  // 8.5 >= 0.8 x 10; 4.0 is not
      R"(follow {"concept_id":"runbooks/slow","direction":"out"})",  // "replica" and "change" uncovered
      R"(open {"concept_id":"decisions/replica"})"};                 // its title matches "replica"
  EXPECT_EQ(kb.calls, expected);
  EXPECT_EQ(run.turns.size(), 5u);
  EXPECT_EQ(run.turns[1].tool_calls, 2u);  // the two opens were one parallel turn
  // Every opened concept shares terms with the question, so all three are cited; each
  // restates its statements (the search description, then the body): 286 of the
  // default target of 300 tokens (bytes here), all there is.
  EXPECT_EQ(run.answer,
            "**Slow queries** [runbooks/slow]\n- Triage\n- Cypher query slow: check the index\n\n"
            "**Index** [glossary/index]\n- B-tree\n- Cypher query slow: check the index\n\n"
            "**Replica reads** [decisions/replica]\n- Lag\n- Replica lag explained\n\n"
            "Sources: [runbooks/slow], [glossary/index], [decisions/replica]");
  EXPECT_EQ(run.answer.size(), 286u);
}

TEST(SimModel, AdaptsToHarnessxNames) {
  ByteCounter counter;
  SimModel sim({}, counter);
  FakeKb kb(FakeKb::Style::harnessx, kHarnessx);
  AgentRun run = run_agent(sim, kb, kQuestion);
  ASSERT_GE(kb.calls.size(), 4u);
  EXPECT_EQ(kb.calls[0], R"(search_concepts {"limit":5,"query":"A Cypher query got slow after a replica change. What should I do?"})");
  EXPECT_EQ(kb.calls[1], R"(read_concept {"path":"runbooks/slow"})");
  EXPECT_EQ(kb.calls[3], R"(get_neighbors {"path":"runbooks/slow"})");
  EXPECT_EQ(kb.calls[4], R"(read_concept {"path":"decisions/replica"})");
  EXPECT_NE(run.answer.find("Sources: [runbooks/slow]"), std::string::npos);
}

TEST(SimModel, WithoutSearchItBrowsesLayers) {
  ByteCounter counter;
  SimOptions options;
  options.follow_links = FollowLinks::no;
  SimModel sim(options, counter);
  FakeKb kb(FakeKb::Style::grafito, {"browse", "open"});
  AgentRun run = run_agent(sim, kb, "slow query triage");
  std::vector<std::string> expected{"browse {}", R"(browse {"layer":"decisions"})", R"(browse {"layer":"runbooks"})",
                                    R"(open {"concept_id":"decisions/slow-query"})",
                                    R"(open {"concept_id":"runbooks/slow-query"})"};
  EXPECT_EQ(kb.calls, expected);
  EXPECT_EQ(run.stop, AgentStop::answered);
}

TEST(SimModel, SavesANoteWhenAsked) {
  ByteCounter counter;
  SimOptions options;
  options.follow_links = FollowLinks::no;
  SimModel sim(options, counter);
  FakeKb kb(FakeKb::Style::grafito, kGrafito);
  run_agent(sim, kb, "Cypher slow query: save a note with the checklist");
  ASSERT_EQ(kb.calls.size(), 4u);
  json args = json::parse(kb.calls[3].substr(kb.calls[3].find(' ') + 1));
  EXPECT_EQ(kb.calls[3].substr(0, 8), "remember");
  EXPECT_EQ(args["concept_id"], "notes/cypher-slow-query-checklist");
  EXPECT_EQ(args["links"], json::array({"runbooks/slow", "glossary/index"}));
}

TEST(SimModel, NothingUsefulMeansAnAnswerThatSaysSo) {
  ByteCounter counter;
  SimModel sim({}, counter);
  FakeKb kb(FakeKb::Style::grafito, {"history"});
  AgentRun run = run_agent(sim, kb, kQuestion);
  EXPECT_TRUE(kb.calls.empty());
  EXPECT_EQ(run.answer, "I found nothing in the bundle about cypher, query, slow, replica, change, so I cannot answer this.");
}

TEST(SimModel, DeterministicAndSeedable) {
  ByteCounter counter;
  auto calls_for = [&](std::uint64_t seed) {
    SimOptions options;
    options.seed = seed;
    SimModel sim(options, counter);
    FakeKb kb(FakeKb::Style::grafito, kGrafito);
    AgentRun run = run_agent(sim, kb, kQuestion);
    return kb.calls;
  };
  EXPECT_EQ(calls_for(0), calls_for(0));
  EXPECT_EQ(calls_for(7), calls_for(7));
  bool varies = false;
  for (std::uint64_t seed = 1; seed <= 8 && !varies; ++seed) varies = calls_for(seed) != calls_for(0);
  EXPECT_TRUE(varies);
}

TEST(SimModel, UsageIsTheCountOfTheSerialisedRequest) {
  ByteCounter counter;  // 1 token per byte makes the overheads visible
  SimModel sim({}, counter);
  ChatRequest request;
  request.messages = {{Role::system, "S", {}, {}, {}}, {Role::user, "hi", {}, {}, {}}};
  request.tools = {{"search", "Find.", R"({"type":"object","properties":{"query":{"type":"string","description":"Words."}}})"}};
  ChatResponse r = sim.chat(request);
  // tool: 7 + "search:Find" (11) + 3 + 3 + "query:string:Words" (18) + 12 end = 54
  // system: 3 + "system" (6) + 1 = 10; user: 3 + "user" (4) + 2 = 9; priming 3
  EXPECT_EQ(r.usage.input_tokens, 54 + 10 + 9 + 3);
  EXPECT_EQ(r.usage.cached_input_tokens, 0);
  ASSERT_EQ(r.message.tool_calls.size(), 1u);
  EXPECT_EQ(r.usage.output_tokens, static_cast<std::int64_t>(6 + r.message.tool_calls[0].arguments.size()));
  EXPECT_EQ(r.stop, StopReason::tool_calls);
}

TEST(SimModel, OpenAICacheModelCachesTheGrowingPrefix) {
  ByteCounter counter;
  SimOptions options;
  options.cache = CacheKind::openai;
  SimModel sim(options, counter);
  FakeKb kb(FakeKb::Style::grafito, kGrafito);
  AgentOptions agent;
  agent.system_prompt = std::string(1500, 'p');  // a prefix long enough to cache
  AgentRun run = run_agent(sim, kb, kQuestion, agent);
  ASSERT_GE(run.turns.size(), 2u);
  EXPECT_EQ(run.turns[0].usage.cached_input_tokens, 0);
  EXPECT_EQ(run.turns[0].usage.cache_write_tokens, std::nullopt);
  // Turn 2 shares all of turn 1's blocks except the reply priming.
  std::int64_t shared = *run.turns[0].usage.input_tokens - 3;
  EXPECT_EQ(run.turns[1].usage.cached_input_tokens, OpenAIPrefixCache::cached_tokens(shared));
  EXPECT_GT(*run.turns[1].usage.cached_input_tokens, 1024);
}

// ---------------------------------------------------------------- answers from what was read

std::set<std::string> cited(const std::string& answer) {
  static const std::regex bracket(R"(\[([^\[\]\s]+)\])");
  std::set<std::string> ids;
  for (std::sregex_iterator it(answer.begin(), answer.end(), bracket), end; it != end; ++it) ids.insert((*it)[1]);
  return ids;
}

// Three blocks in the context() format; only the lag metric says when the alert fires.
constexpr const char* kLagBlock =
    "### Replica lag (seconds)\nid: metrics/replica-lag | type: Metric | seed, score 3.100\n"
    "How far each read replica is behind the primary.\n\nAlert at 42 s. Shown per replica.";
constexpr const char* kDiskBlock =
    "### Disk almost full\nid: runbooks/disk-full | type: Playbook | via LINKS_TO from metrics/replica-lag\n"
    "Free space when the volume passes 85%.\n\nRun `CALL db.checkpoint()` first.";
constexpr const char* kReplicationBlock =
    "### Replication\nid: architecture/replication | type: Architecture | seed, score 2.000\n"
    "Asynchronous read replicas.\n\nReplicas replay the log, so the lag grows during loads.";
constexpr const char* kAlertQuestion = "When does the replica lag alert fire?";

ChatRequest context_request(const std::vector<std::string>& blocks, const std::string& question) {
  std::string pack;
  for (const std::string& b : blocks) pack += (pack.empty() ? "" : "\n\n") + b;
  ChatRequest request;
  request.messages = {{Role::system, std::string(kContextSystemPrompt), {}, {}, {}},
                      {Role::user, context_user_message(pack, question), {}, {}, {}}};
  return request;
}

TEST(SimModel, ContextAnswersCiteExactlyThePackedBlocksThatShareTerms) {
  ByteCounter counter;
  SimModel sim({}, counter);
  ChatResponse r = sim.chat(context_request({kLagBlock, kDiskBlock, kReplicationBlock}, kAlertQuestion));
  EXPECT_EQ(r.stop, StopReason::end_turn);
  EXPECT_EQ(cited(r.message.content), (std::set<std::string>{"metrics/replica-lag", "architecture/replication"}));
  EXPECT_NE(r.message.content.find("- Alert at 42 s."), std::string::npos) << r.message.content;
  EXPECT_EQ(r.message.content.find("checkpoint"), std::string::npos) << r.message.content;  // the unrelated block
  EXPECT_EQ(r.usage.output_tokens, static_cast<std::int64_t>(r.message.content.size()));   // counted on the text
  // The block that shares nothing is never cited, whatever the order.
  ChatResponse reordered = sim.chat(context_request({kDiskBlock, kReplicationBlock, kLagBlock}, kAlertQuestion));
  EXPECT_EQ(cited(reordered.message.content), cited(r.message.content));
  // Nothing relevant packed: it says so and cites nothing.
  ChatResponse none = sim.chat(context_request({kDiskBlock}, kAlertQuestion));
  EXPECT_TRUE(cited(none.message.content).empty());
  EXPECT_EQ(none.message.content,
            "None of what I read (runbooks/disk-full) mentions replica, lag, alert, fire, so I cannot answer this from "
            "the bundle.");
}

TEST(SimModel, OnTheDemoBundleContextAnswersCiteThePackedConceptsThatShareTheQuestionsTerms) {
  const auto counter = retrieval::make_counter("o200k_base");
  const auto bundle = retrieval::Bundle::load(test::source_dir() / "datasets/bundles/demo");
  const auto index = retrieval::SearchIndex::build(bundle);
  SimModel sim({}, *counter);
  for (const char* question : {"A production Cypher query got slow after a data load. What should I do, step by step?",
                               "How are full-text and vector rankings combined into one result list?",
                               "A property index shows the state FAILED. How do I get it back?",
                               "How do I import millions of nodes without hurting production traffic?"}) {
    retrieval::ContextOptions options;
    options.counter = counter.get();
    const retrieval::ContextPack pack = retrieval::pack_context(bundle, index, question, options);
    std::map<std::string, std::vector<std::string>> shared;  // packed id -> question terms it has
    std::size_t most = 0;
    for (const auto& packed : pack.concepts) {
      const retrieval::Concept& c = *bundle.find(packed.id);
      shared[c.id] = terms_in(c.title + " " + c.description + " " + c.body, question_terms(question));
      most = std::max(most, shared[c.id].size());
    }
    const std::string answer = sim.chat(context_request({pack.text}, question)).message.content;
    const std::set<std::string> ids = cited(answer);
    std::set<std::string> covered;
    for (const std::string& id : ids) {
      ASSERT_TRUE(shared.count(id)) << id << " was not packed";
      EXPECT_FALSE(shared[id].empty()) << id << " shares no term but is cited";
      covered.insert(shared[id].begin(), shared[id].end());
    }
    for (const auto& [id, terms] : shared) {
      if (2 * terms.size() >= most) {
        EXPECT_TRUE(ids.count(id)) << question << ": " << id << " shares enough terms";
      }
      for (const std::string& t : terms) EXPECT_TRUE(covered.count(t)) << question << ": term " << t << " of " << id;
    }
    EXPECT_LT(ids.size(), pack.concepts.size()) << question << "\n" << answer;  // not every packed block
  }
}

// A knowledge base whose search returns the given ids and whose open returns full concepts.
class ConceptsKb : public Toolbox {
 public:
  struct Entry {
    std::string title, description, body;
  };
  ConceptsKb(std::map<std::string, Entry> concepts, std::vector<std::string> hits)
      : concepts_(std::move(concepts)), hits_(std::move(hits)) {}
  std::vector<ToolSpec> specs() const override {
    return {{"search", "Search.", R"({"type":"object","properties":{}})"}, {"open", "Open.", R"({"type":"object","properties":{}})"}};
  }
  ToolResult call(std::string_view name, std::string_view arguments) override {
    const json args = json::parse(arguments);
    if (name == "search") {
      json list = json::array();
      double score = 10;
      for (const std::string& id : hits_) list.push_back({{"id", id}, {"title", concepts_[id].title}, {"score", score--}});
      return {list.dump(), ""};
    }
    const auto it = concepts_.find(args.value("concept_id", ""));
    if (it == concepts_.end()) return tool_error("not found");
    const Entry& e = it->second;
    return {json{{"id", it->first}, {"title", e.title}, {"description", e.description}, {"body", e.body}}.dump(), ""};
  }
  std::string default_system_prompt() const override { return "Use the tools."; }

 private:
  std::map<std::string, Entry> concepts_;
  std::vector<std::string> hits_;
};

TEST(SimModel, AnAnswerCarriesAConceptsFactsExactlyWhenTheConceptReachedIt) {
  ByteCounter counter;
  SimModel sim({}, counter);
  // Context path: the fact "42 s" is only in the lag block.
  const std::string with = sim.chat(context_request({kLagBlock, kReplicationBlock}, kAlertQuestion)).message.content;
  const std::string without = sim.chat(context_request({kReplicationBlock, kDiskBlock}, kAlertQuestion)).message.content;
  const auto has_fact = [](const std::string& answer) { return reports::match_facts({"42 s"}, answer).missing.empty(); };
  EXPECT_TRUE(has_fact(with)) << with;
  EXPECT_FALSE(has_fact(without)) << without;
  // Agent path: the same, from what it opened.
  const std::map<std::string, ConceptsKb::Entry> concepts{
      {"metrics/replica-lag", {"Replica lag (seconds)", "How far each replica is behind.", "Alert at 42 s."}},
      {"architecture/replication", {"Replication", "Asynchronous read replicas.", "Replicas replay the log."}}};
  SimOptions one;
  one.max_open = 1;
  SimModel opener(one, counter);
  ConceptsKb lag_first(concepts, {"metrics/replica-lag", "architecture/replication"});
  ConceptsKb replication_only(concepts, {"architecture/replication"});
  const AgentRun opened_lag = run_agent(opener, lag_first, kAlertQuestion);
  const AgentRun opened_other = run_agent(opener, replication_only, kAlertQuestion);
  EXPECT_EQ(opened_lag.stop, AgentStop::answered);
  EXPECT_TRUE(has_fact(opened_lag.answer)) << opened_lag.answer;
  EXPECT_EQ(cited(opened_lag.answer), std::set<std::string>{"metrics/replica-lag"});
  EXPECT_FALSE(has_fact(opened_other.answer)) << opened_other.answer;
  EXPECT_EQ(cited(opened_other.answer), std::set<std::string>{"architecture/replication"});
}

// One block of 200 short statements that all carry the question's terms: more than any target.
ChatRequest plentiful_request() {
  std::string block = "### Replica lag log\nid: notes/lag-log | type: Note | seed, score 1.000\n\n";
  for (int i = 1; i <= 200; ++i) block += fmt::format("Replica lag on host h{} was {} s. ", i, i * 3);
  return context_request({block}, "How large was the replica lag?");
}

TEST(SimModel, AnswerLengthFollowsTheKnobOnPlentifulEvidence) {
  const auto counter = retrieval::make_counter("o200k_base");
  const ChatRequest request = plentiful_request();
  for (std::size_t target : {50, 150, 300, 600, 1200}) {
    SimOptions options;
    options.answer_tokens = target;
    SimModel sim(options, *counter);
    const ChatResponse r = sim.chat(request);
    EXPECT_EQ(r.usage.output_tokens, static_cast<std::int64_t>(counter->count(r.message.content)));
    // Statements here are about 16 tokens: within half of one (and a token of rounding per line).
    EXPECT_NEAR(static_cast<double>(*r.usage.output_tokens), static_cast<double>(target), 12.0) << r.message.content;
  }
}

TEST(SimModel, AProfilesContextAnswerLengthIsTheContextPathsOwn) {
  const auto counter = retrieval::make_counter("o200k_base");
  SimOptions options;
  options.answer_tokens = 600;
  options.profile.context_answer = AnswerLength{60, 0};
  SimModel sim(options, *counter);
  const ChatResponse r = sim.chat(plentiful_request());
  EXPECT_NEAR(static_cast<double>(*r.usage.output_tokens), 60.0, 12.0) << r.message.content;
  // A seed draws around the context mean with the context spread (0: always the mean).
  options.seed = 9;
  EXPECT_EQ(SimModel(options, *counter).chat(plentiful_request()).message.content, r.message.content);
}

TEST(SimModel, AnswersAreDeterministicPerSeedAndTheSeedVariesTheirLength) {
  const auto counter = retrieval::make_counter("o200k_base");
  const ChatRequest request = plentiful_request();
  auto output = [&](std::uint64_t seed) {
    SimOptions options;
    options.seed = seed;
    return SimModel(options, *counter).chat(request);
  };
  EXPECT_EQ(output(5).message.content, output(5).message.content);
  std::set<std::int64_t> lengths;
  double sum = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const auto tokens = *output(seed).usage.output_tokens;
    lengths.insert(tokens);
    sum += static_cast<double>(tokens);
  }
  EXPECT_GE(lengths.size(), 15u);  // lengths come in steps of one statement (~12 tokens)
  EXPECT_NEAR(sum / 40, 300.0, 50.0);  // default mean 300, spread 100: 2.5 standard errors
}

}  // namespace
}  // namespace okfbench::agents
