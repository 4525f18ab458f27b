#include "agents/mock_server.hpp"

#include <chrono>
#include <deque>
#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>
#include <mutex>

#include "agents/anthropic_json.hpp"
#include "agents/embeddings.hpp"
#include "agents/openai_json.hpp"
#include "retrieval/error.hpp"

namespace okfbench::agents {
namespace {

FaultKind fault_kind(std::string_view name) {
  if (name == "429") return FaultKind::rate_limited;
  if (name == "500") return FaultKind::server_error;
  if (name == "401") return FaultKind::unauthorized;
  if (name == "delay") return FaultKind::delay;
  if (name == "malformed") return FaultKind::malformed;
  if (name == "truncated") return FaultKind::truncated;
  if (name == "drop") return FaultKind::drop;
  throw UsageError(fmt::format("unknown fault '{}': use 429, 500, 401, delay, malformed, truncated or drop", name));
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
  try {
    std::size_t used = 0;
    double value = std::stod(std::string(text), &used);
    if (used == text.size() && value >= 0 && value <= 1e6) return value;
  } catch (const std::exception&) {
  }
  throw UsageError(fmt::format("fault '{}': '{}' is not a number from 0 to 1000000", item, text));
}

enum class Wire { openai, anthropic };

std::string error_body(Wire wire, std::string_view type, std::string_view message) {
  nlohmann::json error = {{"type", type}, {"message", message}};
  if (wire == Wire::openai) return nlohmann::json{{"error", error}}.dump();
  return nlohmann::json{{"type", "error"}, {"error", error}}.dump();
}
}  // namespace

std::vector<Fault> parse_faults(std::string_view spec) {
  std::vector<Fault> faults;
  if (spec.empty()) return faults;
  for (std::string_view item : split(spec, ',')) {
    std::vector<std::string_view> fields = split(item, ':');
    if (fields.size() > 3) throw UsageError(fmt::format("fault '{}': use KIND[:COUNT[:SECONDS]]", item));
    Fault f{fault_kind(fields[0]), 1, 1.0};
    if (fields.size() > 1) f.count = static_cast<int>(number(fields[1], item));
    if (fields.size() > 2) f.seconds = number(fields[2], item);
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

  // True when the fault produced the whole response.
  bool inject(const Fault& f, Wire wire, httplib::Response& res) {
    switch (f.kind) {
      case FaultKind::rate_limited:
        res.status = 429;
        res.set_header("Retry-After", fmt::format("{}", static_cast<long>(f.seconds)));
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
      case FaultKind::delay:
        std::this_thread::sleep_for(std::chrono::duration<double>(f.seconds));
        return false;
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
    }
    return false;
  }

  void handle(Wire wire, const httplib::Request& req, httplib::Response& res) {
    ++requests;
    if (auto f = next_fault(); f && inject(*f, wire, res)) return;
    try {
      bool openai = wire == Wire::openai;
      ChatRequest request = openai ? openai::request_from_json(req.body) : anthropic::request_from_json(req.body);
      ChatResponse response = (openai ? openai_sim : anthropic_sim).chat(request);
      response.model = request.model;
      std::string id = fmt::format("{}{}", openai ? "chatcmpl-sim-" : "msg_sim_", requests.load());
      res.set_content(openai ? openai::response_to_json(response, id) : anthropic::response_to_json(response, id),
                      "application/json");
    } catch (const InputError& e) {
      res.status = 400;
      res.set_content(error_body(wire, "invalid_request_error", e.what()), "application/json");
    }
  }

  // POST /embeddings: {"model", "input": string or [strings]} -> sim embeddings.
  void embeddings(const httplib::Request& req, httplib::Response& res) {
    ++requests;
    if (auto f = next_fault(); f && inject(*f, Wire::openai, res)) return;
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
    nlohmann::json body = {{"object", "list"}, {"data", data}, {"model", request.value("model", "sim")}};
    res.set_content(body.dump(), "application/json");
  }

  SimModel openai_sim;
  SimModel anthropic_sim;
  std::mutex mutex;
  std::deque<Fault> pending;
  std::atomic<std::size_t> requests{0};
  std::atomic<bool> listen_returned{false};
  httplib::Server server;
  std::thread thread;
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
  impl->server.Get("/health", [](const httplib::Request&, httplib::Response& res) { res.set_content("ok", "text/plain"); });
}

MockServer::~MockServer() { stop(); }

int MockServer::start(const std::string& host, int port) {
  impl_->host = host;
  impl_->port = port == 0 ? impl_->server.bind_to_any_port(host) : (impl_->server.bind_to_port(host, port) ? port : -1);
  if (impl_->port <= 0) throw InputError(fmt::format("mock-server: cannot bind {}:{} (in use? try --port 0)", host, port));
  impl_->thread = std::thread([impl = impl_.get()] {
    impl->server.listen_after_bind();
    impl->listen_returned = true;
  });
  // stop() before the listen loop runs would be lost, so wait until it does.
  while (!impl_->server.is_running() && !impl_->listen_returned) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return impl_->port;
}

void MockServer::stop() {
  if (!impl_) return;
  impl_->server.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

void MockServer::interrupt() { impl_->server.stop(); }

void MockServer::wait() {
  if (impl_->thread.joinable()) impl_->thread.join();
}

std::size_t MockServer::requests() const { return impl_->requests.load(); }

std::string MockServer::base_url() const { return fmt::format("http://{}:{}", impl_->host, impl_->port); }

}  // namespace okfbench::agents
