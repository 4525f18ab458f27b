// okfbench: evaluation and benchmarking harness for retrieval over OKF bundles.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <string>

#include "agents/secrets.hpp"
#include "cli/commands.hpp"
#include "core/error.hpp"
#include "engine/build_info.hpp"

int main(int argc, char** argv) {
  CLI::App app{"okfbench: measure agentic retrieval against one-shot context packs over OKF bundles"};
  app.require_subcommand(0, 1);
  const std::string version = std::string("okfbench ") + std::string(okfbench::engine::build_version()) + " (commit " +
                              std::string(okfbench::engine::build_git_sha()) + ")";
  app.set_version_flag("--version", version, "Print the version and the commit built, then exit");
  okfbench::cli::Action action;
  okfbench::cli::add_all_commands(app, action);
  try {
    app.parse(argc, argv);
    if (!action) {
      std::fputs(app.help().c_str(), stdout);
      return 0;
    }
    return action();
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const okfbench::UsageError& e) {
    std::fprintf(stderr, "okfbench: usage error: %s\n", okfbench::agents::redact(e.what()).c_str());
    return 2;
  } catch (const okfbench::InputError& e) {
    std::fprintf(stderr, "okfbench: error: %s\n", okfbench::agents::redact(e.what()).c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "okfbench: internal error: %s\n", okfbench::agents::redact(e.what()).c_str());
    return 3;
  }
}
