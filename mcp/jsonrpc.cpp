#include "mcp/jsonrpc.hpp"

#include <fmt/format.h>

#include "agents/json_util.hpp"

namespace okfbench::mcp::jsonrpc {
namespace {

// A usable id is a string of at most kMaxIdBytes or an integer (nlohmann
// keeps integers within 64 bits as integers; anything larger, or with a
// fraction, arrives as a float).
bool usable_id(const json& id) {
  if (id.is_string()) return id.get_ref<const std::string&>().size() <= kMaxIdBytes;
  return id.is_number_integer() || id.is_number_unsigned();
}

Invalid invalid(json id, std::string message) {
  return Invalid{std::move(id), Error{code::invalid_request, std::move(message)}};
}

}  // namespace

std::variant<json, Error> parse(std::string_view text) {
  if (text.size() > kMaxMessageBytes)
    return Error{code::invalid_request,
                 fmt::format("message of {} bytes refused: at most {} bytes", text.size(), kMaxMessageBytes)};
  if (agents::json_util::nesting_depth(text, kMaxDepth) > kMaxDepth)
    return Error{code::invalid_request, fmt::format("message nests deeper than {} levels", kMaxDepth)};
  try {
    return json::parse(text);
  } catch (const json::out_of_range&) {  // valid JSON whose number no double holds (1E444)
    return Error{code::invalid_request, "message holds a number out of range"};
  } catch (const json::exception& e) {
    return Error{code::parse_error, agents::json_util::valid_utf8(fmt::format("not JSON: {}", e.what()))};
  }
}

std::variant<Message, Invalid> check(const json& value) {
  if (!value.is_object()) return invalid(nullptr, "a JSON-RPC message must be an object");
  json id = nullptr;
  auto id_it = value.find("id");
  bool has_id = id_it != value.end();
  if (has_id) {
    if (!usable_id(*id_it))
      return invalid(nullptr, fmt::format("'id' must be a string of at most {} bytes or an integer within 64 bits",
                                          kMaxIdBytes));
    id = *id_it;
  }
  auto version = value.find("jsonrpc");
  if (version == value.end() || *version != "2.0") return invalid(id, "'jsonrpc' must be \"2.0\"");
  auto method = value.find("method");
  if (method == value.end()) {
    if (has_id && (value.contains("result") || value.contains("error"))) return Message{Kind::response, id, "", {}};
    return invalid(id, "'method' is missing");
  }
  if (!method->is_string()) return invalid(id, "'method' must be a string");
  Message m{has_id ? Kind::request : Kind::notification, id, method->get<std::string>(), json::object()};
  if (auto params = value.find("params"); params != value.end() && !params->is_null()) {
    if (params->is_array()) return Invalid{id, Error{code::invalid_params, "'params' must be an object (MCP names its parameters)"}};
    if (!params->is_object()) return invalid(id, "'params' must be an object");
    m.params = *params;
  }
  return m;
}

json result(const json& id, json value) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(value)}};
}

json error(const json& id, const Error& e) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", e.code}, {"message", e.message}}}};
}

}  // namespace okfbench::mcp::jsonrpc
