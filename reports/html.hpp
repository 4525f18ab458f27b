#pragma once
// The HTML report, the run's explorer: one self-contained file (chart
// libraries, script and data inlined, nothing fetched) that opens with
//   - the verdict lines per bundle (verdict.hpp) and the cost-against-quality
//     chart (answers, else front) with a colour and a shape per configuration,
//   - the mission's answer in sentences per bundle (headline_sentences.hpp),
//   - the headline table with short configuration names (config_names.hpp;
//     the full settings on hover and in a legend),
//   - the trial table: sortable, filtered by bundle, path, configuration,
//     facts grade and error, searched by question, answer and error text; a
//     click opens the trial's conversation from its transcript (system prompt,
//     tool definitions, every message, each tool call with its whole result,
//     the replies) beside per-turn bars of new, re-sent and cached input, with
//     the attribution, answer, grades and timings, decoded from its
//     compressed chunk only then (explorer.hpp, web/explorer.js); a trial
//     whose transcript was not kept says so,
// then Vega-Lite charts:
//   turns       per-turn input of agent paths split into new, re-sent and cached tokens
//   size        input tokens against bundle size (log scale), one line per path
//   front       cost against evidence recall per configuration, Pareto front marked
//   answers     answer score (facts) against cost per configuration, Pareto front marked
//   tools       tool-result bytes by tool
//   measures    ranking measures per question set
// A chart whose data is empty is replaced by a sentence saying so. Wide
// tables and charts scroll inside their own box, so the page itself does not
// scroll sideways at 1,280 px.
//
// When every chart has rendered the page sets data-charts-rendered="N" on
// <body>, and when the trial table is filled data-explorer-ready="TRIALS";
// script errors and console errors are listed in <pre id="okfbench-errors">.
// Tests (and people) check those.
#include <string>
#include <vector>

#include "reports/pricing.hpp"
#include "reports/record.hpp"
#include "reports/summary.hpp"
#include "reports/transcript.hpp"

namespace okfbench::reports {

// `pricing` prices each trial of the trial table (the summary's rows are priced already).
// `transcripts` (null when the run kept none) gives each trial's conversation.
std::string html_report(const RunManifest& manifest, const Summary& summary, const std::vector<TrialRecord>& records,
                        const TranscriptSet* transcripts, const PricingTable& pricing);

// The ids of the charts html_report() draws for this summary, in page order.
std::vector<std::string> html_chart_ids(const Summary& summary);

}  // namespace okfbench::reports
