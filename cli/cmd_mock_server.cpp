// okfbench mock-server: an OpenAI- and Anthropic-compatible server on loopback
// whose answers come from the sim policy (and judge prompts from the sim
// judge, engine/judge.hpp), with injectable faults.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "agents/mock_server.hpp"
#include "agents/reference_agents.hpp"
#include "cli/commands.hpp"
#include "cli/serve_until_signal.hpp"
#include "engine/judge.hpp"
#include "engine/limits.hpp"
#include "engine/number_option.hpp"
#include "retrieval/tokens.hpp"

namespace okfbench::cli {
namespace {

struct MockArgs {
  std::string host = "127.0.0.1";
  int port = 8089;
  std::string fault;
  std::uint64_t seed = 0;
  std::string agent;  // a reference agent instead of the sim
};

int run_mock_server(const MockArgs& a) {
  std::vector<agents::Fault> faults = agents::parse_faults(a.fault);
  auto counter = retrieval::make_counter("o200k_base");
  agents::SimOptions sim = engine::judging_sim({});  // judge prompts get the sim judge's verdict
  sim.seed = a.seed;
  agents::MockServer server(sim, *counter, faults);
  if (!a.agent.empty()) server.answer_with(agents::make_reference_agent(a.agent, *counter));
  int port = server.start(a.host, a.port);
  std::fprintf(stderr,
               "okfbench mock-server listening on http://%s:%d\n"
               "  OpenAI:    OPENAI_BASE_URL=http://%s:%d/v1\n"
               "  Anthropic: ANTHROPIC_BASE_URL=http://%s:%d\n"
               "  answered by: %s\n"
               "  faults: %s\n",
               a.host.c_str(), port, a.host.c_str(), port, a.host.c_str(), port,
               a.agent.empty() ? "sim" : a.agent.c_str(),
               a.fault.empty() ? "none" : a.fault.c_str());
  std::printf("%d\n", port);  // for scripts that asked for --port 0
  std::fflush(stdout);
  serve_until_signal(server);
  std::fprintf(stderr, "okfbench mock-server: stopped after %zu request(s)\n", server.requests());
  return 0;
}

}  // namespace

void add_mock_server_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<MockArgs>();
  CLI::App* cmd = app.add_subcommand(
      "mock-server", "Serve OpenAI- and Anthropic-compatible chat endpoints answered by the sim policy (Ctrl-C stops)");
  cmd->add_option("--host", args->host, "Address to bind (loopback by default)")->capture_default_str();
  cmd->add_option("--port", args->port, "Port; 0 picks a free one and prints it")
      ->check(number_in(engine::limits::port))
      ->capture_default_str();
  cmd->add_option("--fault", args->fault,
                  "Faults for the first requests: KIND[:COUNT[:N]],... with KIND one of 429, 500, 401, echo, delay, "
                  "stall, trickle, malformed, truncated, drop, huge, deep, badutf8, usage, calls, cut, gap (agents/README.md)");
  cmd->add_option("--seed", args->seed, "Sim variation seed (0 = none)")
      ->check(number_in(engine::limits::seed))
      ->capture_default_str();
  cmd->add_option("--agent", args->agent,
                  "Answer with a scripted reference agent instead of sim: scout or diver (agents/reference_agents.hpp)")
      ->check(CLI::IsMember(agents::reference_agent_names()));
  cmd->callback([args, &action] { action = [args] { return run_mock_server(*args); }; });
}

}  // namespace okfbench::cli
