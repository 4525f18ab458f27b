#include "agents/agent.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <functional>
#include <limits>
#include <stdexcept>

#include "core/error.hpp"

namespace okfbench::agents {
namespace {

// Replies with the scripted responses in order and keeps every request it saw.
class ScriptedModel : public ChatModel {
 public:
  explicit ScriptedModel(std::vector<ChatResponse> script) : script_(std::move(script)) {}
  ChatResponse chat(const ChatRequest& request) override {
    requests.push_back(request);
    if (next_ >= script_.size()) throw InputError("script exhausted");
    return script_[next_++];
  }
  std::string name() const override { return "scripted"; }
  std::vector<ChatRequest> requests;

 private:
  std::vector<ChatResponse> script_;
  std::size_t next_ = 0;
};

// search and open; results have known sizes. Arguments must be JSON objects.
class FakeTools : public Toolbox {
 public:
  std::vector<ToolSpec> specs() const override {
    return {{"search", "find", R"({"type":"object"})"}, {"open", "read", R"({"type":"object"})"}};
  }
  ToolResult call(std::string_view name, std::string_view arguments) override {
    auto args = nlohmann::json::parse(arguments, nullptr, false);
    if (args.is_discarded() || !args.is_object()) return tool_error("arguments are not a JSON object");
    if (name == "search") return {std::string(10, 's'), ""};
    if (!args.contains("concept_id")) return tool_error("open needs concept_id");
    return {std::string(100, 'o'), ""};
  }
  std::string default_system_prompt() const override { return "SYSTEM"; }
};

// One token per byte, so schema tokens are checkable by hand.
class ByteCounter : public retrieval::TokenCounter {
 public:
  std::size_t count(std::string_view text) const override { return text.size(); }
  std::string name() const override { return "bytes"; }
};

ChatResponse calls(std::vector<ToolCall> tool_calls, Usage usage) {
  return ChatResponse{Message{Role::assistant, "", std::move(tool_calls), {}, {}}, usage, StopReason::tool_calls, "m"};
}
ChatResponse answer(std::string text, Usage usage) {
  return ChatResponse{Message{Role::assistant, std::move(text), {}, {}, {}}, usage, StopReason::end_turn, "m"};
}
Usage usage(std::int64_t in, std::int64_t cached, std::int64_t out) { return Usage{in, cached, std::nullopt, out}; }

TEST(RunAgent, SeedWorkedExampleAccounting) {
  ScriptedModel model({calls({{"", "search", R"({"query":"slow query"})"}}, usage(1121, 0, 20)),
                       calls({{"a", "open", R"({"concept_id":"x"})"}, {"b", "open", R"({"concept_id":"y"})"}},
                             usage(1582, 1024, 30)),
                       calls({{"c", "search", R"({ "query" : "slow query" })"}}, usage(2187, 1536, 10)),
                       answer("done (cites x)", usage(3071, 2048, 100))});
  FakeTools tools;
  ByteCounter counter;
  AgentOptions options;
  options.counter = &counter;
  AgentRun run = run_agent(model, tools, "Q?", options);

  EXPECT_EQ(run.stop, AgentStop::answered);
  EXPECT_EQ(run.answer, "done (cites x)");
  ASSERT_EQ(run.tool_calls.size(), 4u);
  EXPECT_EQ(run.tool_calls[1], (AgentToolCall{2, "open", R"({"concept_id":"x"})", 100, "", false, std::nullopt}));
  EXPECT_TRUE(run.tool_calls[3].repeated);  // same arguments, different whitespace
  RunSummary s = summary(run);
  EXPECT_EQ(s.turns, 4u);
  EXPECT_EQ(s.tool_calls, 4u);
  EXPECT_EQ(s.repeated_calls, 1u);
  EXPECT_EQ(s.errors, 0u);
  EXPECT_EQ(s.result_bytes, 220u);
  EXPECT_EQ(s.bytes_by_tool.at("search"), 20u);
  EXPECT_EQ(s.bytes_by_tool.at("open"), 200u);
  EXPECT_EQ(s.calls_by_tool.at("open"), 2u);
  // The seed's figures: [1121, 1582, 2187, 3071] (re-sent input: tests/reports/test_trial_metrics.cpp).
  std::vector<std::optional<std::int64_t>> inputs{1121, 1582, 2187, 3071};
  EXPECT_EQ(s.input_per_turn, inputs);
  EXPECT_EQ(s.usage.input_tokens, 7961);
  EXPECT_EQ(s.usage.cached_input_tokens, 4608);
  EXPECT_EQ(s.usage.output_tokens, 160);
  EXPECT_EQ(s.usage.cache_write_tokens, std::nullopt);
  std::int64_t schema = static_cast<std::int64_t>(
      std::string(R"([{"function":{"description":"find","name":"search","parameters":{"type":"object"}},"type":"function"},)"
                  R"({"function":{"description":"read","name":"open","parameters":{"type":"object"}},"type":"function"}])")
          .size());
  EXPECT_EQ(run.schema_tokens_per_call, schema);
  EXPECT_EQ(s.schema_tokens, 4 * schema);
  EXPECT_EQ(summary_line(run), "[4 turn(s), 4 tool call(s), 220 tool byte(s), 7961 in (4608 cached) / 160 out]");
}

TEST(RunAgent, ConversationGrowsWithToolResultsInOrder) {
  ScriptedModel model({calls({{"a", "open", R"({"concept_id":"x"})"}, {"", "search", R"({"query":"q"})"}}, {}),
                       answer("ok", {})});
  FakeTools tools;
  run_agent(model, tools, "Q?");
  ASSERT_EQ(model.requests.size(), 2u);
  const auto& first = model.requests[0].messages;
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0], (Message{Role::system, "SYSTEM", {}, {}, {}}));
  EXPECT_EQ(first[1], (Message{Role::user, "Q?", {}, {}, {}}));
  EXPECT_EQ(model.requests[0].tools.size(), 2u);
  const auto& second = model.requests[1].messages;
  ASSERT_EQ(second.size(), 5u);
  EXPECT_EQ(second[2].tool_calls[1].id, "call_1_2");  // ids filled in when the model gave none
  EXPECT_EQ(second[3].tool_call_id, "a");
  EXPECT_EQ(second[3].content, std::string(100, 'o'));
  EXPECT_EQ(second[4].tool_call_id, "call_1_2");
  EXPECT_EQ(second[4].name, "search");
}

TEST(RunAgent, UnknownToolsAndBadArgumentsGoBackToTheModelAsErrors) {
  ScriptedModel model({calls({{"a", "delete_everything", "{}"}, {"b", "open", "{not json"}, {"c", "open", "{}"}}, {}),
                       answer("sorry", {})});
  FakeTools tools;
  AgentRun run = run_agent(model, tools, "Q?");
  ASSERT_EQ(run.tool_calls.size(), 3u);
  EXPECT_EQ(run.tool_calls[0].error, "unknown tool 'delete_everything'; available tools: search, open");
  EXPECT_EQ(run.tool_calls[1].error, "arguments are not a JSON object");
  EXPECT_EQ(run.tool_calls[2].error, "open needs concept_id");
  EXPECT_EQ(summary(run).errors, 3u);
  const auto& sent = model.requests[1].messages;
  EXPECT_EQ(sent[3].content, R"({"error":"unknown tool 'delete_everything'; available tools: search, open"})");
  EXPECT_EQ(run.answer, "sorry");
}

TEST(RunAgent, StopsAtMaxTurns) {
  std::vector<ChatResponse> script(20, calls({{"", "search", R"({"query":"q"})"}}, usage(10, 0, 1)));
  ScriptedModel model(script);
  FakeTools tools;
  AgentRun run = run_agent(model, tools, "Q?");  // default 12
  EXPECT_EQ(run.stop, AgentStop::max_turns);
  EXPECT_EQ(run.turns.size(), 12u);
  EXPECT_EQ(run.tool_calls.size(), 12u);
  EXPECT_EQ(summary(run).repeated_calls, 11u);
  EXPECT_EQ(run.answer, "");
  AgentOptions three;
  three.max_turns = 3;
  ScriptedModel again(script);
  EXPECT_EQ(run_agent(again, tools, "Q?", three).turns.size(), 3u);
}

TEST(RunAgent, UnreportedUsageStaysUnknown) {
  ScriptedModel model({calls({{"", "search", R"({"query":"q"})"}}, usage(100, 0, 5)),
                       answer("x", Usage{std::nullopt, std::nullopt, std::nullopt, 7})});
  FakeTools tools;
  AgentRun run = run_agent(model, tools, "Q?");
  RunSummary s = summary(run);
  EXPECT_EQ(s.usage.input_tokens, std::nullopt);
  EXPECT_EQ(s.usage.output_tokens, 12);
  EXPECT_EQ(s.input_per_turn[1], std::nullopt);
  EXPECT_EQ(s.schema_tokens, std::nullopt);  // no counter given
  EXPECT_EQ(summary_line(run), "[2 turn(s), 1 tool call(s), 10 tool byte(s), ? in (? cached) / 12 out]");
}

TEST(RunAgent, ContinuesFromHistory) {
  FakeTools tools;
  ScriptedModel first({answer("first answer", {})});
  AgentRun one = run_agent(first, tools, "Q1");
  ASSERT_EQ(one.messages.size(), 3u);
  ScriptedModel second({answer("second answer", {})});
  AgentOptions options;
  options.history = one.messages;
  options.system_prompt = "ignored: history has a system message";
  AgentRun two = run_agent(second, tools, "Q2", options);
  const auto& sent = second.requests[0].messages;
  ASSERT_EQ(sent.size(), 4u);
  EXPECT_EQ(sent[0].content, "SYSTEM");
  EXPECT_EQ(sent[2].content, "first answer");
  EXPECT_EQ(sent[3].content, "Q2");
  EXPECT_EQ(two.messages.size(), 5u);
}

TEST(RunAgent, ModelFailureIsRecordedNotThrown) {
  ScriptedModel model({calls({{"", "search", R"({"query":"q"})"}}, usage(10, 0, 1))});
  FakeTools tools;
  AgentRun run = run_agent(model, tools, "Q?");
  EXPECT_EQ(run.stop, AgentStop::model_error);
  EXPECT_EQ(run.error, "script exhausted");
  EXPECT_EQ(run.turns.size(), 1u);
}

TEST(RunAgent, ModelFailuresKeepTheirClass) {
  class Failing : public ChatModel {
   public:
    explicit Failing(std::function<void()> thrower) : thrower_(std::move(thrower)) {}
    ChatResponse chat(const ChatRequest&) override {
      thrower_();
      return {};
    }
    std::string name() const override { return "failing"; }

   private:
    std::function<void()> thrower_;
  };
  FakeTools tools;
  Failing transient([] { throw CallError(Failure::transient, "HTTP 503"); });
  EXPECT_EQ(run_agent(transient, tools, "Q").failure, Failure::transient);
  Failing permanent([] { throw CallError(Failure::permanent, "HTTP 400"); });
  EXPECT_EQ(run_agent(permanent, tools, "Q").failure, Failure::permanent);
  Failing other([] { throw std::runtime_error("not an InputError"); });  // still a model_error, never a crash
  AgentRun run = run_agent(other, tools, "Q");
  EXPECT_EQ(run.stop, AgentStop::model_error);
  EXPECT_EQ(run.failure, Failure::permanent);
  EXPECT_EQ(run.error, "not an InputError");
}

TEST(RunAgent, CallsBeyondThePerTurnCapAreDroppedCountedAndReported) {
  std::vector<ToolCall> many;
  for (int i = 0; i < 5; ++i) many.push_back({"", "search", fmt::format(R"({{"query":"q{}"}})", i)});
  ScriptedModel model({calls(many, usage(10, 0, 1)), answer("done", usage(20, 0, 1))});
  FakeTools tools;
  AgentOptions options;
  options.max_tool_calls_per_turn = 2;
  AgentRun run = run_agent(model, tools, "Q?", options);
  ASSERT_EQ(run.stop, AgentStop::answered);
  EXPECT_EQ(run.tool_calls.size(), 2u);
  EXPECT_EQ(run.turns[0].tool_calls, 2u);
  EXPECT_EQ(run.turns[0].dropped_tool_calls, 3u);
  EXPECT_EQ(summary(run).dropped_tool_calls, 3u);
  // The second request carries only the two calls that ran, and the last result says what happened.
  const std::vector<Message>& sent = model.requests[1].messages;
  ASSERT_EQ(sent.size(), 5u);  // system, question, assistant, 2 results
  EXPECT_EQ(sent[2].tool_calls.size(), 2u);
  EXPECT_EQ(sent[3].content, std::string(10, 's'));
  EXPECT_EQ(sent[4].content, std::string(10, 's') +
                                 "\n[3 more tool call(s) in your last reply were not run: at most 2 run per turn. Ask "
                                 "again for what you still need.]");
  EXPECT_EQ(run.tool_calls[1].result_bytes, 10u);  // the note is not the tool's output
}

TEST(RunAgent, AToolThatThrowsBecomesAnErrorResult) {
  class Throwing : public FakeTools {
   public:
    ToolResult call(std::string_view, std::string_view) override { throw std::runtime_error("File name too long"); }
  };
  ScriptedModel model({calls({{"", "search", R"({"query":"q"})"}}, usage(10, 0, 1)), answer("ok", usage(20, 0, 1))});
  Throwing tools;
  AgentRun run = run_agent(model, tools, "Q?");
  ASSERT_EQ(run.stop, AgentStop::answered);
  ASSERT_EQ(run.tool_calls.size(), 1u);
  EXPECT_EQ(run.tool_calls[0].error, "search failed: File name too long");
  EXPECT_EQ(run.turns.size(), 2u);  // the accounting of both turns is kept
}

TEST(RunAgent, TotalsSaturateInsteadOfWrapping) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  ScriptedModel model({calls({{"", "search", R"({"query":"q"})"}}, usage(kMax - 5, kMax - 5, kMax)),
                       answer("ok", usage(kMax - 5, 0, 10))});
  FakeTools tools;
  AgentRun run = run_agent(model, tools, "Q?");
  RunSummary s = summary(run);
  EXPECT_EQ(s.usage.input_tokens, kMax);
  EXPECT_EQ(s.usage.output_tokens, kMax);
  EXPECT_EQ(add(Usage{kMax, 1, 1, 1}, Usage{1, 1, 1, 1}).input_tokens, kMax);
}

TEST(RunAgent, DeeplyNestedArgumentsDoNotCrashTheRepeatCheck) {
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  ScriptedModel model({calls({{"", "search", deep}, {"", "search", deep}}, usage(10, 0, 1)), answer("ok", usage(20, 0, 1))});
  FakeTools tools;
  AgentRun run = run_agent(model, tools, "Q?");
  ASSERT_EQ(run.tool_calls.size(), 2u);
  EXPECT_FALSE(run.tool_calls[0].repeated);
  EXPECT_TRUE(run.tool_calls[1].repeated);
}

}  // namespace
}  // namespace okfbench::agents
