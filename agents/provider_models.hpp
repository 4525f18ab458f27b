#pragma once
// ChatModels that call a provider over HTTP.
//
//   OpenAIModel     POST {base_url}/chat/completions   Authorization: Bearer <key>
//   AnthropicModel  POST {base_url}/v1/messages        x-api-key: <key>, anthropic-version: 2023-06-01
//
// Endpoint settings come from flags, else the environment (OPENAI_BASE_URL,
// OPENAI_API_KEY, OPENAI_MODEL; ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY). The key
// lives only in memory: it is sent in a header and never written to a log,
// cassette, cache, record or report.
#include <string>

#include "agents/http.hpp"
#include "agents/model.hpp"

namespace okfbench::agents {

struct Endpoint {
  std::string base_url;  // without the trailing path
  std::string api_key;
  std::string model;
  RetryPolicy retry;
};

enum class Provider { openai, anthropic };

// Fills empty fields from the environment and defaults (api.openai.com/v1,
// api.anthropic.com). Throws UsageError when no model is known, and InputError
// when the official endpoint is used without a key.
Endpoint resolve_endpoint(Provider provider, Endpoint given);

class OpenAIModel : public ChatModel {
 public:
  explicit OpenAIModel(Endpoint endpoint) : endpoint_(std::move(endpoint)) {}
  ChatResponse chat(const ChatRequest& request) override;
  std::string name() const override { return "openai:" + endpoint_.model; }
  const std::string& base_url() const { return endpoint_.base_url; }

 private:
  Endpoint endpoint_;
};

class AnthropicModel : public ChatModel {
 public:
  explicit AnthropicModel(Endpoint endpoint) : endpoint_(std::move(endpoint)) {}
  ChatResponse chat(const ChatRequest& request) override;
  std::string name() const override { return "anthropic:" + endpoint_.model; }
  const std::string& base_url() const { return endpoint_.base_url; }

 private:
  Endpoint endpoint_;
};

}  // namespace okfbench::agents
