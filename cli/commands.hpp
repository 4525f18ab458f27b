#pragma once
// The okfbench subcommands. Each add_*_command registers one CLI11 subcommand
// on `app`; when that subcommand is chosen its callback stores the work to do in
// `action`, which main() runs after parsing and whose return value is the exit
// code (0 success, 1 failed/not conformant/threshold crossed, 2 usage error).
#include <functional>

namespace CLI {
class App;
}

namespace okfbench::cli {

using Action = std::function<int()>;

void add_all_commands(CLI::App& app, Action& action);

}  // namespace okfbench::cli
