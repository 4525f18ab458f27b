// Markdown report for pull requests.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>
#include <utility>

#include "reports/format.hpp"
#include "reports/pareto.hpp"
#include "reports/writers.hpp"

namespace okfbench::reports {

std::vector<FrontPoint> cost_recall_points(const Summary& summary, const std::string& bundle,
                                           const std::string& question_set) {
  std::vector<FrontPoint> points;
  std::vector<CostQuality> xy;
  for (const auto& row : summary.rows) {
    if (row.bundle != bundle || row.question_set != question_set) continue;
    if (!row.cost.mean || !row.evidence_recall.mean) continue;
    points.push_back({&row, *row.cost.mean, *row.evidence_recall.mean, false});
    xy.push_back({*row.cost.mean, *row.evidence_recall.mean});
  }
  for (std::size_t i : pareto_front(xy)) points[i].on_front = true;
  return points;
}

namespace {

using Group = std::pair<std::string, std::string>;  // bundle, question set

std::vector<Group> groups_of(const Summary& s) {
  std::vector<Group> groups;
  std::set<Group> seen;
  for (const auto& row : s.rows) {
    if (seen.insert({row.bundle, row.question_set}).second) groups.push_back({row.bundle, row.question_set});
  }
  return groups;
}

std::string context_lines(const RunManifest& m) {
  std::vector<std::string> models;
  for (const auto& e : m.models) models.push_back(e.endpoint.empty() ? e.model : e.model + " @ " + e.endpoint);
  return fmt::format(
      "- date: {}\n- host: {}\n- git: {}\n- build: {}\n- spec: {} (hash {})\n- models: {}\n- cache models: {}\n"
      "- seeds: {}\n- okfbench {} (record schema {})\n",
      m.date, m.host, m.git_sha, m.build_type, m.spec_path, m.spec_hash, fmt::join(models, ", "),
      fmt::join(m.cache_models, ", "), fmt::join(m.seeds, ", "), m.okfbench_version, m.schema_version);
}

std::string per_turn_section(const Summary& s) {
  std::string out;
  for (const auto& row : s.rows) {
    if (row.config.kind != PathKind::agent || row.per_turn.empty()) continue;
    out += fmt::format("**{}** on {} ({})\n\n", row.label, row.bundle, row.question_set);
    out += "| turn | trials | new | re-sent | cached | input |\n|--:|--:|--:|--:|--:|--:|\n";
    for (const auto& t : row.per_turn) {
      out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", t.turn, t.trials, format_count(t.new_tokens),
                         format_count(t.resent_uncached_tokens), format_count(t.cached_tokens),
                         format_count(t.new_tokens + t.resent_uncached_tokens + t.cached_tokens));
    }
    out += "\n";
  }
  return out.empty() ? out : "## Input tokens per turn (agent paths, mean per trial)\n\n" + out;
}

std::string tool_bytes_section(const Summary& s) {
  std::string out;
  for (const auto& row : s.rows) {
    if (row.tool_bytes_by_tool.empty()) continue;
    std::vector<std::string> parts;
    for (const auto& [tool, bytes] : row.tool_bytes_by_tool) parts.push_back(tool + " " + format_count(bytes));
    out += fmt::format("| {} | {} | {} |\n", row.bundle, row.label, fmt::join(parts, ", "));
  }
  if (out.empty()) return out;
  return "## Tool result bytes by tool (mean per trial)\n\n| bundle | path | bytes by tool |\n|---|---|---|\n" + out +
         "\n";
}

std::string front_section(const Summary& s) {
  std::string out;
  for (const auto& [bundle, qs] : groups_of(s)) {
    auto points = cost_recall_points(s, bundle, qs);
    if (points.empty()) continue;
    out += fmt::format("**{}** ({})\n\n| path | cost | evidence recall | Pareto front |\n|---|--:|--:|:-:|\n", bundle, qs);
    for (const auto& p : points) {
      out += fmt::format("| {} | {} | {:.3f} | {} |\n", p.row->label, format_dollars(p.cost), p.recall,
                         p.on_front ? "yes" : "");
    }
    out += "\n";
  }
  return out.empty() ? out : "## Cost against evidence recall\n\n" + out;
}

std::string measures_section(const Summary& s) {
  std::set<std::string> names;
  for (const auto& row : s.rows) {
    for (const auto& [name, value] : row.measures) names.insert(name);
  }
  if (names.empty()) return "";
  std::string out = fmt::format("## Ranking measures (mean per question)\n\n| bundle | question set | path | {} |\n|---|---|---|",
                                fmt::join(names, " | "));
  for (std::size_t i = 0; i < names.size(); ++i) out += "--:|";
  out += "\n";
  for (const auto& row : s.rows) {
    if (row.measures.empty()) continue;
    out += fmt::format("| {} | {} | {} |", row.bundle, row.question_set, row.label);
    for (const auto& name : names) {
      auto it = row.measures.find(name);
      out += fmt::format(" {} |", it == row.measures.end() ? std::string("n/a") : format_mean_decimal(it->second, 4));
    }
    out += "\n";
  }
  return out + "\n";
}

std::string failures_section(const std::vector<TrialRecord>& records) {
  constexpr int kShown = 20;
  std::string out;
  int failed = 0;
  for (const auto& r : records) {
    if (r.error.empty()) continue;
    if (++failed <= kShown) {
      out += fmt::format("- {} / {} / {}: {}\n", r.bundle, r.question_id, r.config.label(), r.error);
    }
  }
  if (failed == 0) return "";
  if (failed > kShown) out += fmt::format("- ... and {} more\n", failed - kShown);
  return fmt::format("## Failed trials ({})\n\n", failed) + out + "\n";
}

}  // namespace

std::string markdown_report(const RunManifest& manifest, const Summary& summary,
                            const std::vector<TrialRecord>& records) {
  std::string out = "# okfbench report\n\n" + context_lines(manifest) + "\n## Headline\n\n" +
                    headline_markdown(summary) + "\n";
  out += per_turn_section(summary);
  out += tool_bytes_section(summary);
  out += front_section(summary);
  out += measures_section(summary);
  out += failures_section(records);
  return out;
}

}  // namespace okfbench::reports
