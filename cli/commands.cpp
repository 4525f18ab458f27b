#include "cli/commands.hpp"

#include <CLI/CLI.hpp>

namespace okfbench::cli {

// Defined in cli/cmd_*.cpp, one file per subcommand group.
// (Declared here rather than in a header: nothing else calls them.)
void add_gen_command(CLI::App& app, Action& action);
void add_run_command(CLI::App& app, Action& action);
void add_tokens_command(CLI::App& app, Action& action);
void add_context_command(CLI::App& app, Action& action);
void add_search_command(CLI::App& app, Action& action);
void add_convert_command(CLI::App& app, Action& action);
void add_eval_command(CLI::App& app, Action& action);
void add_trec_eval_command(CLI::App& app, Action& action);
void add_grade_command(CLI::App& app, Action& action);

void add_report_command(CLI::App& app, Action& action);
void add_show_command(CLI::App& app, Action& action);
void add_export_command(CLI::App& app, Action& action);
void add_merge_command(CLI::App& app, Action& action);
void add_compare_command(CLI::App& app, Action& action);
void add_tune_command(CLI::App& app, Action& action);
void add_bundle_commands(CLI::App& app, Action& action);  // validate, browse, open, neighbors, history
void add_agent_command(CLI::App& app, Action& action);
void add_mock_server_command(CLI::App& app, Action& action);
void add_proxy_command(CLI::App& app, Action& action);
void add_mcp_command(CLI::App& app, Action& action);
void add_calibrate_command(CLI::App& app, Action& action);
void add_help_command(CLI::App& app, Action& action);  // last: it describes the others

void add_all_commands(CLI::App& app, Action& action) {
  add_gen_command(app, action);
  add_run_command(app, action);
  add_tokens_command(app, action);
  add_context_command(app, action);
  add_search_command(app, action);
  add_convert_command(app, action);
  add_eval_command(app, action);
  add_trec_eval_command(app, action);
  add_grade_command(app, action);
  add_report_command(app, action);
  add_show_command(app, action);
  add_export_command(app, action);
  add_merge_command(app, action);
  add_compare_command(app, action);
  add_tune_command(app, action);
  add_bundle_commands(app, action);
  add_agent_command(app, action);
  add_mock_server_command(app, action);
  add_proxy_command(app, action);
  add_mcp_command(app, action);
  add_calibrate_command(app, action);
  add_help_command(app, action);
  (void)app;
  (void)action;
}

}  // namespace okfbench::cli
