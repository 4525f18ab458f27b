#include "agents/openai_json.hpp"

#include <fmt/format.h>

#include "agents/json_util.hpp"
#include "core/json_text.hpp"
#include "core/saturate.hpp"

namespace okfbench::agents::openai {
namespace {
using json_util::json;
constexpr std::string_view kRequest = "OpenAI request";
constexpr std::string_view kResponse = "OpenAI response";

json tool_call_json(const ToolCall& call) {
  return {{"id", call.id}, {"type", "function"}, {"function", {{"name", call.name}, {"arguments", call.arguments}}}};
}

json message_json(const Message& m) {
  json out = {{"role", to_string(m.role)}};
  if (m.role == Role::assistant && !m.tool_calls.empty()) {
    out["content"] = m.content.empty() ? json(nullptr) : json(m.content);
    out["tool_calls"] = json::array();
    for (const ToolCall& call : m.tool_calls) out["tool_calls"].push_back(tool_call_json(call));
  } else {
    out["content"] = m.content;
  }
  if (m.role == Role::tool) out["tool_call_id"] = m.tool_call_id;
  return out;
}

json tools_json(const std::vector<ToolSpec>& tools) {
  json out = json::array();
  for (const ToolSpec& t : tools) {
    json parameters = json_util::parse(t.parameters.empty() ? "{}" : t.parameters, "tool '" + t.name + "' parameters");
    out.push_back({{"type", "function"},
                   {"function", {{"name", t.name}, {"description", t.description}, {"parameters", parameters}}}});
  }
  return out;
}

Role role_from(const std::string& text, std::string_view what) {
  if (text == "system" || text == "developer") return Role::system;
  if (text == "user") return Role::user;
  if (text == "assistant") return Role::assistant;
  if (text == "tool") return Role::tool;
  throw InputError(fmt::format("{}: unknown message role '{}'", what, text));
}

// Content may be a string, null, or an array of {"type":"text","text":...} parts.
std::string content_from(const json& message, std::string_view what) {
  auto it = message.find("content");
  if (it == message.end() || it->is_null()) return {};
  if (it->is_string()) return it->get<std::string>();
  if (!it->is_array()) throw InputError(fmt::format("{}: 'content' must be a string or an array", what));
  std::string text;
  for (const json& part : *it) text += json_util::optional_string(part, "text", what).value_or("");
  return text;
}

std::vector<ToolCall> tool_calls_from(const json& message, std::string_view what) {
  std::vector<ToolCall> calls;
  auto it = message.find("tool_calls");
  if (it == message.end() || it->is_null()) return calls;
  if (!it->is_array()) throw InputError(fmt::format("{}: 'tool_calls' must be an array", what));
  for (const json& call : *it) {
    const json& function = json_util::require(call, "function", what);
    ToolCall parsed{json_util::optional_string(call, "id", what).value_or(""),
                    json_util::require_string(function, "name", what),
                    json_util::optional_string(function, "arguments", what).value_or("{}")};
    json_util::check_arguments(parsed.arguments, parsed.name, what);
    calls.push_back(std::move(parsed));
  }
  return calls;
}

Message message_from(const json& m, std::string_view what) {
  Message out;
  out.role = role_from(json_util::require_string(m, "role", what), what);
  out.content = content_from(m, what);
  out.tool_calls = tool_calls_from(m, what);
  out.tool_call_id = json_util::optional_string(m, "tool_call_id", what).value_or("");
  return out;
}

StopReason stop_from(const std::optional<std::string>& finish) {
  if (!finish) return StopReason::other;
  if (*finish == "stop") return StopReason::end_turn;
  if (*finish == "tool_calls" || *finish == "function_call") return StopReason::tool_calls;
  if (*finish == "length") return StopReason::max_tokens;
  return StopReason::other;
}

const char* finish_of(StopReason stop) {
  switch (stop) {
    case StopReason::end_turn: return "stop";
    case StopReason::tool_calls: return "tool_calls";
    case StopReason::max_tokens: return "length";
    case StopReason::other: return "stop";
  }
  return "stop";
}

Usage usage_from(const json& doc) {
  auto it = doc.find("usage");
  if (it == doc.end() || !it->is_object()) return {};
  Usage usage;
  usage.input_tokens = json_util::optional_count(*it, "prompt_tokens", "OpenAI response usage");
  usage.output_tokens = json_util::optional_count(*it, "completion_tokens", "OpenAI response usage");
  auto details = it->find("prompt_tokens_details");
  if (details != it->end() && details->is_object())
    usage.cached_input_tokens = json_util::optional_count(*details, "cached_tokens", "OpenAI prompt_tokens_details");
  if (usage.input_tokens && usage.cached_input_tokens && *usage.cached_input_tokens > *usage.input_tokens)
    throw InputError(fmt::format("OpenAI response usage: cached_tokens ({}) exceeds prompt_tokens ({}), which include them",
                                 *usage.cached_input_tokens, *usage.input_tokens));
  return usage;
}

json usage_json(const Usage& usage) {
  json out = json::object();
  if (usage.input_tokens) out["prompt_tokens"] = *usage.input_tokens;
  if (usage.output_tokens) out["completion_tokens"] = *usage.output_tokens;
  if (usage.input_tokens && usage.output_tokens) out["total_tokens"] = saturating_add(*usage.input_tokens, *usage.output_tokens);
  if (usage.cached_input_tokens) out["prompt_tokens_details"] = {{"cached_tokens", *usage.cached_input_tokens}};
  return out;
}
}  // namespace

std::string request_to_json(const ChatRequest& request) {
  json body = {{"model", request.model}, {"messages", json::array()}};
  for (const Message& m : request.messages) body["messages"].push_back(message_json(m));
  if (!request.tools.empty()) body["tools"] = tools_json(request.tools);
  body["max_tokens"] = request.max_tokens;
  if (request.temperature) body["temperature"] = *request.temperature;
  return json_text(body);
}

ChatRequest request_from_json(std::string_view text) {
  json doc = json_util::parse(text, kRequest);
  ChatRequest request;
  request.model = json_util::require_string(doc, "model", kRequest);
  const json& messages = json_util::require(doc, "messages", kRequest);
  if (!messages.is_array()) throw InputError("OpenAI request: 'messages' must be an array");
  for (const json& m : messages) request.messages.push_back(message_from(m, kRequest));
  if (auto it = doc.find("tools"); it != doc.end() && it->is_array()) {
    for (const json& tool : *it) {
      const json& function = json_util::require(tool, "function", kRequest);
      auto parameters = function.find("parameters");
      request.tools.push_back(ToolSpec{json_util::require_string(function, "name", kRequest),
                                       json_util::optional_string(function, "description", kRequest).value_or(""),
                                       parameters == function.end() ? "{}" : parameters->dump()});
    }
  }
  auto max = json_util::optional_count(doc, "max_completion_tokens", kRequest);
  if (!max) max = json_util::optional_count(doc, "max_tokens", kRequest);
  if (max) request.max_tokens = static_cast<int>(*max);
  if (auto it = doc.find("temperature"); it != doc.end() && it->is_number()) request.temperature = it->get<double>();
  return request;
}

std::string response_to_json(const ChatResponse& response, std::string_view id) {
  json body = {{"id", id},
               {"object", "chat.completion"},
               {"model", response.model},
               {"choices", json::array({{{"index", 0},
                                         {"message", message_json(response.message)},
                                         {"finish_reason", finish_of(response.stop)}}})},
               {"usage", usage_json(response.usage)}};
  return json_text(body);
}

ChatResponse response_from_json(std::string_view text) {
  json doc = json_util::parse(text, kResponse);
  if (std::string error = json_util::error_message(text); !error.empty())
    throw InputError(fmt::format("{}: the API returned an error: {}", kResponse, error));
  const json& choices = json_util::require(doc, "choices", kResponse);
  if (!choices.is_array() || choices.empty()) throw InputError("OpenAI response: 'choices' is empty");
  ChatResponse response;
  response.message = message_from(json_util::require(choices[0], "message", kResponse), kResponse);
  response.message.role = Role::assistant;
  response.stop = stop_from(json_util::optional_string(choices[0], "finish_reason", kResponse));
  response.model = json_util::optional_string(doc, "model", kResponse).value_or("");
  response.usage = usage_from(doc);
  return response;
}

std::string tools_to_json(const std::vector<ToolSpec>& tools) { return json_text(tools_json(tools)); }

std::string error_message(std::string_view body) { return json_util::error_message(body); }

}  // namespace okfbench::agents::openai
