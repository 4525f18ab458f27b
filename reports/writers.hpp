#pragma once
// Report writers. Each turns a run's summary (and, where it needs them, the
// records) into one text format; all of them are rebuilt from stored results
// by `okfbench report`, so none may depend on anything but their arguments.
#include <string>
#include <string_view>
#include <vector>

#include "reports/compare.hpp"
#include "reports/pricing.hpp"
#include "reports/record.hpp"
#include "reports/summary.hpp"
#include "reports/verdict.hpp"

namespace okfbench::reports {

// Markdown for a pull-request comment: run context, the headline table, the
// forecast against actual (when the manifest has a forecast), then
// per-dimension tables (tokens per turn, tool bytes by tool, cost against
// evidence recall with the Pareto front, ranking measures, failed trials).
// `pricing` prices the actual side of the forecast, as the summary was priced.
std::string markdown_report(const RunManifest& manifest, const Summary& summary,
                            const std::vector<TrialRecord>& records, const PricingTable& pricing);

// The summary as JSON: {"schema_version", "report": "okfbench-summary",
// "manifest", "pricing_note", "rows": [...], "verdicts": [...]} with unknown
// values as null; `verdicts` as run_verdicts() computes them (verdict.hpp).
std::string json_report(const RunManifest& manifest, const Summary& summary, const std::vector<PairedVerdict>& verdicts = {});

// One line per summary row (RFC 4180 quoting, header line first).
std::string summary_csv(const Summary& summary);
// One line per trial with its configuration and metric values, for
// spreadsheets and notebooks; unknown values are empty cells.
std::string trials_csv(const std::vector<TrialRecord>& records, const PricingTable& pricing);

// JUnit XML. For a run: one test case per configuration, failing when any of
// its trials failed. For a comparison: one test case per threshold check.
std::string junit_for_run(const Summary& summary, const std::vector<TrialRecord>& records);
std::string junit_for_comparison(const Comparison& comparison);

// Cost-against-quality points of one bundle and question set, with whether
// each is on the Pareto front; `quality` is a row metric (summary.hpp
// row_metric: "evidence_recall", "facts", ...), and rows without a known cost
// or quality are left out. Shared by the Markdown and HTML writers.
struct FrontPoint {
  const SummaryRow* row = nullptr;
  double cost = 0.0;
  double quality = 0.0;
  bool on_front = false;
};
std::vector<FrontPoint> cost_quality_points(const Summary& summary, const std::string& bundle,
                                            const std::string& question_set, std::string_view quality);
inline std::vector<FrontPoint> cost_recall_points(const Summary& summary, const std::string& bundle,
                                                  const std::string& question_set) {
  return cost_quality_points(summary, bundle, question_set, "evidence_recall");
}

}  // namespace okfbench::reports
