#pragma once
// okfbench proxy: a recording gateway on 127.0.0.1 between an agent and its
// model provider. It forwards
//   POST /v1/chat/completions  (and /chat/completions)  OpenAI Chat Completions
//   POST /v1/responses         (and /responses)         OpenAI Responses
//   POST /v1/messages                                   Anthropic Messages
// to the upstream (URL + the same path; an upstream ending in /v1 is not given
// a second /v1) and passes the reply back unchanged: the status, the body,
// and every header but the hop-by-hop ones (connection, keep-alive,
// transfer-encoding, content-length, which the proxy writes itself);
// retry-after, rate-limit headers, request ids and content-type among them.
// Request headers are forwarded the same way, Host and Accept-Encoding
// excepted (the upstream is asked for an uncompressed body, which the proxy
// reads usage from). Authorization, x-api-key and other headers are forwarded
// and never logged; every header value is a secret the log is redacted of.
//
// A reply of Content-Type text/event-stream is passed on chunk by chunk as
// libcurl receives it, never held whole; other replies are read whole (at
// most max_response_bytes) and then sent.
//
// Each exchange appends one JSON line to the log (proxy/exchange.hpp).
//
// Broken or hostile traffic is an error in the log and a status for the
// client, never a crash:
//   body over max_body_bytes          413, nothing forwarded
//   body not JSON, not UTF-8, or of   forwarded as sent (the upstream answers
//   an unknown shape                  it as it would without the proxy); the
//                                     record's tokens are null, the error says why
//   upstream refuses or fails         502 with an error body of the wire's form
//   upstream silent (connect_timeout, 504 before the reply began; after it
//   timeout, idle_timeout)            began, the stream is cut as the upstream cut it
//   upstream cuts a stream            the client's stream is cut the same way
//   client leaves mid-stream          the upstream transfer stops at once
//   other paths / --wire excludes     404 (logged)
// Up to `workers` connections are served at once (a fixed pool); more wait.
// A request's body must arrive within request_deadline.
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "retrieval/token_counter.hpp"

namespace okfbench::proxy {

enum class WireFilter { automatic, openai, anthropic };

struct ProxyOptions {
  std::string upstream;  // http(s)://host[:port][/prefix]
  WireFilter wire = WireFilter::automatic;
  std::string log_path = "proxy.jsonl";
  std::size_t max_body_bytes = std::size_t{32} << 20;
  std::size_t max_response_bytes = std::size_t{32} << 20;  // replies not streamed
  double connect_timeout_seconds = 10;
  double timeout_seconds = 600;       // one exchange, first byte to last (streams included)
  long idle_timeout_seconds = 120;    // no byte from the upstream for this long
  std::chrono::milliseconds request_deadline = std::chrono::seconds(30);
  std::size_t workers = 64;
  // Set on every forwarded request, replacing the client's header of the same
  // name (any case): how a run gives the upstream its key while the agent
  // holds a placeholder. Their values are secrets no record holds.
  std::vector<std::pair<std::string, std::string>> upstream_headers;
};

class ProxyServer {
 public:
  // `counter` must outlive this. UsageError for an upstream that is not
  // http(s)://, or an option at 0; InputError when the log cannot be opened.
  ProxyServer(ProxyOptions options, const retrieval::TokenCounter& counter);
  ~ProxyServer();
  ProxyServer(const ProxyServer&) = delete;
  ProxyServer& operator=(const ProxyServer&) = delete;

  int start(int port = 0);  // binds 127.0.0.1:port, serves on a thread; InputError when taken
  void stop();
  void interrupt();  // from a signal handler; wait() returns
  void wait();
  std::size_t exchanges() const;  // records written
  std::string url() const;        // http://127.0.0.1:PORT

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace okfbench::proxy
