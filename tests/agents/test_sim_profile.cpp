#include "agents/sim_profile.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "agents/agent.hpp"
#include "agents/sim_answer.hpp"
#include "agents/sim_model.hpp"
#include "agents/sim_profile_file.hpp"
#include "tests/agents/fake_kb.hpp"

namespace okfbench::agents {
namespace {

constexpr const char* kQuestion = "A Cypher query got slow after a replica change. What should I do?";

struct Ran {
  AgentRun run;
  std::vector<std::string> calls;
};

Ran run_with(const std::string& profile, std::uint64_t seed = 0, std::string_view question = kQuestion) {
  ByteCounter counter;
  SimOptions options = parse_sim_profile(profile.empty() ? std::string("{}") : profile, "test.yaml");
  options.seed = seed;
  SimModel sim(options, counter);
  FakeKb kb(FakeKb::Style::grafito, kGrafito);
  AgentRun run = run_agent(sim, kb, std::string(question));
  return {std::move(run), kb.calls};
}

TEST(SimProfile, AnEmptyProfileAndTheWrittenDefaultsAreTodaysPolicy) {
  const Ran plain = run_with("");
  const Ran written = run_with(sim_profile_yaml(SimOptions{}));
  ByteCounter counter;
  SimModel sim({}, counter);
  FakeKb kb(FakeKb::Style::grafito, kGrafito);
  const AgentRun run = run_agent(sim, kb, kQuestion);
  EXPECT_EQ(plain.calls, kb.calls);
  EXPECT_EQ(written.calls, kb.calls);
  EXPECT_EQ(written.run.answer, run.answer);
  ASSERT_EQ(written.run.turns.size(), run.turns.size());
  for (std::size_t i = 0; i < run.turns.size(); ++i) EXPECT_EQ(written.run.turns[i].usage, run.turns[i].usage) << i;
}

TEST(SimProfile, ALaterSearchDropsQuestionTermsAndAddsTitleTermsThenOpensWhatIsNew) {
  const Ran r = run_with("searches: 2\ndrop_terms: 1\nadd_terms: 1\nfollow_rate: 0\n");
  ASSERT_EQ(r.calls.size(), 5u);
  EXPECT_EQ(r.calls[1], R"(open {"concept_id":"runbooks/slow"})");
  EXPECT_EQ(r.calls[2], R"(open {"concept_id":"glossary/index"})");
  // The second query: the question's terms less one, plus "cache" from the
  // title of the one hit not opened.
  const std::vector<std::string> terms = question_terms(kQuestion);
  const json second = json::parse(r.calls[3].substr(r.calls[3].find(' ') + 1));
  const std::vector<std::string> words = lower_words(second["query"].get<std::string>());
  ASSERT_EQ(words.size(), terms.size());
  EXPECT_EQ(words.back(), "cache");
  std::size_t kept = 0;
  for (const std::string& t : terms) kept += std::count(words.begin(), words.end(), t);
  EXPECT_EQ(kept, terms.size() - 1);
  // Hits opened after the first search are not opened again.
  EXPECT_EQ(r.calls[4], R"(open {"concept_id":"glossary/cache"})");
}

TEST(SimProfile, OpensGoOnePerTurnWhenNotParallel) {
  const Ran r = run_with("parallel_opens: 0\nfollow_rate: 0\n");
  ASSERT_EQ(r.run.turns.size(), 4u);  // search, open, open, answer
  EXPECT_EQ(r.run.turns[1].tool_calls, 1u);
  EXPECT_EQ(r.run.turns[2].tool_calls, 1u);
  EXPECT_EQ(r.calls[2], R"(open {"concept_id":"glossary/index"})");
}

TEST(SimProfile, ADrawnOpenCountReplacesTheRatioRule) {
  const Ran r = run_with("opens_per_search: 3\nfollow_rate: 0\n");
  ASSERT_EQ(r.calls.size(), 4u);
  EXPECT_EQ(r.calls[3], R"(open {"concept_id":"glossary/cache"})");  // 4.0 < 0.8 x 10, opened anyway
  EXPECT_EQ(r.run.turns[1].tool_calls, 3u);
}

TEST(SimProfile, FollowRateZeroNeverFollows) {
  for (const Ran& r : {run_with("follow_rate: 0\n"), run_with("follow_rate: 0\n", 5)}) {
    for (const std::string& c : r.calls) EXPECT_FALSE(c.starts_with("follow")) << c;
  }
}

TEST(SimProfile, RepeatsAreCountedAsRepeatedCallsAndChangeNothingElse) {
  const Ran base = run_with("");
  const Ran r = run_with("repeats: 2\n");
  std::size_t repeated = 0;
  for (const AgentToolCall& c : r.run.tool_calls) repeated += c.repeated ? 1 : 0;
  EXPECT_EQ(repeated, 2u);
  EXPECT_EQ(r.calls.size(), base.calls.size() + 2);
  EXPECT_EQ(r.calls[1], r.calls[0]);  // the search, again
  EXPECT_EQ(r.run.answer, base.run.answer);
}

TEST(SimProfile, SeveralFollowsInOneTurnThenNeighboursThenARereadBeforeAnswering) {
  const Ran r = run_with("follow_concepts: 2\nneighbour_opens: 2\nrereads: 1\n");
  ASSERT_EQ(r.calls.size(), 7u);
  EXPECT_EQ(r.calls[3], R"(follow {"concept_id":"runbooks/slow","direction":"out"})");
  EXPECT_EQ(r.calls[4], R"(follow {"concept_id":"glossary/index","direction":"out"})");
  EXPECT_EQ(r.calls[5], R"(open {"concept_id":"decisions/replica"})");  // the one neighbour titled with an uncovered term
  EXPECT_EQ(r.calls[6], R"(open {"concept_id":"runbooks/slow"})");      // the first concept, read again
  ASSERT_EQ(r.run.turns.size(), 6u);  // search, 2 opens, 2 follows, neighbour, reread, answer
  EXPECT_EQ(r.run.turns[2].tool_calls, 2u);
  EXPECT_EQ(run_with("rereads: 1\n").run.answer, run_with("").run.answer);  // a second read adds nothing to say
}

TEST(SimProfile, FollowWhenCoveredFollowsAQuestionItsReadsAlreadyAnswer) {
  constexpr std::string_view covered = "Why is the Cypher query slow?";  // "Cypher query slow: check the index" has it all
  for (const std::string& c : run_with("", 0, covered).calls) EXPECT_FALSE(c.starts_with("follow")) << c;
  const Ran r = run_with("follow_when_covered: true\n", 0, covered);
  ASSERT_EQ(r.calls.size(), 4u);
  EXPECT_EQ(r.calls[3], R"(follow {"concept_id":"runbooks/slow","direction":"out"})");  // no neighbour title holds a term
}

TEST(SimProfile, BrowseRateOneBrowsesTheRootBeforeSearching) {
  const Ran r = run_with("browse_rate: 1\n");
  ASSERT_GE(r.calls.size(), 2u);
  EXPECT_EQ(r.calls[0], "browse {}");
  EXPECT_TRUE(r.calls[1].starts_with("search ")) << r.calls[1];
}

TEST(SimProfile, MaxToolTurnsAnswersAfterThatManyToolTurns) {
  const Ran r = run_with("max_tool_turns: 1\n");
  ASSERT_EQ(r.run.turns.size(), 2u);
  EXPECT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.run.answer, "I found nothing in the bundle about cypher, query, slow, replica, change, so I cannot answer this.");
}

TEST(SimProfile, OverheadsAreWhatTheUsageBills) {
  ByteCounter counter;
  SimOptions options = parse_sim_profile(
      "overheads: {per_message: 5, per_tool_call: 4, reply_priming: 1, per_tool: 20, tools_end: 2}\n", "o.yaml");
  SimModel sim(options, counter);
  ChatRequest request;
  request.messages = {{Role::system, "S", {}, {}, {}},
                      {Role::user, "hi", {}, {}, {}},
                      {Role::assistant, "", {{"c1", "search", "{}"}}, {}, {}}};
  request.tools = {{"search", "Find.", R"({"type":"object","properties":{"query":{"type":"string","description":"Words."}}})"}};
  const ChatResponse r = sim.chat(request);
  // tool: 20 + "search:Find" (11) + 3 + 3 + "query:string:Words" (18) + 2 end = 57
  // system: 5 + 6 + 1 = 12; user: 5 + 4 + 2 = 11; assistant: 5 + 9 + (4 + 6 + 2) = 26; priming 1
  EXPECT_EQ(r.usage.input_tokens, 57 + 12 + 11 + 26 + 1);
}

TEST(SimProfile, AContentRatioScalesTheTextAndNotTheOverheads) {
  ByteCounter counter;
  SimModel sim(parse_sim_profile("overheads: {content_ratio: 1.5}\n", "o.yaml"), counter);
  ChatRequest request;
  request.messages = {{Role::system, "S", {}, {}, {}}, {Role::user, "hi", {}, {}, {}}};
  const ChatResponse r = sim.chat(request);
  // system: 3 + round(1.5 x 7) = 3 + 11 (10.5 rounds away from zero); user: 3 + 1.5 x 6 = 12; priming 3
  EXPECT_EQ(r.usage.input_tokens, 14 + 12 + 3);
  ASSERT_FALSE(r.message.content.empty());
  EXPECT_EQ(r.usage.output_tokens, std::llround(1.5 * static_cast<double>(r.message.content.size())));
}

TEST(SimProfile, ContextOverheadsBillRequestsWithoutToolsAndOnlyThose) {
  ByteCounter counter;
  SimModel sim(parse_sim_profile("overheads: {per_message: 5}\ncontext_overheads: {content_ratio: 2}\n", "o.yaml"), counter);
  ChatRequest request;
  request.messages = {{Role::system, "S", {}, {}, {}}, {Role::user, "hi", {}, {}, {}}};
  const ChatResponse bare = sim.chat(request);
  // system: 5 + 2 x 7; user: 5 + 2 x 6; priming 3; the output at ratio 2 too
  EXPECT_EQ(bare.usage.input_tokens, 19 + 17 + 3);
  EXPECT_EQ(bare.usage.output_tokens, 2 * static_cast<std::int64_t>(bare.message.content.size()));
  // With a tool the same messages are billed at the overheads (ratio 1): the cached counts are not reused.
  request.tools = {{"search", "Find.", R"({"type":"object"})"}};
  const ChatResponse tooled = sim.chat(request);
  const std::int64_t tool = 7 + 11 + 12;  // per_tool + "search:Find" + tools_end
  EXPECT_EQ(tooled.usage.input_tokens, tool + (5 + 7) + (5 + 6) + 3);
}

TEST(SimProfile, DrawsAreDeterministicAndFollowTheWeights) {
  const CountDistribution d{{{1, 0.5}, {2, 0.3}, {4, 0.2}}};
  std::map<int, int> seen;
  constexpr int n = 20000;
  for (int i = 0; i < n; ++i) seen[d.draw(profile_draw(7, "q", "searches", static_cast<std::uint64_t>(i)))]++;
  EXPECT_NEAR(seen[1] / double(n), 0.5, 0.02);
  EXPECT_NEAR(seen[2] / double(n), 0.3, 0.02);
  EXPECT_NEAR(seen[4] / double(n), 0.2, 0.02);
  EXPECT_DOUBLE_EQ(d.mean(), 0.5 + 0.6 + 0.8);
  EXPECT_EQ(profile_draw(3, "q", "x", 1), profile_draw(3, "q", "x", 1));
  EXPECT_NE(profile_draw(3, "q", "x", 1), profile_draw(3, "q", "x", 2));
  EXPECT_NE(profile_draw(3, "q", "x", 1), profile_draw(4, "q", "x", 1));
}

TEST(SimProfile, ADistributionOfSearchesVariesByQuestionAndIsStableForOne) {
  const std::string profile = "searches: {1: 0.5, 3: 0.5}\nfollow_rate: 0\nseed_variation: false\n";
  std::set<std::size_t> lengths;
  for (int i = 0; i < 12; ++i) {
    const std::string q = fmt::format("{} case {}", kQuestion, i);
    const Ran a = run_with(profile, 9, q);
    EXPECT_EQ(a.calls, run_with(profile, 9, q).calls);
    std::size_t searches = 0;
    for (const std::string& c : a.calls) searches += c.starts_with("search ") ? 1 : 0;
    EXPECT_TRUE(searches == 1 || searches == 3) << searches;
    lengths.insert(searches);
  }
  EXPECT_EQ(lengths.size(), 2u);
}

}  // namespace
}  // namespace okfbench::agents
