#pragma once
// Provider-neutral JSON for the wire types: what cassettes and the response
// cache store. Stable field names; unknown usage counts are JSON null.
#include <cstdint>
#include <string>
#include <string_view>

#include "agents/wire.hpp"

namespace okfbench::agents::wire_json {

std::string request_to_json(const ChatRequest& request);
ChatRequest request_from_json(std::string_view text);  // throws InputError
std::string response_to_json(const ChatResponse& response);
ChatResponse response_from_json(std::string_view text);  // throws InputError

// FNV-1a of request_to_json: the identity of a request in cassettes and caches.
std::uint64_t request_hash(const ChatRequest& request);

}  // namespace okfbench::agents::wire_json
