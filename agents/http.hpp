#pragma once
// JSON-over-HTTP POST with libcurl: deadlines, a bound on the reply size, and
// retries with exponential backoff and jitter that honour Retry-After.
//
// Deadlines (defaults in RetryPolicy):
//   connect_timeout_seconds  10   TCP (and TLS) connect of one attempt
//   timeout_seconds          300  one attempt, from connect to the last byte
//   low_speed_*              1 byte/s over 120 s: an attempt that moves less is
//                            abandoned (a server that accepts and never
//                            answers, or trickles bytes); the window is long
//                            because a non-streamed reply sends nothing until
//                            the model has finished writing it
//   deadline_seconds         900  every attempt and every wait of one call; an
//                            attempt never runs past it and no retry starts
//                            when its wait would end past it
//   deadline_at              none  the same for an instant (a trial's deadline
//                            across several calls)
// A reply body larger than max_response_bytes (32 MiB) stops the transfer at
// once (memory stays bounded) and fails the call without a retry.
//
// Retried (transient): HTTP 408, 429 and 5xx, and transport failures (refused
// or dropped connections, timeouts, bodies shorter than their
// Content-Length). Not retried (permanent): other statuses outside 2xx (the
// request itself is wrong; the error names the status and the provider's
// message), an oversized body, a URL libcurl cannot use. The delay before
// attempt n+1 is Retry-After when the server sent one, else
// min(max_delay, base_delay * 2^(n-1)) scaled by a uniform jitter in [0.5, 1)
// ("equal jitter", AWS Architecture Blog, "Exponential Backoff and Jitter",
// 2015); either is capped at max_delay_seconds.
//
// Failures throw CallError (agents/call_error.hpp), which says whether they
// are transient or permanent. Headers (which carry API keys) are never part of
// an error message: every header value, and every secret agents/secrets.hpp
// knows, is replaced by [REDACTED] in what the server sent back, and bytes
// that are not UTF-8 are replaced by U+FFFD.
#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "agents/call_error.hpp"

namespace okfbench::agents {

// The limits of one model call: its attempts, waits, deadlines and reply size.
struct RetryPolicy {
  int max_attempts = 5;
  double base_delay_seconds = 1.0;
  double max_delay_seconds = 60.0;
  double timeout_seconds = 300.0;  // one attempt
  double connect_timeout_seconds = 10.0;
  long low_speed_bytes_per_second = 1;  // 0 turns the low-speed check off
  long low_speed_seconds = 120;         // whole seconds (libcurl's unit), at least 1
  double deadline_seconds = 900.0;      // all attempts and waits together
  std::size_t max_response_bytes = std::size_t{32} << 20;
  // How to wait; tests pass a recorder. Default: std::this_thread::sleep_for.
  std::function<void(double seconds)> sleep;
  // Called before every attempt, retries included (the runner's rate limits
  // wait here, so a retry is paced like any other request).
  std::function<void()> before_attempt = {};
  // An instant that no attempt or wait passes, on top of deadline_seconds:
  // the runner's per-trial deadline, shared by all the calls of a trial.
  std::optional<std::chrono::steady_clock::time_point> deadline_at = {};
};

struct HttpResult {
  long status = 0;
  std::string body;  // valid UTF-8: invalid bytes replaced by U+FFFD
  std::optional<double> retry_after_seconds;
  int attempts = 0;
};

using Headers = std::vector<std::pair<std::string, std::string>>;

// POSTs `body` to `url`; returns the first 2xx response. Throws CallError
// after a permanent failure, when attempts run out or at the deadline; `what`
// names the endpoint in messages ("OpenAI chat/completions at http://...").
// Throws UsageError, before sending anything, for a header name that is not
// a token or a value with a control character.
HttpResult post_json(const std::string& url, const Headers& headers, const std::string& body,
                     const RetryPolicy& policy, const std::string& what);

// The timing of the last successful post_json on this thread: the attempt
// that answered, start to end, and to the first byte of its body (for a
// stream, its first event). Read by callers that time calls per turn
// (engine's PacedModel); nullopt after reset_call_timing() until a
// post_json on this thread succeeds.
struct CallTiming {
  double ms = 0;
  std::optional<double> first_byte_ms;
};
void reset_call_timing();
std::optional<CallTiming> last_call_timing();

// Seconds from a Retry-After value (delta-seconds or an HTTP date); nullopt if unparsable.
std::optional<double> parse_retry_after(const std::string& value);

// The wait before attempt `attempt + 1` (attempt >= 1); `unit` in [0, 1) is the jitter draw.
double backoff_delay(const RetryPolicy& policy, int attempt, std::optional<double> retry_after, double unit);

// Whether an HTTP status is worth retrying (408, 429, 5xx).
bool transient_status(long status);

}  // namespace okfbench::agents
