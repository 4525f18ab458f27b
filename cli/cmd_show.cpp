// okfbench show: one trial of a run, turn by turn, in the terminal or as JSON.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "engine/limits.hpp"
#include "reports/record.hpp"
#include "reports/show.hpp"
#include "reports/transcript.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/numbers.hpp"

namespace okfbench::cli {
namespace {

struct ShowArgs {
  std::string run_dir;
  std::string trial_key;
  std::string question;
  std::string config;
  bool full = false;
  bool json = false;
};

// The terminal's width: the terminal itself, else COLUMNS, else 100.
std::size_t terminal_width() {
  winsize size{};
  if (::isatty(STDOUT_FILENO) && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col >= 20) return size.ws_col;
  if (const char* columns = std::getenv("COLUMNS")) {
    const Parsed<std::size_t> n = parse_integer(columns, IntegerRange<std::size_t>{20, 1000});
    if (n.value) return *n.value;
  }
  return 100;
}

std::string candidates(const std::vector<const reports::TrialRecord*>& found) {
  std::string out;
  for (const auto* r : found) out += fmt::format("\n  {}  {} repeat {}", r->trial_key, r->config.label(), r->config.repeat);
  return out;
}

// The one trial the arguments name. A key may be given by a unique prefix.
const reports::TrialRecord& select(const std::vector<reports::TrialRecord>& records, const ShowArgs& a) {
  std::vector<const reports::TrialRecord*> found;
  for (const auto& r : records) {
    if (!a.trial_key.empty()) {
      if (r.trial_key.starts_with(a.trial_key)) found.push_back(&r);
    } else if (r.question_id == a.question && (a.config.empty() || r.config.label().find(a.config) != std::string::npos)) {
      found.push_back(&r);
    }
  }
  const std::string what = a.trial_key.empty()
                               ? fmt::format("question {}{}", a.question, a.config.empty() ? "" : " with a configuration containing \"" + a.config + "\"")
                               : "trial key " + a.trial_key;
  if (found.empty()) {
    throw InputError(fmt::format("{}: no trial with {}; `okfbench report {}` lists the configurations, trials.csv the keys",
                                 a.run_dir, what, a.run_dir));
  }
  if (found.size() > 1) {
    throw UsageError(fmt::format("{} names {} trials; give one key (or --config TEXT to choose):{}", what, found.size(),
                                 candidates(found)));
  }
  return *found[0];
}

int run_show(const ShowArgs& a) {
  if (a.trial_key.empty() == a.question.empty()) {
    throw UsageError("okfbench show: give a TRIAL_KEY or --question ID (not both)");
  }
  if (!a.config.empty() && a.question.empty()) throw UsageError("okfbench show: --config chooses among the trials of --question");
  const reports::StoredRun run = reports::read_run_dir(a.run_dir);
  const reports::TrialRecord& record = select(run.records, a);
  const reports::TranscriptSet transcripts = reports::read_run_transcripts(a.run_dir).value_or(reports::TranscriptSet{});
  const reports::Transcript* transcript = transcripts.find(record.trial_key);
  if (a.json) {
    std::printf("%s\n", json_text(reports::show_json(record, transcript, transcripts), 2).c_str());
  } else {
    reports::ShowOptions options;
    options.width = terminal_width();
    options.full = a.full;
    std::fputs(reports::show_text(record, transcript, transcripts, options).c_str(), stdout);
  }
  return 0;
}

}  // namespace

void add_show_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<ShowArgs>();
  CLI::App* cmd = app.add_subcommand("show", "Print one trial of a run: each turn's tokens and attribution, tool calls and results, the answer and its grades");
  cmd->add_option("RUN_DIR", args->run_dir, "Output folder of `okfbench run`")->required();
  cmd->add_option("TRIAL_KEY", args->trial_key, "The trial's key (a unique prefix is enough)");
  cmd->add_option("--question", args->question, "Show the trial of this question id (with --config when there are several)");
  cmd->add_option("--config", args->config, "With --question: text the configuration label contains, e.g. \"tools=search+open\"");
  cmd->add_flag("--full", args->full, "Print tool results, messages and the answer whole instead of cut to the terminal width");
  cmd->add_flag("--json", args->json, "Print the record, the transcript and the per-turn split as JSON");
  cmd->callback([args, &action] { action = [args] { return run_show(*args); }; });
}

}  // namespace okfbench::cli
