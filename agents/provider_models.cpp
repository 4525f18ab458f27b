#include "agents/provider_models.hpp"

#include <cstdlib>
#include <fmt/format.h>

#include "agents/anthropic_json.hpp"
#include "agents/openai_json.hpp"
#include "retrieval/error.hpp"

namespace okfbench::agents {
namespace {

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

std::string trim_slash(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}
}  // namespace

Endpoint resolve_endpoint(Provider provider, Endpoint e) {
  bool openai = provider == Provider::openai;
  const char* official = openai ? "https://api.openai.com/v1" : "https://api.anthropic.com";
  if (e.base_url.empty()) e.base_url = env(openai ? "OPENAI_BASE_URL" : "ANTHROPIC_BASE_URL");
  if (e.base_url.empty()) e.base_url = official;
  e.base_url = trim_slash(e.base_url);
  if (e.api_key.empty()) e.api_key = env(openai ? "OPENAI_API_KEY" : "ANTHROPIC_API_KEY");
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
  HttpResult result = post_json(url, headers, openai::request_to_json(r), endpoint_.retry, "OpenAI " + url);
  return openai::response_from_json(result.body);
}

ChatResponse AnthropicModel::chat(const ChatRequest& request) {
  ChatRequest r = request;
  r.model = endpoint_.model;
  Headers headers{{"Content-Type", "application/json"}, {"anthropic-version", "2023-06-01"}};
  if (!endpoint_.api_key.empty()) headers.emplace_back("x-api-key", endpoint_.api_key);
  std::string url = endpoint_.base_url + "/v1/messages";
  HttpResult result = post_json(url, headers, anthropic::request_to_json(r), endpoint_.retry, "Anthropic " + url);
  return anthropic::response_from_json(result.body);
}

}  // namespace okfbench::agents
