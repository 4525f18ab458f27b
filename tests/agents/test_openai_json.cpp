#include "agents/openai_json.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace okfbench::agents {
namespace {
using nlohmann::json;

// Shape of the chat.completion example in the OpenAI API reference, with prompt caching details.
constexpr const char* kToolCallResponse = R"({
  "id": "chatcmpl-abc123", "object": "chat.completion", "created": 1699896916, "model": "gpt-4o-2024-08-06",
  "choices": [{"index": 0, "message": {"role": "assistant", "content": null,
     "tool_calls": [{"id": "call_abc123", "type": "function",
                     "function": {"name": "get_current_weather", "arguments": "{\n\"location\": \"Boston, MA\"\n}"}},
                    {"id": "call_def456", "type": "function",
                     "function": {"name": "search", "arguments": "{\"query\":\"slow query\"}"}}]},
     "logprobs": null, "finish_reason": "tool_calls"}],
  "usage": {"prompt_tokens": 2006, "completion_tokens": 300, "total_tokens": 2306,
            "prompt_tokens_details": {"cached_tokens": 1920},
            "completion_tokens_details": {"reasoning_tokens": 0}}
})";

TEST(OpenAIJson, ParsesToolCallsAndNormalisesUsage) {
  ChatResponse r = openai::response_from_json(kToolCallResponse);
  EXPECT_EQ(r.model, "gpt-4o-2024-08-06");
  EXPECT_EQ(r.stop, StopReason::tool_calls);
  EXPECT_EQ(r.message.role, Role::assistant);
  EXPECT_EQ(r.message.content, "");
  ASSERT_EQ(r.message.tool_calls.size(), 2u);
  EXPECT_EQ(r.message.tool_calls[0], (ToolCall{"call_abc123", "get_current_weather", "{\n\"location\": \"Boston, MA\"\n}"}));
  EXPECT_EQ(r.message.tool_calls[1].name, "search");
  // prompt_tokens already includes the cached tokens: input stays 2006, not 2006+1920.
  EXPECT_EQ(r.usage.input_tokens, 2006);
  EXPECT_EQ(r.usage.cached_input_tokens, 1920);
  EXPECT_EQ(r.usage.output_tokens, 300);
  EXPECT_EQ(r.usage.cache_write_tokens, std::nullopt);  // OpenAI never reports writes
}

TEST(OpenAIJson, MissingUsageStaysUnknown) {
  ChatResponse r = openai::response_from_json(
      R"({"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]})");
  EXPECT_EQ(r.message.content, "hi");
  EXPECT_EQ(r.stop, StopReason::end_turn);
  EXPECT_EQ(r.usage, Usage{});
  ChatResponse no_details = openai::response_from_json(
      R"({"choices":[{"message":{"role":"assistant","content":"x"},"finish_reason":"length"}],
          "usage":{"prompt_tokens":10,"completion_tokens":2}})");
  EXPECT_EQ(no_details.usage.input_tokens, 10);
  EXPECT_EQ(no_details.usage.cached_input_tokens, std::nullopt);  // not said, so not 0
  EXPECT_EQ(no_details.stop, StopReason::max_tokens);
}

TEST(OpenAIJson, MalformedTruncatedAndErrorBodiesAreInputErrors) {
  std::string truncated = std::string(kToolCallResponse).substr(0, 120);
  try {
    openai::response_from_json(truncated);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("malformed or truncated JSON"), std::string::npos) << e.what();
  }
  EXPECT_THROW(openai::response_from_json(R"({"object":"chat.completion"})"), InputError);
  EXPECT_THROW(openai::response_from_json(R"({"choices":[]})"), InputError);
  try {
    openai::response_from_json(R"({"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}})");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("Incorrect API key provided"), std::string::npos);
  }
  EXPECT_THROW(openai::response_from_json(
                   R"({"choices":[{"message":{"role":"assistant"}}],"usage":{"prompt_tokens":"ten"}})"),
               InputError);
}

std::string reply_with_usage(const std::string& usage) {
  return R"({"choices":[{"message":{"role":"assistant","content":"x"},"finish_reason":"stop"}],"usage":)" + usage + "}";
}

std::string error_of(const std::string& body) {
  try {
    openai::response_from_json(body);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(OpenAIJson, NegativeAbsurdAndInconsistentCountsAreInvalid) {
  EXPECT_NE(error_of(reply_with_usage(R"({"prompt_tokens":-1})")).find("'prompt_tokens' must be an integer from 0 to 1000000000"),
            std::string::npos);
  EXPECT_NE(error_of(reply_with_usage(R"({"prompt_tokens":9223372036854775807})")).find("from 0 to 1000000000, got 9223372036854775807"),
            std::string::npos);
  EXPECT_NE(error_of(reply_with_usage(R"({"completion_tokens":18446744073709551615})")).find("'completion_tokens'"),
            std::string::npos);  // above INT64_MAX
  EXPECT_NE(error_of(reply_with_usage(R"({"prompt_tokens":1e300})")).find("'prompt_tokens'"), std::string::npos);
  EXPECT_NE(error_of(reply_with_usage(R"({"prompt_tokens":10,"prompt_tokens_details":{"cached_tokens":11}})"))
                .find("cached_tokens (11) exceeds prompt_tokens (10)"),
            std::string::npos);
  EXPECT_EQ(openai::response_from_json(reply_with_usage(R"({"prompt_tokens":1000000000})")).usage.input_tokens, 1000000000);
}

// Shapes a hostile endpoint may send: each is parsed or refused with an
// InputError, never another exception.
TEST(OpenAIJson, OddShapesAreInputErrorsOnly) {
  for (const char* body :
       {R"([])", R"(5)", R"({"choices": {}})", R"({"choices": [1]})", R"({"choices": [{"message": []}]})",
        R"({"choices": [{"message": {"role": 1}}]})", R"({"choices": [{"message": {"role": "assistant", "content": [1, {"text": 2}]}}]})",
        R"({"choices": [{"message": {"role": "assistant", "tool_calls": [1]}}]})",
        R"({"choices": [{"message": {"role": "assistant", "tool_calls": [{"function": {"name": 1}}]}}]})",
        R"({"choices": [{"message": {"role": "assistant", "tool_calls": [{"function": {"name": "x", "arguments": {}}}]}}]})",
        R"({"choices": [{"message": {"role": "assistant"}, "finish_reason": 1}]})",
        R"({"choices": [{"message": {"role": "assistant"}}], "usage": {"prompt_tokens_details": 3}})",
        R"({"error": 7})"}) {
    try {
      openai::response_from_json(body);
    } catch (const InputError&) {
    } catch (const std::exception& e) {
      ADD_FAILURE() << body << ": " << e.what();
    }
  }
}

TEST(OpenAIJson, DeepNestingIsRefusedBeforeParsing) {
  std::string deep_reply = R"({"choices":[{"message":{"role":"assistant","content":)" + std::string(100000, '[') +
                           std::string(100000, ']') + "}}]}";
  EXPECT_NE(error_of(deep_reply).find("nests deeper than 128 levels"), std::string::npos);
  std::string deep_arguments = R"({"choices":[{"message":{"role":"assistant","tool_calls":[{"id":"c","function":{"name":"search","arguments":")" +
                               std::string(100000, '[') + std::string(100000, ']') + R"("}}]}}]})";
  EXPECT_NE(error_of(deep_arguments).find("the arguments of tool call 'search' nest deeper than 128 levels"),
            std::string::npos);
  std::string fine = R"({"choices":[{"message":{"role":"assistant","tool_calls":[{"id":"c","function":{"name":"search","arguments":")" +
                     std::string(100, '[') + std::string(100, ']') + R"("}}]}}]})";
  EXPECT_EQ(openai::response_from_json(fine).message.tool_calls.size(), 1u);
}

TEST(OpenAIJson, InvalidUtf8InARequestIsReplacedWhenSerialised) {
  ChatRequest request;
  request.model = "m";
  request.messages = {{Role::user, "caf\xE9 \xFF", {}, {}, {}}};
  json body = json::parse(openai::request_to_json(request));  // would throw on invalid UTF-8
  EXPECT_EQ(body["messages"][0]["content"], "caf\xEF\xBF\xBD \xEF\xBF\xBD");
}

ChatRequest sample_request() {
  ChatRequest request;
  request.model = "gpt-4o";
  request.max_tokens = 512;
  request.temperature = 0.0;
  request.messages = {{Role::system, "You answer from the bundle.", {}, {}, {}},
                      {Role::user, "What is DAU?", {}, {}, {}},
                      {Role::assistant, "", {{"call_1", "search", R"({"query":"DAU"})"},
                                             {"call_2", "open", R"({"concept_id":"metrics/dau"})"}}, {}, {}},
                      {Role::tool, R"([{"id":"metrics/dau"}])", {}, "call_1", "search"},
                      {Role::tool, R"({"id":"metrics/dau","body":"..."})", {}, "call_2", "open"}};
  request.tools = {{"search", "Ranked search.", R"({"type":"object","properties":{"query":{"type":"string"}},"required":["query"]})"}};
  return request;
}

TEST(OpenAIJson, RequestSerialisesInChatCompletionsShape) {
  json body = json::parse(openai::request_to_json(sample_request()));
  EXPECT_EQ(body["model"], "gpt-4o");
  EXPECT_EQ(body["max_tokens"], 512);
  ASSERT_EQ(body["messages"].size(), 5u);
  EXPECT_EQ(body["messages"][0], json::parse(R"({"role":"system","content":"You answer from the bundle."})"));
  EXPECT_TRUE(body["messages"][2]["content"].is_null());
  EXPECT_EQ(body["messages"][2]["tool_calls"][1],
            json::parse(R"({"id":"call_2","type":"function","function":{"name":"open","arguments":"{\"concept_id\":\"metrics/dau\"}"}})"));
  EXPECT_EQ(body["messages"][3]["tool_call_id"], "call_1");
  EXPECT_EQ(body["tools"][0]["type"], "function");
  EXPECT_EQ(body["tools"][0]["function"]["parameters"]["required"][0], "query");
}

TEST(OpenAIJson, RequestRoundTrips) {
  ChatRequest request = sample_request();
  ChatRequest back = openai::request_from_json(openai::request_to_json(request));
  // The tool name on tool messages is not part of the OpenAI wire format.
  for (Message& m : request.messages) m.name.clear();
  // Schema text is re-serialised compactly; compare as JSON.
  EXPECT_EQ(json::parse(back.tools[0].parameters), json::parse(request.tools[0].parameters));
  back.tools[0].parameters = request.tools[0].parameters;
  EXPECT_EQ(back, request);
}

TEST(OpenAIJson, ResponseRoundTrips) {
  ChatResponse r = openai::response_from_json(kToolCallResponse);
  EXPECT_EQ(openai::response_from_json(openai::response_to_json(r, "chatcmpl-1")), r);
}

}  // namespace
}  // namespace okfbench::agents
