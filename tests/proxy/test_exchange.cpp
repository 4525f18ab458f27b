// The log's arithmetic: conversations and re-sent tokens, usage read from bodies and streams, redaction.
#include "proxy/exchange.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "agents/anthropic_json.hpp"
#include "agents/openai_json.hpp"
#include "agents/stream_json.hpp"
#include "retrieval/tokens.hpp"

namespace okfbench::proxy {
namespace {
using agents::Message;
using agents::Role;
using nlohmann::json;

Message msg(Role role, std::string text) {
  Message m;
  m.role = role;
  m.content = std::move(text);
  return m;
}

retrieval::HeuristicCounter counter;  // ceil(bytes / 4): easy to check by hand

TEST(Conversations, ARequestThatExtendsAnEarlierOneContinuesItsChain) {
  Conversations c;
  std::vector<Message> first = {msg(Role::system, "sys"), msg(Role::user, "q")};
  Link a = c.link(Api::chat_completions, first);
  EXPECT_EQ(a.turn, 1);
  EXPECT_EQ(a.shared_messages, 0u);
  std::vector<Message> second = first;
  second.push_back(msg(Role::assistant, "calling"));
  second.push_back(msg(Role::tool, "result"));
  Link b = c.link(Api::chat_completions, second);
  EXPECT_EQ(b.conversation, a.conversation);
  EXPECT_EQ(b.turn, 2);
  EXPECT_EQ(b.shared_messages, 2u);
  // A second conversation with the same system prompt is not mistaken for a turn of the first.
  Link other = c.link(Api::chat_completions, {msg(Role::system, "sys"), msg(Role::user, "another question")});
  EXPECT_NE(other.conversation, a.conversation);
  EXPECT_EQ(other.turn, 1);
}

TEST(Conversations, EditedOrTruncatedHistoryStartsANewChain) {
  Conversations c;
  std::vector<Message> history = {msg(Role::system, "sys"), msg(Role::user, "q"), msg(Role::assistant, "a"),
                                  msg(Role::user, "more")};
  Link a = c.link(Api::messages, history);
  std::vector<Message> edited = history;
  edited[2].content = "a, summarised";
  Link b = c.link(Api::messages, edited);
  EXPECT_NE(b.conversation, a.conversation);
  EXPECT_EQ(b.shared_messages, 0u);
  // Truncated: the earlier request is no prefix of this one.
  Link t = c.link(Api::messages, {history[0], history[3]});
  EXPECT_NE(t.conversation, a.conversation);
  EXPECT_EQ(t.shared_messages, 0u);
}

TEST(Conversations, TheLongestEarlierPrefixIsTheParentAndWiresDoNotMix) {
  Conversations c;
  std::vector<Message> one = {msg(Role::user, "q")};
  std::vector<Message> two = {msg(Role::user, "q"), msg(Role::assistant, "a"), msg(Role::user, "q2")};
  Link a = c.link(Api::chat_completions, one);
  Link b = c.link(Api::chat_completions, two);
  std::vector<Message> three = two;
  three.push_back(msg(Role::assistant, "a2"));
  Link d = c.link(Api::chat_completions, three);
  EXPECT_EQ(d.shared_messages, 3u);
  EXPECT_EQ(d.turn, 3);
  EXPECT_EQ(b.conversation, a.conversation);
  Link other_wire = c.link(Api::messages, three);
  EXPECT_EQ(other_wire.shared_messages, 0u);
  // A retry of the same request re-sends all of it.
  Link retry = c.link(Api::chat_completions, three);
  EXPECT_EQ(retry.shared_messages, 4u);
}

TEST(Tokens, ResentIsThePrefixsMessageTokensAndToolsCountApart) {
  agents::ChatRequest r;
  r.messages = {msg(Role::system, std::string(40, 's')), msg(Role::user, std::string(8, 'u'))};
  Message call = msg(Role::assistant, "");
  call.tool_calls = {{"c1", "search", R"({"query":"lag"})"}};  // 6 + 15 bytes -> 2 + 4 tokens
  r.messages.push_back(call);
  r.messages.push_back(msg(Role::tool, std::string(100, 'r')));
  r.messages.back().tool_call_id = "c1";
  r.tools = {{"search", "Search the bundle", R"({"type":"object"})"}};
  TokenCounts t = count_tokens(r, 2, counter);
  EXPECT_EQ(t.resent, 10 + 2);
  EXPECT_EQ(t.tool_definitions, static_cast<std::int64_t>(counter.count(agents::openai::tools_to_json(r.tools))));
  EXPECT_EQ(t.fresh, 2 + 4 + 25);
  EXPECT_EQ(t.request, t.resent + t.fresh + t.tool_definitions);
  json results = tool_results(r, 2);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0]["tool_call_id"], "c1");
  EXPECT_EQ(results[0]["tool"], "search");
  EXPECT_EQ(results[0]["bytes"], 100);
  EXPECT_TRUE(tool_results(r, 4).empty()) << "tool results already in the prefix are not listed again";
}

agents::ChatResponse reply() {
  agents::ChatResponse r;
  r.model = "m";
  r.message.role = Role::assistant;
  r.message.content = "A streamed answer in several pieces.";
  r.usage = agents::Usage{500, 400, 50, 21};
  return r;
}

void feed_in_odd_pieces(UsageReader& reader, const std::vector<std::string>& events) {
  std::string all;
  for (const std::string& e : events) all += e;
  for (std::size_t at = 0; at < all.size(); at += 7) reader.feed(std::string_view(all).substr(at, 7));
  reader.finish();
}

TEST(UsageReader, OpenAIStreamUsageComesFromTheIncludeUsageChunk) {
  std::string completion = agents::openai::response_to_json(reply(), "x");
  UsageReader with(Api::chat_completions, true);
  feed_in_odd_pieces(with, agents::openai_stream_events(completion, true));
  EXPECT_TRUE(with.reported());
  EXPECT_TRUE(with.stream_ended());
  EXPECT_EQ(with.usage().input_tokens, 500);
  EXPECT_EQ(with.usage().cached_input_tokens, 400);
  EXPECT_EQ(with.usage().output_tokens, 21);
  UsageReader without(Api::chat_completions, true);
  feed_in_odd_pieces(without, agents::openai_stream_events(completion, false));
  EXPECT_FALSE(without.reported()) << "no usage chunk: usage is unknown, not 0";
  EXPECT_TRUE(without.stream_ended());
}

TEST(UsageReader, AnthropicStreamTakesInputFromMessageStartAndOutputFromMessageDelta) {
  std::string message = agents::anthropic::response_to_json(reply(), "x");
  UsageReader r(Api::messages, true);
  std::vector<std::string> events = agents::anthropic_stream_events(message);
  for (std::string& e : events)  // CRLF line ends, as some servers send
    for (std::size_t at = 0; (at = e.find('\n', at)) != std::string::npos; at += 2) e.replace(at, 1, "\r\n");
  feed_in_odd_pieces(r, events);
  EXPECT_EQ(r.usage(), reply().usage);
  EXPECT_TRUE(r.stream_ended());
  EXPECT_EQ(r.events(), events.size());
}

TEST(UsageReader, ACutStreamHasNotEndedAndKeepsWhatCameBefore) {
  std::string message = agents::anthropic::response_to_json(reply(), "x");
  std::vector<std::string> events = agents::anthropic_stream_events(message);
  events.resize(2);
  UsageReader r(Api::messages, true);
  feed_in_odd_pieces(r, events);
  EXPECT_FALSE(r.stream_ended());
  EXPECT_EQ(r.usage().output_tokens, 1) << "message_start's count; the final one never came";
}

TEST(UsageReader, BodiesOfEachApiAndHostileCounts) {
  UsageReader chat(Api::chat_completions, false);
  chat.feed(agents::openai::response_to_json(reply(), "x"));
  chat.finish();
  EXPECT_EQ(chat.usage().output_tokens, 21);
  UsageReader responses(Api::responses, false);
  responses.feed(R"({"usage": {"input_tokens": 30, "input_tokens_details": {"cached_tokens": 10}, "output_tokens": 5}})");
  responses.finish();
  EXPECT_EQ(responses.usage(), (agents::Usage{30, 10, std::nullopt, 5}));
  UsageReader hostile(Api::chat_completions, false);
  hostile.feed(R"({"usage": {"prompt_tokens": -5, "completion_tokens": 1e300}})");
  hostile.finish();
  EXPECT_FALSE(hostile.reported());
  UsageReader deep(Api::chat_completions, true);
  deep.feed("data: " + std::string(100000, '[') + "\n\n");
  deep.finish();
  EXPECT_FALSE(deep.reported());
}

TEST(ReadRequest, BodiesThatAreNotJsonOrNotUtf8AreProblemsNotCrashes) {
  for (std::string body : {std::string("{not json"), std::string("{\"model\": \"m\xFF\"}"), std::string("[]"),
                           std::string(100000, '[')}) {
    RequestFacts f = read_request(Api::chat_completions, body);
    EXPECT_FALSE(f.request.has_value());
    EXPECT_FALSE(f.problem.empty());
  }
  RequestFacts ok = read_request(Api::chat_completions,
                                 R"({"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]})");
  ASSERT_TRUE(ok.request.has_value()) << ok.problem;
  EXPECT_TRUE(ok.stream);
  EXPECT_TRUE(ok.include_usage);
}

TEST(ReadRequest, ResponsesInputBecomesMessagesWithToolCallsAndResults) {
  RequestFacts f = read_request(Api::responses, R"({"model":"m","instructions":"be brief","input":[
    {"role":"user","content":[{"type":"input_text","text":"why lag?"}]},
    {"type":"function_call","call_id":"c1","name":"search","arguments":"{}"},
    {"type":"function_call","call_id":"c2","name":"open","arguments":"{}"},
    {"type":"function_call_output","call_id":"c1","output":"hits"}],
    "tools":[{"type":"function","name":"search","parameters":{"type":"object"}}]})");
  ASSERT_TRUE(f.request.has_value()) << f.problem;
  ASSERT_EQ(f.request->messages.size(), 4u);
  EXPECT_EQ(f.request->messages[0].role, Role::system);
  EXPECT_EQ(f.request->messages[1].content, "why lag?");
  EXPECT_EQ(f.request->messages[2].tool_calls.size(), 2u);
  EXPECT_EQ(f.request->messages[3].role, Role::tool);
  EXPECT_EQ(tool_results(*f.request, 0)[0]["tool"], "search");
  EXPECT_EQ(f.request->tools.size(), 1u);
}

TEST(ExchangeRecord, SecretsNeverReachTheRecordAndUnknownUsageIsSaidSo) {
  Exchange x;
  x.facts = read_request(Api::chat_completions, R"({"model":"sk-live-SECRET-123","stream":true,"messages":[{"role":"user","content":"hi"}]})");
  x.status = 200;
  x.errors.push_back("upstream status 401: Incorrect API key provided: sk-live-SECRET-123");
  UsageReader usage(Api::chat_completions, true);
  usage.finish();
  Conversations c;
  std::optional<Link> link = c.link(Api::chat_completions, x.facts.request->messages);
  std::string line = exchange_record(x, usage, link, counter, {"sk-live-SECRET-123"});
  EXPECT_EQ(line.find("SECRET"), std::string::npos) << line;
  json record = json::parse(line);
  EXPECT_TRUE(record["usage"].is_null());
  EXPECT_NE(record["usage_unknown"].get<std::string>().find("include_usage"), std::string::npos);
  EXPECT_EQ(record["schema"], kRecordSchema);
  EXPECT_EQ(record["request_tokens"], 1);
}

}  // namespace
}  // namespace okfbench::proxy
