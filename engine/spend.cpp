#include "engine/spend.hpp"

#include <fmt/format.h>

#include <exception>
#include <nlohmann/json.hpp>

#include "engine/run_common.hpp"
#include "core/files.hpp"
#include "core/json_text.hpp"

namespace okfbench::engine {
namespace {

using nlohmann::json;

std::string dollars(double usd) { return fmt::format("${:.6f}", json_dollars(usd)); }

// The sessions already recorded; none when the file is missing or unusable.
json recorded_sessions(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return json::array();
  try {
    json j = json::parse(read_file(file, "cannot read the spend record"));
    if (j.is_object() && j.contains("sessions") && j["sessions"].is_array()) return j["sessions"];
    log_line(fmt::format("warning: {} has no sessions list; it is rewritten with this session only", file.string()));
  } catch (const std::exception& e) {
    log_line(fmt::format("warning: {} is not a spend record ({}); it is rewritten with this session only", file.string(),
                         e.what()));
  }
  return json::array();
}

}  // namespace

std::string spend_line(const RunResult& r) {
  std::string out = fmt::format("{} trials planned: {} run now ({} failed, {} of them run again), {} stored before; spent {} "
                                "this session, {} in all",
                                r.planned, r.ran, r.failed, r.retried, r.already_stored, dollars(r.session_usd),
                                dollars(r.spent_usd));
  if (r.superseded_usd > 0) out += fmt::format(" ({} of it on failed runs that were run again)", dollars(r.superseded_usd));
  if (r.unpriced > 0) out += fmt::format(" ({} trials without a price)", r.unpriced);
  if (r.judge_spent_usd > 0) {
    out += fmt::format(" and on the judge {} this session, {} in all", dollars(r.session_judge_usd), dollars(r.judge_spent_usd));
  }
  return out + fmt::format("; {:.1f} s", r.seconds);
}

void record_spend(const std::filesystem::path& dir, const RunResult& r, const ExperimentSpec& spec, const std::string& started) {
  const std::filesystem::path file = dir / "spend.json";
  json sessions = recorded_sessions(file);
  sessions.push_back({{"started", started},
                      {"trials_run", r.ran},
                      {"usd", json_dollars(r.session_usd)},
                      {"judge_usd", json_dollars(r.session_judge_usd)}});
  const json out{{"schema_version", 1},
                 {"sessions", sessions},
                 {"total_usd", json_dollars(r.spent_usd)},
                 {"superseded_usd", json_dollars(r.superseded_usd)},
                 {"judge_total_usd", json_dollars(r.judge_spent_usd)},
                 {"unpriced_trials", r.unpriced},
                 {"cost_cap_usd", spec.cost_cap_usd ? json(json_dollars(*spec.cost_cap_usd)) : json(nullptr)},
                 {"stopped_at_cost_cap", r.stopped_at_cost_cap}};
  write_atomically(file, json_text(out, 2) + "\n");
}

}  // namespace okfbench::engine
