#include "mcp/http_server.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>

#include "mcp/jsonrpc.hpp"
#include "mcp/server.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"

namespace okfbench::mcp {
namespace {

constexpr const char* kHost = "127.0.0.1";
constexpr const char* kSessionHeader = "Mcp-Session-Id";

// An Origin is this machine when its host is a loopback name: a page on any
// other origin must not reach a local server through the browser.
bool local_origin(const std::string& origin) {
  std::size_t scheme = origin.find("://");
  if (scheme == std::string::npos) return false;
  std::string host = origin.substr(scheme + 3);
  if (host.starts_with("[::1]")) return host.size() == 5 || host[5] == ':' || host[5] == '/';
  host = host.substr(0, host.find_first_of(":/"));
  return host == "127.0.0.1" || host == "localhost";
}

void refuse(httplib::Response& res, int status, int code, const std::string& message) {
  res.status = status;
  res.set_content(json_text(jsonrpc::error(nullptr, {code, message})), "application/json");
}

// A reply that is one error without an id means the body itself was unusable.
bool unusable_body(const std::string& reply) {
  nlohmann::json j = nlohmann::json::parse(reply, nullptr, false);
  return j.is_object() && j.contains("error") && j["id"].is_null();
}

bool is_initialize(const std::string& body) {
  auto parsed = jsonrpc::parse(body);
  const auto* value = std::get_if<nlohmann::json>(&parsed);
  return value && value->is_object() && value->value("method", nlohmann::json()) == "initialize";
}

}  // namespace

struct HttpServer::Impl {
  explicit Impl(Server& s) : server(s) {}

  // The transport's own checks; false (and res filled in) when the request is refused.
  bool admissible(const httplib::Request& req, httplib::Response& res) const {
    if (req.has_header("Origin") && !local_origin(req.get_header_value("Origin"))) {
      refuse(res, 403, jsonrpc::code::invalid_request, "Origin " + req.get_header_value("Origin").substr(0, 100) +
                                                           " refused: this server answers pages of this machine only");
      return false;
    }
    if (req.has_header("MCP-Protocol-Version")) {
      std::string v = req.get_header_value("MCP-Protocol-Version");
      const auto& known = protocol_versions();
      if (std::find(known.begin(), known.end(), v) == known.end()) {
        refuse(res, 400, jsonrpc::code::invalid_request,
               fmt::format("MCP-Protocol-Version {} is not supported; supported: {}", v.substr(0, 40), fmt::join(known, ", ")));
        return false;
      }
    }
    return true;
  }

  bool json_request(const httplib::Request& req, httplib::Response& res) const {
    std::string type = req.get_header_value("Content-Type");
    if (!type.empty() && type.find("application/json") == std::string::npos) {
      refuse(res, 415, jsonrpc::code::invalid_request, "Content-Type must be application/json");
      return false;
    }
    std::string accept = req.get_header_value("Accept");
    if (!accept.empty() && accept.find("application/json") == std::string::npos && accept.find("*/*") == std::string::npos &&
        accept.find("application/*") == std::string::npos) {
      refuse(res, 406, jsonrpc::code::invalid_request, "Accept must admit application/json: replies are JSON");
      return false;
    }
    return true;
  }

  std::shared_ptr<Session> find(const std::string& id) {
    std::lock_guard lock(mutex);
    auto it = sessions.find(id);
    return it == sessions.end() ? nullptr : it->second;
  }

  void post(const httplib::Request& req, httplib::Response& res) {
    if (!admissible(req, res) || !json_request(req, res)) return;
    std::shared_ptr<Session> session;
    bool opening = !req.has_header(kSessionHeader);
    if (opening) {
      if (!is_initialize(req.body)) {
        // A body that is not a message gets the JSON-RPC error it deserves; a message, the missing header.
        Session scratch;
        std::optional<std::string> reply = server.handle(req.body, scratch);
        if (reply && unusable_body(*reply)) {
          res.status = 400;
          res.set_content(*reply, "application/json");
        } else {
          refuse(res, 400, jsonrpc::code::invalid_request, "Mcp-Session-Id header missing: send initialize first");
        }
        return;
      }
      std::lock_guard lock(mutex);
      if (sessions.size() >= kMaxSessions) {
        refuse(res, 503, jsonrpc::code::internal_error,
               fmt::format("{} sessions are open: end one with DELETE {} first", kMaxSessions, kEndpoint));
        return;
      }
      session = std::make_shared<Session>();
    } else {
      session = find(req.get_header_value(kSessionHeader));
      if (!session) {
        refuse(res, 404, jsonrpc::code::invalid_request, "unknown or ended session: initialize a new one");
        return;
      }
    }
    std::optional<std::string> reply = server.handle(req.body, *session);
    if (opening && !session->protocol_version.empty()) {
      std::lock_guard lock(mutex);
      sessions[session->id] = session;
      res.set_header(kSessionHeader, session->id);
    }
    if (!reply) {
      res.status = 202;
      return;
    }
    res.status = unusable_body(*reply) ? 400 : 200;
    res.set_content(*reply, "application/json");
  }

  void remove(const httplib::Request& req, httplib::Response& res) {
    if (!admissible(req, res)) return;
    if (!req.has_header(kSessionHeader)) {
      refuse(res, 400, jsonrpc::code::invalid_request, "DELETE needs the Mcp-Session-Id header of the session to end");
      return;
    }
    std::lock_guard lock(mutex);
    if (sessions.erase(req.get_header_value(kSessionHeader)) == 0) {
      refuse(res, 404, jsonrpc::code::invalid_request, "unknown or ended session");
      return;
    }
    res.status = 200;
  }

  Server& server;
  mutable std::mutex mutex;
  std::map<std::string, std::shared_ptr<Session>> sessions;
  httplib::Server http;
  std::thread thread;
  std::atomic<bool> listen_returned{false};
  int port = 0;
};

HttpServer::HttpServer(Server& server) : impl_(std::make_unique<Impl>(server)) {
  Impl* impl = impl_.get();
  impl->http.set_payload_max_length(jsonrpc::kMaxMessageBytes);
  // stop() waits for idle keep-alive connections to time out (httplib's
  // default is 5 s); clients on loopback reconnect for next to nothing.
  impl->http.set_keep_alive_timeout(1);
  // httplib's default adds SO_REUSEPORT, with which a second server binds a
  // port already in use and the two share its requests; a taken port must be an error.
  impl->http.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  impl->http.Post(kEndpoint, [impl](const httplib::Request& req, httplib::Response& res) { impl->post(req, res); });
  impl->http.Delete(kEndpoint, [impl](const httplib::Request& req, httplib::Response& res) { impl->remove(req, res); });
  impl->http.Get(kEndpoint, [](const httplib::Request&, httplib::Response& res) {
    res.status = 405;
    res.set_header("Allow", "POST, DELETE");
  });
}

HttpServer::~HttpServer() { stop(); }

int HttpServer::start(int port) {
  impl_->port = port == 0 ? impl_->http.bind_to_any_port(kHost) : (impl_->http.bind_to_port(kHost, port) ? port : -1);
  if (impl_->port <= 0)
    throw InputError(fmt::format("mcp: cannot bind {}:{} (in use? --port 0 picks a free port)", kHost, port));
  impl_->thread = std::thread([impl = impl_.get()] {
    impl->http.listen_after_bind();
    impl->listen_returned = true;
  });
  // stop() before the listen loop runs would be lost, so wait until it does.
  while (!impl_->http.is_running() && !impl_->listen_returned) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return impl_->port;
}

void HttpServer::stop() {
  if (!impl_) return;
  impl_->http.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

void HttpServer::interrupt() { impl_->http.stop(); }

void HttpServer::wait() {
  if (impl_->thread.joinable()) impl_->thread.join();
}

std::size_t HttpServer::sessions() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->sessions.size();
}

std::string HttpServer::url() const { return fmt::format("http://{}:{}{}", kHost, impl_->port, kEndpoint); }

}  // namespace okfbench::mcp
