#pragma once
// JSON-RPC 2.0 as the Model Context Protocol uses it: parsing what a client
// sent, checking each message's shape, and writing results and errors.
//
// Nothing here throws for what a client sends: every problem becomes an
// Error with the code the JSON-RPC 2.0 specification (and MCP, for
// resource_not_found) assigns, answered with the request's id when the id is
// usable and with null otherwise.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <variant>

namespace okfbench::mcp::jsonrpc {

using nlohmann::json;

namespace code {
inline constexpr int parse_error = -32700;       // the text is not JSON
inline constexpr int invalid_request = -32600;   // JSON, but not a valid request object
inline constexpr int method_not_found = -32601;  // no such method
inline constexpr int invalid_params = -32602;    // the method's params are wrong
inline constexpr int internal_error = -32603;    // the server failed
inline constexpr int resource_not_found = -32002;  // MCP: resources/read of an unknown URI
// An implementation-defined server error (JSON-RPC reserves -32000 to
// -32099): a batch's replies reached kMaxBatchReplyBytes, so this element's
// result is not sent.
inline constexpr int reply_too_large = -32000;
}  // namespace code

// Limits on what one client message may be. A real message is a few hundred
// bytes (a remember call with a long body a few kilobytes); these keep a
// hostile client from making the server hold or walk unbounded input.
inline constexpr std::size_t kMaxMessageBytes = std::size_t{4} << 20;
inline constexpr std::size_t kMaxBatch = 32;     // messages in one batch (protocols that allow batches)
// The replies of one batch: a batch of 32 resources/read calls is a few
// kilobytes and could otherwise ask for 32 whole concepts at once.
inline constexpr std::size_t kMaxBatchReplyBytes = std::size_t{8} << 20;
inline constexpr std::size_t kMaxIdBytes = 256;  // a string id; clients send counters or UUIDs
inline constexpr std::size_t kMaxDepth = 64;     // nesting of arrays and objects in one message

struct Error {
  int code = code::internal_error;
  std::string message;
};

enum class Kind { request, notification, response };

// One checked message. Requests carry an id (a string or a 64-bit integer);
// notifications have none; responses (result or error, no method) come from
// a client answering a server request, which this server never sends.
struct Message {
  Kind kind = Kind::request;
  json id;  // null for notifications and responses
  std::string method;
  json params = json::object();  // an object; {} when absent
};

// The text as JSON: parse_error when it is not JSON (or not UTF-8),
// invalid_request when it is longer than kMaxMessageBytes, nests deeper than
// kMaxDepth or holds a number no 64-bit value can hold.
std::variant<json, Error> parse(std::string_view text);

// One message of a (possibly batched) body. On failure: the id to answer
// with (null when the message had no usable id) and the error.
struct Invalid {
  json id;
  Error error;
};
std::variant<Message, Invalid> check(const json& value);

// {"jsonrpc": "2.0", "id": id, "result": result}
json result(const json& id, json value);
// {"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}
json error(const json& id, const Error& e);

}  // namespace okfbench::mcp::jsonrpc
