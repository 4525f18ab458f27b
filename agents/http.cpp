#include "agents/http.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <curl/curl.h>
#include <fmt/format.h>
#include <limits>
#include <memory>
#include <mutex>
#include <random>
#include <thread>

#include "agents/json_util.hpp"
#include "agents/secrets.hpp"
#include "core/error.hpp"

namespace okfbench::agents {
namespace {

using Clock = std::chrono::steady_clock;

thread_local std::optional<CallTiming> t_last_timing;

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Exchange {
  std::chrono::steady_clock::time_point start;
  std::optional<double> first_byte_ms;
  std::string body;
  std::optional<double> retry_after;
  std::size_t limit = 0;
  bool too_large = false;
};

// Returning less than it was given makes libcurl stop with CURLE_WRITE_ERROR,
// so an endless body never grows past the limit.
std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto* exchange = static_cast<Exchange*>(user);
  std::size_t n = size * count;
  if (!exchange->first_byte_ms && n > 0)
    exchange->first_byte_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - exchange->start).count();
  if (n > exchange->limit - exchange->body.size()) {
    exchange->too_large = true;
    return 0;
  }
  exchange->body.append(data, n);
  return n;
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
  double seconds = 0;
};

long milliseconds(double seconds) { return std::max(1L, static_cast<long>(std::ceil(seconds * 1000))); }

// One attempt, given at most `budget` seconds (what is left of the deadline).
Attempt attempt_once(const std::string& url, const Headers& headers, const std::string& body,
                     const RetryPolicy& policy, double budget) {
  global_init();
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), curl_easy_cleanup);
  if (!curl) throw CallError(Failure::transient, "libcurl could not create a handle");
  curl_slist* list = nullptr;
  for (const auto& [name, value] : headers) list = curl_slist_append(list, (name + ": " + value).c_str());
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> header_list(list, curl_slist_free_all);
  Attempt a;
  a.exchange.limit = policy.max_response_bytes;
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
  // A Content-Length above the limit is refused before the body is read.
  curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(policy.max_response_bytes));
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, milliseconds(std::min(policy.timeout_seconds, budget)));
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, milliseconds(std::min(policy.connect_timeout_seconds, budget)));
  if (policy.low_speed_bytes_per_second > 0) {
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, policy.low_speed_bytes_per_second);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, std::max(1L, policy.low_speed_seconds));
  }
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error);
  const auto start = Clock::now();
  a.exchange.start = start;
  a.code = curl_easy_perform(h);
  a.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (a.code != CURLE_OK) a.transport_error = error[0] ? error : curl_easy_strerror(a.code);
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &a.status);
  return a;
}

bool oversized(const Attempt& a) { return a.exchange.too_large || a.code == CURLE_FILESIZE_EXCEEDED; }

// Transport failures are transient (the network, a timeout, a cut body)
// except those that repeat identically: an oversized body and a URL libcurl
// cannot use.
Failure classify(const Attempt& a) {
  if (oversized(a)) return Failure::permanent;
  if (a.code == CURLE_URL_MALFORMAT || a.code == CURLE_UNSUPPORTED_PROTOCOL) return Failure::permanent;
  if (a.code != CURLE_OK) return Failure::transient;
  return transient_status(a.status) ? Failure::transient : Failure::permanent;
}

// The secrets a message must not carry: every header value (and the token of
// "Bearer KEY") besides the keys known process-wide.
std::vector<std::string> secrets_of(const Headers& headers) {
  std::vector<std::string> secrets = known_secrets();
  for (const auto& [name, value] : headers) {
    if (name == "Content-Type" || name == "anthropic-version") continue;
    secrets.push_back(value);
    if (auto space = value.rfind(' '); space != std::string::npos) secrets.push_back(value.substr(space + 1));
  }
  return secrets;
}

std::string describe(const Attempt& a, const RetryPolicy& policy) {
  if (oversized(a))
    return fmt::format("the reply body is larger than the limit of {} bytes (max_response_bytes); a chat reply is "
                       "far smaller, so the endpoint is misbehaving",
                       policy.max_response_bytes);
  if (a.code != CURLE_OK) return a.transport_error;
  std::string message = json_util::error_message(a.exchange.body);
  if (message.empty()) message = json_util::valid_utf8(a.exchange.body.substr(0, 200));
  return fmt::format("HTTP {}: {}", a.status, message);
}

double jitter_draw() {
  thread_local std::mt19937_64 rng(std::random_device{}());
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng);
}

[[noreturn]] void fail(Failure failure, const std::string& message, const std::vector<std::string>& secrets) {
  throw CallError(failure, redact(json_util::valid_utf8(message), secrets));
}

void wait(const RetryPolicy& policy, double seconds) {
  if (policy.sleep) policy.sleep(seconds);
  else std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}
}  // namespace

bool transient_status(long status) { return status == 408 || status == 429 || status >= 500; }

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
  // resolve_endpoint checked these against where they came from; this is the
  // last line before libcurl, for every caller.
  for (const auto& [name, value] : headers) {
    check_header_name(name, "header");
    check_header_value(value, "header " + name);
  }
  const int attempts = std::max(1, policy.max_attempts);
  const std::vector<std::string> secrets = secrets_of(headers);
  double elapsed = 0;  // attempts plus waits, so a recording `sleep` counts as time passed
  std::string last;
  // Seconds left before deadline_at (infinite without one).
  const auto until_deadline_at = [&] {
    if (!policy.deadline_at) return std::numeric_limits<double>::infinity();
    return std::chrono::duration<double>(*policy.deadline_at - Clock::now()).count();
  };
  const auto stopped_at_deadline_at = [&](int made) {
    fail(Failure::transient,
         fmt::format("{}: the trial deadline passed after {} attempt(s){}{}", what, made, last.empty() ? "" : "; last error: ", last),
         secrets);
  };
  for (int n = 1;; ++n) {
    if (policy.before_attempt) policy.before_attempt();
    const double left = until_deadline_at();
    if (left <= 0) stopped_at_deadline_at(n - 1);
    Attempt a = attempt_once(url, headers, body, policy, std::min(policy.deadline_seconds - elapsed, left));
    elapsed += a.seconds;
    if (a.code == CURLE_OK && a.status >= 200 && a.status < 300) {
      t_last_timing = CallTiming{a.seconds * 1000, a.exchange.first_byte_ms};
      return HttpResult{a.status, json_util::valid_utf8(a.exchange.body), a.exchange.retry_after, n};
    }
    last = describe(a, policy);
    if (classify(a) == Failure::permanent) {
      const char* hint = a.code == CURLE_OK && !oversized(a) ? "not retried: fix the request, model name or API key"
                                                             : "not retried";
      fail(Failure::permanent, fmt::format("{}: {} ({})", what, last, hint), secrets);
    }
    if (n == attempts) break;
    double delay = backoff_delay(policy, n, a.exchange.retry_after, jitter_draw());
    if (elapsed + delay >= policy.deadline_seconds)
      fail(Failure::transient, fmt::format("{}: failed after {} attempt(s) in {:.1f} s, stopped by the deadline of "
                                           "{:g} s (deadline_seconds); last error: {}",
                                           what, n, elapsed, policy.deadline_seconds, last),
           secrets);
    if (delay >= until_deadline_at()) stopped_at_deadline_at(n);
    wait(policy, delay);
    elapsed += delay;
  }
  fail(Failure::transient, fmt::format("{}: failed after {} attempt(s); last error: {}", what, attempts, last),
       secrets);
}

void reset_call_timing() { t_last_timing.reset(); }
std::optional<CallTiming> last_call_timing() { return t_last_timing; }

}  // namespace okfbench::agents
