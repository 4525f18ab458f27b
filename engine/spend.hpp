#pragma once
// What a run spent: in this session (the trials this call of run_experiment
// stored, and their judges) and in total (every stored trial of the folder,
// failed runs that were run again included), as stdout prints it and as the
// folder's spend.json records it.
//
// spend.json: {"schema_version": 1, "sessions": [{"started": UTC, "trials_run":
// N, "usd": X, "judge_usd": Y}, ...], "total_usd", "superseded_usd",
// "judge_total_usd", "unpriced_trials", "cost_cap_usd" (null without one),
// "stopped_at_cost_cap"}: one session per run of the folder, oldest first;
// dollars to the micro-dollar. A file that cannot be read as such is
// replaced (with a warning): it is a record, never an input of the run.
#include <filesystem>
#include <string>

#include "engine/runner.hpp"
#include "engine/spec.hpp"

namespace okfbench::engine {

// The summary line `okfbench run` prints: trials planned, run now and
// stored before, then "spent $X this session, $Y in all" (with the judge's
// and the superseded runs' part and the unpriced trials), and the time.
std::string spend_line(const RunResult& result);

// Appends this session to DIR/spend.json and rewrites its totals.
void record_spend(const std::filesystem::path& dir, const RunResult& result, const ExperimentSpec& spec,
                  const std::string& started);

}  // namespace okfbench::engine
