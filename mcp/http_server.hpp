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
// Refused before anything is handled: an Origin header naming a host other
// than this machine (403; DNS rebinding), an unsupported MCP-Protocol-Version
// header (400), a Content-Type other than JSON (415), an Accept header that
// admits no JSON (406), a body over jsonrpc::kMaxMessageBytes (413), a new
// session beyond kMaxSessions (503).
#include <cstddef>
#include <memory>
#include <string>

namespace okfbench::mcp {

class Server;

inline constexpr std::size_t kMaxSessions = 256;
inline constexpr const char* kEndpoint = "/mcp";

class HttpServer {
 public:
  explicit HttpServer(Server& server);  // `server` must outlive this
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
