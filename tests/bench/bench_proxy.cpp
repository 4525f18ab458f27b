// The latency okfbench proxy adds to each streamed event on loopback: an
// upstream writes server-sent events stamped with the steady clock, a client
// reads them directly (Direct) or through the proxy (ThroughProxy), and each
// event's delay from write to read is a sample. The proxy's share is the
// difference between the two at each percentile (counters p50_us, p99_us).
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "proxy/server.hpp"
#include "retrieval/tokens.hpp"

namespace {
using Clock = std::chrono::steady_clock;

constexpr int kEvents = 200;
constexpr auto kSpacing = std::chrono::microseconds(500);  // so each event is its own chunk

std::int64_t now_ns() { return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count(); }

// A stream of kEvents chunks, each {"t": the nanosecond it was written}.
struct Upstream {
  Upstream() {
    server.Post("/v1/chat/completions", [](const httplib::Request&, httplib::Response& res) {
      auto sent = std::make_shared<int>(0);
      res.set_chunked_content_provider("text/event-stream", [sent](std::size_t, httplib::DataSink& sink) {
        if (*sent == kEvents) {
          sink.done();
          return true;
        }
        if (*sent > 0) std::this_thread::sleep_for(kSpacing);
        ++*sent;
        std::string event = fmt::format("data: {{\"t\": {}}}\n\n", now_ns());
        return sink.write(event.data(), event.size());
      });
    });
    port = server.bind_to_any_port("127.0.0.1");
    thread = std::thread([this] { server.listen_after_bind(); });
    while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~Upstream() {
    server.stop();
    thread.join();
  }
  httplib::Server server;
  std::thread thread;
  int port = 0;
};

// Reads one stream and appends each event's delay (microseconds).
void read_stream(int port, std::vector<double>& delays) {
  httplib::Client client("127.0.0.1", port);
  std::string buffer;
  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/chat/completions";
  req.body = R"({"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]})";
  req.set_header("Content-Type", "application/json");
  req.content_receiver = [&](const char* data, std::size_t n, std::uint64_t, std::uint64_t) {
    std::int64_t arrived = now_ns();
    buffer.append(data, n);
    for (std::size_t end; (end = buffer.find("\n\n")) != std::string::npos; buffer.erase(0, end + 2)) {
      std::size_t at = buffer.find("\"t\": ");
      if (at < end) delays.push_back(static_cast<double>(arrived - std::stoll(buffer.substr(at + 5))) / 1000.0);
    }
    return true;
  };
  httplib::Response res;
  httplib::Error error = httplib::Error::Success;
  client.send(req, res, error);
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::size_t at = std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(at), v.end());
  return v[at];
}

void report(benchmark::State& state, const std::vector<double>& delays) {
  state.counters["p50_us"] = percentile(delays, 0.50);
  state.counters["p99_us"] = percentile(delays, 0.99);
  state.counters["events"] = static_cast<double>(delays.size());
}

void BM_StreamDirect(benchmark::State& state) {
  Upstream upstream;
  std::vector<double> delays;
  for (auto _ : state) read_stream(upstream.port, delays);
  report(state, delays);
}

void BM_StreamThroughProxy(benchmark::State& state) {
  Upstream upstream;
  okfbench::retrieval::HeuristicCounter counter;
  okfbench::proxy::ProxyOptions options;
  options.upstream = fmt::format("http://127.0.0.1:{}", upstream.port);
  options.log_path = "/dev/null";
  okfbench::proxy::ProxyServer proxy(options, counter);
  int port = proxy.start();
  std::vector<double> delays;
  for (auto _ : state) read_stream(port, delays);
  report(state, delays);
}

BENCHMARK(BM_StreamDirect)->Unit(benchmark::kMillisecond)->Iterations(20);
BENCHMARK(BM_StreamThroughProxy)->Unit(benchmark::kMillisecond)->Iterations(20);
}  // namespace

BENCHMARK_MAIN();
