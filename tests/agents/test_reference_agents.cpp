#include "agents/reference_agents.hpp"

#include <gtest/gtest.h>

#include "agents/agent.hpp"
#include "agents/bundle_tools.hpp"
#include "agents/context_prompt.hpp"
#include "agents/mock_server.hpp"
#include "agents/provider_models.hpp"
#include "retrieval/bundle.hpp"
#include "core/error.hpp"
#include "retrieval/tokens.hpp"
#include "tests/agents/fake_kb.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::agents {
namespace {

constexpr const char* kLong = "A production Cypher query got slow after a data load. What should I do, step by step?";

struct Demo {
  retrieval::Bundle bundle = retrieval::Bundle::load(test::source_dir() / "datasets/bundles/demo");
  BundleTools tools{bundle};
  std::unique_ptr<retrieval::TokenCounter> counter = retrieval::make_counter("o200k_base");
  AgentRun run(std::string_view agent, const std::string& question) {
    auto model = make_reference_agent(agent, *counter);
    return run_agent(*model, tools, question);
  }
};

TEST(ReferenceAgents, ScoutSearchesSeveralTimesAndOpensOneHitPerTurn) {
  Demo demo;
  const AgentRun run = demo.run("scout", kLong);
  std::size_t searches = 0, opens = 0, repeated = 0;
  for (const AgentToolCall& c : run.tool_calls) {
    searches += c.name == "search";
    opens += c.name == "open";
    repeated += c.repeated;
    EXPECT_NE(c.name, "follow");
  }
  EXPECT_GE(searches, 3u);  // the first search, at least one for uncovered words, and the repeat
  EXPECT_GE(opens, 1u);
  EXPECT_EQ(repeated, 1u);  // 15 words: the first search is repeated before the answer
  for (const AgentTurn& t : run.turns) EXPECT_LE(t.tool_calls, 1u);
  EXPECT_EQ(run.tool_calls.front().arguments, R"({"k":8,"query":"production cypher query slow data load"})");
  EXPECT_NE(run.answer.find("Sources: ["), std::string::npos);
  EXPECT_EQ(run.stop, AgentStop::answered);
}

TEST(ReferenceAgents, DiverBrowsesOpensInParallelFollowsAndRereads) {
  Demo demo;
  const AgentRun run = demo.run("diver", kLong);
  ASSERT_GE(run.tool_calls.size(), 6u);
  EXPECT_EQ(run.tool_calls[0].name, "browse");
  EXPECT_EQ(run.tool_calls[1].name, "search");
  EXPECT_EQ(run.turns[2].tool_calls, 3u);  // the three hits in one turn
  std::size_t follows = 0, repeated = 0;
  for (const AgentToolCall& c : run.tool_calls) {
    follows += c.name == "follow";
    repeated += c.repeated;
  }
  EXPECT_EQ(follows, 2u);
  EXPECT_EQ(repeated, 1u);  // the re-read of the first concept
  EXPECT_LE(run.answer.size(), 3000u + 400u);
}

TEST(ReferenceAgents, EachAnswersAOneShotPromptFromThePackedBlocksAtItsOwnLength) {
  const std::string pack =
      "### Replica lag\nid: ops/replica-lag | type: Runbook | seed, score 2.000\n"
      "When replicas fall behind.\n\nThe replica lag alert fires at 30 seconds. Check the network first. Then the disk.\n\n"
      "### Billing\nid: sales/billing | type: Policy | seed, score 1.000\n\nInvoices go out monthly to every customer.\n\n"
      "### Replica setup\nid: ops/replica-setup | type: Guide | via LINKS_TO from ops/replica-lag\n\n"
      "Each replica streams the primary's log. Replicas are read only.";
  ChatRequest request;
  request.messages = {{Role::system, std::string(kContextSystemPrompt), {}, {}, {}},
                      {Role::user, context_user_message(pack, "When does the replica lag alert fire?"), {}, {}, {}}};
  auto counter = retrieval::make_counter("o200k_base");
  const ChatResponse scout = make_reference_agent("scout", *counter)->chat(request);
  EXPECT_EQ(scout.message.content,
            "Replica lag (ops/replica-lag): The replica lag alert fires at 30 seconds.\nSources: [ops/replica-lag]");
  EXPECT_EQ(scout.stop, StopReason::end_turn);
  // Billing is left out: it shares no keyword with the question.
  EXPECT_EQ(make_reference_agent("diver", *counter)->chat(request).message.content,
            "Replica lag (ops/replica-lag): The replica lag alert fires at 30 seconds. Check the network first.\n"
            "Replica setup (ops/replica-setup): Each replica streams the primary's log. Replicas are read only.\n"
            "Sources: [ops/replica-lag] [ops/replica-setup]");
  request.messages.back().content = context_user_message(pack, "How are invoices taxed in Peru?");
  EXPECT_EQ(make_reference_agent("scout", *counter)->chat(request).message.content,
            "Billing (sales/billing): Invoices go out monthly to every customer.\nSources: [sales/billing]");
  request.messages.back().content = context_user_message(pack, "Which colour is the logo?");
  EXPECT_EQ(make_reference_agent("diver", *counter)->chat(request).message.content, "The context does not answer this.");
}

TEST(ReferenceAgents, EachCountsUsageItsOwnWay) {
  ByteCounter bytes;
  ChatRequest request;
  request.messages = {{Role::system, "S", {}, {}, {}}, {Role::user, "hello there", {}, {}, {}}};
  request.tools = {{"search", "Find.", "{}"}, {"open", "Read.", "{}"}};
  // scout: 25 + (10 + 2 + 2 + 1) + (10 + 1 + 2 + 1) + (4 + 1) + (4 + 3): ceil(bytes / 4) of each text
  const ChatResponse scout = make_reference_agent("scout", bytes)->chat(request);
  EXPECT_EQ(scout.usage.input_tokens, 25 + 15 + 14 + 5 + 7);
  // diver: 40 + (15 + 6 + 5 + 2) + (15 + 4 + 5 + 2) + (7 + 1) + (7 + 11), with the given counter (bytes here)
  const ChatResponse diver = make_reference_agent("diver", bytes)->chat(request);
  EXPECT_EQ(diver.usage.input_tokens, 40 + 28 + 26 + 8 + 18);
  ASSERT_EQ(diver.message.tool_calls.size(), 1u);  // no browse tool: it searches
  EXPECT_EQ(diver.usage.output_tokens,
            static_cast<std::int64_t>(6 + diver.message.tool_calls[0].arguments.size()));
  EXPECT_THROW(make_reference_agent("sim", bytes), UsageError);
}

TEST(ReferenceAgents, DeterministicAndServedOverHttpLikeAProvider) {
  Demo demo;
  const AgentRun direct = demo.run("scout", kLong);
  EXPECT_EQ(direct.answer, demo.run("scout", kLong).answer);
  MockServer server({}, *demo.counter);
  server.answer_with(make_reference_agent("scout", *demo.counter));
  server.start();
  Endpoint e;
  e.base_url = server.base_url() + "/v1";
  e.api_key = "sk-test-reference";
  e.model = "scout";
  OpenAIModel model(e);
  const AgentRun served = run_agent(model, demo.tools, kLong);
  server.stop();
  EXPECT_EQ(served.answer, direct.answer);
  ASSERT_EQ(served.turns.size(), direct.turns.size());
  for (std::size_t i = 0; i < served.turns.size(); ++i) EXPECT_EQ(served.turns[i].usage, direct.turns[i].usage) << i;
}

}  // namespace
}  // namespace okfbench::agents
