#pragma once
// The model side of the agent loop: anything that turns a ChatRequest into a
// ChatResponse. Implementations: OpenAIModel and AnthropicModel (HTTP),
// SimModel (offline policy), ReplayModel (cassette), and the decorators
// RecordingModel and CachingModel. make_model() in agents/models.hpp builds
// them from a spec string.
#include <string>

#include "agents/wire.hpp"

namespace okfbench::agents {

class ChatModel {
 public:
  virtual ~ChatModel() = default;
  // One model call. Throws InputError when the call cannot be completed; a
  // CallError (agents/call_error.hpp) when the model says whether the failure
  // is transient (network, timeout, 429, 5xx) or permanent (other 4xx, an
  // unusable reply, a replay miss).
  virtual ChatResponse chat(const ChatRequest& request) = 0;
  // "openai:gpt-4o", "anthropic:claude-sonnet-4-5", "sim", ...
  virtual std::string name() const = 0;
};

}  // namespace okfbench::agents
