#include "agents/stream_json.hpp"

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/json_text.hpp"

namespace okfbench::agents {
namespace {
using json = nlohmann::json;

constexpr std::size_t kPiece = 16;

json parse_reply(std::string_view text, std::string_view what) {
  json doc = json::parse(text, nullptr, false);
  if (!doc.is_object()) throw InputError(std::string(what) + ": the reply to stream is not a JSON object");
  return doc;
}

std::string data_event(const json& data) { return "data: " + json_text(data) + "\n\n"; }

std::string named_event(std::string_view name, const json& data) {
  return "event: " + std::string(name) + "\ndata: " + json_text(data) + "\n\n";
}

bool continuation_byte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

std::string string_or_empty(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}
}  // namespace

std::vector<std::string> stream_pieces(std::string_view text) {
  std::vector<std::string> pieces;
  while (!text.empty()) {
    std::size_t n = std::min(kPiece, text.size());
    if (n < text.size()) {
      std::size_t space = text.substr(0, n).rfind(' ');
      if (space != std::string_view::npos && space > 0) n = space + 1;
      while (n < text.size() && n > 1 && continuation_byte(text[n])) --n;
    }
    pieces.emplace_back(text.substr(0, n));
    text.remove_prefix(n);
  }
  return pieces;
}

std::vector<std::string> openai_stream_events(std::string_view completion, bool include_usage) {
  const json doc = parse_reply(completion, "OpenAI stream");
  const json choice = doc.value("choices", json::array()).empty() ? json::object() : doc["choices"][0];
  const json message = choice.value("message", json::object());
  json head = {{"id", doc.value("id", "")}, {"object", "chat.completion.chunk"}, {"model", doc.value("model", "")}};
  auto chunk = [&](json delta, json finish) {
    json c = head;
    c["choices"] = json::array({{{"index", 0}, {"delta", std::move(delta)}, {"finish_reason", std::move(finish)}}});
    return data_event(c);
  };
  std::vector<std::string> events{chunk({{"role", "assistant"}, {"content", ""}}, nullptr)};
  for (const std::string& piece : stream_pieces(string_or_empty(message, "content")))
    events.push_back(chunk({{"content", piece}}, nullptr));
  const json calls = message.value("tool_calls", json::array());
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const json function = calls[i].value("function", json::object());
    json start = {{"index", i}, {"id", calls[i].value("id", "")}, {"type", "function"},
                  {"function", {{"name", function.value("name", "")}, {"arguments", ""}}}};
    events.push_back(chunk({{"tool_calls", json::array({start})}}, nullptr));
    for (const std::string& piece : stream_pieces(string_or_empty(function, "arguments")))
      events.push_back(chunk({{"tool_calls", json::array({{{"index", i}, {"function", {{"arguments", piece}}}}})}}, nullptr));
  }
  events.push_back(chunk(json::object(), choice.value("finish_reason", json("stop"))));
  if (include_usage) {
    json last = head;
    last["choices"] = json::array();
    last["usage"] = doc.value("usage", json(nullptr));
    events.push_back(data_event(last));
  }
  events.push_back("data: [DONE]\n\n");
  return events;
}

std::vector<std::string> anthropic_stream_events(std::string_view message) {
  const json doc = parse_reply(message, "Anthropic stream");
  json usage = doc.value("usage", json::object());
  if (!usage.is_object()) usage = json::object();
  json start = doc;
  start["content"] = json::array();
  start["stop_reason"] = nullptr;
  start["stop_sequence"] = nullptr;
  json start_usage = usage;
  start_usage["output_tokens"] = 1;
  start["usage"] = start_usage;
  std::vector<std::string> events{named_event("message_start", {{"type", "message_start"}, {"message", start}})};
  const json blocks = doc.value("content", json::array());
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const json& block = blocks[i];
    bool tool = block.value("type", "") == "tool_use";
    json opened = tool ? json{{"type", "tool_use"}, {"id", block.value("id", "")}, {"name", block.value("name", "")},
                              {"input", json::object()}}
                       : json{{"type", "text"}, {"text", ""}};
    events.push_back(named_event("content_block_start", {{"type", "content_block_start"}, {"index", i}, {"content_block", opened}}));
    std::string body = tool ? json_text(block.value("input", json::object())) : string_or_empty(block, "text");
    for (const std::string& piece : stream_pieces(body)) {
      json delta = tool ? json{{"type", "input_json_delta"}, {"partial_json", piece}} : json{{"type", "text_delta"}, {"text", piece}};
      events.push_back(named_event("content_block_delta", {{"type", "content_block_delta"}, {"index", i}, {"delta", delta}}));
    }
    events.push_back(named_event("content_block_stop", {{"type", "content_block_stop"}, {"index", i}}));
  }
  json delta = {{"stop_reason", doc.value("stop_reason", json("end_turn"))}, {"stop_sequence", nullptr}};
  events.push_back(named_event("message_delta", {{"type", "message_delta"}, {"delta", delta},
                                                 {"usage", {{"output_tokens", usage.value("output_tokens", json(0))}}}}));
  events.push_back(named_event("message_stop", {{"type", "message_stop"}}));
  return events;
}

}  // namespace okfbench::agents
