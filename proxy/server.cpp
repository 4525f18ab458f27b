#include "proxy/server.hpp"

#include <curl/curl.h>
#include <fmt/format.h>
#include <httplib.h>
#include <strings.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <thread>

#include "agents/background_server.hpp"
#include "agents/secrets.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "proxy/exchange.hpp"

namespace okfbench::proxy {
namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kHost = "127.0.0.1";

double ms_since(Clock::time_point start) { return std::chrono::duration<double, std::milli>(Clock::now() - start).count(); }

bool hop_by_hop(const std::string& name) {
  for (const char* h : {"connection", "keep-alive", "transfer-encoding", "content-length", "te", "trailer", "upgrade",
                        "proxy-connection", "proxy-authorization", "proxy-authenticate", "host", "accept-encoding"})
    if (::strcasecmp(name.c_str(), h) == 0) return true;
  return false;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string error_body(Api api, const std::string& type, const std::string& message) {
  nlohmann::json error = {{"type", type}, {"message", message}};
  if (api == Api::messages) return json_text(nlohmann::json{{"type", "error"}, {"error", error}});
  return json_text(nlohmann::json{{"error", error}});
}

void curl_init_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// One upstream transfer, driven by curl's multi interface on the thread
// serving the client: pump() runs it until there is something to pass on.
struct Upstream {
  CURL* easy = nullptr;
  CURLM* multi = nullptr;
  curl_slist* headers = nullptr;
  std::string body;  // the request body; curl reads it from here
  long status = 0;
  std::vector<std::pair<std::string, std::string>> reply_headers;
  bool headers_done = false;
  std::string pending;  // reply bytes not yet passed on
  std::size_t received = 0;
  std::size_t limit = 0;  // of `pending`; 0 for none
  bool too_large = false;
  bool done = false;
  CURLcode result = CURLE_OK;
  char error[CURL_ERROR_SIZE] = {0};
  std::optional<Clock::time_point> first_byte;

  ~Upstream() {
    if (multi && easy) curl_multi_remove_handle(multi, easy);
    if (easy) curl_easy_cleanup(easy);
    if (multi) curl_multi_cleanup(multi);
    if (headers) curl_slist_free_all(headers);
  }

  static std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
    auto* u = static_cast<Upstream*>(user);
    std::string line(data, size * count);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    if (line.starts_with("HTTP/")) {  // a new status line: headers of an interim 1xx reply are dropped
      u->reply_headers.clear();
      std::size_t space = line.find(' ');
      u->status = space == std::string::npos ? 0 : std::atol(line.c_str() + space + 1);
    } else if (line.empty()) {
      if (u->status >= 200) u->headers_done = true;
    } else if (std::size_t colon = line.find(':'); colon != std::string::npos) {
      std::string value = line.substr(colon + 1);
      value.erase(0, value.find_first_not_of(" \t"));
      u->reply_headers.emplace_back(line.substr(0, colon), value);
    }
    return size * count;
  }

  static std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
    auto* u = static_cast<Upstream*>(user);
    std::size_t n = size * count;
    if (!u->first_byte) u->first_byte = Clock::now();
    u->headers_done = true;
    if (u->limit && u->pending.size() + n > u->limit) {
      u->too_large = true;
      return 0;  // CURLE_WRITE_ERROR: the transfer stops
    }
    u->pending.append(data, n);
    u->received += n;
    return n;
  }

  // Runs the transfer until `ready()` or the end; false once `stopping`.
  template <typename Ready>
  bool pump(Ready ready, const std::atomic<bool>& stopping) {
    while (!done && !ready()) {
      if (stopping) return false;
      int running = 0;
      curl_multi_perform(multi, &running);
      int left = 0;
      while (CURLMsg* m = curl_multi_info_read(multi, &left))
        if (m->msg == CURLMSG_DONE) {
          done = true;
          result = m->data.result;
        }
      if (done || ready()) break;
      curl_multi_poll(multi, nullptr, 0, 50, nullptr);
    }
    return true;
  }

  std::string transport_error() const { return error[0] ? error : curl_easy_strerror(result); }
  bool timed_out() const { return result == CURLE_OPERATION_TIMEDOUT; }

  std::string header(std::string_view name) const {
    for (const auto& [n, v] : reply_headers)
      if (lower(n) == name) return v;
    return {};
  }
};

}  // namespace

struct ProxyServer::Impl {
  Impl(ProxyOptions o, const retrieval::TokenCounter& c) : options(std::move(o)), counter(c) {}

  // The upstream URL of a request path: an upstream ending in /v1 takes the path without its /v1.
  std::string target(const std::string& path) const {
    std::string base = options.upstream;
    while (base.ends_with('/')) base.pop_back();
    if (base.ends_with("/v1") && path.starts_with("/v1/")) return base + path.substr(3);
    return base + path;
  }

  bool admitted(Api api) const {
    if (options.wire == WireFilter::openai) return api != Api::messages;
    if (options.wire == WireFilter::anthropic) return api == Api::messages;
    return true;
  }

  // Every header value of the request is a secret, and the bearer token inside it.
  static std::vector<std::string> secrets_of(const httplib::Request& req) {
    std::vector<std::string> secrets = agents::known_secrets();
    for (const auto& [name, value] : req.headers) {
      std::string n = lower(name);
      if (n == "content-type" || n == "content-length" || n == "host" || n == "accept" || n == "anthropic-version" ||
          n == "user-agent" || n == "connection" || n.starts_with("x-stainless"))
        continue;
      secrets.push_back(value);
      if (auto space = value.rfind(' '); space != std::string::npos) secrets.push_back(value.substr(space + 1));
    }
    return secrets;
  }

  std::unique_ptr<Upstream> open(const httplib::Request& req, std::string body, bool streamed) {
    curl_init_once();
    auto u = std::make_unique<Upstream>();
    u->easy = curl_easy_init();
    u->multi = curl_multi_init();
    if (!u->easy || !u->multi) throw InputError("proxy: libcurl could not create a handle");
    u->body = std::move(body);
    u->limit = streamed ? 0 : options.max_response_bytes;
    const auto replaced = [&](const std::string& name) {
      return std::any_of(options.upstream_headers.begin(), options.upstream_headers.end(),
                         [&](const auto& h) { return lower(h.first) == lower(name); });
    };
    for (const auto& [name, value] : req.headers)
      if (!hop_by_hop(name) && name != "REMOTE_ADDR" && name != "REMOTE_PORT" && name != "LOCAL_ADDR" &&
          name != "LOCAL_PORT" && value.find_first_of("\r\n") == std::string::npos && !replaced(name))
        u->headers = curl_slist_append(u->headers, (name + ": " + value).c_str());
    for (const auto& [name, value] : options.upstream_headers)
      u->headers = curl_slist_append(u->headers, (name + ": " + value).c_str());
    u->headers = curl_slist_append(u->headers, "Expect:");  // no 100-continue round trip
    CURL* h = u->easy;
    const std::string url = target(req.path);
    curl_easy_setopt(h, CURLOPT_URL, url.c_str());
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, u->body.data());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(u->body.size()));
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, u->headers);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, Upstream::on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, u.get());
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, Upstream::on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, u.get());
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(std::ceil(options.connect_timeout_seconds * 1000)));
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(std::ceil(options.timeout_seconds * 1000)));
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, options.idle_timeout_seconds);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, u->error);
    curl_multi_add_handle(u->multi, h);
    return u;
  }

  // The request body, at most max_body_bytes, within the request deadline.
  std::optional<std::string> read_body(const httplib::ContentReader& reader, Clock::time_point start, int& status,
                                       std::string& error) {
    std::string body;
    bool whole = reader([&](const char* data, std::size_t size) {
      if (body.size() + size > options.max_body_bytes) {
        status = 413;
        error = fmt::format("request body over {} bytes (--max-body-bytes): refused, not forwarded", options.max_body_bytes);
        return false;
      }
      if (Clock::now() - start > options.request_deadline) {
        status = 408;
        error = fmt::format("request body not received within {} ms: refused, not forwarded", options.request_deadline.count());
        return false;
      }
      body.append(data, size);
      return true;
    });
    if (whole) return body;
    if (status == 0) {
      status = 400;
      error = "request body cut short or malformed in its framing: refused, not forwarded";
    }
    return std::nullopt;
  }

  void write(const Exchange& x, const UsageReader& usage, const std::optional<Link>& link,
             const std::vector<std::string>& secrets) {
    std::string line = exchange_record(x, usage, link, counter, secrets);
    std::lock_guard lock(log_mutex);
    std::fprintf(log, "%s\n", line.c_str());
    std::fflush(log);
    ++written;
  }

  struct Live {  // one exchange between handler and content provider
    Exchange x;
    std::unique_ptr<Upstream> upstream;
    std::unique_ptr<UsageReader> usage;
    std::optional<Link> link;
    std::vector<std::string> secrets;
    Clock::time_point start;
  };

  void finish(Live& live) {
    live.usage->finish();
    Upstream* u = live.upstream.get();
    if (u) {
      live.x.response_bytes = u->received;
      if (u->first_byte) live.x.timing.first_byte_ms = std::chrono::duration<double, std::milli>(*u->first_byte - live.start).count();
    }
    live.x.timing.latency_ms = ms_since(live.start);
    if (live.x.facts.stream && live.x.status >= 200 && live.x.status < 300 && u && u->done && u->result == CURLE_OK &&
        !live.usage->stream_ended())
      live.x.errors.push_back("the upstream's stream ended without its last event ([DONE], message_stop or response.completed)");
    if (!live.usage->stream_error().empty()) live.x.errors.push_back("error event in the stream: " + live.usage->stream_error());
    write(live.x, *live.usage, live.link, live.secrets);
  }

  void handle(Api api, const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& reader) {
    auto live = std::make_shared<Live>();
    live->start = Clock::now();
    live->x.seq = ++sequence;
    live->x.api = api;
    live->x.path = req.path.substr(0, 200);
    live->secrets = secrets_of(req);
    for (const auto& [name, value] : options.upstream_headers) {
      live->secrets.push_back(value);
      if (auto space = value.rfind(' '); space != std::string::npos) live->secrets.push_back(value.substr(space + 1));
    }
    int refused = 0;
    std::string why;
    std::optional<std::string> body = read_body(reader, live->start, refused, why);
    if (!admitted(api)) {
      refused = 404;
      why = fmt::format("{} is not forwarded with --wire {}", req.path, options.wire == WireFilter::openai ? "openai" : "anthropic");
    }
    if (refused) {
      live->usage = std::make_unique<UsageReader>(api, false);
      res.status = refused;
      res.set_header("Connection", "close");
      res.set_content(error_body(api, "invalid_request_error", "okfbench proxy: " + why), "application/json");
      live->x.status = refused;
      live->x.errors.push_back(why);
      if (body) live->x.request_bytes = body->size();
      finish(*live);
      return;
    }
    live->x.request_bytes = body->size();
    live->x.facts = read_request(api, *body);
    if (live->x.facts.request) live->link = conversations.link(api, live->x.facts.request->messages);
    live->usage = std::make_unique<UsageReader>(api, live->x.facts.stream);
    live->upstream = open(req, std::move(*body), live->x.facts.stream);
    Upstream& u = *live->upstream;
    if (!u.pump([&] { return u.headers_done; }, stopping)) u.done = true, u.result = CURLE_ABORTED_BY_CALLBACK;
    if (u.done && u.result != CURLE_OK && u.pending.empty() && !u.too_large) {
      fail(*live, res, u.timed_out() ? 504 : 502, u.timed_out() ? "the upstream did not answer in time: " : "the upstream failed: ");
      return;
    }
    live->x.request_id = u.header("x-request-id").empty() ? u.header("request-id") : u.header("x-request-id");
    res.status = static_cast<int>(u.status);
    std::string content_type = u.header("content-type");
    for (const auto& [name, value] : u.reply_headers)
      if (!hop_by_hop(name) && lower(name) != "content-type" && lower(name) != "content-encoding") res.set_header(name, value);
    live->x.status = res.status;
    if (lower(content_type).starts_with("text/event-stream")) {
      stream(live, res, content_type);
      return;
    }
    u.pump([] { return false; }, stopping);
    if (u.too_large || (u.done && u.result != CURLE_OK)) {
      fail(*live, res, u.timed_out() ? 504 : 502,
           u.too_large ? fmt::format("the upstream's reply is over {} bytes (--max-response-bytes): ", options.max_response_bytes)
                       : "the upstream's reply was cut: ");
      return;
    }
    live->usage->feed(u.pending);
    if (res.status >= 400) live->x.errors.push_back(fmt::format("upstream status {}: {}", res.status, u.pending.substr(0, 300)));
    res.set_content(std::move(u.pending), content_type.empty() ? "application/octet-stream" : content_type);
    finish(*live);
  }

  void fail(Live& live, httplib::Response& res, int status, const std::string& what) {
    Upstream& u = *live.upstream;
    std::string message = what + (u.too_large ? std::string("refused") : u.transport_error());
    res.status = status;
    res.headers.clear();
    res.set_content(error_body(live.x.api, status == 504 ? "timeout_error" : "api_error", "okfbench proxy: " + message),
                    "application/json");
    live.x.status = status;
    live.x.errors.push_back(message);
    finish(live);
  }

  // Passes the stream on as it arrives; the record is written when the stream ends, however it ends.
  void stream(std::shared_ptr<Live> live, httplib::Response& res, const std::string& content_type) {
    res.set_chunked_content_provider(
        content_type,
        [this, live](std::size_t, httplib::DataSink& sink) {
          Upstream& u = *live->upstream;
          if (!u.pump([&] { return !u.pending.empty(); }, stopping)) {
            live->x.errors.push_back("the proxy stopped mid-stream");
            return false;
          }
          if (!u.pending.empty()) {
            std::string chunk = std::move(u.pending);
            u.pending.clear();
            live->usage->feed(chunk);
            if (!sink.write(chunk.data(), chunk.size())) {
              live->x.errors.push_back("the client disconnected mid-stream");
              return false;
            }
            return true;
          }
          if (u.result != CURLE_OK) {  // the upstream cut the stream or went silent: cut the client's too
            live->x.errors.push_back(std::string(u.timed_out() ? "the upstream went silent mid-stream: "
                                                               : "the upstream's stream was cut: ") + u.transport_error());
            return false;
          }
          sink.done();
          return true;
        },
        [this, live](bool) {
          live->upstream->pump([] { return true; }, stopping);  // no more transfer; the handle closes below
          finish(*live);
          live->upstream.reset();
        });
  }

  ProxyOptions options;
  const retrieval::TokenCounter& counter;
  Conversations conversations;
  std::FILE* log = nullptr;
  std::mutex log_mutex;
  std::atomic<std::uint64_t> sequence{0};
  std::atomic<std::size_t> written{0};
  std::atomic<bool> stopping{false};
  agents::BackgroundServer<> http;
  int port = 0;
};

ProxyServer::ProxyServer(ProxyOptions options, const retrieval::TokenCounter& counter) {
  if (!options.upstream.starts_with("http://") && !options.upstream.starts_with("https://"))
    throw UsageError(fmt::format("proxy: --upstream '{}' must start with http:// or https://", agents::display_url(options.upstream)));
  if (options.workers == 0 || options.max_body_bytes == 0 || options.max_response_bytes == 0 ||
      options.timeout_seconds <= 0 || options.connect_timeout_seconds <= 0 || options.idle_timeout_seconds <= 0 ||
      options.request_deadline.count() <= 0)
    throw UsageError("proxy: workers, body limits, timeouts and the request deadline must all be above 0");
  agents::remember_secret(agents::url_password(options.upstream));
  impl_ = std::make_unique<Impl>(std::move(options), counter);
  Impl* impl = impl_.get();
  impl->log = std::fopen(impl->options.log_path.c_str(), "a");
  if (!impl->log)
    throw InputError(fmt::format("proxy: cannot open the log {} for appending: {}", impl->options.log_path, std::strerror(errno)));
  impl->http.new_task_queue = [n = impl->options.workers] { return new httplib::ThreadPool(n); };
  impl->http.set_keep_alive_timeout(1);
  impl->http.set_read_timeout(std::chrono::duration_cast<std::chrono::seconds>(impl->options.request_deadline).count() + 1, 0);
  impl->http.set_write_timeout(30, 0);  // a client that reads nothing of a stream for 30 s has left
  impl->http.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
  });
  auto route = [impl](Api api) {
    return [impl, api](const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& reader) {
      impl->handle(api, req, res, reader);
    };
  };
  for (const char* path : {"/v1/chat/completions", "/chat/completions"}) impl->http.Post(path, route(Api::chat_completions));
  for (const char* path : {"/v1/responses", "/responses"}) impl->http.Post(path, route(Api::responses));
  impl->http.Post("/v1/messages", route(Api::messages));
  impl->http.Get("/health", [](const httplib::Request&, httplib::Response& res) { res.set_content("ok", "text/plain"); });
}

ProxyServer::~ProxyServer() {
  stop();
  if (impl_ && impl_->log) std::fclose(impl_->log);
}

int ProxyServer::start(int port) {
  impl_->port = impl_->http.serve(kHost, port, "proxy", "in use? --port 0 picks a free port");
  return impl_->port;
}

void ProxyServer::stop() {
  if (!impl_) return;
  impl_->stopping = true;
  impl_->http.stop_serving();
}

void ProxyServer::interrupt() {
  impl_->stopping = true;
  impl_->http.stop();
}

void ProxyServer::wait() { impl_->http.wait(); }

std::size_t ProxyServer::exchanges() const { return impl_->written.load(); }

std::string ProxyServer::url() const { return fmt::format("http://{}:{}", kHost, impl_->port); }

}  // namespace okfbench::proxy
