#include "agents/wire.hpp"

#include "core/saturate.hpp"

namespace okfbench::agents {

const char* to_string(Role role) {
  switch (role) {
    case Role::system: return "system";
    case Role::user: return "user";
    case Role::assistant: return "assistant";
    case Role::tool: return "tool";
  }
  return "user";
}

const char* to_string(StopReason stop) {
  switch (stop) {
    case StopReason::end_turn: return "end_turn";
    case StopReason::tool_calls: return "tool_calls";
    case StopReason::max_tokens: return "max_tokens";
    case StopReason::other: return "other";
  }
  return "other";
}

std::int64_t text_tokens(const Message& message, const retrieval::TokenCounter& counter) {
  auto tokens = static_cast<std::int64_t>(counter.count(message.content));
  for (const ToolCall& call : message.tool_calls)
    tokens += static_cast<std::int64_t>(counter.count(call.name) + counter.count(call.arguments));
  return tokens;
}

std::string system_prompt(const ChatRequest& request) {
  if (!request.messages.empty() && request.messages.front().role == Role::system)
    return request.messages.front().content;
  return {};
}

namespace {
std::optional<std::int64_t> sum(std::optional<std::int64_t> a, std::optional<std::int64_t> b) {
  if (!a || !b) return std::nullopt;
  return saturating_add(*a, *b);
}
}  // namespace

Usage add(const Usage& a, const Usage& b) {
  return Usage{sum(a.input_tokens, b.input_tokens), sum(a.cached_input_tokens, b.cached_input_tokens),
               sum(a.cache_write_tokens, b.cache_write_tokens), sum(a.output_tokens, b.output_tokens)};
}

}  // namespace okfbench::agents
