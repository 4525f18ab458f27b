#pragma once
// JSON-over-HTTP POST with libcurl: timeouts, and retries with exponential
// backoff and jitter that honour Retry-After.
//
// Retried: HTTP 429 and 5xx, and transport failures (refused or dropped
// connections, timeouts, bodies shorter than their Content-Length). Not
// retried: other 4xx (the request itself is wrong; the error names the status
// and the provider's message). The delay before attempt n+1 is Retry-After
// when the server sent one, else min(max_delay, base_delay * 2^(n-1)) scaled
// by a uniform jitter in [0.5, 1) ("equal jitter", AWS Architecture Blog,
// "Exponential Backoff and Jitter", 2015).
//
// Headers (which carry API keys) are never part of an error message or log.
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace okfbench::agents {

struct RetryPolicy {
  int max_attempts = 5;
  double base_delay_seconds = 1.0;
  double max_delay_seconds = 60.0;
  double timeout_seconds = 300.0;        // whole request
  double connect_timeout_seconds = 10.0;
  // How to wait; tests pass a recorder. Default: std::this_thread::sleep_for.
  std::function<void(double seconds)> sleep;
};

struct HttpResult {
  long status = 0;
  std::string body;
  std::optional<double> retry_after_seconds;
  int attempts = 0;
};

using Headers = std::vector<std::pair<std::string, std::string>>;

// POSTs `body` to `url`; returns the first 2xx response. Throws InputError
// after a non-retryable status or when attempts run out; `what` names the
// endpoint in messages ("OpenAI chat/completions at http://...").
HttpResult post_json(const std::string& url, const Headers& headers, const std::string& body,
                     const RetryPolicy& policy, const std::string& what);

// Seconds from a Retry-After value (delta-seconds or an HTTP date); nullopt if unparsable.
std::optional<double> parse_retry_after(const std::string& value);

// The wait before attempt `attempt + 1` (attempt >= 1); `unit` in [0, 1) is the jitter draw.
double backoff_delay(const RetryPolicy& policy, int attempt, std::optional<double> retry_after, double unit);

}  // namespace okfbench::agents
