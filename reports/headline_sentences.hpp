#pragma once
// The mission's question, answered in words: for each bundle (and question
// set) of a run, what the agent costs against the one-shot context pack, from
// the summary's own numbers. The explorer (report.html) opens with these.
//
// For a bundle with a one-shot row (the one agent rows' ratios use) and agent
// rows, one sentence:
//   On 10,000 concepts (gen-10000), agent 6 tools reads 2.6x the input tokens
//   of one-shot per question and costs 1.6x ($0.002085 against $0.001264),
//   with 75.0% correct against 75.0%; agent search+open reads 1.3x and costs
//   1.2x ($0.001573), with 75.0% correct.
// A part whose numbers are unknown is left out (no cost without prices, no
// share correct without facts grades). A bundle with only one path says so.
// Configurations are named by `names` (short_config_names), falling back to
// the label.
#include <map>
#include <string>
#include <vector>

#include "reports/summary.hpp"

namespace okfbench::reports {

std::vector<std::string> headline_sentences(const Summary& summary, const std::map<std::string, std::string>& names);

}  // namespace okfbench::reports
