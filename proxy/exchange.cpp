#include "proxy/exchange.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "agents/anthropic_json.hpp"
#include "agents/json_util.hpp"
#include "agents/openai_json.hpp"
#include "agents/secrets.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"

namespace okfbench::proxy {
namespace {
using agents::Message;
using agents::Role;
using nlohmann::json;

// The text of a Responses API content value: a string, or parts with "text".
std::string responses_text(const json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string text;
  if (content.is_array())
    for (const json& part : content)
      if (part.is_object() && part.contains("text") && part["text"].is_string()) text += part["text"].get<std::string>();
  return text;
}

std::string string_field(const json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_string())
    throw InputError(fmt::format("Responses request: '{}' must be a string", key));
  return it->get<std::string>();
}

Role role_of(const std::string& role) {
  if (role == "system" || role == "developer") return Role::system;
  if (role == "assistant") return Role::assistant;
  return Role::user;
}

// The Responses API's input (instructions, then a string or a list of items)
// as wire messages; function calls and their outputs as tool calls and tool results.
agents::ChatRequest responses_request(const json& doc) {
  agents::ChatRequest request;
  if (doc.contains("instructions") && doc["instructions"].is_string()) {
    Message system;
    system.role = Role::system;
    system.content = doc["instructions"].get<std::string>();
    request.messages.push_back(system);
  }
  const json input = doc.value("input", json());
  if (input.is_string()) {
    Message user;
    user.content = input.get<std::string>();
    request.messages.push_back(user);
  } else if (input.is_array()) {
    for (const json& item : input) {
      if (!item.is_object()) throw InputError("Responses request: each 'input' item must be an object");
      std::string type = item.value("type", json("message")).is_string() ? item.value("type", "message") : "";
      Message m;
      if (type == "function_call") {
        m.role = Role::assistant;
        m.tool_calls.push_back({string_field(item, "call_id"), string_field(item, "name"), string_field(item, "arguments")});
        if (!request.messages.empty() && request.messages.back().role == Role::assistant &&
            request.messages.back().content.empty()) {
          request.messages.back().tool_calls.push_back(m.tool_calls.back());  // parallel calls: one assistant turn
          continue;
        }
      } else if (type == "function_call_output") {
        m.role = Role::tool;
        m.tool_call_id = string_field(item, "call_id");
        m.content = responses_text(item.value("output", json()));
      } else {
        m.role = role_of(item.value("role", json("user")).is_string() ? item.value("role", "user") : "user");
        m.content = responses_text(item.value("content", json()));
      }
      request.messages.push_back(std::move(m));
    }
  } else if (!input.is_null()) {
    throw InputError("Responses request: 'input' must be a string or a list of items");
  }
  for (const json& tool : doc.value("tools", json::array())) {
    if (!tool.is_object() || tool.value("type", json()) != "function") continue;  // built-in tools have no schema to count
    request.tools.push_back({tool.value("name", json("")).is_string() ? tool.value("name", "") : "",
                             tool.value("description", json("")).is_string() ? tool.value("description", "") : "",
                             json_text(tool.value("parameters", json::object()))});
  }
  return request;
}

json usage_json(const agents::Usage& u) {
  auto value = [](const std::optional<std::int64_t>& v) { return v ? json(*v) : json(nullptr); };
  return {{"input_tokens", value(u.input_tokens)},
          {"cached_input_tokens", value(u.cached_input_tokens)},
          {"cache_write_tokens", value(u.cache_write_tokens)},
          {"output_tokens", value(u.output_tokens)}};
}

bool same_prefix(const std::vector<Message>& prefix, const std::vector<Message>& messages) {
  return prefix.size() <= messages.size() && std::equal(prefix.begin(), prefix.end(), messages.begin());
}
}  // namespace

const char* to_string(Api api) {
  switch (api) {
    case Api::chat_completions: return "chat_completions";
    case Api::responses: return "responses";
    case Api::messages: return "messages";
  }
  return "chat_completions";
}

RequestFacts read_request(Api api, std::string_view body) {
  RequestFacts facts;
  try {
    json doc = agents::json_util::parse(body, "request body");
    if (!doc.is_object()) throw InputError("request body: not a JSON object");
    if (doc.contains("model") && doc["model"].is_string()) facts.model = doc["model"].get<std::string>();
    facts.stream = doc.value("stream", json(false)) == true;
    const json options = doc.value("stream_options", json());
    facts.include_usage = options.is_object() && options.value("include_usage", json(false)) == true;
    if (api == Api::responses) facts.request = responses_request(doc);
    else if (api == Api::messages) facts.request = agents::anthropic::request_from_json(body);
    else facts.request = agents::openai::request_from_json(body);
  } catch (const std::exception& e) {
    facts.request.reset();
    facts.problem = agents::json_util::valid_utf8(e.what());
  }
  return facts;
}

void UsageReader::feed(std::string_view bytes) {
  buffer_.append(bytes);
  if (!streamed_) return;
  for (;;) {
    std::size_t lf = buffer_.find("\n\n"), crlf = buffer_.find("\r\n\r\n");
    if (lf == std::string::npos && crlf == std::string::npos) return;
    bool use_lf = crlf == std::string::npos || (lf != std::string::npos && lf < crlf);
    std::size_t end = use_lf ? lf : crlf;
    event(std::string_view(buffer_).substr(0, end));
    buffer_.erase(0, end + (use_lf ? 2 : 4));
  }
}

void UsageReader::finish() {
  if (streamed_) {
    if (!buffer_.empty()) event(buffer_);  // a last event without its blank line
    buffer_.clear();
    return;
  }
  json doc = json::parse(buffer_, nullptr, false);
  buffer_.clear();
  if (doc.is_object()) usage_of(doc);
}

// One event: its data lines joined, then read as JSON.
void UsageReader::event(std::string_view text) {
  std::string data;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    std::string_view line = text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.starts_with("data:")) {
      line.remove_prefix(5);
      if (line.starts_with(' ')) line.remove_prefix(1);
      if (!data.empty()) data += '\n';
      data.append(line);
    }
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  if (data.empty()) return;
  ++events_;
  if (data == "[DONE]") {
    ended_ = true;
    return;
  }
  if (agents::json_util::nesting_depth(data) > agents::json_util::kMaxDepth) return;
  json doc = json::parse(data, nullptr, false);
  if (!doc.is_object()) return;
  std::string type = doc.value("type", json("")).is_string() ? doc.value("type", "") : "";
  if (type == "message_stop" || type == "response.completed") ended_ = true;
  if (type == "error" || (api_ != Api::messages && doc.contains("error") && doc["error"].is_object())) {
    const json error = doc.value("error", json::object());
    stream_error_ = agents::json_util::valid_utf8(error.is_object() ? error.value("message", json("")).dump() : error.dump());
  }
  if (api_ == Api::messages && type == "message_start") usage_of(doc.value("message", json::object()));
  else if (api_ == Api::responses && type == "response.completed") usage_of(doc.value("response", json::object()));
  else usage_of(doc);
}

// Usage in a body, a chunk or an event. Anthropic's message_delta carries
// the final output count (and, from some gateways, input counts): each
// count it carries replaces the one message_start gave.
void UsageReader::usage_of(const json& object) {
  auto it = object.find("usage");
  if (it == object.end() || !it->is_object()) return;
  const json& u = *it;
  try {
    using agents::json_util::optional_count;
    if (api_ == Api::messages) {
      agents::anthropic::RawUsage raw;
      if (reported_) {  // what message_start said, for the fields this event leaves out
        raw.cache_read_input_tokens = usage_.cached_input_tokens;
        raw.cache_creation_input_tokens = usage_.cache_write_tokens;
        raw.output_tokens = usage_.output_tokens;
        if (usage_.input_tokens)
          raw.input_tokens = *usage_.input_tokens - usage_.cached_input_tokens.value_or(0) - usage_.cache_write_tokens.value_or(0);
      }
      if (auto v = optional_count(u, "input_tokens", "usage")) raw.input_tokens = v;
      if (auto v = optional_count(u, "cache_read_input_tokens", "usage")) raw.cache_read_input_tokens = v;
      if (auto v = optional_count(u, "cache_creation_input_tokens", "usage")) raw.cache_creation_input_tokens = v;
      if (auto v = optional_count(u, "output_tokens", "usage")) raw.output_tokens = v;
      usage_ = agents::anthropic::normalise(raw);
    } else {
      bool chat = api_ == Api::chat_completions;
      usage_.input_tokens = optional_count(u, chat ? "prompt_tokens" : "input_tokens", "usage");
      usage_.output_tokens = optional_count(u, chat ? "completion_tokens" : "output_tokens", "usage");
      auto details = u.find(chat ? "prompt_tokens_details" : "input_tokens_details");
      if (details != u.end() && details->is_object())
        usage_.cached_input_tokens = optional_count(*details, "cached_tokens", "usage");
    }
    reported_ = true;
  } catch (const InputError&) {
    // A count that is not a count: the usage stays as it was (unknown if nothing came before).
  }
}

Link Conversations::link(Api api, const std::vector<Message>& messages) {
  std::lock_guard lock(mutex_);
  const Seen* parent = nullptr;
  for (auto it = recent_.rbegin(); it != recent_.rend(); ++it)
    if (it->api == api && !it->messages.empty() && same_prefix(it->messages, messages) &&
        (!parent || it->messages.size() > parent->messages.size()))
      parent = &*it;
  Link link;
  if (parent) {
    link.conversation = parent->link.conversation;
    link.turn = parent->link.turn + 1;
    link.shared_messages = parent->messages.size();
  } else {
    link.conversation = fmt::format("c{}", next_++);
  }
  recent_.push_back({api, messages, link});
  if (recent_.size() > kRecentRequests) recent_.pop_front();
  return link;
}

TokenCounts count_tokens(const agents::ChatRequest& request, std::size_t shared_messages,
                         const retrieval::TokenCounter& counter) {
  TokenCounts t;
  if (!request.tools.empty())
    t.tool_definitions = static_cast<std::int64_t>(counter.count(agents::openai::tools_to_json(request.tools)));
  for (std::size_t i = 0; i < request.messages.size(); ++i) {
    std::int64_t n = agents::text_tokens(request.messages[i], counter);
    t.request += n;
    if (i < shared_messages) t.resent += n;
  }
  t.fresh = t.request - t.resent;
  t.request += t.tool_definitions;
  return t;
}

json tool_results(const agents::ChatRequest& request, std::size_t shared_messages) {
  json out = json::array();
  for (std::size_t i = shared_messages; i < request.messages.size(); ++i) {
    const Message& m = request.messages[i];
    if (m.role != Role::tool) continue;
    std::string tool = m.name;
    for (const Message& earlier : request.messages)
      for (const agents::ToolCall& call : earlier.tool_calls)
        if (tool.empty() && call.id == m.tool_call_id) tool = call.name;
    out.push_back({{"tool_call_id", m.tool_call_id}, {"tool", tool}, {"bytes", m.content.size()}});
  }
  return out;
}

std::string exchange_record(const Exchange& x, const UsageReader& usage, const std::optional<Link>& link,
                            const retrieval::TokenCounter& counter, const std::vector<std::string>& secrets) {
  json record = {{"schema", kRecordSchema}, {"seq", x.seq}, {"api", to_string(x.api)}, {"path", x.path},
                 {"model", agents::json_util::valid_utf8(x.facts.model)}, {"stream", x.facts.stream},
                 {"status", x.status}, {"request_bytes", x.request_bytes}, {"response_bytes", x.response_bytes},
                 {"request_id", x.request_id}, {"latency_ms", x.timing.latency_ms},
                 {"first_token_ms", x.timing.first_byte_ms ? json(*x.timing.first_byte_ms) : json(nullptr)},
                 {"tokenizer", counter.name()}};
  if (x.facts.stream) record["events"] = usage.events();
  if (x.facts.request && link) {
    TokenCounts t = count_tokens(*x.facts.request, link->shared_messages, counter);
    record["conversation"] = link->conversation;
    record["turn"] = link->turn;
    record["messages"] = x.facts.request->messages.size();
    record["request_tokens"] = t.request;
    record["tool_definition_tokens"] = t.tool_definitions;
    record["resent_tokens"] = t.resent;
    record["new_tokens"] = t.fresh;
    record["tool_results"] = tool_results(*x.facts.request, link->shared_messages);
  } else {
    for (const char* key : {"conversation", "turn", "messages", "request_tokens", "tool_definition_tokens",
                            "resent_tokens", "new_tokens", "tool_results"})
      record[key] = nullptr;
  }
  record["usage"] = usage.reported() ? usage_json(usage.usage()) : json(nullptr);
  if (!usage.reported()) {
    std::string why = x.status < 200 || x.status >= 300 ? "the request failed"
                      : x.facts.stream && x.api == Api::chat_completions && !x.facts.include_usage
                          ? "the client streamed without stream_options.include_usage"
                          : "the reply carried no usage";
    record["usage_unknown"] = why;
  }
  json errors = json::array();
  for (const std::string& e : x.errors) errors.push_back(agents::json_util::valid_utf8(e));
  if (!x.facts.problem.empty()) errors.push_back("request not understood (forwarded as sent): " + x.facts.problem);
  record["errors"] = errors;
  return agents::redact_json(json_text(record), secrets);
}

}  // namespace okfbench::proxy
