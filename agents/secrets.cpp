#include "agents/secrets.hpp"

#include <curl/curl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>

#include "agents/json_util.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"

namespace okfbench::agents {
namespace {

std::mutex& secrets_mutex() {
  static std::mutex mutex;
  return mutex;
}

std::set<std::string>& remembered() {
  static std::set<std::string> secrets;
  return secrets;
}

// The secret as it appears inside a JSON string ("a\"b" for a"b), when that differs.
std::string json_escaped(const std::string& secret) {
  std::string quoted = json_text(nlohmann::json(secret));
  return quoted.substr(1, quoted.size() - 2);
}

void redact_strings(nlohmann::json& value, const std::vector<std::string>& secrets) {
  if (value.is_string()) {
    value = redact(value.get<std::string>(), secrets);
  } else if (value.is_array()) {
    for (auto& item : value) redact_strings(item, secrets);
  } else if (value.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (auto& [key, item] : value.items()) {
      redact_strings(item, secrets);
      out[redact(key, secrets)] = std::move(item);
    }
    value = std::move(out);
  }
}

using Url = std::unique_ptr<CURLU, decltype(&curl_url_cleanup)>;

Url parse_url(std::string_view text) {
  Url url(curl_url(), curl_url_cleanup);
  if (url && curl_url_set(url.get(), CURLUPART_URL, std::string(text).c_str(), 0) != CURLUE_OK) url.reset();
  return url;
}

std::string url_part(CURLU* url, CURLUPart part, unsigned flags = 0) {
  char* value = nullptr;
  if (curl_url_get(url, part, &value, flags) != CURLUE_OK || !value) return {};
  std::string out(value);
  curl_free(value);
  return out;
}

// "scheme://user:pass@host..." -> where the authority starts and where its '@' is.
std::pair<std::size_t, std::size_t> userinfo_span(std::string_view url) {
  std::size_t start = url.find("://");
  if (start == std::string_view::npos) return {0, std::string_view::npos};
  start += 3;
  std::size_t end = url.find_first_of("/?#", start);
  std::size_t at = url.substr(0, end).rfind('@');
  if (at == std::string_view::npos || at < start) return {start, std::string_view::npos};
  return {start, at};
}
}  // namespace

void remember_secret(std::string_view secret) {
  if (secret.size() < kMinSecretLength) return;
  std::lock_guard lock(secrets_mutex());
  remembered().emplace(secret);
}

std::vector<std::string> known_secrets() {
  std::vector<std::string> secrets;
  {
    std::lock_guard lock(secrets_mutex());
    secrets.assign(remembered().begin(), remembered().end());
  }
  for (const char* name : {"OPENAI_API_KEY", "ANTHROPIC_API_KEY"})
    if (const char* value = std::getenv(name); value && std::string_view(value).size() >= kMinSecretLength)
      secrets.emplace_back(value);
  return secrets;
}

// One pass over the text, so a marker already written is never searched
// again: at each step the earliest (then longest) form found is replaced.
std::string redact(std::string text, const std::vector<std::string>& secrets) {
  std::vector<std::string> forms;
  for (const std::string& secret : secrets) {
    if (secret.size() < kMinSecretLength) continue;
    forms.push_back(secret);
    if (std::string escaped = json_escaped(secret); escaped != secret) forms.push_back(escaped);
  }
  if (forms.empty()) return text;
  std::string out;
  std::size_t done = 0;
  while (true) {
    std::size_t at = std::string::npos, length = 0;
    for (const std::string& form : forms) {
      std::size_t found = text.find(form, done);
      if (found < at || (found == at && found != std::string::npos && form.size() > length)) {
        at = found;
        length = form.size();
      }
    }
    if (at == std::string::npos) break;
    out.append(text, done, at - done).append(kRedacted);
    done = at + length;
  }
  return out.append(text, done);
}

std::string redact(std::string text) { return redact(std::move(text), known_secrets()); }

std::string redact_json(std::string_view text, const std::vector<std::string>& secrets) {
  if (json_util::nesting_depth(text) > json_util::kMaxDepth) return redact(std::string(text), secrets);
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded()) return redact(std::string(text), secrets);
  redact_strings(doc, secrets);
  return json_text(doc);
}

std::string redact_json(std::string_view text) { return redact_json(text, known_secrets()); }

std::string display_url(std::string_view url) {
  auto [start, at] = userinfo_span(url);
  if (at == std::string_view::npos) return std::string(url);
  return std::string(url.substr(0, start)) + std::string(url.substr(at + 1));
}

std::string url_password(std::string_view text) {
  if (userinfo_span(text).second == std::string_view::npos) return {};
  Url url = parse_url(text);
  if (!url) {  // libcurl cannot parse it; take what follows the first ':' of the user-info
    auto [start, at] = userinfo_span(text);
    std::string_view info = text.substr(start, at - start);
    auto colon = info.find(':');
    return colon == std::string_view::npos ? std::string() : std::string(info.substr(colon + 1));
  }
  return url_part(url.get(), CURLUPART_PASSWORD, CURLU_URLDECODE);
}

std::string url_username(std::string_view text) {
  auto [start, at] = userinfo_span(text);
  if (at == std::string_view::npos) return {};
  Url url = parse_url(text);
  if (!url) {  // as url_password: what precedes the first ':' of the user-info
    std::string_view info = text.substr(start, at - start);
    return std::string(info.substr(0, info.find(':')));
  }
  return url_part(url.get(), CURLUPART_USER, CURLU_URLDECODE);
}

void check_header_value(std::string_view value, std::string_view field) {
  for (std::size_t i = 0; i < value.size(); ++i) {
    auto c = static_cast<unsigned char>(value[i]);
    if (c < 0x20 || c == 0x7F)
      throw UsageError(fmt::format("{}: contains the control character 0x{:02X} at byte {}; a key or header value "
                                   "must be one line of printable text (check for a stray newline or quote)",
                                   field, c, i));
  }
}

void check_header_name(std::string_view name, std::string_view field) {
  constexpr std::string_view punctuation = "!#$%&'*+-.^_`|~";
  bool token = !name.empty() && std::all_of(name.begin(), name.end(), [&](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || punctuation.find(c) != std::string_view::npos;
  });
  if (!token)
    throw UsageError(fmt::format("{}: '{}' is not a valid header name (letters, digits and !#$%&'*+-.^_`|~ only)",
                                 field, json_util::valid_utf8(name)));
}

}  // namespace okfbench::agents
