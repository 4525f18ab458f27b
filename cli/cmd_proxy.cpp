// okfbench proxy: a recording gateway on loopback between an agent and its
// model provider (proxy/server.hpp); one JSON line per exchange in the log.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <map>
#include <memory>

#include "agents/secrets.hpp"
#include "cli/commands.hpp"
#include "cli/serve_until_signal.hpp"
#include "engine/limits.hpp"
#include "engine/number_option.hpp"
#include "proxy/server.hpp"
#include "retrieval/tokens.hpp"

namespace okfbench::cli {
namespace {

struct ProxyArgs {
  proxy::ProxyOptions options;
  int port = 8090;
  std::string tokenizer = "o200k_base";
  std::int64_t workers = 64;
  std::int64_t max_body_mib = 32;
  double request_deadline_s = 30;
};

int run_proxy(ProxyArgs a) {
  a.options.workers = static_cast<std::size_t>(a.workers);
  a.options.max_body_bytes = static_cast<std::size_t>(a.max_body_mib) << 20;
  a.options.request_deadline = std::chrono::milliseconds(static_cast<std::int64_t>(a.request_deadline_s * 1000));
  auto counter = retrieval::make_counter(a.tokenizer);
  proxy::ProxyServer server(a.options, *counter);
  int port = server.start(a.port);
  std::fprintf(stderr,
               "okfbench proxy listening on %s, forwarding to %s\n"
               "  OpenAI:    OPENAI_BASE_URL=%s/v1\n"
               "  Anthropic: ANTHROPIC_BASE_URL=%s\n"
               "  log: %s\n",
               server.url().c_str(), agents::display_url(a.options.upstream).c_str(), server.url().c_str(),
               server.url().c_str(), a.options.log_path.c_str());
  std::printf("%d\n", port);  // for scripts that asked for --port 0
  std::fflush(stdout);
  serve_until_signal(server);
  std::fprintf(stderr, "okfbench proxy: stopped after %zu exchange(s)\n", server.exchanges());
  return 0;
}

}  // namespace

void add_proxy_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<ProxyArgs>();
  CLI::App* cmd = app.add_subcommand(
      "proxy", "Forward an agent's model calls to a provider and log tokens, usage and timing per exchange (Ctrl-C stops)");
  cmd->add_option("--upstream", args->options.upstream, "The provider (or mock-server, or any compatible server): http(s)://host[:port][/v1]")
      ->required();
  cmd->add_option("--port", args->port, "Loopback port; 0 picks a free one and prints it")
      ->check(number_in(engine::limits::port))
      ->capture_default_str();
  cmd->add_option("--log", args->options.log_path, "JSON lines file the exchanges are appended to")->capture_default_str();
  const std::map<std::string, proxy::WireFilter> wires = {
      {"auto", proxy::WireFilter::automatic}, {"openai", proxy::WireFilter::openai}, {"anthropic", proxy::WireFilter::anthropic}};
  cmd->add_option("--wire", args->options.wire,
                  "Which endpoints are forwarded: auto (all), openai (chat/completions, responses) or anthropic (messages)")
      ->transform(CLI::CheckedTransformer(wires))
      ->default_str("auto");
  cmd->add_option("--tokenizer", args->tokenizer, "Counter for request tokens")
      ->check(CLI::IsMember(retrieval::counter_names()))
      ->capture_default_str();
  cmd->add_option("--connect-timeout-s", args->options.connect_timeout_seconds, "Seconds to connect to the upstream")
      ->check(number_in(engine::limits::model_timeout_seconds))
      ->capture_default_str();
  cmd->add_option("--timeout-s", args->options.timeout_seconds, "Seconds one exchange may take, streams included")
      ->check(number_in(engine::limits::model_timeout_seconds))
      ->capture_default_str();
  cmd->add_option("--idle-timeout-s", args->options.idle_timeout_seconds, "Seconds the upstream may send nothing")
      ->check(number_in(IntegerRange<long>{1, 86'400}))
      ->capture_default_str();
  cmd->add_option("--request-deadline-s", args->request_deadline_s, "Seconds a client has to send its request body")
      ->check(number_in(engine::limits::model_timeout_seconds))
      ->capture_default_str();
  cmd->add_option("--max-body-mib", args->max_body_mib, "Largest request body forwarded, MiB (larger: 413)")
      ->check(number_in(engine::limits::Int{1, 1024}))
      ->capture_default_str();
  cmd->add_option("--workers", args->workers, "Connections served at once (more wait)")
      ->check(number_in(engine::limits::concurrency))
      ->capture_default_str();
  cmd->callback([args, &action] { action = [args] { return run_proxy(*args); }; });
}

}  // namespace okfbench::cli
