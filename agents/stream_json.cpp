#include "agents/stream_json.hpp"

#include <fmt/format.h>
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
// The data of each event in a stream body, in order (events end at a blank line, LF or CRLF).
std::vector<std::string> event_data(std::string_view body) {
  std::vector<std::string> out;
  std::string data;
  bool any = false;
  std::size_t start = 0;
  while (start < body.size()) {
    std::size_t end = body.find('\n', start);
    std::string_view line = body.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    start = end == std::string_view::npos ? body.size() : end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) {
      if (any) out.push_back(std::move(data));
      data.clear();
      any = false;
    } else if (line.starts_with("data:")) {
      line.remove_prefix(5);
      if (line.starts_with(' ')) line.remove_prefix(1);
      if (any) data += '\n';
      data.append(line);
      any = true;
    }
  }
  if (any) out.push_back(std::move(data));
  return out;
}

json event_json(const std::string& data, std::string_view what) {
  json doc = json::parse(data, nullptr, false);
  if (!doc.is_object()) throw InputError(fmt::format("{}: an event is not a JSON object: {}", what, data.substr(0, 100)));
  if (doc.contains("error") && doc["error"].is_object())
    throw InputError(fmt::format("{}: the stream carried an error: {}", what, json_text(doc["error"]).substr(0, 300)));
  return doc;
}

json& object_at(json& parent, const char* key) {
  if (!parent.contains(key) || !parent[key].is_object()) parent[key] = json::object();
  return parent[key];
}
}  // namespace

std::string openai_completion_from_stream(std::string_view body) {
  constexpr std::string_view what = "OpenAI stream";
  json message = {{"role", "assistant"}, {"content", nullptr}};
  json calls = json::array();
  json out = {{"object", "chat.completion"}};
  json finish = nullptr;
  bool ended = false;
  for (const std::string& data : event_data(body)) {
    if (data == "[DONE]") {
      ended = true;
      break;
    }
    json chunk = event_json(data, what);
    for (const char* key : {"id", "model"})
      if (chunk.contains(key) && chunk[key].is_string()) out[key] = chunk[key];
    if (chunk.contains("usage") && chunk["usage"].is_object()) out["usage"] = chunk["usage"];
    const json choices = chunk.value("choices", json::array());
    if (!choices.is_array() || choices.empty() || !choices[0].is_object()) continue;
    if (choices[0].contains("finish_reason") && choices[0]["finish_reason"].is_string()) finish = choices[0]["finish_reason"];
    const json delta = choices[0].value("delta", json::object());
    if (!delta.is_object()) continue;
    if (delta.contains("content") && delta["content"].is_string())
      message["content"] = (message["content"].is_string() ? message["content"].get<std::string>() : "") + delta["content"].get<std::string>();
    for (const json& part : delta.value("tool_calls", json::array())) {
      if (!part.is_object() || !part.contains("index") || !part["index"].is_number_unsigned()) continue;
      auto index = part["index"].get<std::size_t>();
      if (index > 100000) throw InputError(fmt::format("{}: tool call index {} is absurd", what, index));
      while (calls.size() <= index) calls.push_back({{"type", "function"}, {"function", {{"name", ""}, {"arguments", ""}}}});
      json& call = calls[index];
      if (part.contains("id") && part["id"].is_string()) call["id"] = part["id"];
      const json f = part.value("function", json::object());
      if (!f.is_object()) continue;
      json& function = object_at(call, "function");
      for (const char* key : {"name", "arguments"})
        if (f.contains(key) && f[key].is_string()) function[key] = function.value(key, "") + f[key].get<std::string>();
    }
  }
  if (!ended) throw InputError(fmt::format("{}: cut short (no [DONE])", what));
  if (!calls.empty()) message["tool_calls"] = calls;
  out["choices"] = json::array({{{"index", 0}, {"message", message}, {"finish_reason", finish}}});
  return json_text(out);
}

std::string anthropic_message_from_stream(std::string_view body) {
  constexpr std::string_view what = "Anthropic stream";
  json message;
  std::vector<std::string> partial;  // input_json_delta text per block
  bool ended = false;
  for (const std::string& data : event_data(body)) {
    json event = event_json(data, what);
    std::string type = string_or_empty(event, "type");
    if (type == "error") throw InputError(fmt::format("{}: the stream carried an error: {}", what, data.substr(0, 300)));
    if (type == "message_start") {
      message = event.value("message", json::object());
      if (!message.is_object()) throw InputError(fmt::format("{}: message_start without a message", what));
      message["content"] = json::array();
      continue;
    }
    if (!message.is_object()) throw InputError(fmt::format("{}: '{}' before message_start", what, type));
    if (type == "message_stop") {
      ended = true;
      break;
    }
    std::size_t index = event.contains("index") && event["index"].is_number_unsigned() ? event["index"].get<std::size_t>() : 0;
    if (index > 100000) throw InputError(fmt::format("{}: block index {} is absurd", what, index));
    json& content = message["content"];
    if (type == "content_block_start") {
      while (content.size() <= index) content.push_back(json::object());
      partial.resize(content.size());
      content[index] = event.value("content_block", json::object());
    } else if (type == "content_block_delta" && index < content.size()) {
      const json delta = event.value("delta", json::object());
      if (!delta.is_object()) continue;
      if (delta.value("type", "") == "text_delta") content[index]["text"] = content[index].value("text", "") + string_or_empty(delta, "text");
      if (delta.value("type", "") == "input_json_delta") partial[index] += string_or_empty(delta, "partial_json");
    } else if (type == "content_block_stop" && index < content.size() && !partial[index].empty()) {
      json input = json::parse(partial[index], nullptr, false);
      if (input.is_discarded()) throw InputError(fmt::format("{}: tool input of block {} is not JSON", what, index));
      content[index]["input"] = input;
    } else if (type == "message_delta") {
      const json delta = event.value("delta", json::object());
      if (delta.is_object() && delta.contains("stop_reason")) message["stop_reason"] = delta["stop_reason"];
      const json usage = event.value("usage", json::object());
      if (usage.is_object())
        for (const auto& [key, value] : usage.items()) object_at(message, "usage")[key] = value;
    }
  }
  if (!ended) throw InputError(fmt::format("{}: cut short (no message_stop)", what));
  return json_text(message);
}

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
