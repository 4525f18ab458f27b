#include "agents/wire_json.hpp"

#include <fmt/format.h>

#include "core/hash.hpp"
#include "agents/json_util.hpp"
#include "core/json_text.hpp"

namespace okfbench::agents::wire_json {
namespace {
using json_util::json;
constexpr std::string_view kWhat = "recorded exchange";

Role role_from(const std::string& text) {
  for (Role r : {Role::system, Role::user, Role::assistant, Role::tool})
    if (text == to_string(r)) return r;
  throw InputError(fmt::format("{}: unknown role '{}'", kWhat, text));
}

StopReason stop_from(const std::string& text) {
  for (StopReason s : {StopReason::end_turn, StopReason::tool_calls, StopReason::max_tokens, StopReason::other})
    if (text == to_string(s)) return s;
  throw InputError(fmt::format("{}: unknown stop reason '{}'", kWhat, text));
}

const char* breakpoints_name(CacheBreakpoints b) {
  switch (b) {
    case CacheBreakpoints::none: return "none";
    case CacheBreakpoints::tools_and_system: return "tools_and_system";
    case CacheBreakpoints::tools_system_and_last_message: return "tools_system_and_last_message";
  }
  return "none";
}

CacheBreakpoints breakpoints_from(const std::string& text) {
  for (CacheBreakpoints b : {CacheBreakpoints::none, CacheBreakpoints::tools_and_system,
                             CacheBreakpoints::tools_system_and_last_message})
    if (text == breakpoints_name(b)) return b;
  throw InputError(fmt::format("{}: unknown breakpoints '{}'", kWhat, text));
}

json message_json(const Message& m) {
  json calls = json::array();
  for (const ToolCall& c : m.tool_calls) calls.push_back({{"id", c.id}, {"name", c.name}, {"arguments", c.arguments}});
  return {{"role", to_string(m.role)}, {"content", m.content}, {"tool_calls", calls},
          {"tool_call_id", m.tool_call_id}, {"name", m.name}};
}

Message message_from(const json& j) {
  Message m{role_from(json_util::require_string(j, "role", kWhat)), json_util::require_string(j, "content", kWhat),
            {}, json_util::optional_string(j, "tool_call_id", kWhat).value_or(""),
            json_util::optional_string(j, "name", kWhat).value_or("")};
  if (auto it = j.find("tool_calls"); it != j.end() && it->is_array())
    for (const json& c : *it) {
      m.tool_calls.push_back(ToolCall{json_util::require_string(c, "id", kWhat), json_util::require_string(c, "name", kWhat),
                                      json_util::require_string(c, "arguments", kWhat)});
      json_util::check_arguments(m.tool_calls.back().arguments, m.tool_calls.back().name, kWhat);
    }
  return m;
}

json count_json(const std::optional<std::int64_t>& v) { return v ? json(*v) : json(nullptr); }
}  // namespace

std::string request_to_json(const ChatRequest& r) {
  json messages = json::array(), tools = json::array();
  for (const Message& m : r.messages) messages.push_back(message_json(m));
  for (const ToolSpec& t : r.tools)
    tools.push_back({{"name", t.name}, {"description", t.description}, {"parameters", t.parameters}});
  return json_text(json{{"model", r.model},
              {"messages", messages},
              {"tools", tools},
              {"max_tokens", r.max_tokens},
              {"temperature", r.temperature ? json(*r.temperature) : json(nullptr)},
              {"breakpoints", breakpoints_name(r.breakpoints)}});
}

ChatRequest request_from_json(std::string_view text) {
  json j = json_util::parse(text, kWhat);
  ChatRequest r;
  r.model = json_util::optional_string(j, "model", kWhat).value_or("");
  for (const json& m : json_util::require(j, "messages", kWhat)) r.messages.push_back(message_from(m));
  for (const json& t : json_util::require(j, "tools", kWhat))
    r.tools.push_back(ToolSpec{json_util::require_string(t, "name", kWhat), json_util::require_string(t, "description", kWhat),
                               json_util::require_string(t, "parameters", kWhat)});
  r.max_tokens = static_cast<int>(json_util::optional_count(j, "max_tokens", kWhat).value_or(1024));
  if (auto it = j.find("temperature"); it != j.end() && it->is_number()) r.temperature = it->get<double>();
  r.breakpoints = breakpoints_from(json_util::optional_string(j, "breakpoints", kWhat).value_or("none"));
  return r;
}

std::string response_to_json(const ChatResponse& r) {
  return json_text(json{{"message", message_json(r.message)},
              {"usage",
               {{"input_tokens", count_json(r.usage.input_tokens)},
                {"cached_input_tokens", count_json(r.usage.cached_input_tokens)},
                {"cache_write_tokens", count_json(r.usage.cache_write_tokens)},
                {"output_tokens", count_json(r.usage.output_tokens)}}},
              {"stop", to_string(r.stop)},
              {"model", r.model}});
}

ChatResponse response_from_json(std::string_view text) {
  json j = json_util::parse(text, kWhat);
  ChatResponse r;
  r.message = message_from(json_util::require(j, "message", kWhat));
  const json& u = json_util::require(j, "usage", kWhat);
  r.usage = Usage{json_util::optional_count(u, "input_tokens", kWhat), json_util::optional_count(u, "cached_input_tokens", kWhat),
                  json_util::optional_count(u, "cache_write_tokens", kWhat), json_util::optional_count(u, "output_tokens", kWhat)};
  r.stop = stop_from(json_util::require_string(j, "stop", kWhat));
  r.model = json_util::optional_string(j, "model", kWhat).value_or("");
  return r;
}

std::uint64_t request_hash(const ChatRequest& request) { return fnv1a(request_to_json(request)); }

}  // namespace okfbench::agents::wire_json
