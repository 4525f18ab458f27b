#pragma once
// The HTML report: one self-contained file (chart libraries and data inlined,
// nothing fetched) with the run's context, the headline table and Vega-Lite
// charts:
//   turns       per-turn input of agent paths split into new, re-sent and cached tokens
//   size        input tokens against bundle size (log scale), one line per path
//   front       cost against evidence recall per configuration, Pareto front marked
//   answers     answer score (facts) against cost per configuration, Pareto front marked
//   tools       tool-result bytes by tool
//   measures    ranking measures per question set
// A chart whose data is empty is replaced by a sentence saying so.
//
// When every chart has rendered the page sets data-charts-rendered="N" on
// <body>; script errors and console errors are listed in
// <pre id="okfbench-errors">. Tests (and people) check those two.
#include <string>
#include <vector>

#include "reports/record.hpp"
#include "reports/summary.hpp"

namespace okfbench::reports {

std::string html_report(const RunManifest& manifest, const Summary& summary, const std::vector<TrialRecord>& records);

// The ids of the charts html_report() draws for this summary, in page order.
std::vector<std::string> html_chart_ids(const Summary& summary);

}  // namespace okfbench::reports
