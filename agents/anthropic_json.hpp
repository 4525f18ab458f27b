#pragma once
// Anthropic Messages API JSON <-> wire types.
//
// Mapping: the leading system message becomes `system`; an assistant message's
// tool calls become `tool_use` blocks (arguments parsed into `input`); a run of
// consecutive role=tool messages becomes ONE user message of `tool_result`
// blocks, as the API requires for parallel tool calls. Breakpoints
// (ChatRequest::breakpoints) put `cache_control: {"type": "ephemeral"}` on the
// last tool and the system block, and optionally on the last message's last
// content block.
//
// Usage normalisation (https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching):
// `input_tokens` counts only tokens after the last cache breakpoint, so
//   input_tokens        = input_tokens + cache_read_input_tokens + cache_creation_input_tokens
//   cached_input_tokens = cache_read_input_tokens
//   cache_write_tokens  = cache_creation_input_tokens
// A cache field the response leaves out is unknown (std::nullopt) and adds
// nothing to the input total; a missing input_tokens makes the total unknown.
#include <string>
#include <string_view>

#include "agents/wire.hpp"

namespace okfbench::agents::anthropic {

// Body of POST {base}/v1/messages. Throws InputError when a tool call's
// arguments are not a JSON object (the API cannot carry them).
std::string request_to_json(const ChatRequest& request);
ChatRequest request_from_json(std::string_view body);

std::string response_to_json(const ChatResponse& response, std::string_view id);
ChatResponse response_from_json(std::string_view body);

// The provider-reported counts, before normalisation; the mock server needs to
// split a normalised Usage back into them.
struct RawUsage {
  std::optional<std::int64_t> input_tokens;  // after the last breakpoint
  std::optional<std::int64_t> cache_read_input_tokens;
  std::optional<std::int64_t> cache_creation_input_tokens;
  std::optional<std::int64_t> output_tokens;
};
Usage normalise(const RawUsage& raw);

std::string error_message(std::string_view body);

}  // namespace okfbench::agents::anthropic
