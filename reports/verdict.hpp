#pragma once
// The verdict (PairedVerdict): what a configuration costs against a baseline configuration,
// for what answer, measured on the same questions and repeats of one bundle
// and question set. One computation, which the headline on stdout,
// report.md, report.html, report.json and `okfbench compare RUN --baseline A
// --candidate B` all print.
//
// Pairing: a candidate trial and a baseline trial pair when they share the
// question id and the repeat index and both finished; every other trial of
// the two (failed, or without a partner) is left out and counted in
// `unpaired`.
//
// Over the pairs:
//   input tokens, cost   ratio of sums, candidate / baseline, with a 95%
//                        percentile bootstrap interval that resamples
//                        questions with replacement (each question carries its
//                        repeats), B = 2000 resamples, seed 42
//                        (reports/statistics.hpp paired_question_bootstrap);
//                        cost over the pairs whose cost is known on both sides
//   share correct        (facts grader) over the pairs graded on both sides:
//                        the difference of shares and the exact McNemar test
//                        on the discordant pairs (repeats count as pairs)
//   answer score         (facts score) the difference of means over the same
//                        pairs, its question-bootstrap interval and the paired
//                        sign-flip test on per-question sums of differences
//                        (exact when 2^questions <= 10,000, else 10,000 random
//                        flips, seed 42)
//   evidence recall      the difference of means over the pairs, its
//                        question-bootstrap interval and the same sign-flip
//                        test
// Wording: a difference whose test gives p >= 0.05 (a ratio: whose interval
// holds 1) is "no measurable difference", never better or worse; a
// measurable one is "higher" or "lower". A bundle without answer facts has no share correct and no
// answer score, and the verdict says so instead.
//
// The baseline of a bundle and question set: the one the caller names (the
// spec's `baseline:`, by full label or short name) when it ran there;
// otherwise, for each candidate, the context configuration with the
// candidate's model that reads the fewest input tokens per question (ties:
// the smaller label). `baseline_reason` says which rule chose it.
#include <cstdint>
#include <map>
#include <string_view>
#include <optional>
#include <string>
#include <vector>

#include "reports/pricing.hpp"
#include "reports/record.hpp"
#include "reports/summary.hpp"

namespace okfbench::reports {

struct VerdictOptions {
  std::size_t bootstrap_resamples = 2'000;
  std::size_t permutations = 10'000;
  std::uint64_t seed = 42;
  double significance = 0.05;
};

// candidate / baseline; nullopt parts when unknown.
struct RatioVerdict {
  int pairs = 0;  // pairs with the value known on both sides
  std::optional<double> ratio, low, high;
  bool measurable() const { return ratio && low && high && (*high < 1.0 || *low > 1.0); }
};

// candidate - baseline.
struct DifferenceVerdict {
  int pairs = 0;
  std::optional<double> baseline, candidate;  // means (or shares) over the pairs
  std::optional<double> difference, low, high, p_value;
  bool significant = false;  // p < significance, or (without a test) the interval excludes 0
};

struct CorrectVerdict {
  int pairs = 0;  // graded on both sides
  int baseline_only = 0;
  int candidate_only = 0;
  std::optional<double> baseline, candidate, difference, p_value;  // shares, difference, McNemar
  bool significant = false;
};

struct PairedVerdict {
  std::string bundle;
  std::int64_t concept_count = 0;
  std::string question_set;
  std::string baseline_label;
  std::string candidate_label;
  std::string baseline_reason;  // e.g. "the spec's baseline", "cheapest context configuration by input tokens"
  int pairs = 0;                // finished trial pairs
  int questions = 0;            // distinct questions among them
  int unpaired = 0;             // trials of either side left out
  RatioVerdict input_tokens;
  RatioVerdict cost;
  CorrectVerdict correct;
  DifferenceVerdict score;
  DifferenceVerdict recall;
  bool answer_facts = false;  // some pair was graded by facts on both sides
};

// One configuration against another inside one set of records (same bundle
// and question set). Labels are full labels.
PairedVerdict verdict_between(const std::vector<TrialRecord>& records, const PricingTable& pricing,
                        const std::string& bundle, const std::string& question_set, const std::string& baseline_label,
                        const std::string& candidate_label, const VerdictOptions& options = {});

// Every agent configuration of the run against its baseline, in summary row
// order.
std::vector<PairedVerdict> run_verdicts(const std::vector<TrialRecord>& records, const Summary& summary,
                                  const PricingTable& pricing, const VerdictOptions& options = {});

// The full label of the configuration `name` names in `summary` (a label or
// a short name); throws UsageError naming `flag` and the names available.
std::string resolve_configuration(const Summary& summary, const std::string& name, std::string_view flag);

// `candidate` against `baseline` (full labels) on every bundle and question
// set where both ran, the reason "named by --baseline".
std::vector<PairedVerdict> verdicts_between(const std::vector<TrialRecord>& records, const Summary& summary,
                                      const PricingTable& pricing, const std::string& baseline,
                                      const std::string& candidate, const VerdictOptions& options = {});

// One line a verdict, e.g.
//   demo: agent search+open against one-shot (cheapest context configuration
//   by input tokens), 12 questions, 12 pairs: input 0.93x [0.90, 0.96],
//   cost 0.84x [0.80, 0.88]; correct 75.0% against 91.7%: no measurable
//   difference (McNemar p = 0.50); answer score 0.861 against 0.972: no
//   measurable difference (sign-flip p = 0.25); evidence recall 0.486
//   against 0.958: -0.472 [-0.60, -0.35], lower.
// `names` maps labels to short names (falls back to the label).
std::string verdict_line(const PairedVerdict& verdict, const std::map<std::string, std::string>& names);

inline constexpr std::string_view kVerdictHowToRead =
    "Each line: the configuration against its baseline on the same questions and repeats (pairs). Ratios are "
    "candidate / baseline sums with a 95% interval from a paired bootstrap over questions (2,000 resamples, seed 42); "
    "correct: exact McNemar test; answer score and evidence recall: paired sign-flip test. \"No measurable "
    "difference\": p >= 0.05, or a ratio's interval holds 1.";

// "## Verdict" section for report.md and stdout: one line a verdict as a list
// and what the figures mean; empty when there is no verdict.
std::string verdict_markdown(const std::vector<PairedVerdict>& verdicts, const std::map<std::string, std::string>& names);

// What `okfbench run` and `report` print: the verdict section, then the
// headline table.
std::string headline_with_verdict(const std::vector<TrialRecord>& records, const Summary& summary,
                                  const PricingTable& pricing);

}  // namespace okfbench::reports
