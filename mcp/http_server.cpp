#include "mcp/http_server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <httplib.h>
#include <poll.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "agents/background_server.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "mcp/http_checks.hpp"
#include "mcp/jsonrpc.hpp"
#include "mcp/server.hpp"

namespace okfbench::mcp {
namespace {

using Clock = std::chrono::steady_clock;
using HandlerResponse = httplib::Server::HandlerResponse;

constexpr const char* kHost = "127.0.0.1";
constexpr const char* kSessionHeader = "Mcp-Session-Id";
// One request's bytes as read from the socket: the body's limit, with as
// much again for the headers and the framing of a chunked body.
constexpr std::size_t kMaxRequestBytes = 2 * jsonrpc::kMaxMessageBytes;
// How often a blocked read or write looks whether the server is stopping.
constexpr auto kPollSlice = std::chrono::milliseconds(50);
// How long a closing connection reads what the client still sends (the rest
// of a refused body), so that the close does not reset the connection
// before the client has read the reply.
constexpr auto kLinger = std::chrono::seconds(1);

// Set by a handler that answers without reading the body: the unread body
// would be taken for the next request, so the connection closes after the reply.
thread_local bool t_close_after_reply = false;
// The request line and headers of the request this thread is reading, as
// sent: httplib drops a header with an empty value, and an empty Origin
// must be refused rather than taken as absent.
thread_local const std::string* t_request_head = nullptr;
constexpr std::size_t kMaxHeadKept = 64 * 1024;

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

bool has_body(const httplib::Request& req) {
  return req.has_header("Transfer-Encoding") ||
         (req.has_header("Content-Length") && req.get_header_value("Content-Length") != "0");
}

std::string shown(const std::string& value) { return value.substr(0, 100); }

// Waits until `sock` is ready for `events` or `until` passes (false), in
// slices, giving up (false) as soon as `stopping` says so.
bool wait_for(int sock, short events, Clock::time_point until, const std::function<bool()>& stopping) {
  for (;;) {
    if (stopping()) return false;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
    if (left.count() <= 0) return false;
    pollfd p{sock, events, 0};
    int ready = ::poll(&p, 1, static_cast<int>(std::min(left, std::chrono::milliseconds(kPollSlice)).count()));
    if (ready > 0) return true;  // POLLHUP and POLLERR too: the next read or write reports them
    if (ready < 0 && errno != EINTR) return false;
  }
}

// A connection's stream with a deadline per request rather than per read: a
// client that sends a byte a second cannot keep a worker beyond the deadline.
class DeadlineStream final : public httplib::Stream {
 public:
  DeadlineStream(int sock, std::function<bool()> stopping) : sock_(sock), stopping_(std::move(stopping)) {
    ::fcntl(sock_, F_SETFL, ::fcntl(sock_, F_GETFL) | O_NONBLOCK);  // a send never blocks past the deadline
  }

  // Waits up to `idle` for the first byte of the next request; false when none came.
  bool next_request(Clock::duration idle) {
    return offset_ < size_ || wait_for(sock_, POLLIN, Clock::now() + idle, stopping_);
  }

  // A request starts: it must arrive within `deadline`, and its reply leave within as long from its first write.
  void begin_request(Clock::duration deadline) {
    deadline_ = deadline;
    read_until_ = Clock::now() + deadline;
    write_until_.reset();
    request_bytes_ = 0;
    head_.clear();
  }

  const std::string& head() const { return head_; }

  bool is_readable() const override { return offset_ < size_ || wait_for(sock_, POLLIN, read_until_, stopping_); }
  bool is_writable() const override { return wait_for(sock_, POLLOUT, write_until(), stopping_); }

  ssize_t read(char* ptr, size_t size) override {
    if (offset_ == size_ && !fill()) return -1;
    if (offset_ == size_) return 0;  // the client closed
    std::size_t n = std::min(size, size_ - offset_);
    if (request_bytes_ + n > kMaxRequestBytes) return -1;
    std::memcpy(ptr, buffer_.data() + offset_, n);
    keep_head(ptr, n);
    offset_ += n;
    request_bytes_ += n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    for (;;) {
      if (!wait_for(sock_, POLLOUT, write_until(), stopping_)) return -1;
      ssize_t n = ::send(sock_, ptr, size, MSG_NOSIGNAL);
      if (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) return n;
    }
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override { address(::getpeername, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { address(::getsockname, ip, port); }
  socket_t socket() const override { return sock_; }

 private:
  // Reads what the socket has into the buffer; false on an error or the deadline.
  bool fill() {
    offset_ = size_ = 0;
    for (;;) {
      if (!wait_for(sock_, POLLIN, read_until_, stopping_)) return false;
      ssize_t n = ::recv(sock_, buffer_.data(), buffer_.size(), 0);
      if (n >= 0) {
        size_ = static_cast<std::size_t>(n);
        return true;
      }
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return false;
    }
  }

  void keep_head(const char* data, std::size_t n) {
    if (head_.size() >= kMaxHeadKept || head_.find("\r\n\r\n") != std::string::npos) return;
    head_.append(data, std::min(n, kMaxHeadKept - head_.size()));
  }

  Clock::time_point write_until() const {
    if (!write_until_) write_until_ = Clock::now() + deadline_;
    return *write_until_;
  }

  void address(int (*get)(int, sockaddr*, socklen_t*), std::string& ip, int& port) const {
    sockaddr_in addr{};
    socklen_t len = sizeof(addr);
    std::array<char, INET_ADDRSTRLEN> text{};
    if (get(sock_, reinterpret_cast<sockaddr*>(&addr), &len) != 0 || addr.sin_family != AF_INET ||
        !::inet_ntop(AF_INET, &addr.sin_addr, text.data(), text.size()))
      return;
    ip = text.data();
    port = ntohs(addr.sin_port);
  }

  int sock_;
  std::function<bool()> stopping_;
  std::array<char, 16384> buffer_{};
  std::size_t offset_ = 0, size_ = 0;
  Clock::duration deadline_{};
  Clock::time_point read_until_{};
  mutable std::optional<Clock::time_point> write_until_;
  std::size_t request_bytes_ = 0;
  std::string head_;
};

// Ends the sending side, reads (and drops) what the client still sends for
// at most kLinger, then closes.
void close_gently(int sock, const std::function<bool()>& stopping) {
  ::shutdown(sock, SHUT_WR);
  std::array<char, 16384> sink{};
  Clock::time_point until = Clock::now() + kLinger;
  while (wait_for(sock, POLLIN, until, stopping)) {
    ssize_t n = ::recv(sock, sink.data(), sink.size(), 0);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) break;
  }
  ::close(sock);
}

// Workers for connections: a thread per connection being served, started
// when no worker is free, up to `max`; beyond that connections wait. A
// thread lives until shutdown (it is reused, not started per connection).
class GrowingPool final : public httplib::TaskQueue {
 public:
  explicit GrowingPool(std::size_t max) : max_(max) {}

  void enqueue(std::function<void()> fn) override {
    std::lock_guard lock(mutex_);
    jobs_.push_back(std::move(fn));
    if (idle_ == 0 && threads_.size() < max_)
      threads_.emplace_back([this] { work(); });
    else
      wake_.notify_one();
  }

  // Called once the listen loop has ended, so nothing is enqueued any more.
  void shutdown() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

 private:
  void work() {
    std::unique_lock lock(mutex_);
    for (;;) {
      ++idle_;
      wake_.wait(lock, [&] { return !jobs_.empty() || stopping_; });
      --idle_;
      if (jobs_.empty()) return;  // stopping, and every connection served
      std::function<void()> job = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      job();
      lock.lock();
    }
  }

  std::size_t max_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
  std::size_t idle_ = 0;
  bool stopping_ = false;
};

// httplib's server with each connection read through a DeadlineStream.
class DeadlineServer : public httplib::Server {
 public:
  explicit DeadlineServer(Clock::duration deadline) : deadline_(deadline) {}

 private:
  bool process_and_close_socket(socket_t sock) override {
    std::function<bool()> stopping = [this] { return svr_sock_ == INVALID_SOCKET; };
    DeadlineStream stream(sock, stopping);
    t_request_head = &stream.head();
    bool open = true;
    for (std::size_t left = keep_alive_max_count_;
         open && left > 0 && stream.next_request(std::chrono::seconds(keep_alive_timeout_sec_)); --left) {
      stream.begin_request(deadline_);
      t_close_after_reply = false;
      bool closed = false;
      open = process_request(stream, left == 1, closed, [](httplib::Request&) {}) && !closed && !t_close_after_reply;
    }
    t_request_head = nullptr;
    close_gently(sock, stopping);
    return true;
  }

  Clock::duration deadline_;
};

}  // namespace

struct HttpServer::Impl {
  Impl(Server& s, HttpOptions o) : server(s), options(o), http(o.request_deadline) {}

  // --- sessions ---------------------------------------------------------

  void expire_idle(Clock::time_point now) {
    std::erase_if(sessions, [&](const auto& entry) { return now - entry.second.used > options.session_idle; });
  }

  // The live session of this id (its idle time starts again), or nullptr.
  std::shared_ptr<Session> find(const std::string& id) {
    std::lock_guard lock(mutex);
    Clock::time_point now = Clock::now();
    expire_idle(now);
    auto it = sessions.find(id);
    if (it == sessions.end()) return nullptr;
    it->second.used = now;
    return it->second.session;
  }

  // At the cap, the least recently used session ends to make room.
  void add(std::shared_ptr<Session> session) {
    std::lock_guard lock(mutex);
    Clock::time_point now = Clock::now();
    expire_idle(now);
    if (!sessions.empty() && sessions.size() >= options.max_sessions)
      sessions.erase(std::min_element(sessions.begin(), sessions.end(),
                                      [](const auto& a, const auto& b) { return a.second.used < b.second.used; }));
    sessions[session->id] = {session, now};
  }

  std::size_t count() {
    std::lock_guard lock(mutex);
    expire_idle(Clock::now());
    return sessions.size();
  }

  // --- checks on the headers ----------------------------------------------

  // Host and Origin, for every request; false (and res filled in) when refused.
  bool from_this_machine(const httplib::Request& req, httplib::Response& res) const {
    if (req.get_header_value_count("Host") != 1) {
      refuse(res, 400, jsonrpc::code::invalid_request, "send exactly one Host header");
      return false;
    }
    std::string host = req.get_header_value("Host");
    if (!loopback_host(host, port)) {
      refuse(res, 403, jsonrpc::code::invalid_request,
             fmt::format("Host {} refused: this server answers to localhost, 127.0.0.1 or [::1] (port {}) only",
                         shown(host), port));
      return false;
    }
    bool empty_origin = !req.has_header("Origin") && t_request_head && header_sent(*t_request_head, "Origin");
    if (!req.has_header("Origin") && !empty_origin) return true;
    std::string origin = req.get_header_value("Origin");
    if (req.get_header_value_count("Origin") != 1 || !loopback_origin(origin)) {
      refuse(res, 403, jsonrpc::code::invalid_request,
             fmt::format("Origin '{}' refused: this server answers pages of this machine only "
                         "(http or https, host localhost, 127.0.0.1 or [::1], an optional port)",
                         shown(origin)));
      return false;
    }
    return true;
  }

  bool post_headers(const httplib::Request& req, httplib::Response& res) const {
    if (req.has_header("MCP-Protocol-Version")) {
      std::string v = req.get_header_value("MCP-Protocol-Version");
      const auto& known = protocol_versions();
      if (std::find(known.begin(), known.end(), v) == known.end()) {
        refuse(res, 400, jsonrpc::code::invalid_request,
               fmt::format("MCP-Protocol-Version {} is not supported; supported: {}", v.substr(0, 40), fmt::join(known, ", ")));
        return false;
      }
    }
    if (!json_content_type(req.get_header_value("Content-Type"))) {
      refuse(res, 415, jsonrpc::code::invalid_request,
             fmt::format("Content-Type '{}' refused: it must be application/json", shown(req.get_header_value("Content-Type"))));
      return false;
    }
    if (!accepts_json(req.get_header_value("Accept"))) {
      refuse(res, 406, jsonrpc::code::invalid_request, "Accept must admit application/json: replies are JSON");
      return false;
    }
    return framing(req, res);
  }

  // The body's framing: Content-Length within the limit, or chunked; never both, never neither.
  bool framing(const httplib::Request& req, httplib::Response& res) const {
    bool chunked = req.has_header("Transfer-Encoding");
    if (chunked && (req.has_header("Content-Length") ||
                    ::strcasecmp(req.get_header_value("Transfer-Encoding").c_str(), "chunked") != 0)) {
      refuse(res, 400, jsonrpc::code::invalid_request,
             "Transfer-Encoding: only 'chunked' is understood, and never together with Content-Length");
      return false;
    }
    if (chunked) return true;
    if (req.get_header_value_count("Content-Length") != 1) {
      refuse(res, 411, jsonrpc::code::invalid_request, "send one Content-Length header (or a chunked body)");
      return false;
    }
    std::string length = req.get_header_value("Content-Length");
    if (length.empty() || length.find_first_not_of("0123456789") != std::string::npos) {
      refuse(res, 400, jsonrpc::code::invalid_request, fmt::format("Content-Length '{}' is not a number", shown(length)));
      return false;
    }
    if (length.size() > 10 || std::stoull(length) > jsonrpc::kMaxMessageBytes) {  // 10 digits: no overflow
      refuse(res, 413, jsonrpc::code::invalid_request,
             fmt::format("a body of {} bytes refused: at most {} bytes", shown(length), jsonrpc::kMaxMessageBytes));
      return false;
    }
    return true;
  }

  // Every request passes here with its headers read and its body not: what
  // is refused is refused before a byte of the body is read.
  HandlerResponse before_body(const httplib::Request& req, httplib::Response& res) {
    HandlerResponse handled = screen(req, res);
    if (handled == HandlerResponse::Handled && has_body(req)) {
      res.set_header("Connection", "close");
      t_close_after_reply = true;
    }
    return handled;
  }

  HandlerResponse screen(const httplib::Request& req, httplib::Response& res) {
    if (!from_this_machine(req, res)) return HandlerResponse::Handled;
    if (req.path != kEndpoint) {
      refuse(res, 404, jsonrpc::code::invalid_request, fmt::format("nothing at {}: the endpoint is {}", shown(req.path), kEndpoint));
      return HandlerResponse::Handled;
    }
    if (req.method == "DELETE") {
      remove(req, res);
      return HandlerResponse::Handled;
    }
    if (req.method != "POST") {
      res.status = 405;
      res.set_header("Allow", "POST, DELETE");
      return HandlerResponse::Handled;
    }
    if (!post_headers(req, res)) return HandlerResponse::Handled;
    if (req.has_header(kSessionHeader) && !find(req.get_header_value(kSessionHeader))) {
      refuse(res, 404, jsonrpc::code::invalid_request, "unknown or ended session: initialize a new one");
      return HandlerResponse::Handled;
    }
    return HandlerResponse::Unhandled;
  }

  // --- requests -----------------------------------------------------------

  // The body, read through `reader` and never beyond kMaxMessageBytes;
  // nullopt (and res filled in) when it is larger or cut short.
  std::optional<std::string> body_of(const httplib::ContentReader& reader, httplib::Response& res) {
    std::string body;
    bool too_large = false;
    bool whole = reader([&](const char* data, std::size_t size) {
      too_large = body.size() + size > jsonrpc::kMaxMessageBytes;
      if (!too_large) body.append(data, size);
      return !too_large;
    });
    if (whole) return body;
    res.set_header("Connection", "close");
    t_close_after_reply = true;
    if (too_large)
      refuse(res, 413, jsonrpc::code::invalid_request,
             fmt::format("a body over {} bytes refused", jsonrpc::kMaxMessageBytes));
    else
      refuse(res, 400, jsonrpc::code::invalid_request,
             fmt::format("the body was cut short, malformed in its framing, or not sent within {} ms",
                         options.request_deadline.count()));
    return std::nullopt;
  }

  void post(const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& reader) {
    std::optional<std::string> body = body_of(reader, res);
    if (!body) return;
    std::shared_ptr<Session> session;
    bool opening = !req.has_header(kSessionHeader);
    if (opening) {
      if (!is_initialize(*body)) {
        // A body that is not a message gets the JSON-RPC error it deserves; a message, the missing header.
        Session scratch;
        std::optional<std::string> reply = server.handle(*body, scratch);
        if (reply && unusable_body(*reply)) {
          res.status = 400;
          res.set_content(*reply, "application/json");
        } else {
          refuse(res, 400, jsonrpc::code::invalid_request, "Mcp-Session-Id header missing: send initialize first");
        }
        return;
      }
      session = std::make_shared<Session>();
    } else if (!(session = find(req.get_header_value(kSessionHeader)))) {
      refuse(res, 404, jsonrpc::code::invalid_request, "unknown or ended session: initialize a new one");
      return;
    }
    std::optional<std::string> reply = server.handle(*body, *session);
    if (opening && !session->protocol_version.empty()) {
      add(session);
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

  struct Entry {
    std::shared_ptr<Session> session;
    Clock::time_point used;
  };

  Server& server;
  HttpOptions options;
  mutable std::mutex mutex;
  std::map<std::string, Entry> sessions;
  agents::BackgroundServer<DeadlineServer> http;
  int port = 0;
};

HttpServer::HttpServer(Server& server, HttpOptions options) {
  if (options.workers == 0 || options.max_sessions == 0 || options.request_deadline.count() <= 0 ||
      options.session_idle.count() <= 0)
    throw UsageError("mcp: workers, max_sessions, request_deadline and session_idle must all be above 0");
  impl_ = std::make_unique<Impl>(server, options);
  Impl* impl = impl_.get();
  impl->http.set_payload_max_length(jsonrpc::kMaxMessageBytes);
  // stop() waits for idle keep-alive connections to time out (httplib's
  // default is 5 s); clients on loopback reconnect for next to nothing.
  impl->http.set_keep_alive_timeout(1);
  impl->http.new_task_queue = [workers = options.workers] { return new GrowingPool(workers); };
  // httplib's default adds SO_REUSEPORT, with which a second server binds a
  // port already in use and the two share its requests; a taken port must be an error.
  impl->http.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  impl->http.set_pre_routing_handler(
      [impl](const httplib::Request& req, httplib::Response& res) { return impl->before_body(req, res); });
  impl->http.Post(kEndpoint, [impl](const httplib::Request& req, httplib::Response& res,
                                    const httplib::ContentReader& reader) { impl->post(req, res, reader); });
}

HttpServer::~HttpServer() { stop(); }

int HttpServer::start(int port) {
  impl_->port = impl_->http.serve(kHost, port, "mcp", "in use? --port 0 picks a free port");
  return impl_->port;
}

void HttpServer::stop() {
  if (!impl_) return;
  impl_->http.stop_serving();
}

void HttpServer::interrupt() { impl_->http.stop(); }

void HttpServer::wait() { impl_->http.wait(); }

std::size_t HttpServer::sessions() const { return impl_->count(); }

std::string HttpServer::url() const { return fmt::format("http://{}:{}{}", kHost, impl_->port, kEndpoint); }

}  // namespace okfbench::mcp
