#include "agents/http.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <curl/curl.h>
#include <fmt/format.h>
#include <memory>
#include <mutex>
#include <random>
#include <thread>

#include "agents/json_util.hpp"
#include "retrieval/error.hpp"

namespace okfbench::agents {
namespace {

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Exchange {
  std::string body;
  std::optional<double> retry_after;
};

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  static_cast<Exchange*>(user)->body.append(data, size * count);
  return size * count;
}

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  std::string line(data, size * count);
  constexpr std::string_view name = "retry-after:";
  if (line.size() > name.size()) {
    std::string head = line.substr(0, name.size());
    std::transform(head.begin(), head.end(), head.begin(), [](unsigned char c) { return std::tolower(c); });
    if (head == name) {
      std::string value = line.substr(name.size());
      value.erase(0, value.find_first_not_of(" \t"));
      value.erase(value.find_last_not_of(" \t\r\n") + 1);
      static_cast<Exchange*>(user)->retry_after = parse_retry_after(value);
    }
  }
  return size * count;
}

struct Attempt {
  CURLcode code = CURLE_OK;
  long status = 0;
  Exchange exchange;
  std::string transport_error;
};

Attempt attempt_once(const std::string& url, const Headers& headers, const std::string& body,
                     const RetryPolicy& policy) {
  global_init();
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), curl_easy_cleanup);
  if (!curl) throw InputError("libcurl could not create a handle");
  curl_slist* list = nullptr;
  for (const auto& [name, value] : headers) list = curl_slist_append(list, (name + ": " + value).c_str());
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> header_list(list, curl_slist_free_all);
  Attempt a;
  char error[CURL_ERROR_SIZE] = {0};
  CURL* h = curl.get();
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_POST, 1L);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, list);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &a.exchange);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &a.exchange);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(policy.timeout_seconds * 1000));
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(policy.connect_timeout_seconds * 1000));
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error);
  a.code = curl_easy_perform(h);
  if (a.code != CURLE_OK) a.transport_error = error[0] ? error : curl_easy_strerror(a.code);
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &a.status);
  return a;
}

bool retryable_status(long status) { return status == 429 || status >= 500; }

std::string describe(const Attempt& a) {
  if (a.code != CURLE_OK) return a.transport_error;
  std::string message = json_util::error_message(a.exchange.body);
  if (message.empty()) message = a.exchange.body.substr(0, 200);
  return fmt::format("HTTP {}: {}", a.status, message);
}

double jitter_draw() {
  thread_local std::mt19937_64 rng(std::random_device{}());
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng);
}
}  // namespace

std::optional<double> parse_retry_after(const std::string& value) {
  if (value.empty()) return std::nullopt;
  if (std::all_of(value.begin(), value.end(), [](unsigned char c) { return std::isdigit(c); }))
    return value.size() > 9 ? 1e9 : std::stod(value);  // absurd values are capped by max_delay anyway
  time_t when = curl_getdate(value.c_str(), nullptr);
  if (when < 0) return std::nullopt;
  return std::max(0.0, std::difftime(when, std::time(nullptr)));
}

double backoff_delay(const RetryPolicy& policy, int attempt, std::optional<double> retry_after, double unit) {
  if (retry_after) return std::min(*retry_after, policy.max_delay_seconds);
  double exponential = policy.base_delay_seconds * std::pow(2.0, attempt - 1);
  return std::min(policy.max_delay_seconds, exponential) * (0.5 + 0.5 * unit);
}

HttpResult post_json(const std::string& url, const Headers& headers, const std::string& body,
                     const RetryPolicy& policy, const std::string& what) {
  int attempts = std::max(1, policy.max_attempts);
  std::string last;
  for (int n = 1; n <= attempts; ++n) {
    Attempt a = attempt_once(url, headers, body, policy);
    bool transport_failure = a.code != CURLE_OK;
    if (!transport_failure && a.status >= 200 && a.status < 300)
      return HttpResult{a.status, std::move(a.exchange.body), a.exchange.retry_after, n};
    last = describe(a);
    if (!transport_failure && !retryable_status(a.status))
      throw InputError(fmt::format("{}: {} (not retried: fix the request, model name or API key)", what, last));
    if (n == attempts) break;
    double delay = backoff_delay(policy, n, a.exchange.retry_after, jitter_draw());
    if (policy.sleep) policy.sleep(delay);
    else std::this_thread::sleep_for(std::chrono::duration<double>(delay));
  }
  throw InputError(fmt::format("{}: failed after {} attempt(s); last error: {}", what, attempts, last));
}

}  // namespace okfbench::agents
