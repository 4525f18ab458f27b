#include "agents/provider_models.hpp"

#include <algorithm>
#include <cstdlib>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "agents/anthropic_json.hpp"
#include "agents/openai_json.hpp"
#include "agents/secrets.hpp"
#include "agents/stream_json.hpp"
#include "core/json_text.hpp"
#include "core/error.hpp"

namespace okfbench::agents {
namespace {

std::string env(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  return value ? value : "";
}

std::string trim_slash(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

// "--api-key" for a flag, "spec.yaml: models[1]: api_key" for a spec.
std::string field(const Endpoint& e, std::string_view flag, std::string_view key) {
  return e.origin.empty() ? std::string(flag) : fmt::format("{}: {}", e.origin, key);
}

// Headers whose values are credentials, redacted like the key.
bool credential_header(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* word : {"auth", "key", "token", "secret", "cookie", "password"})
    if (name.find(word) != std::string::npos) return true;
  return false;
}

void check_headers(const Endpoint& e) {
  for (const auto& [name, value] : e.extra_headers) {
    check_header_name(name, field(e, "--header", "headers"));
    check_header_value(value, field(e, "--header " + name, "headers." + name));
    if (credential_header(name)) remember_secret(value);
  }
}

Headers with_extra(Headers headers, const Endpoint& e) {
  headers.insert(headers.end(), e.extra_headers.begin(), e.extra_headers.end());
  return headers;
}

// A 2xx reply that cannot be used fails the same way every time.
template <class Parse>
ChatResponse parse_reply(Parse parse, const std::string& body, const std::string& what) {
  try {
    return parse(body);
  } catch (const InputError& e) {
    throw CallError(Failure::permanent, redact(fmt::format("{}: invalid reply: {}", what, e.what())));
  }
}

// The request body asking for a stream (OpenAI: with the usage chunk).
std::string streamed(const std::string& body, Provider provider) {
  nlohmann::json doc = nlohmann::json::parse(body);
  doc["stream"] = true;
  if (provider == Provider::openai) doc["stream_options"] = {{"include_usage", true}};
  return json_text(doc);
}

// The non-streamed reply rebuilt from a stream; a cut or broken stream is
// transient (the next attempt may stream whole), unlike a malformed reply.
template <typename Rebuild>
std::string rebuilt(Rebuild rebuild, const std::string& body, const std::string& what) {
  try {
    return rebuild(body);
  } catch (const InputError& e) {
    throw CallError(Failure::transient, redact(fmt::format("{}: {}", what, e.what())));
  }
}

const char* official_url(Provider provider) {
  return provider == Provider::openai ? "https://api.openai.com/v1" : "https://api.anthropic.com";
}

const char* url_variable(Provider provider) {
  return provider == Provider::openai ? "OPENAI_BASE_URL" : "ANTHROPIC_BASE_URL";
}
}  // namespace

std::string recorded_base_url(Provider provider, const std::string& given) {
  std::string url = given.empty() ? env(url_variable(provider)) : given;
  return display_url(trim_slash(url.empty() ? official_url(provider) : url));
}

Endpoint resolve_endpoint(Provider provider, Endpoint e) {
  bool openai = provider == Provider::openai;
  const char* official = official_url(provider);
  std::string url_field = field(e, "--base-url", "base_url");
  if (e.base_url.empty()) {
    url_field = url_variable(provider);
    e.base_url = env(url_field);
  }
  if (e.base_url.empty()) e.base_url = official;
  e.base_url = trim_slash(e.base_url);
  std::string key_field = field(e, "--api-key", "api_key");
  if (e.api_key.empty()) {
    std::string variable = !e.api_key_env.empty() ? e.api_key_env : openai ? "OPENAI_API_KEY" : "ANTHROPIC_API_KEY";
    key_field = e.api_key_env.empty() ? variable : field(e, variable, "api_key_env " + variable);
    e.api_key = env(variable);
    if (e.api_key.empty() && !e.api_key_env.empty())
      throw InputError(fmt::format("{}: the environment variable {} is not set; export it with the key", key_field,
                                   variable));
  }
  check_header_value(e.api_key, key_field);
  check_header_value(e.base_url, url_field);
  check_headers(e);
  remember_secret(e.api_key);
  remember_secret(url_password(e.base_url));
  if (e.model.empty() && openai) e.model = env("OPENAI_MODEL");
  if (e.model.empty())
    throw UsageError(fmt::format("no model given: use --model {}:MODEL{}", openai ? "openai" : "anthropic",
                                 openai ? " or set OPENAI_MODEL" : ""));
  if (e.api_key.empty() && e.base_url == official)
    throw InputError(fmt::format("no API key for {}: set {} (it is never written to disk)", e.base_url,
                                 openai ? "OPENAI_API_KEY" : "ANTHROPIC_API_KEY"));
  return e;
}

ChatResponse OpenAIModel::chat(const ChatRequest& request) {
  ChatRequest r = request;
  r.model = endpoint_.model;
  Headers headers{{"Content-Type", "application/json"}};
  if (!endpoint_.api_key.empty()) headers.emplace_back("Authorization", "Bearer " + endpoint_.api_key);
  std::string url = endpoint_.base_url + "/chat/completions";
  std::string what = "OpenAI " + display_url(url);
  if (!endpoint_.stream) {
    HttpResult result = post_json(url, with_extra(headers, endpoint_), openai::request_to_json(r), endpoint_.retry, what);
    return parse_reply(openai::response_from_json, result.body, what);
  }
  std::string body = streamed(openai::request_to_json(r), Provider::openai);
  HttpResult result = post_json(url, with_extra(headers, endpoint_), body, endpoint_.retry, what);
  return parse_reply(openai::response_from_json, rebuilt(openai_completion_from_stream, result.body, what), what);
}

ChatResponse AnthropicModel::chat(const ChatRequest& request) {
  ChatRequest r = request;
  r.model = endpoint_.model;
  Headers headers{{"Content-Type", "application/json"}, {"anthropic-version", "2023-06-01"}};
  if (!endpoint_.api_key.empty()) headers.emplace_back("x-api-key", endpoint_.api_key);
  std::string url = endpoint_.base_url + "/v1/messages";
  std::string what = "Anthropic " + display_url(url);
  std::string body = anthropic::request_to_json(r);
  if (endpoint_.stream) body = streamed(body, Provider::anthropic);
  HttpResult result = post_json(url, with_extra(headers, endpoint_), body, endpoint_.retry, what);
  if (!endpoint_.stream) return parse_reply(anthropic::response_from_json, result.body, what);
  return parse_reply(anthropic::response_from_json, rebuilt(anthropic_message_from_stream, result.body, what), what);
}

}  // namespace okfbench::agents
