// okfbench mcp: serve bundles' tools and concepts to any MCP client over
// stdio or streamable HTTP on loopback, accounting every call in a session
// log (mcp/README.md).
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "cli/serve_until_signal.hpp"
#include "cli/keep_until_exit.hpp"
#include "core/error.hpp"
#include "engine/build_info.hpp"
#include "engine/bundle_source.hpp"
#include "engine/limits.hpp"
#include "engine/number_option.hpp"
#include "engine/selection_flags.hpp"
#include "mcp/http_server.hpp"
#include "mcp/server.hpp"
#include "mcp/session_log.hpp"
#include "mcp/stdio.hpp"

namespace okfbench::cli {
namespace {

struct McpArgs {
  std::vector<std::string> bundles;
  std::string surface = "grafito";
  std::string tools;  // comma-separated subset
  std::string transport = "stdio";
  int port = 0;
  int session_timeout = 1800;  // seconds
  std::string session_log;
  bool allow_write = false;
  std::size_t max_body_chars = 8000;
  engine::SourceFlags git;
  std::string profile = "okf";
};

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = std::min(text.find(',', start), text.size());
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

int run_mcp(const McpArgs& a) {
  std::optional<agents::Surface> surface = agents::parse_surface(a.surface);
  if (!surface) throw UsageError(fmt::format("--surface {}: use grafito or harnessx", a.surface));
  if (a.transport != "stdio" && a.transport != "http")
    throw UsageError(fmt::format("--transport {}: use stdio or http", a.transport));
  auto& bundles = keep_until_exit(std::vector<retrieval::CachedBundle>{});
  bundles.reserve(a.bundles.size());  // the server keeps the addresses of their bundles and indexes
  std::vector<mcp::ServedBundle> served;
  retrieval::LoadOptions load;
  load.profile = profile_option(a.profile);
  if (!retrieval::is_okf_or_repo(load.profile))
    throw UsageError(fmt::format("--profile {}: mcp serves okf or repo bundles", a.profile));
  for (const std::string& where : a.bundles) {
    // A folder or a git source; a checkout stays locked until its bundle is loaded.
    const engine::BundleSourceFolder source = engine::BundleSourceFolder::open(where, a.git);
    retrieval::CachedBundle& b =
        bundles.emplace_back(engine::load_cached_bundle(source.root(), load, {}, a.git.index_cache_dir()));
    engine::require_concepts(b.bundle, engine::shown_source(where));
    served.push_back({source.name(), &b.bundle, &b.index});
  }
  std::unique_ptr<mcp::SessionLog> log;
  if (!a.session_log.empty()) log = std::make_unique<mcp::SessionLog>(a.session_log);
  mcp::ServerOptions options;
  options.surface = *surface;
  options.tools = split_commas(a.tools);
  options.allow_write = a.allow_write;
  options.max_body_chars = a.max_body_chars;
  options.version = std::string(engine::build_version());
  mcp::Server server(served, options, log.get());
  std::string tools = fmt::format("{}", fmt::join(server.tool_names(), ", "));
  if (a.transport == "stdio") {
    std::fprintf(stderr, "okfbench mcp: serving %zu bundle(s) on stdio; tools: %s\n", served.size(), tools.c_str());
    std::ios::sync_with_stdio(false);  // stdin is read a byte at a time through its buffer
    mcp::serve_stdio(server, std::cin, std::cout);
    return 0;
  }
  mcp::HttpOptions http_options;
  http_options.session_idle = std::chrono::seconds(a.session_timeout);
  mcp::HttpServer http(server, http_options);
  int port = http.start(a.port);
  std::fprintf(stderr, "okfbench mcp: serving %zu bundle(s) at %s; tools: %s\n", served.size(), http.url().c_str(),
               tools.c_str());
  std::printf("%d\n", port);  // for scripts that asked for --port 0
  std::fflush(stdout);
  serve_until_signal(http);
  std::fprintf(stderr, "okfbench mcp: stopped\n");
  return 0;
}

}  // namespace

void add_mcp_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<McpArgs>();
  CLI::App* cmd = app.add_subcommand(
      "mcp", "Serve bundles to MCP clients (stdio or streamable HTTP on 127.0.0.1), accounting every call");
  cmd->add_option("BUNDLE", args->bundles, "Bundle folders or git sources (each named by its folder or repository)")
      ->required();
  cmd->add_option("--surface", args->surface, "Tool naming: grafito or harnessx")->capture_default_str();
  cmd->add_option("--tools", args->tools, "Comma-separated subset of the surface's tools (default: all; remember only with --allow-write)");
  cmd->add_option("--transport", args->transport, "stdio or http")->capture_default_str();
  cmd->add_option("--port", args->port, "HTTP port on 127.0.0.1; 0 picks a free one and prints it")
      ->check(number_in(engine::limits::port))
      ->capture_default_str();
  cmd->add_option("--session-timeout", args->session_timeout,
                  "HTTP: seconds a session may stay unused before it ends (its next request gets 404)")
      ->check(number_in(engine::limits::session_timeout_seconds))
      ->capture_default_str();
  cmd->add_option("--session-log", args->session_log, "Append every call's accounting to this JSONL file (okfbench report reads it)");
  cmd->add_flag("--allow-write", args->allow_write, "Offer remember, which writes new concepts into the bundle");
  cmd->add_option("--max-body-chars", args->max_body_chars, "Body budget of open/read_concept")
      ->check(number_in(engine::limits::max_body_chars))
      ->capture_default_str();
  cmd->add_option("--profile", args->profile, "Bundle profile: okf (spec) or repo (plain markdown: Obsidian, Foam, docs)")
      ->check(CLI::IsMember({"okf", "repo"}))
      ->capture_default_str();
  add_source_flags(*cmd, args->git);
  cmd->callback([args, &action] { action = [args] { return run_mcp(*args); }; });
}

}  // namespace okfbench::cli
