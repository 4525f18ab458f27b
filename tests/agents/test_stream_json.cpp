// Streamed replies written from non-streamed ones carry the same text, tool calls and usage.
#include "agents/stream_json.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "agents/anthropic_json.hpp"
#include "agents/openai_json.hpp"
#include "core/error.hpp"

namespace okfbench::agents {
namespace {
using json = nlohmann::json;

ChatResponse sample() {
  ChatResponse r;
  r.model = "m";
  r.message.role = Role::assistant;
  r.message.content = "Check the replica lag first, then the plan cache — ünïcødé too.";
  r.message.tool_calls = {{"call_1", "search", R"({"query":"replica lag after failover"})"}};
  r.stop = StopReason::tool_calls;
  r.usage = Usage{1200, 1000, 0, 37};
  return r;
}

json data_of(const std::string& event) {
  std::size_t at = event.find("data: ");
  return json::parse(event.substr(at + 6));
}

TEST(StreamJson, PiecesJoinToTheTextAndNeverSplitAUtf8Sequence) {
  std::string text = "ééééééééééééééééééé a b";
  std::string joined;
  for (const std::string& piece : stream_pieces(text)) {
    EXPECT_LE(piece.size(), 16u);
    EXPECT_FALSE(piece.empty());
    EXPECT_NE(static_cast<unsigned char>(piece[0]) & 0xC0, 0x80) << "a piece starts inside a sequence";
    joined += piece;
  }
  EXPECT_EQ(joined, text);
  EXPECT_TRUE(stream_pieces("").empty());
}

TEST(StreamJson, OpenAIChunksRebuildTheCompletionAndCarryUsageOnlyWhenAsked) {
  std::string completion = openai::response_to_json(sample(), "chatcmpl-1");
  std::vector<std::string> events = openai_stream_events(completion, true);
  ASSERT_EQ(events.back(), "data: [DONE]\n\n");
  std::string text, arguments, name, finish;
  json usage;
  for (std::size_t i = 0; i + 1 < events.size(); ++i) {
    json chunk = data_of(events[i]);
    EXPECT_EQ(chunk["object"], "chat.completion.chunk");
    if (chunk.contains("usage")) usage = chunk["usage"];
    if (chunk["choices"].empty()) continue;
    const json& choice = chunk["choices"][0];
    if (choice["finish_reason"].is_string()) finish = choice["finish_reason"];
    const json& delta = choice["delta"];
    if (delta.contains("content")) text += delta["content"].get<std::string>();
    if (delta.contains("tool_calls")) {
      const json& f = delta["tool_calls"][0]["function"];
      if (f.contains("name")) name = f["name"];
      arguments += f["arguments"].get<std::string>();
    }
  }
  EXPECT_EQ(text, sample().message.content);
  EXPECT_EQ(name, "search");
  EXPECT_EQ(arguments, sample().message.tool_calls[0].arguments);
  EXPECT_EQ(finish, "tool_calls");
  EXPECT_EQ(usage["prompt_tokens"], 1200);
  EXPECT_EQ(usage["prompt_tokens_details"]["cached_tokens"], 1000);
  EXPECT_EQ(usage["completion_tokens"], 37);
  for (const std::string& event : openai_stream_events(completion, false))
    EXPECT_EQ(event.find("\"usage\""), std::string::npos) << "usage sent although not asked: " << event;
}

TEST(StreamJson, AnthropicEventsCarryInputAtStartAndOutputAtTheEnd) {
  std::string message = anthropic::response_to_json(sample(), "msg_1");
  std::vector<std::string> events = anthropic_stream_events(message);
  ASSERT_TRUE(events.front().starts_with("event: message_start\n"));
  ASSERT_TRUE(events.back().starts_with("event: message_stop\n"));
  json start = data_of(events.front())["message"];
  json full = json::parse(message);
  EXPECT_EQ(start["usage"]["input_tokens"], full["usage"]["input_tokens"]);
  EXPECT_EQ(start["usage"]["cache_read_input_tokens"], full["usage"]["cache_read_input_tokens"]);
  EXPECT_EQ(start["usage"]["output_tokens"], 1);
  EXPECT_TRUE(start["content"].empty());
  std::string text, input;
  for (const std::string& event : events) {
    json data = data_of(event);
    EXPECT_TRUE(event.starts_with("event: " + data["type"].get<std::string>() + "\n"));
    if (data["type"] == "content_block_delta") {
      if (data["delta"]["type"] == "text_delta") text += data["delta"]["text"].get<std::string>();
      else input += data["delta"]["partial_json"].get<std::string>();
    }
    if (data["type"] == "message_delta") {
      EXPECT_EQ(data["usage"]["output_tokens"], 37);
      EXPECT_EQ(data["delta"]["stop_reason"], "tool_use");
    }
  }
  EXPECT_EQ(text, sample().message.content);
  EXPECT_EQ(json::parse(input), json::parse(sample().message.tool_calls[0].arguments));
}

TEST(StreamJson, AReplyThatIsNotJsonIsAnInputError) {
  EXPECT_THROW(openai_stream_events("not json", true), InputError);
  EXPECT_THROW(anthropic_stream_events("[1]"), InputError);
}

std::string joined(const std::vector<std::string>& events) {
  std::string body;
  for (const std::string& e : events) body += e;
  return body;
}

TEST(StreamJson, AStreamRebuildsIntoTheSameResponseOnBothWires) {
  ChatResponse r = sample();
  std::string completion = openai::response_to_json(r, "chatcmpl-1");
  EXPECT_EQ(openai::response_from_json(openai_completion_from_stream(joined(openai_stream_events(completion, true)))),
            openai::response_from_json(completion));
  std::string message = anthropic::response_to_json(r, "msg_1");
  ChatResponse back = anthropic::response_from_json(anthropic_message_from_stream(joined(anthropic_stream_events(message))));
  EXPECT_EQ(back, anthropic::response_from_json(message));
}

TEST(StreamJson, ACutOrFailedStreamIsAnInputError) {
  std::vector<std::string> openai = openai_stream_events(openai::response_to_json(sample(), "x"), true);
  openai.pop_back();
  EXPECT_THROW(openai_completion_from_stream(joined(openai)), InputError);
  std::vector<std::string> anthropic = anthropic_stream_events(anthropic::response_to_json(sample(), "x"));
  anthropic.pop_back();
  EXPECT_THROW(anthropic_message_from_stream(joined(anthropic)), InputError);
  EXPECT_THROW(anthropic_message_from_stream("event: error\ndata: {\"type\":\"error\",\"error\":{\"message\":\"overloaded\"}}\n\n"),
               InputError);
  EXPECT_THROW(openai_completion_from_stream("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":99999999}]}}]}\n\ndata: [DONE]\n\n"),
               InputError);
}

}  // namespace
}  // namespace okfbench::agents
