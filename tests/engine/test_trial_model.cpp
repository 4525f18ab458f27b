#include "engine/trial_model.hpp"

#include <gtest/gtest.h>

namespace okfbench::engine {
namespace {

agents::Usage usage(std::int64_t in, std::int64_t cached, std::int64_t out) { return {in, cached, std::nullopt, out}; }

agents::AgentToolCall call(int turn, std::string name, std::string arguments, std::size_t bytes, std::string error) {
  agents::AgentToolCall c;
  c.turn = turn;
  c.name = std::move(name);
  c.arguments = std::move(arguments);
  c.result_bytes = bytes;
  c.error = std::move(error);
  return c;
}

TEST(TrialModel, AnAgentRunBecomesTurnsWithTheirToolCallsAndNewInput) {
  agents::AgentRun run;
  run.turns = {{1, usage(1121, 0, 20), 1, 0}, {2, usage(1582, 1024, 30), 2, 3}, {3, usage(2187, 1536, 100), 0, 0}};
  run.tool_calls.push_back(call(1, "search", R"({"query":"q"})", 20, ""));
  run.tool_calls.push_back(call(2, "open", R"({"concept_id":"x"})", 100, ""));
  run.tool_calls.push_back(call(2, "open", R"({"concept_id":"nope"})", 30, "not found"));
  const auto turns = record_turns(run);
  ASSERT_EQ(turns.size(), 3u);
  EXPECT_EQ(turns[0].input_tokens, 1121);
  EXPECT_EQ(turns[0].new_input_tokens, 1121);
  EXPECT_EQ(turns[1].new_input_tokens, 461);
  EXPECT_EQ(turns[1].cached_tokens, 1024);
  EXPECT_EQ(turns[1].dropped_tool_calls, 3);
  ASSERT_EQ(turns[1].tool_calls.size(), 2u);
  EXPECT_EQ(turns[1].tool_calls[1].name, "open");
  EXPECT_EQ(turns[1].tool_calls[1].arguments, R"({"concept_id":"nope"})");
  EXPECT_EQ(turns[1].tool_calls[1].result_bytes, 30);
  EXPECT_EQ(turns[1].tool_calls[1].error, "not found");
  EXPECT_TRUE(turns[2].tool_calls.empty());
  EXPECT_EQ(turns[2].output_tokens, 100);
}

TEST(TrialModel, APackKeepsItsOrderTokensAndReasons) {
  retrieval::ContextPack pack;
  const retrieval::PackEntry seed{"a", retrieval::PackReason::seed, "", "", 0, 1.5, 120, false, ""};
  const retrieval::PackEntry via{"b", retrieval::PackReason::via, "JOINS_WITH", "a", 1, 0.0, 80, false, ""};
  pack.concepts = {seed, via};
  const auto packed = record_pack(pack);
  ASSERT_EQ(packed.size(), 2u);
  EXPECT_EQ(packed[0], (reports::PackedConcept{"a", 120, "seed"}));
  EXPECT_EQ(packed[1], (reports::PackedConcept{"b", 80, "via JOINS_WITH from a"}));
}

}  // namespace
}  // namespace okfbench::engine
