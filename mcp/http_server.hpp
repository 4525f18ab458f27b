#pragma once
// The streamable HTTP transport of MCP, on 127.0.0.1 only, at one endpoint, /mcp:
//   POST    a message or batch: 200 with the application/json reply, or 202
//           when nothing is answered (notifications, responses). initialize
//           opens a session whose reply carries Mcp-Session-Id; every other
//           request must send it back (400 without it, 404 for an unknown or
//           ended session). A reply that is an error without an id (the body
//           was not JSON, not a message, too large) comes with 400.
//   DELETE  ends the session named by Mcp-Session-Id (200).
//   GET     405: the server opens no server-to-client stream.
// Checked on the headers, before any of the body is read (mcp/http_checks.hpp):
//   Host      exactly one, a loopback name (localhost, 127.0.0.1, [::1]) with
//             this server's port or none (400 missing or twice, 403 another;
//             DNS rebinding)
//   Origin    when sent: http(s)://LOOPBACK-NAME[:PORT] and nothing else (403)
//   path      /mcp only (404); methods POST, DELETE (405 otherwise)
//   POST      MCP-Protocol-Version one of protocol_versions() (400);
//             Content-Type application/json[; params] (415); an Accept that
//             admits JSON (406); a body framed by Content-Length (at most
//             jsonrpc::kMaxMessageBytes, else 413) or by chunked transfer
//             coding (413 as soon as it passes that size; both at once 400,
//             neither 411); Mcp-Session-Id, when sent, a live session (404)
// A request refused before its body was read is answered at once and its
// connection closed after the reply.
//
// Slow clients: a request must arrive whole within request_deadline of its
// first byte, and its reply be taken within as long; a connection idle
// between requests is closed after a second. Up to `workers` connections
// are served at once, each on its own thread (started when needed); more
// wait for a worker, so a slow client holds one worker for at most its
// deadline and it takes `workers` of them to delay anyone. The bytes of one request
// (headers, framing, body) are bounded by 2 * kMaxMessageBytes whatever
// they are, so a request never holds more memory than that.
//
// Sessions: one ends after session_idle without a request; a new session
// when max_sessions are open ends the least recently used one. The request
// of an ended session gets 404 (the MCP rule: initialize a new one).
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

namespace okfbench::mcp {

class Server;

inline constexpr std::size_t kMaxSessions = 256;
inline constexpr std::size_t kWorkers = 128;
inline constexpr const char* kEndpoint = "/mcp";

struct HttpOptions {
  std::chrono::milliseconds session_idle = std::chrono::minutes(30);     // okfbench mcp --session-timeout
  std::size_t max_sessions = kMaxSessions;                               // then the least recently used ends
  std::chrono::milliseconds request_deadline = std::chrono::seconds(10);  // from a request's first byte
  std::size_t workers = kWorkers;                                        // connections served at once
};

class HttpServer {
 public:
  // `server` must outlive this. UsageError when an option is 0.
  explicit HttpServer(Server& server, HttpOptions options = {});
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds 127.0.0.1:port (0 = a free port the system picks), serves on a
  // thread and returns the bound port. InputError when the port is taken.
  int start(int port = 0);
  void stop();       // stops serving and joins the thread
  void interrupt();  // stops serving without joining (from a signal handler; wait() returns)
  void wait();       // until stop() or interrupt()
  std::size_t sessions() const;
  std::string url() const;  // http://127.0.0.1:PORT/mcp

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace okfbench::mcp
