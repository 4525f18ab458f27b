#pragma once
// Serving until Ctrl-C or SIGTERM, for the commands that run a server
// (`mcp --transport http`, `mock-server`, `proxy`): the handler calls the
// server's interrupt(), which only ends its listen loop, so wait() returns
// and the command reports and exits normally.
#include <csignal>

namespace okfbench::cli {

template <typename Server>
void serve_until_signal(Server& server) {
  static Server* serving = nullptr;
  serving = &server;
  auto on_signal = [](int) {
    if (serving) serving->interrupt();
  };
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  server.wait();
  serving = nullptr;
}

}  // namespace okfbench::cli
