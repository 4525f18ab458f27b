#pragma once
// A cpp-httplib server served by a thread of its own: the start, stop and
// wait that the mock server, the MCP HTTP transport and the proxy share.
// Header-only; its includer links cpp-httplib (okfbench_httplib).
#include <httplib.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <fmt/format.h>
#include <string>
#include <string_view>
#include <thread>

#include "core/error.hpp"

namespace okfbench::agents {

template <class Base = httplib::Server>
class BackgroundServer : public Base {
 public:
  using Base::Base;
  ~BackgroundServer() override { stop_serving(); }

  // Binds host:port (0 picks a free port) and serves on the thread; returns
  // the port once the listen loop runs, so that a stop right after is not
  // lost. InputError "WHO: cannot bind HOST:PORT (HINT)" when it cannot bind.
  int serve(const std::string& host, int port, std::string_view who, std::string_view hint) {
    const int bound = port == 0 ? this->bind_to_any_port(host) : (this->bind_to_port(host, port) ? port : -1);
    if (bound <= 0) throw InputError(fmt::format("{}: cannot bind {}:{} ({})", who, host, port, hint));
    // httplib listens with a backlog of 5: a burst of clients connecting at
    // once would find connections reset. listen() again on the bound socket
    // raises it.
    ::listen(this->svr_sock_, SOMAXCONN);
    thread_ = std::thread([this] {
      this->listen_after_bind();
      returned_ = true;
    });
    while (!this->is_running() && !returned_) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return bound;
  }

  // Ends the listen loop and waits for it (stop() alone only ends it).
  void stop_serving() {
    this->stop();
    wait();
  }

  // Until the listen loop has ended.
  void wait() {
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::thread thread_;
  std::atomic<bool> returned_{false};
};

}  // namespace okfbench::agents
