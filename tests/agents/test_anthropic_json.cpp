#include "agents/anthropic_json.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace okfbench::agents {
namespace {
using nlohmann::json;

// Shape of the tool-use response example in Anthropic's Messages API docs,
// with the usage block of the prompt-caching docs.
constexpr const char* kToolUseResponse = R"({
  "id": "msg_01Aq9w938a90dw8q", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
  "content": [
    {"type": "text", "text": "I'll check the bundle."},
    {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "search", "input": {"query": "slow query", "k": 5}},
    {"type": "tool_use", "id": "toolu_02", "name": "open", "input": {"concept_id": "runbooks/slow-queries"}}
  ],
  "stop_reason": "tool_use", "stop_sequence": null,
  "usage": {"input_tokens": 50, "cache_creation_input_tokens": 248, "cache_read_input_tokens": 1800, "output_tokens": 503}
})";

TEST(AnthropicJson, ParsesToolUseAndNormalisesUsage) {
  ChatResponse r = anthropic::response_from_json(kToolUseResponse);
  EXPECT_EQ(r.stop, StopReason::tool_calls);
  EXPECT_EQ(r.message.content, "I'll check the bundle.");
  ASSERT_EQ(r.message.tool_calls.size(), 2u);
  EXPECT_EQ(r.message.tool_calls[0].id, "toolu_01A09q90qw90lq917835lq9");
  EXPECT_EQ(json::parse(r.message.tool_calls[0].arguments), json::parse(R"({"query":"slow query","k":5})"));
  // input = input_tokens + cache_read + cache_creation = 50 + 1800 + 248
  EXPECT_EQ(r.usage.input_tokens, 2098);
  EXPECT_EQ(r.usage.cached_input_tokens, 1800);
  EXPECT_EQ(r.usage.cache_write_tokens, 248);
  EXPECT_EQ(r.usage.output_tokens, 503);
}

TEST(AnthropicJson, MissingCountsStayUnknown) {
  ChatResponse r = anthropic::response_from_json(
      R"({"content":[{"type":"text","text":"done"}],"stop_reason":"end_turn","usage":{"input_tokens":12,"output_tokens":3}})");
  EXPECT_EQ(r.usage.input_tokens, 12);
  EXPECT_EQ(r.usage.cached_input_tokens, std::nullopt);
  EXPECT_EQ(r.usage.cache_write_tokens, std::nullopt);
  ChatResponse none = anthropic::response_from_json(R"({"content":[],"stop_reason":"end_turn"})");
  EXPECT_EQ(none.usage, Usage{});
  ChatResponse no_input = anthropic::response_from_json(
      R"({"content":[],"usage":{"cache_read_input_tokens":5,"output_tokens":1}})");
  EXPECT_EQ(no_input.usage.input_tokens, std::nullopt);
}

TEST(AnthropicJson, ErrorsAreInputErrors) {
  EXPECT_THROW(anthropic::response_from_json(R"({"content":[{"type":"text","text":"cut)"), InputError);
  try {
    anthropic::response_from_json(
        R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("Overloaded"), std::string::npos);
  }
  EXPECT_THROW(anthropic::response_from_json(R"({"content":[{"type":"tool_use","name":"x","input":{}}]})"),
               InputError);  // tool_use without id
}

TEST(AnthropicJson, DeepInputAndAbsurdCountsAreInvalid) {
  std::string nested;
  for (int i = 0; i < 100000; ++i) nested += R"({"a":)";
  nested += "{}" + std::string(100000, '}');
  std::string deep = R"({"content":[{"type":"tool_use","id":"t","name":"search","input":)" + nested + "}]}";
  try {
    anthropic::response_from_json(deep);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("nests deeper than 128 levels"), std::string::npos) << e.what();
  }
  // Each part near INT64_MAX: refused before the three are summed.
  EXPECT_THROW(anthropic::response_from_json(
                   R"({"content":[],"usage":{"input_tokens":4611686018427387904,"cache_read_input_tokens":4611686018427387904}})"),
               InputError);
  EXPECT_THROW(anthropic::response_from_json(R"({"content":[],"usage":{"output_tokens":-3}})"), InputError);
  // Within the limit the sum is exact.
  EXPECT_EQ(anthropic::response_from_json(
                R"({"content":[],"usage":{"input_tokens":1000000000,"cache_read_input_tokens":1000000000,"cache_creation_input_tokens":1000000000}})")
                .usage.input_tokens,
            3000000000);
}

// Shapes a hostile endpoint may send: each is parsed or refused with an
// InputError, never another exception.
TEST(AnthropicJson, OddShapesAreInputErrorsOnly) {
  for (const char* body :
       {R"([])", R"("text")", R"({"type": 5, "content": []})", R"({"content": [1, null, "x", []]})",
        R"({"content": [{"type": 7}, {"type": "text", "text": 3}]})", R"({"content": {"type": "text"}})",
        R"({"content": [{"type": "tool_use", "id": 1, "name": "x", "input": {}}]})",
        R"({"content": [], "usage": {"input_tokens": "many"}})", R"({"content": [], "usage": [1]})",
        R"({"content": [], "stop_reason": 3})", R"({"type": "error", "error": 5})"}) {
    try {
      anthropic::response_from_json(body);
    } catch (const InputError&) {
    } catch (const std::exception& e) {
      ADD_FAILURE() << body << ": " << e.what();
    }
  }
}

TEST(AnthropicJson, DeepArgumentsCannotBeSent) {
  ChatRequest request;
  request.model = "m";
  request.messages = {{Role::user, "Q", {}, {}, {}},
                      {Role::assistant, "", {{"t", "search", std::string(100000, '[') + std::string(100000, ']')}}, {}, {}}};
  try {
    anthropic::request_to_json(request);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("nest deeper than 128 levels"), std::string::npos) << e.what();
  }
}

ChatRequest sample_request(CacheBreakpoints breakpoints) {
  ChatRequest request;
  request.model = "claude-sonnet-4-5";
  request.breakpoints = breakpoints;
  request.messages = {{Role::system, "Protocol.", {}, {}, {}},
                      {Role::user, "Q?", {}, {}, {}},
                      {Role::assistant, "Looking.", {{"t1", "search", R"({"query":"q"})"}, {"t2", "browse", "{}"}}, {}, {}},
                      {Role::tool, "r1", {}, "t1", "search"},
                      {Role::tool, "r2", {}, "t2", "browse"}};
  request.tools = {{"search", "Search.", R"({"type":"object"})"}, {"browse", "Browse.", R"({"type":"object"})"}};
  return request;
}

TEST(AnthropicJson, ParallelToolResultsMergeIntoOneUserMessage) {
  json body = json::parse(anthropic::request_to_json(sample_request(CacheBreakpoints::none)));
  EXPECT_EQ(body["system"][0]["text"], "Protocol.");
  ASSERT_EQ(body["messages"].size(), 3u);
  EXPECT_EQ(body["messages"][1]["content"][1],
            json::parse(R"({"type":"tool_use","id":"t1","name":"search","input":{"query":"q"}})"));
  EXPECT_EQ(body["messages"][2]["role"], "user");
  ASSERT_EQ(body["messages"][2]["content"].size(), 2u);
  EXPECT_EQ(body["messages"][2]["content"][1],
            json::parse(R"({"type":"tool_result","tool_use_id":"t2","content":"r2"})"));
  EXPECT_EQ(body["tools"][0]["input_schema"], json::parse(R"({"type":"object"})"));
  EXPECT_FALSE(body.dump().find("cache_control") != std::string::npos);
}

TEST(AnthropicJson, BreakpointsMarkToolsSystemAndLastMessage) {
  json body = json::parse(anthropic::request_to_json(sample_request(CacheBreakpoints::tools_system_and_last_message)));
  json ephemeral = {{"type", "ephemeral"}};
  EXPECT_EQ(body["tools"][1]["cache_control"], ephemeral);
  EXPECT_FALSE(body["tools"][0].contains("cache_control"));
  EXPECT_EQ(body["system"][0]["cache_control"], ephemeral);
  EXPECT_EQ(body["messages"][2]["content"][1]["cache_control"], ephemeral);
  EXPECT_FALSE(body["messages"][2]["content"][0].contains("cache_control"));
}

TEST(AnthropicJson, RequestRoundTrips) {
  for (CacheBreakpoints b : {CacheBreakpoints::none, CacheBreakpoints::tools_and_system,
                             CacheBreakpoints::tools_system_and_last_message}) {
    ChatRequest request = sample_request(b);
    ChatRequest back = anthropic::request_from_json(anthropic::request_to_json(request));
    for (Message& m : request.messages) m.name.clear();
    EXPECT_EQ(back, request);
  }
}

TEST(AnthropicJson, BadArgumentsCannotBeSent) {
  ChatRequest request = sample_request(CacheBreakpoints::none);
  request.messages[2].tool_calls[0].arguments = "{not json";
  EXPECT_THROW(anthropic::request_to_json(request), InputError);
}

TEST(AnthropicJson, ResponseRoundTripsThroughRawUsage) {
  ChatResponse r = anthropic::response_from_json(kToolUseResponse);
  json body = json::parse(anthropic::response_to_json(r, "msg_1"));
  EXPECT_EQ(body["usage"]["input_tokens"], 50);
  EXPECT_EQ(anthropic::response_from_json(body.dump()), r);
}

}  // namespace
}  // namespace okfbench::agents
