#include "agents/anthropic_json.hpp"

#include <fmt/format.h>

#include "agents/json_util.hpp"
#include "core/json_text.hpp"
#include "core/saturate.hpp"

namespace okfbench::agents::anthropic {
namespace {
using json_util::json;
constexpr std::string_view kRequest = "Anthropic request";
constexpr std::string_view kResponse = "Anthropic response";

const json kEphemeral = {{"type", "ephemeral"}};

// The "type" of a content block; "" for anything that is not an object with
// a string "type" (json::value() would throw a type_error on those).
std::string block_type(const json& block) {
  if (!block.is_object()) return {};
  auto it = block.find("type");
  return it != block.end() && it->is_string() ? it->get<std::string>() : std::string();
}

json arguments_object(const ToolCall& call) {
  json_util::check_arguments(call.arguments, call.name, kRequest);
  json input = json::parse(call.arguments.empty() ? "{}" : call.arguments, nullptr, false);
  if (input.is_discarded() || !input.is_object())
    throw InputError(fmt::format("{}: arguments of tool call '{}' ({}) are not a JSON object", kRequest, call.name,
                                 call.id));
  return input;
}

json assistant_content(const Message& m) {
  json blocks = json::array();
  if (!m.content.empty()) blocks.push_back({{"type", "text"}, {"text", m.content}});
  for (const ToolCall& call : m.tool_calls)
    blocks.push_back({{"type", "tool_use"}, {"id", call.id}, {"name", call.name}, {"input", arguments_object(call)}});
  return blocks;
}

json messages_json(const std::vector<Message>& messages) {
  json out = json::array();
  for (const Message& m : messages) {
    if (m.role == Role::system) continue;
    if (m.role == Role::tool) {
      json block = {{"type", "tool_result"}, {"tool_use_id", m.tool_call_id}, {"content", m.content}};
      // Parallel tool results go into one user message.
      bool extend = !out.empty() && out.back()["role"] == "user" && out.back()["content"].is_array() &&
                    !out.back()["content"].empty() && out.back()["content"].back()["type"] == "tool_result";
      if (extend) out.back()["content"].push_back(block);
      else out.push_back({{"role", "user"}, {"content", json::array({block})}});
    } else if (m.role == Role::assistant) {
      out.push_back({{"role", "assistant"}, {"content", assistant_content(m)}});
    } else {
      out.push_back({{"role", "user"}, {"content", json::array({{{"type", "text"}, {"text", m.content}}})}});
    }
  }
  return out;
}

json tools_json(const std::vector<ToolSpec>& tools) {
  json out = json::array();
  for (const ToolSpec& t : tools)
    out.push_back({{"name", t.name},
                   {"description", t.description},
                   {"input_schema", json_util::parse(t.parameters.empty() ? "{}" : t.parameters,
                                                     "tool '" + t.name + "' parameters")}});
  return out;
}

std::string text_of(const json& content, std::string_view what) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) throw InputError(fmt::format("{}: 'content' must be a string or an array", what));
  std::string text;
  for (const json& block : content)
    if (block_type(block) == "text") text += json_util::require_string(block, "text", what);
  return text;
}

// One API message may expand into several wire messages (tool results).
void append_message(const json& m, std::vector<Message>& out, std::string_view what) {
  std::string role = json_util::require_string(m, "role", what);
  const json& content = json_util::require(m, "content", what);
  if (role == "assistant") {
    Message message{Role::assistant, text_of(content, what), {}, {}, {}};
    if (content.is_array())
      for (const json& block : content)
        if (block_type(block) == "tool_use")
          message.tool_calls.push_back(ToolCall{json_util::require_string(block, "id", what),
                                                json_util::require_string(block, "name", what),
                                                json_util::require(block, "input", what).dump()});
    out.push_back(std::move(message));
    return;
  }
  if (role != "user") throw InputError(fmt::format("{}: unknown message role '{}'", what, role));
  if (content.is_array()) {
    for (const json& block : content)
      if (block_type(block) == "tool_result")
        out.push_back(Message{Role::tool, text_of(json_util::require(block, "content", what), what), {},
                              json_util::require_string(block, "tool_use_id", what), {}});
  }
  std::string text = text_of(content, what);
  if (!text.empty() || !content.is_array()) out.push_back(Message{Role::user, text, {}, {}, {}});
}

StopReason stop_from(const std::optional<std::string>& reason) {
  if (!reason) return StopReason::other;
  if (*reason == "end_turn" || *reason == "stop_sequence") return StopReason::end_turn;
  if (*reason == "tool_use") return StopReason::tool_calls;
  if (*reason == "max_tokens") return StopReason::max_tokens;
  return StopReason::other;
}

const char* reason_of(StopReason stop) {
  switch (stop) {
    case StopReason::end_turn: return "end_turn";
    case StopReason::tool_calls: return "tool_use";
    case StopReason::max_tokens: return "max_tokens";
    case StopReason::other: return "end_turn";
  }
  return "end_turn";
}

void set_count(json& out, const char* field, const std::optional<std::int64_t>& value) {
  if (value) out[field] = *value;
}
}  // namespace

Usage normalise(const RawUsage& raw) {
  Usage usage;
  if (raw.input_tokens)
    usage.input_tokens = saturating_add(saturating_add(*raw.input_tokens, raw.cache_read_input_tokens.value_or(0)),
                                        raw.cache_creation_input_tokens.value_or(0));
  usage.cached_input_tokens = raw.cache_read_input_tokens;
  usage.cache_write_tokens = raw.cache_creation_input_tokens;
  usage.output_tokens = raw.output_tokens;
  return usage;
}

std::string request_to_json(const ChatRequest& request) {
  json body = {{"model", request.model}, {"max_tokens", request.max_tokens}};
  bool mark = request.breakpoints != CacheBreakpoints::none;
  if (std::string system = system_prompt(request); !system.empty()) {
    json block = {{"type", "text"}, {"text", system}};
    if (mark) block["cache_control"] = kEphemeral;
    body["system"] = json::array({block});
  }
  if (!request.tools.empty()) {
    body["tools"] = tools_json(request.tools);
    if (mark) body["tools"].back()["cache_control"] = kEphemeral;
  }
  body["messages"] = messages_json(request.messages);
  if (request.breakpoints == CacheBreakpoints::tools_system_and_last_message && !body["messages"].empty()) {
    json& last = body["messages"].back()["content"];
    if (last.is_array() && !last.empty()) last.back()["cache_control"] = kEphemeral;
  }
  if (request.temperature) body["temperature"] = *request.temperature;
  return json_text(body);
}

ChatRequest request_from_json(std::string_view text) {
  json doc = json_util::parse(text, kRequest);
  ChatRequest request;
  request.model = json_util::require_string(doc, "model", kRequest);
  if (auto max = json_util::optional_count(doc, "max_tokens", kRequest)) request.max_tokens = static_cast<int>(*max);
  if (auto it = doc.find("system"); it != doc.end() && !it->is_null()) {
    request.messages.push_back(Message{Role::system, text_of(*it, kRequest), {}, {}, {}});
    if (it->is_array() && !it->empty() && it->back().contains("cache_control"))
      request.breakpoints = CacheBreakpoints::tools_and_system;
  }
  const json& messages = json_util::require(doc, "messages", kRequest);
  if (!messages.is_array()) throw InputError("Anthropic request: 'messages' must be an array");
  for (const json& m : messages) append_message(m, request.messages, kRequest);
  if (!messages.empty()) {
    const json& last = messages.back()["content"];
    if (last.is_array() && !last.empty() && last.back().contains("cache_control"))
      request.breakpoints = CacheBreakpoints::tools_system_and_last_message;
  }
  if (auto it = doc.find("tools"); it != doc.end() && it->is_array()) {
    for (const json& tool : *it) {
      auto schema = tool.find("input_schema");
      request.tools.push_back(ToolSpec{json_util::require_string(tool, "name", kRequest),
                                       json_util::optional_string(tool, "description", kRequest).value_or(""),
                                       schema == tool.end() ? "{}" : schema->dump()});
      if (tool.contains("cache_control") && request.breakpoints == CacheBreakpoints::none)
        request.breakpoints = CacheBreakpoints::tools_and_system;
    }
  }
  if (auto it = doc.find("temperature"); it != doc.end() && it->is_number()) request.temperature = it->get<double>();
  return request;
}

std::string response_to_json(const ChatResponse& response, std::string_view id) {
  json usage = json::object();
  // Split the normalised total back into the API's three disjoint counts.
  if (response.usage.input_tokens)
    usage["input_tokens"] = *response.usage.input_tokens - response.usage.cached_input_tokens.value_or(0) -
                            response.usage.cache_write_tokens.value_or(0);
  set_count(usage, "cache_creation_input_tokens", response.usage.cache_write_tokens);
  set_count(usage, "cache_read_input_tokens", response.usage.cached_input_tokens);
  set_count(usage, "output_tokens", response.usage.output_tokens);
  json body = {{"id", id},
               {"type", "message"},
               {"role", "assistant"},
               {"model", response.model},
               {"content", assistant_content(response.message)},
               {"stop_reason", reason_of(response.stop)},
               {"stop_sequence", nullptr},
               {"usage", usage}};
  return json_text(body);
}

ChatResponse response_from_json(std::string_view text) {
  json doc = json_util::parse(text, kResponse);
  if (block_type(doc) == "error")
    throw InputError(fmt::format("{}: the API returned an error: {}", kResponse, json_util::error_message(text)));
  std::vector<Message> messages;
  json as_message = {{"role", "assistant"}, {"content", json_util::require(doc, "content", kResponse)}};
  append_message(as_message, messages, kResponse);
  ChatResponse response;
  response.message = messages.front();
  response.stop = stop_from(json_util::optional_string(doc, "stop_reason", kResponse));
  response.model = json_util::optional_string(doc, "model", kResponse).value_or("");
  if (auto it = doc.find("usage"); it != doc.end() && it->is_object()) {
    constexpr std::string_view what = "Anthropic response usage";
    response.usage = normalise(RawUsage{json_util::optional_count(*it, "input_tokens", what),
                                        json_util::optional_count(*it, "cache_read_input_tokens", what),
                                        json_util::optional_count(*it, "cache_creation_input_tokens", what),
                                        json_util::optional_count(*it, "output_tokens", what)});
  }
  return response;
}

std::string error_message(std::string_view body) { return json_util::error_message(body); }

}  // namespace okfbench::agents::anthropic
