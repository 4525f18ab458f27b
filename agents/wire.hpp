#pragma once
// Provider-neutral chat wire types.
//
// These are what run_agent, the models and the decorators exchange. They are
// plain values: no JSON here. Each provider's JSON lives in its own file
// (agents/openai_json.hpp, agents/anthropic_json.hpp); the provider-neutral
// JSON used by cassettes and the response cache is agents/wire_json.hpp.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "retrieval/token_counter.hpp"

namespace okfbench::agents {

enum class Role { system, user, assistant, tool };

struct ToolCall {
  std::string id;         // provider-assigned call id, echoed in the tool result
  std::string name;       // tool name as the model wrote it
  std::string arguments;  // JSON object text, exactly as the model produced it
  bool operator==(const ToolCall&) const = default;
};

struct Message {
  Role role = Role::user;
  std::string content;               // text; for role=tool, the tool's result
  std::vector<ToolCall> tool_calls;  // role=assistant only
  std::string tool_call_id;          // role=tool only: the ToolCall::id answered
  std::string name;                  // role=tool only: the tool that produced it
  bool operator==(const Message&) const = default;
};

struct ToolSpec {
  std::string name;
  std::string description;
  std::string parameters;  // JSON Schema object text
  bool operator==(const ToolSpec&) const = default;
};

// Where Anthropic-style cache_control breakpoints go. OpenAI ignores them
// (its prompt cache is automatic).
enum class CacheBreakpoints { none, tools_and_system, tools_system_and_last_message };

struct ChatRequest {
  std::string model;
  std::vector<Message> messages;  // a leading role=system message is the system prompt
  std::vector<ToolSpec> tools;
  int max_tokens = 1024;
  std::optional<double> temperature;
  CacheBreakpoints breakpoints = CacheBreakpoints::none;
  bool operator==(const ChatRequest&) const = default;
};

// Token counts normalised across providers. Every field is "as reported":
// std::nullopt means the provider did not say, which is not the same as 0.
//   input_tokens        all prompt tokens, cached ones included
//   cached_input_tokens the part of input_tokens read from a prompt cache
//   cache_write_tokens  the part of input_tokens written to a prompt cache
//   output_tokens       completion tokens
struct Usage {
  std::optional<std::int64_t> input_tokens;
  std::optional<std::int64_t> cached_input_tokens;
  std::optional<std::int64_t> cache_write_tokens;
  std::optional<std::int64_t> output_tokens;
  bool operator==(const Usage&) const = default;
};

enum class StopReason { end_turn, tool_calls, max_tokens, other };

struct ChatResponse {
  Message message;  // role=assistant
  Usage usage;
  StopReason stop = StopReason::end_turn;
  std::string model;  // the model that answered, as the provider named it
  bool operator==(const ChatResponse&) const = default;
};

const char* to_string(Role role);
const char* to_string(StopReason stop);

// The leading system prompt of a request ("" when there is none).
std::string system_prompt(const ChatRequest& request);

// The tokens of a message's text: its content and each tool call's name and
// arguments, with no role or per-message overhead (what a reply's output is
// counted as, and what the proxy counts per message of a request).
std::int64_t text_tokens(const Message& message, const retrieval::TokenCounter& counter);

// Adds a to b, field by field; unknown stays unknown if either side is unknown.
// Sums saturate at INT64_MAX instead of wrapping (core/saturate.hpp).
Usage add(const Usage& a, const Usage& b);

}  // namespace okfbench::agents
