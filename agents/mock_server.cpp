#include "agents/mock_server.hpp"

#include <chrono>
#include <deque>
#include <limits>
#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>
#include <mutex>
#include <sys/socket.h>

#include "agents/anthropic_json.hpp"
#include "agents/background_server.hpp"
#include "agents/embeddings.hpp"
#include "agents/rerankers.hpp"
#include "agents/stream_json.hpp"
#include "agents/openai_json.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/numbers.hpp"

namespace okfbench::agents {
namespace {

struct FaultName {
  std::string_view name;
  FaultKind kind;
  double value;  // N when the spec leaves it out
};

constexpr FaultName kFaults[] = {
    {"429", FaultKind::rate_limited, 1},   {"500", FaultKind::server_error, 1}, {"401", FaultKind::unauthorized, 1},
    {"echo", FaultKind::echo_key, 401},    {"delay", FaultKind::delay, 1},      {"stall", FaultKind::stall, 3600},
    {"trickle", FaultKind::trickle, 0.5},  {"malformed", FaultKind::malformed, 1}, {"truncated", FaultKind::truncated, 1},
    {"drop", FaultKind::drop, 1},          {"huge", FaultKind::huge, 2048},     {"deep", FaultKind::deep, 100000},
    {"badutf8", FaultKind::bad_utf8, 1},   {"usage", FaultKind::huge_usage, 1}, {"calls", FaultKind::many_calls, 10000},
    {"cut", FaultKind::cut, 2},            {"gap", FaultKind::gap, 3600},
};

const FaultName& fault_name(std::string_view name) {
  for (const FaultName& f : kFaults)
    if (f.name == name) return f;
  std::string known;
  for (const FaultName& f : kFaults) known += fmt::format("{}{}", known.empty() ? "" : ", ", f.name);
  throw UsageError(fmt::format("unknown fault '{}': use one of {}", name, known));
}

std::string replace_all(std::string_view text, std::string_view from, std::string_view to) {
  std::string out;
  std::size_t done = 0;
  for (std::size_t at = text.find(from); at != std::string_view::npos; at = text.find(from, done)) {
    out.append(text.substr(done, at - done)).append(to);
    done = at + from.size();
  }
  return out.append(text.substr(done));
}

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    std::size_t end = text.find(sep, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

double number(std::string_view text, std::string_view item) {
  return real_or_throw<UsageError>(text, RealRange{0, 1e6}, fmt::format("fault '{}'", item));
}

enum class Wire { openai, anthropic };

std::string error_body(Wire wire, std::string_view type, std::string_view message) {
  nlohmann::json error = {{"type", type}, {"message", message}};
  if (wire == Wire::openai) return json_text(nlohmann::json{{"error", error}});
  return json_text(nlohmann::json{{"type", "error"}, {"error", error}});
}
}  // namespace

std::vector<Fault> parse_faults(std::string_view spec) {
  std::vector<Fault> faults;
  if (spec.empty()) return faults;
  for (std::string_view item : split(spec, ',')) {
    std::vector<std::string_view> fields = split(item, ':');
    if (fields.size() > 3) throw UsageError(fmt::format("fault '{}': use KIND[:COUNT[:N]]", item));
    const FaultName& name = fault_name(fields[0]);
    Fault f{name.kind, 1, name.value};
    if (fields.size() > 1) f.count = static_cast<int>(number(fields[1], item));
    if (fields.size() > 2) f.value = number(fields[2], item);
    if (f.count < 1) throw UsageError(fmt::format("fault '{}': COUNT must be at least 1", item));
    faults.push_back(f);
  }
  return faults;
}

struct MockServer::Impl {
  Impl(SimOptions sim, const retrieval::TokenCounter& counter, std::vector<Fault> faults)
      : openai_sim(with_cache(sim, CacheKind::openai), counter),
        anthropic_sim(with_cache(sim, CacheKind::anthropic), counter),
        pending(faults.begin(), faults.end()) {}

  static SimOptions with_cache(SimOptions o, CacheKind kind) {
    o.cache = kind;
    return o;
  }

  std::optional<Fault> next_fault() {
    std::lock_guard lock(mutex);
    if (pending.empty()) return std::nullopt;
    Fault f = pending.front();
    if (--pending.front().count == 0) pending.pop_front();
    return f;
  }

  // Waits up to `seconds`; false when the server began stopping first.
  bool pause(double seconds) {
    using Clock = std::chrono::steady_clock;
    const Clock::time_point until = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                       std::chrono::duration<double>(seconds));
    while (!stopping) {
      const Clock::duration left = until - Clock::now();
      if (left <= Clock::duration::zero()) return true;
      std::this_thread::sleep_for(std::min<Clock::duration>(left, std::chrono::milliseconds(20)));
    }
    return false;
  }

  static std::string reply_json(Wire wire, const ChatResponse& response, std::string_view id) {
    return wire == Wire::openai ? openai::response_to_json(response, id) : anthropic::response_to_json(response, id);
  }

  // A hostile reply, written by the wire's own writer around markers that are
  // then swapped for what that writer would refuse (deep nesting) or repair (a
  // raw 0xFF byte).
  static std::string crafted_reply(const Fault& f, Wire wire) {
    constexpr std::string_view kDeep = R"({"deep_marker":0})";
    constexpr std::string_view kBadByte = "BAD_BYTE_MARKER";
    ChatResponse r;
    r.model = "mock-fault";
    r.message.role = Role::assistant;
    r.stop = StopReason::tool_calls;
    r.usage = Usage{100, 0, 0, 10};
    auto levels = static_cast<std::size_t>(f.value);
    switch (f.kind) {
      case FaultKind::deep: r.message.tool_calls = {{"call_deep", "search", std::string(kDeep)}}; break;
      case FaultKind::bad_utf8:
        r.message.content = fmt::format("Looking {} up", kBadByte);
        r.message.tool_calls = {{"call_utf8", "search", fmt::format(R"({{"query": "replica {} lag"}})", kBadByte)}};
        break;
      case FaultKind::many_calls:
        for (std::size_t i = 1; i <= levels; ++i)
          r.message.tool_calls.push_back({fmt::format("call_{}", i), "search", fmt::format(R"({{"query": "q{}"}})", i)});
        break;
      default:  // huge_usage
        r.message.content = "An answer whose usage no provider reports.";
        r.stop = StopReason::end_turn;
        r.usage = Usage{std::numeric_limits<std::int64_t>::max(), std::nullopt, std::nullopt,
                        std::numeric_limits<std::int64_t>::max() - 1};
    }
    std::string text = reply_json(wire, r, "mock-fault");
    // OpenAI carries arguments as a JSON string, Anthropic as an object.
    std::string arrays = "\"";
    arrays.append(levels, '[').append(levels, ']').append("\"");
    text = replace_all(text, json_text(nlohmann::json(std::string(kDeep))), arrays);
    std::string objects;
    for (std::size_t i = 0; i < levels; ++i) objects.append(R"({"a":)");
    objects.append("{}").append(levels, '}');
    text = replace_all(text, kDeep, objects);
    return replace_all(text, kBadByte, "\xFF");
  }

  static std::string sent_key(const httplib::Request& req) {
    std::string key = req.get_header_value("x-api-key");
    if (key.empty()) key = req.get_header_value("Authorization");
    if (key.starts_with("Bearer ")) key.erase(0, 7);
    return key;
  }

  // True when the fault produced the whole response.
  bool inject(const Fault& f, Wire wire, const httplib::Request& req, httplib::Response& res) {
    switch (f.kind) {
      case FaultKind::rate_limited:
        res.status = 429;
        res.set_header("Retry-After", fmt::format("{}", static_cast<long>(f.value)));
        res.set_content(error_body(wire, "rate_limit_error", "Rate limit reached (mock fault)"), "application/json");
        return true;
      case FaultKind::server_error:
        res.status = 500;
        res.set_content(error_body(wire, "server_error", "Internal error (mock fault)"), "application/json");
        return true;
      case FaultKind::unauthorized:
        res.status = 401;
        res.set_content(error_body(wire, "authentication_error", "Invalid API key (mock fault)"), "application/json");
        return true;
      case FaultKind::echo_key:
        res.status = static_cast<int>(f.value);
        res.set_content(error_body(wire, "authentication_error",
                                   fmt::format("Incorrect API key provided: {} (mock fault)", sent_key(req))),
                        "application/json");
        return true;
      case FaultKind::delay:
        pause(f.value);
        return false;
      case FaultKind::cut:
      case FaultKind::gap:
        if (streamed(req)) return false;  // handle() streams with the fault
        if (f.kind == FaultKind::gap) {
          pause(f.value);
          return false;
        }
        return inject(Fault{FaultKind::truncated, 1, 1}, wire, req, res);
      case FaultKind::stall:
        pause(f.value);
        res.set_content_provider(1, "application/json",
                                 [](std::size_t, std::size_t, httplib::DataSink&) { return false; });
        return true;
      case FaultKind::trickle:
        return false;  // handle() sends the normal reply slowly
      case FaultKind::malformed:
        res.set_content("{\"choices\": [ this is not JSON", "application/json");
        return true;
      case FaultKind::truncated:
      case FaultKind::drop: {
        auto body = std::make_shared<std::string>(error_body(wire, "padding", std::string(256, 'x')));
        std::size_t send = f.kind == FaultKind::truncated ? body->size() / 2 : 0;
        res.set_content_provider(body->size(), "application/json",
                                 [body, send](std::size_t offset, std::size_t, httplib::DataSink& sink) {
                                   if (offset < send) sink.write(body->data(), send);
                                   return offset < send;  // false: httplib closes the connection
                                 });
        return true;
      }
      case FaultKind::huge: {
        auto total = static_cast<std::size_t>(f.value * 1024 * 1024);
        res.set_chunked_content_provider("application/json", [this, total](std::size_t offset, httplib::DataSink& sink) {
          static const std::string chunk(std::size_t{1} << 16, 'x');
          if (stopping) return false;
          if (offset >= total) {
            sink.done();
            return true;
          }
          std::size_t n = std::min(chunk.size(), total - offset);
          if (!sink.write(chunk.data(), n)) return false;  // the client hung up
          huge_sent += n;
          return true;
        });
        return true;
      }
      case FaultKind::deep:
      case FaultKind::bad_utf8:
      case FaultKind::huge_usage:
      case FaultKind::many_calls:
        res.set_content(crafted_reply(f, wire), "application/json");
        return true;
    }
    return false;
  }

  // Sends `text` one byte every `interval` seconds.
  void trickle(httplib::Response& res, std::string text, double interval) {
    auto body = std::make_shared<std::string>(std::move(text));
    res.set_content_provider(body->size(), "application/json",
                             [this, body, interval](std::size_t offset, std::size_t, httplib::DataSink& sink) {
                               return pause(interval) && sink.write(body->data() + offset, 1);
                             });
  }

  static bool streamed(const httplib::Request& req) {
    nlohmann::json body = nlohmann::json::parse(req.body, nullptr, false);
    return body.is_object() && body.value("stream", nlohmann::json(false)) == true;
  }

  static bool wants_usage(const httplib::Request& req) {
    nlohmann::json body = nlohmann::json::parse(req.body, nullptr, false);
    const nlohmann::json options = body.is_object() ? body.value("stream_options", nlohmann::json()) : nlohmann::json();
    return options.is_object() && options.value("include_usage", nlohmann::json(false)) == true;
  }

  // Writes the events one by one, each as soon as the one before has left;
  // `cut` and `gap` faults shape the stream.
  void stream(httplib::Response& res, Wire wire, const httplib::Request& req, const std::string& reply,
              std::optional<Fault> fault) {
    auto events = std::make_shared<std::vector<std::string>>(
        wire == Wire::openai ? openai_stream_events(reply, wants_usage(req)) : anthropic_stream_events(reply));
    auto next = std::make_shared<std::size_t>(0);
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider("text/event-stream", [this, events, next, fault](std::size_t, httplib::DataSink& sink) {
      if (stopping) return false;
      if (fault && fault->kind == FaultKind::cut && *next >= static_cast<std::size_t>(fault->value)) return false;
      if (fault && fault->kind == FaultKind::gap && *next == 1 && !pause(fault->value)) return false;
      if (*next == events->size()) {
        sink.done();
        return true;
      }
      const std::string& event = (*events)[(*next)++];
      return sink.write(event.data(), event.size());  // false: the client hung up
    });
  }

  void handle(Wire wire, const httplib::Request& req, httplib::Response& res) {
    ++requests;
    std::optional<Fault> fault = next_fault();
    if (fault && inject(*fault, wire, req, res)) return;
    try {
      bool openai = wire == Wire::openai;
      ChatRequest request = openai ? openai::request_from_json(req.body) : anthropic::request_from_json(req.body);
      ChatResponse response = answerer ? answer(request) : (openai ? openai_sim : anthropic_sim).chat(request);
      response.model = request.model;
      std::string text = reply_json(wire, response, fmt::format("{}{}", openai ? "chatcmpl-sim-" : "msg_sim_", requests.load()));
      if (streamed(req)) stream(res, wire, req, text, fault);
      else if (fault && fault->kind == FaultKind::trickle) trickle(res, std::move(text), fault->value);
      else res.set_content(text, "application/json");
    } catch (const InputError& e) {
      res.status = 400;
      res.set_content(error_body(wire, "invalid_request_error", e.what()), "application/json");
    }
  }

  // POST /embeddings: {"model", "input": string or [strings]} -> sim embeddings.
  void embeddings(const httplib::Request& req, httplib::Response& res) {
    ++requests;
    if (auto f = next_fault(); f && inject(*f, Wire::openai, req, res)) return;
    nlohmann::json request = nlohmann::json::parse(req.body, nullptr, false);
    const nlohmann::json* input = request.is_object() && request.contains("input") ? &request["input"] : nullptr;
    std::vector<std::string> texts;
    if (input && input->is_string()) texts.push_back(input->get<std::string>());
    if (input && input->is_array())
      for (const nlohmann::json& item : *input)
        if (item.is_string()) texts.push_back(item.get<std::string>());
    if (!input || (input->is_array() && texts.size() != input->size()) || (!input->is_string() && !input->is_array())) {
      res.status = 400;
      res.set_content(error_body(Wire::openai, "invalid_request_error", "`input` must be a string or a list of strings"),
                      "application/json");
      return;
    }
    nlohmann::json data = nlohmann::json::array();
    for (std::size_t i = 0; i < texts.size(); ++i)
      data.push_back({{"object", "embedding"}, {"index", i}, {"embedding", sim_embedding(texts[i])}});
    bool named = request.contains("model") && request["model"].is_string();
    nlohmann::json body = {{"object", "list"}, {"data", data}, {"model", named ? request["model"] : nlohmann::json("sim")}};
    res.set_content(json_text(body), "application/json");
  }

  ChatResponse answer(const ChatRequest& request) {
    std::lock_guard lock(answer_mutex);
    return answerer->chat(request);
  }

  // POST /rerank: {"model", "query", "documents": [strings], "top_n"?} -> sim
  // scores (agents/rerankers.hpp), best first, top_n of them.
  void rerank(const httplib::Request& req, httplib::Response& res) {
    ++requests;
    if (auto f = next_fault(); f && inject(*f, Wire::openai, req, res)) return;
    nlohmann::json request = nlohmann::json::parse(req.body, nullptr, false);
    bool ok = request.is_object() && request.contains("query") && request["query"].is_string() &&
              request.contains("documents") && request["documents"].is_array();
    std::vector<std::string> documents;
    for (std::size_t i = 0; ok && i < request["documents"].size(); ++i) {
      ok = request["documents"][i].is_string();
      if (ok) documents.push_back(request["documents"][i].get<std::string>());
    }
    std::size_t top_n = documents.size();
    if (ok && request.contains("top_n")) {
      ok = request["top_n"].is_number_unsigned();
      if (ok) top_n = std::min(top_n, request["top_n"].get<std::size_t>());
    }
    if (!ok) {
      res.status = 400;
      res.set_content(error_body(Wire::openai, "invalid_request_error",
                                 "`query` must be a string, `documents` a list of strings, `top_n` a count"),
                      "application/json");
      return;
    }
    const std::string query = request["query"].get<std::string>();
    std::vector<std::pair<double, std::size_t>> scored;
    for (std::size_t i = 0; i < documents.size(); ++i) scored.emplace_back(sim_rerank_score(query, documents[i]), i);
    std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    nlohmann::json results = nlohmann::json::array();
    for (std::size_t n = 0; n < top_n; ++n) results.push_back({{"index", scored[n].second}, {"relevance_score", scored[n].first}});
    bool named = request.contains("model") && request["model"].is_string();
    res.set_content(json_text(nlohmann::json{{"model", named ? request["model"] : nlohmann::json("sim")}, {"results", results}}),
                    "application/json");
  }

  SimModel openai_sim;
  SimModel anthropic_sim;
  std::shared_ptr<ChatModel> answerer;  // instead of the sims when set
  std::mutex answer_mutex;
  std::mutex mutex;
  std::deque<Fault> pending;
  std::atomic<std::size_t> requests{0};
  std::atomic<std::size_t> huge_sent{0};
  std::atomic<bool> stopping{false};
  BackgroundServer<> server;
  std::string host;
  int port = 0;
};

MockServer::MockServer(SimOptions sim, const retrieval::TokenCounter& counter, std::vector<Fault> faults)
    : impl_(std::make_unique<Impl>(std::move(sim), counter, std::move(faults))) {
  Impl* impl = impl_.get();
  auto openai = [impl](const httplib::Request& req, httplib::Response& res) { impl->handle(Wire::openai, req, res); };
  impl->server.Post("/v1/chat/completions", openai);
  impl->server.Post("/chat/completions", openai);
  impl->server.Post("/v1/messages", [impl](const httplib::Request& req, httplib::Response& res) {
    impl->handle(Wire::anthropic, req, res);
  });
  auto embeddings = [impl](const httplib::Request& req, httplib::Response& res) { impl->embeddings(req, res); };
  impl->server.Post("/v1/embeddings", embeddings);
  impl->server.Post("/embeddings", embeddings);
  auto rerank = [impl](const httplib::Request& req, httplib::Response& res) { impl->rerank(req, res); };
  impl->server.Post("/v1/rerank", rerank);
  impl->server.Post("/rerank", rerank);
  impl->server.Get("/health", [](const httplib::Request&, httplib::Response& res) { res.set_content("ok", "text/plain"); });
}

MockServer::~MockServer() { stop(); }

int MockServer::start(const std::string& host, int port) {
  impl_->host = host;
  impl_->port = impl_->server.serve(host, port, "mock-server", "in use? try --port 0");
  return impl_->port;
}

void MockServer::stop() {
  if (!impl_) return;
  impl_->stopping = true;
  impl_->server.stop_serving();
}

void MockServer::interrupt() {
  impl_->stopping = true;
  impl_->server.stop();
}

void MockServer::wait() { impl_->server.wait(); }

std::size_t MockServer::requests() const { return impl_->requests.load(); }

std::size_t MockServer::body_bytes_sent() const { return impl_->huge_sent.load(); }

void MockServer::answer_with(std::shared_ptr<ChatModel> model) { impl_->answerer = std::move(model); }

std::string MockServer::base_url() const { return fmt::format("http://{}:{}", impl_->host, impl_->port); }

}  // namespace okfbench::agents
