#include "agents/sim_model.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "agents/agent.hpp"
#include "tests/agents/fake_kb.hpp"

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
  EXPECT_EQ(run.answer,
            "From the bundle:\n- Slow queries: Triage [runbooks/slow]\n- Index: B-tree [glossary/index]\n"
            "- Replica reads: Lag [decisions/replica]\nSources: runbooks/slow, glossary/index, decisions/replica");
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
  EXPECT_NE(run.answer.find("Sources: runbooks/slow"), std::string::npos);
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
  EXPECT_EQ(run.answer, "I could not find anything in the bundle that answers this.");
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

}  // namespace
}  // namespace okfbench::agents
