#pragma once
// A local OpenAI- and Anthropic-compatible HTTP server whose answers come from
// the sim policy, for running the real HTTP clients offline and for testing
// them against injected faults over a real socket.
//
//   POST /v1/chat/completions, /chat/completions   OpenAI Chat Completions (openai prefix cache)
//   POST /v1/messages                              Anthropic Messages (breakpoint cache)
//   POST /v1/embeddings, /embeddings               sim embeddings (agents/embeddings.hpp)
//   POST /v1/rerank, /rerank                       sim rerank scores (agents/rerankers.hpp)
//   GET  /health                                   "ok"
//
// Faults (`--fault SPEC`): a comma-separated list of KIND[:COUNT[:N]],
// applied to incoming requests in order: "429:2,500" answers the first two
// requests with 429 (Retry-After: 1), the third with 500, then normally.
// COUNT defaults to 1; N is a number whose meaning (and default) depends on
// the kind:
//   429        status 429 with Retry-After: N seconds (1)
//   500        status 500
//   401        status 401 (not retryable)
//   echo       status N (401) whose error message echoes the API key the
//              request sent, as a careless gateway does
//   delay      wait N seconds (1) and then answer normally
//   stall      accept the request and send nothing for N seconds (3600), then
//              close the connection
//   trickle    answer normally, one byte every N seconds (0.5)
//   malformed  status 200 with a body that is not JSON
//   truncated  status 200 whose body stops halfway through its Content-Length
//   drop       status line and headers, then the connection closes
//   huge       status 200 with an endless-looking chunked body of N MiB (2048)
//   deep       a tool call whose arguments nest N levels deep (100000)
//   badutf8    a reply whose text and tool-call arguments hold a 0xFF byte
//   usage      a reply whose token counts are near INT64_MAX
//   calls      a reply asking for N tool calls at once (10000)
//   cut        a streamed reply that stops after N events (2), the connection
//              closed without the stream's end ([DONE], message_stop); a
//              reply not streamed stops halfway, as `truncated`
//   gap        a streamed reply that sends its first event, then nothing for
//              N seconds (3600), then the rest; a reply not streamed waits N
//              seconds first, as `delay`
//
// Streaming: a chat request with "stream": true is answered with server-sent
// events (agents/stream_json.hpp), each event written as it is produced; an
// OpenAI reply carries its usage chunk only when the request asked with
// "stream_options": {"include_usage": true}, as the API does.
// Waits end early when the server stops, so stop() never hangs on a fault.
#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "agents/model.hpp"
#include "agents/sim_model.hpp"

namespace okfbench::agents {

enum class FaultKind {
  rate_limited, server_error, unauthorized, echo_key, delay, stall, trickle, malformed, truncated, drop,
  huge, deep, bad_utf8, huge_usage, many_calls, cut, gap
};

struct Fault {
  FaultKind kind = FaultKind::server_error;
  int count = 1;
  double value = 1.0;  // N: seconds, a status, MiB, levels or calls, by kind
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
  std::size_t body_bytes_sent() const;  // bytes of `huge` bodies sent so far
  std::string base_url() const;  // "http://host:port"
  // Chat requests of both wire formats are answered by `model` instead of the
  // sim (a reference agent, agents/reference_agents.hpp); call before start().
  void answer_with(std::shared_ptr<ChatModel> model);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace okfbench::agents
