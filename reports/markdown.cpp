// Markdown report for pull requests.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <vector>
#include <set>
#include <string_view>
#include <utility>

#include "reports/forecast.hpp"
#include "reports/format.hpp"
#include "reports/pareto.hpp"
#include "reports/spend.hpp"
#include "reports/verdict.hpp"
#include "reports/writers.hpp"

namespace okfbench::reports {

std::vector<FrontPoint> cost_quality_points(const Summary& summary, const std::string& bundle,
                                            const std::string& question_set, std::string_view quality) {
  std::vector<FrontPoint> points;
  std::vector<CostQuality> xy;
  for (const auto& row : summary.rows) {
    if (row.bundle != bundle || row.question_set != question_set) continue;
    const std::optional<double> q = row_metric(row, quality);
    if (!row.cost.mean || !q) continue;
    points.push_back({&row, *row.cost.mean, *q, false});
    xy.push_back({*row.cost.mean, *q});
  }
  for (std::size_t i : pareto_front(xy)) points[i].on_front = true;
  return points;
}

namespace {

// Every text from a record, manifest or spec is escaped (reports/format.hpp).
std::string md(std::string_view text) { return markdown_text(text); }

std::vector<std::string> md_all(const std::vector<std::string>& texts) {
  std::vector<std::string> out;
  for (const auto& t : texts) out.push_back(md(t));
  return out;
}

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
  for (const auto& e : m.models) models.push_back(md(e.endpoint.empty() ? e.model : e.model + " @ " + e.endpoint));
  return fmt::format(
      "- date: {}\n- host: {}\n- git: {}\n- build: {}\n- spec: {} (hash {})\n- models: {}\n- cache models: {}\n"
      "- seeds: {}\n- okfbench {} (record schema {})\n",
      md(m.date), md(m.host), md(m.git_sha), md(m.build_type), md(m.spec_path), md(m.spec_hash), fmt::join(models, ", "),
      fmt::join(md_all(m.cache_models), ", "), fmt::join(m.seeds, ", "), m.okfbench_version, m.schema_version);
}

std::string per_turn_section(const Summary& s) {
  std::string out;
  for (const auto& row : s.rows) {
    if (!agentic(row.config.kind) || row.per_turn.empty()) continue;
    out += fmt::format("**{}** on {} ({})\n\n", md(row.label), md(row.bundle), md(row.question_set));
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
    for (const auto& [tool, bytes] : row.tool_bytes_by_tool) parts.push_back(md(tool) + " " + format_count(bytes));
    out += fmt::format("| {} | {} | {} |\n", md(row.bundle), md(row.label), fmt::join(parts, ", "));
  }
  if (out.empty()) return out;
  return "## Tool result bytes by tool (mean per trial)\n\n| bundle | path | bytes by tool |\n|---|---|---|\n" + out +
         "\n";
}

std::string front_section(const Summary& s, std::string_view quality, std::string_view title) {
  std::string out;
  for (const auto& [bundle, qs] : groups_of(s)) {
    auto points = cost_quality_points(s, bundle, qs, quality);
    if (points.empty()) continue;
    out += fmt::format("**{}** ({})\n\n| path | cost | {} | Pareto front |\n|---|--:|--:|:-:|\n", md(bundle), md(qs), title);
    for (const auto& p : points) {
      out += fmt::format("| {} | {} | {:.3f} | {} |\n", md(p.row->label), format_dollars(p.cost), p.quality,
                         p.on_front ? "yes" : "");
    }
    out += "\n";
  }
  return out.empty() ? out : fmt::format("## Cost against {}\n\n", title) + out;
}

// Shares of a row's spend by origin group, the biggest first; a group of
// several origins (pack) lists nothing more, tool origins name their tool.
std::string spend_cells(const SummaryRow& row) {
  std::vector<std::string> cells;
  for (const auto& s : spend_shares(row.spend_by_origin)) cells.push_back(fmt::format("{} {}", md(s.group), format_share(s.share)));
  return fmt::format("{}", fmt::join(cells, ", "));
}

std::string spend_section(const Summary& s) {
  std::string out;
  for (const auto& row : s.rows) {
    if (row.spend_attributed_trials == 0) continue;
    out += fmt::format("| {} | {} | {} | {:+} | {} |\n", md(row.bundle), md(row.label), row.spend_attributed_trials,
                       row.attribution_difference, spend_cells(row));
  }
  if (out.empty()) return out;
  return "## Share of spend by origin\n\nEach call's dollars split by where its tokens came from (tools = the tool "
         "schemas, question, pack = the packed blocks, history = earlier replies and tool results sent again, new = "
         "tool results sent the first time, framing, output), summed over the configuration's finished trials. \"provider - okfbench\" is the "
         "provider's input tokens minus okfbench's count of the same requests (0 for sim).\n\n"
         "| bundle | path | trials | provider - okfbench | share of spend |\n|---|---|--:|--:|---|\n" +
         out + "\n";
}

std::string measures_section(const Summary& s) {
  std::set<std::string> names;
  for (const auto& row : s.rows) {
    for (const auto& [name, value] : row.measures) names.insert(name);
  }
  if (names.empty()) return "";
  std::string out = fmt::format("## Ranking measures (mean per question)\n\n| bundle | question set | path | {} |\n|---|---|---|",
                                fmt::join(md_all({names.begin(), names.end()}), " | "));
  for (std::size_t i = 0; i < names.size(); ++i) out += "--:|";
  out += "\n";
  for (const auto& row : s.rows) {
    if (row.measures.empty()) continue;
    out += fmt::format("| {} | {} | {} |", md(row.bundle), md(row.question_set), md(row.label));
    for (const auto& name : names) {
      auto it = row.measures.find(name);
      out += fmt::format(" {} |", it == row.measures.end() ? std::string("n/a") : format_mean_decimal(it->second, 4));
    }
    out += "\n";
  }
  return out + "\n";
}

std::string score_text(const GraderStats& g) {
  return g.mean_score ? format_decimal(*g.mean_score, 3) : "n/a";
}

// Grader names in registry order (facts, citations, answered, judge), then any other.
std::vector<std::string> grader_order(const SummaryRow& row) {
  std::vector<std::string> names;
  for (const auto& name : grader_names()) {
    if (row.grades.count(name)) names.push_back(name);
  }
  for (const auto& [name, g] : row.grades) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return names;
}

std::string graders_section(const Summary& s) {
  std::string out;
  for (const auto& row : s.rows) {
    for (const auto& name : grader_order(row)) {
      const GraderStats& g = row.grades.at(name);
      out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", md(row.bundle), md(row.label), md(name), g.graded,
                         g.not_graded, g.judge_errors, score_text(g),
                         g.share_correct ? fmt::format("{} ({})", g.correct, format_share(g.share_correct)) : "n/a");
    }
  }
  if (out.empty()) return out;
  out = "## Answers by grader\n\nScores are means over the trials each grader graded; a question without "
        "answer_facts is not graded by facts.\n\n| bundle | path | grader | graded | not graded | judge errors | "
        "mean score | correct |\n|---|---|---|--:|--:|--:|--:|--:|\n" + out + "\n";
  return out;
}

std::string judge_section(const Summary& s) {
  std::string out;
  for (const auto& row : s.rows) {
    const JudgeTotals& j = row.judge;
    if (j.trials == 0) continue;
    const std::string tokens = j.input_tokens && j.output_tokens
                                   ? fmt::format("{} / {}", format_count(static_cast<double>(*j.input_tokens)),
                                                 format_count(static_cast<double>(*j.output_tokens)))
                                   : "n/a";
    const std::string agree =
        row.judge_facts.pairs == 0
            ? "n/a"
            : fmt::format("{} of {} pairs, kappa {}", format_share(row.judge_facts.share), row.judge_facts.pairs,
                          row.judge_facts.kappa ? format_decimal(*row.judge_facts.kappa, 3) : "n/a");
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", md(row.bundle), md(row.label), md(j.model), j.calls,
                       j.cache_hits, tokens, j.dollars ? format_dollars(*j.dollars) : "n/a", agree);
  }
  if (out.empty()) return out;
  std::string head =
      "## The judge\n\nWhat the judge spent, apart from (never added to) the cost of the paths it judged; calls "
      "answered by the response cache are not charged. Agreement: share of trials where judge and facts agree on "
      "correct, and Cohen's kappa.";
  if (!s.judge_note.empty()) head += " Note: " + s.judge_note + ".";  // okfbench's own words
  return head + "\n\n| bundle | path | judge | calls | from cache | input / output tokens | judge cost | agreement "
                "with facts |\n|---|---|---|--:|--:|--:|--:|---|\n" + out + "\n";
}

std::string repeats_section(const Summary& s) {
  std::string table, flaky;
  for (const auto& row : s.rows) {
    if (row.repeats < 2 || row.pass_rates.empty()) continue;
    int always = 0, never = 0, unstable = 0;
    for (const auto& q : row.pass_rates) {
      if (q.flaky()) {
        ++unstable;
        std::vector<std::string> scores;
        for (double v : q.scores) scores.push_back(format_decimal(v, 2));
        flaky += fmt::format("| {} | {} | {} | {}/{} ({}) | {} | {} |\n", md(row.bundle), md(row.label), md(q.question_id),
                             q.correct, q.repeats, format_share(q.pass_rate),
                             q.score_sd ? format_decimal(*q.score_sd, 3) : "n/a", fmt::join(scores, ", "));
      } else if (q.correct == 0) {
        ++never;
      } else {
        ++always;
      }
    }
    table += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", md(row.bundle), md(row.label), row.repeats,
                         row.pass_rates.size(), always, never, unstable);
  }
  if (table.empty()) return table;
  std::string out = std::string("## Pass rate across repeats (") + kAnswerGrader +
                    ")\n\n| bundle | path | repeats | questions | always correct | never correct | flaky |\n"
                    "|---|---|--:|--:|--:|--:|--:|\n" + table + "\n";
  if (flaky.empty()) return out + "No flaky questions: each question was correct in every repeat or in none.\n\n";
  return out + "Flaky questions (pass rate strictly between 0 and 1):\n\n| bundle | path | question | pass rate | "
               "score sd | scores by repeat |\n|---|---|---|--:|--:|---|\n" + flaky + "\n";
}

std::string failures_section(const std::vector<TrialRecord>& records) {
  constexpr int kShown = 20;
  std::string out;
  int failed = 0;
  for (const auto& r : records) {
    if (r.error.empty()) continue;
    if (++failed <= kShown) {
      out += fmt::format("- {} / {} / {}: {}\n", md(r.bundle), md(r.question_id), md(r.config.label()), md(r.error));
    }
  }
  if (failed == 0) return "";
  if (failed > kShown) out += fmt::format("- ... and {} more\n", failed - kShown);
  return fmt::format("## Failed trials ({})\n\n", failed) + out + "\n";
}

}  // namespace

std::string markdown_report(const RunManifest& manifest, const Summary& summary,
                            const std::vector<TrialRecord>& records, const PricingTable& pricing) {
  std::string out = "# okfbench report\n\n" + context_lines(manifest) + "\n" +
                    verdict_markdown(run_verdicts(records, summary, pricing), summary.names) + "## Headline\n\n" +
                    headline_markdown(summary) + "\n";
  out += forecast_markdown(check_forecast(manifest, records, pricing));
  out += per_turn_section(summary);
  out += tool_bytes_section(summary);
  out += spend_section(summary);
  out += front_section(summary, "evidence_recall", "evidence recall");
  out += front_section(summary, kAnswerGrader, "answer score");
  out += graders_section(summary);
  out += judge_section(summary);
  out += repeats_section(summary);
  out += measures_section(summary);
  out += failures_section(records);
  return out;
}

}  // namespace okfbench::reports
