#pragma once
// ChatModels that call a provider over HTTP.
//
//   OpenAIModel     POST {base_url}/chat/completions   Authorization: Bearer <key>
//   AnthropicModel  POST {base_url}/v1/messages        x-api-key: <key>, anthropic-version: 2023-06-01
//
// Endpoint settings come from flags or a spec, else the environment
// (OPENAI_BASE_URL, OPENAI_API_KEY, OPENAI_MODEL; ANTHROPIC_BASE_URL,
// ANTHROPIC_API_KEY). The key lives only in memory: it is sent in a header and
// never written to a log, cassette, cache, record or report (agents/secrets.hpp).
//
// chat() throws CallError: transient or permanent as agents/http.hpp
// classifies the HTTP exchange; a 2xx reply that cannot be used (not JSON,
// nested too deep, a missing field, a negative or absurd token count) is
// permanent.
#include <string>

#include "agents/http.hpp"
#include "agents/model.hpp"

namespace okfbench::agents {

struct Endpoint {
  std::string base_url;  // without the trailing path; "" = environment, else the official endpoint
  std::string api_key;   // "" = the environment variable below
  std::string model;
  RetryPolicy retry;     // attempts, deadlines and the reply size limit
  // The environment variable that holds the key when api_key is empty;
  // "" = OPENAI_API_KEY / ANTHROPIC_API_KEY.
  std::string api_key_env = {};
  Headers extra_headers = {};  // sent with every request (a gateway's own headers)
  // Where these settings come from, to name in errors ("--api-key" when empty,
  // or e.g. "spec.yaml: models[1]").
  std::string origin = {};
  // Ask for server-sent events ("stream": true; OpenAI with
  // stream_options.include_usage) and rebuild the reply from them
  // (agents/stream_json.hpp): the same ChatResponse, usage included, as
  // without; a stream cut short is a transient failure.
  bool stream = false;
};

enum class Provider { openai, anthropic };

// Fills empty fields from the environment and defaults (api.openai.com/v1,
// api.anthropic.com), checks every header value it will send and remembers the
// key (and any password in the URL) for redaction. Throws UsageError when no
// model is known or a key, URL or header holds a control character (naming
// the flag, variable or field), and InputError when the official endpoint is
// used without a key.
Endpoint resolve_endpoint(Provider provider, Endpoint given);

// The base URL a model of `provider` would call (`given`, else the
// environment, else the official endpoint) without its user-info: what a
// manifest or report may record. Checks nothing and remembers nothing.
std::string recorded_base_url(Provider provider, const std::string& given = "");

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
