#pragma once
// Aggregation of trial records into one row per (bundle, question set, path
// configuration): the headline table that `okfbench run` prints and every
// writer starts from.
//
// Per trial:
//   input tokens   sum of turn input_tokens (a context trial without model
//                  calls counts its pack, context_tokens)
//   model calls    number of turns
//   resent tokens  sum over turns of input minus new input
//                  (reports/trial_metrics.hpp, where every per-trial metric
//                  is defined); the row's resent share is
//                  sum(resent) / sum(input)
//   tool bytes     sum of tool-call result bytes
// Rows report means over trials whose value is known, and how many trials
// had the value unknown (a provider that did not report it). Trials with an
// error are counted in `errors` and left out of every mean.
// The baseline ratios of an agent row divide its means (input tokens, cost,
// cost per correct answer) by those of its baseline row: the configuration
// the caller names (the spec's `baseline:`, by label or short name) when it
// ran in the same bundle and question set, else the context row of the same
// bundle, question set and model with the fewest mean input tokens (ties:
// the smaller label). reports/verdict.hpp measures the same pair with
// intervals.
//
// Answers (reports/graders.hpp), over a row's finished trials:
//   per grader     trials graded, not graded and judge errors, mean score and
//                  share correct over the graded ones (a question without
//                  answer_facts is not graded by facts and counts in neither)
//   answer score   the facts grader's mean score; share correct likewise
//   cost per correct answer
//                  sum of the cost of the trials facts graded / how many of
//                  them facts judged correct (unknown when any of their costs
//                  is unknown or none was correct)
//   cost per correct x baseline
//                  an agent row's cost per correct answer / that of its
//                  baseline row
//   pass rates     per question: correct / graded over its repeats, and the
//                  sample standard deviation of the facts score across them;
//                  a question is flaky when 0 < pass rate < 1
//   judge          calls, cache hits, tokens and dollars of the judge, kept
//                  apart from the row's cost; agreement of judge and facts
// Grader metrics for compare and tune: "facts", "citations", "answered",
// "judge" (a trial's score) and "facts_correct", ... (1 when correct, 0 not).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reports/graders.hpp"
#include "reports/pricing.hpp"
#include "reports/record.hpp"
#include "reports/trial_metrics.hpp"

namespace okfbench::reports {

struct MeanValue {
  std::optional<double> mean;
  int known = 0;    // trials that had the value
  int unknown = 0;  // trials (without error) that did not
};

// Mean tokens of turn `index` across a row's trials, split so the three
// parts sum to the turn's input: cached, re-sent but not cached, new (new
// input as reports/trial_metrics.hpp defines it); an unknown cached count
// counts as re-sent, not cached.
struct TurnSplit {
  int turn = 0;  // 1-based
  double new_tokens = 0;
  double resent_uncached_tokens = 0;
  double cached_tokens = 0;
  int trials = 0;  // trials that reached this turn with a known input count
};

// One trial's turns split the same way (trials = 1 each); nullopt for a turn
// whose new part is unknown (its input, or the previous turn's, unreported).
std::vector<std::optional<TurnSplit>> trial_turn_splits(const TrialRecord& record);

// The grader whose grades fill the headline's answer columns.
inline constexpr const char* kAnswerGrader = "facts";

struct GraderStats {
  int graded = 0;
  int not_graded = 0;
  int judge_errors = 0;
  int correct = 0;
  std::optional<double> mean_score;     // over graded trials
  std::optional<double> share_correct;  // correct / graded
};

struct QuestionPassRate {
  std::string question_id;
  int repeats = 0;  // finished trials the answer grader graded
  int correct = 0;
  double pass_rate = 0.0;
  std::optional<double> score_sd;  // with 2+ repeats
  std::vector<double> scores;      // in repeat order
  bool flaky() const { return correct > 0 && correct < repeats; }
};

// The judge's spend over a row's trials; never part of the row's cost.
struct JudgeTotals {
  int trials = 0;  // trials with judge usage
  int calls = 0;
  int cache_hits = 0;
  std::optional<std::int64_t> input_tokens;
  std::optional<std::int64_t> output_tokens;
  std::optional<double> dollars;  // unknown when a judge model has no price or a count is unknown
  std::string model;
};

struct SummaryRow {
  std::string bundle;
  std::int64_t concept_count = 0;
  std::string question_set;
  PathConfig config;  // repeat index 0
  std::string label;  // config.label()
  int trials = 0;
  int errors = 0;
  MeanValue input_tokens;
  MeanValue new_input_tokens;
  MeanValue model_calls;
  MeanValue resent_tokens;
  std::optional<double> resent_share;
  MeanValue cached_tokens;
  MeanValue output_tokens;
  MeanValue tool_calls;
  MeanValue tool_bytes;
  MeanValue evidence_recall;
  MeanValue cost;
  MeanValue schema_share;  // mean over trials with an attribution
  int cost_cache_unknown_turns = 0;  // turns priced as if nothing was cached
  std::string baseline_label;             // agent rows: the row the ratios divide by; "" when none
  std::string baseline_reason;            // why that row (BaselineChoice::reason)
  std::optional<double> one_shot_ratio;   // agent rows: input tokens / the baseline row's
  std::optional<double> cost_ratio;       // agent rows: mean cost / the baseline row's
  std::map<std::string, double> tool_bytes_by_tool;  // mean bytes per trial, per tool
  // Dollars by input origin and "output" (reports/spend.hpp), summed over the
  // finished trials that carry an attribution; how many did.
  std::map<std::string, double> spend_by_origin;
  int spend_attributed_trials = 0;
  // Over those trials: the provider's input tokens minus okfbench's count of
  // the same requests (reports/spend.hpp attribution_difference; 0 for sim).
  std::int64_t attribution_difference = 0;
  std::map<std::string, MeanValue> measures;         // stored measures, by name
  std::vector<TurnSplit> per_turn;
  std::map<std::string, GraderStats> grades;  // by grader name
  std::optional<double> cost_per_correct;     // by kAnswerGrader
  std::optional<double> equal_quality_ratio;  // agent rows: cost per correct / the baseline row's
  std::vector<QuestionPassRate> pass_rates;   // by question id, by kAnswerGrader
  JudgeTotals judge;
  Agreement judge_facts;  // where judge and facts both graded
  int repeats = 1;        // most trials of one question in this row
};

struct Summary {
  std::vector<SummaryRow> rows;  // by concept count, bundle, question set, kind (context first), label
  std::string priced_as_note;    // e.g. "sim priced as gpt-4.1-mini"; empty when no alias was used
  std::string judge_note;        // kSimJudgeNote when the sim judge graded any trial, else empty
  std::string named_baseline;    // the baseline the caller named ("" for none)
  std::map<std::string, std::string> names;  // short names by label (reports/config_names.hpp)
};

// `baseline` names the baseline configuration (a label or short name), ""
// for the default rule above.
Summary summarize(const std::vector<TrialRecord>& records, const PricingTable& pricing,
                  const std::string& baseline = "");

// The baseline row for an agent row and why it was chosen; row nullptr when
// `row` is no agent row or its group has no baseline for it.
struct BaselineChoice {
  const SummaryRow* row = nullptr;
  std::string reason;  // "the spec's baseline", "cheapest context configuration by input tokens", ...
};
BaselineChoice choose_baseline(const Summary& summary, const SummaryRow& row);

// choose_baseline(summary, row).row.
const SummaryRow* one_shot_row(const Summary& summary, const SummaryRow& row);

// Whether `row` is the configuration `name` names: its label or short name.
bool row_named(const Summary& summary, const SummaryRow& row, const std::string& name);

// Per grader over `records` (finished trials): counts, mean score and share
// correct of the graded ones. Used for rows and by `okfbench grade`.
std::map<std::string, GraderStats> grader_stats(const std::vector<const TrialRecord*>& records);
// The judge's spend over `records`, priced with the judge model's row.
JudgeTotals judge_totals(const std::vector<const TrialRecord*>& records, const PricingTable& pricing);

// grader_stats and judge_totals a record at a time, for a caller that
// cannot hold every record (`okfbench grade` over a long answers file): the
// same figures as the functions over the records added.
class GradeTally {
 public:
  explicit GradeTally(const PricingTable& pricing) : pricing_(pricing) {}
  void add(const TrialRecord& record);
  std::map<std::string, GraderStats> grader_stats() const;
  JudgeTotals judge_totals() const;

 private:
  const PricingTable& pricing_;
  std::map<std::string, GraderStats> stats_;
  std::map<std::string, double> score_sums_;
  JudgeTotals judge_;
};

// A row's mean of a built-in metric or stored measure by name; nullopt when
// unknown or when the row has no such metric.
std::optional<double> row_metric(const SummaryRow& row, std::string_view metric);

// The headline table as GitHub Markdown (columns: bundle, concepts, path,
// input tokens, model calls, resent, cached, tool bytes, evidence recall,
// cost, input x baseline, cost x baseline, answer score, correct, cost per
// correct, cost per correct x baseline), a caption naming each bundle's
// baseline, then the pricing and judge notes when there are any.
std::string headline_markdown(const Summary& summary);

// The headline's column names and one row's cells as text, shared by the
// Markdown and HTML writers so both show the same values.
const std::vector<std::string>& headline_columns();
std::vector<std::string> headline_cells(const SummaryRow& row);
// Per bundle (and question set) with agent rows, what the "× baseline"
// columns divide by: "demo: one-shot (cheapest context configuration by
// input tokens)", short names; several baselines (one per model) joined by
// "; ". baseline_caption_markdown is the line above the headline table.
std::vector<std::string> baseline_captions(const Summary& summary);
std::string baseline_caption_markdown(const Summary& summary);
// The Markdown lines under the headline: the pricing alias, the sim judge
// note and turns without cache counts, each when it applies.
std::string headline_notes(const Summary& summary);

}  // namespace okfbench::reports
