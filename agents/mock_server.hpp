#pragma once
// A local OpenAI- and Anthropic-compatible HTTP server whose answers come from
// the sim policy, for running the real HTTP clients offline and for testing
// them against injected faults over a real socket.
//
//   POST /v1/chat/completions, /chat/completions   OpenAI Chat Completions (openai prefix cache)
//   POST /v1/messages                              Anthropic Messages (breakpoint cache)
//   GET  /health                                   "ok"
//
// Faults (`--fault SPEC`): a comma-separated list of KIND[:COUNT[:SECONDS]],
// applied to incoming requests in order: "429:2,500" answers the first two
// requests with 429 (Retry-After: 1), the third with 500, then normally.
//   429        status 429 with Retry-After: SECONDS (default 1)
//   500        status 500
//   401        status 401 (not retryable)
//   delay      wait SECONDS (default 1) and then answer normally
//   malformed  status 200 with a body that is not JSON
//   truncated  status 200 whose body stops halfway through its Content-Length
//   drop       status line and headers, then the connection closes
// COUNT defaults to 1.
#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "agents/sim_model.hpp"

namespace okfbench::agents {

enum class FaultKind { rate_limited, server_error, unauthorized, delay, malformed, truncated, drop };

struct Fault {
  FaultKind kind = FaultKind::server_error;
  int count = 1;
  double seconds = 1.0;
  bool operator==(const Fault&) const = default;
};

// Throws UsageError naming the bad item.
std::vector<Fault> parse_faults(std::string_view spec);

class MockServer {
 public:
  // `counter` must outlive the server.
  MockServer(SimOptions sim, const retrieval::TokenCounter& counter, std::vector<Fault> faults = {});
  ~MockServer();
  MockServer(const MockServer&) = delete;
  MockServer& operator=(const MockServer&) = delete;

  // Binds (port 0 = an ephemeral port), starts serving on a thread and returns
  // the port. Throws InputError when the address cannot be bound.
  int start(const std::string& host = "127.0.0.1", int port = 0);
  void stop();       // stops serving and joins the server thread
  void interrupt();  // stops serving without joining (for a signal handler; wait() returns)
  void wait();  // until stop() (or a signal handler calling stop())
  std::size_t requests() const;
  std::string base_url() const;  // "http://host:port"

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace okfbench::agents
