#include "reports/verdict.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <utility>

#include "core/error.hpp"
#include "reports/format.hpp"
#include "reports/graders.hpp"
#include "reports/statistics.hpp"
#include "reports/trial_metrics.hpp"

namespace okfbench::reports {

namespace {

using PairKey = std::pair<std::string, int>;  // question id, repeat
using Pair = std::pair<const TrialRecord*, const TrialRecord*>;  // baseline, candidate

// Per question, the sums of one quantity over its pairs where both sides know it.
class QuestionTotals {
 public:
  void add(const std::string& question, std::optional<double> base, std::optional<double> cand) {
    if (!base || !cand) return;
    QuestionSums& q = sums_[question];
    q.base += *base;
    q.candidate += *cand;
    q.pairs += 1.0;
    ++pairs_;
  }
  int pairs() const { return pairs_; }
  std::vector<QuestionSums> questions() const {
    std::vector<QuestionSums> out;
    for (const auto& [id, q] : sums_) out.push_back(q);
    return out;
  }

 private:
  std::map<std::string, QuestionSums> sums_;  // by question id, so the bootstrap's order is fixed
  int pairs_ = 0;
};

RatioVerdict ratio_verdict(const QuestionTotals& totals, const VerdictOptions& options) {
  RatioVerdict v;
  v.pairs = totals.pairs();
  const auto questions = totals.questions();
  double base = 0.0;
  for (const auto& q : questions) base += q.base;
  if (questions.empty() || !(base > 0.0)) return v;
  const Interval ci = paired_question_bootstrap(questions, PairedStatistic::ratio_of_sums,
                                                {options.bootstrap_resamples, 0.95, options.seed});
  v.ratio = ci.estimate;
  v.low = ci.low;
  v.high = ci.high;
  return v;
}

// Difference of means with its question-bootstrap interval and the sign-flip
// test on per-question sums of differences.
DifferenceVerdict difference_verdict(const QuestionTotals& totals, const VerdictOptions& options) {
  DifferenceVerdict v;
  v.pairs = totals.pairs();
  const auto questions = totals.questions();
  if (questions.empty()) return v;
  double base = 0.0, cand = 0.0, pairs = 0.0;
  std::vector<double> base_sums, cand_sums;
  for (const auto& q : questions) {
    base += q.base;
    cand += q.candidate;
    pairs += q.pairs;
    base_sums.push_back(q.base);
    cand_sums.push_back(q.candidate);
  }
  v.baseline = base / pairs;
  v.candidate = cand / pairs;
  const Interval ci = paired_question_bootstrap(questions, PairedStatistic::difference_of_means,
                                                {options.bootstrap_resamples, 0.95, options.seed});
  v.difference = ci.estimate;
  v.low = ci.low;
  v.high = ci.high;
  v.p_value = paired_randomization_test(base_sums, cand_sums, {options.permutations, options.seed}).p_value;
  v.significant = *v.p_value < options.significance;
  return v;
}

const Grade* graded_facts(const TrialRecord& r) {
  const Grade* g = find_grade(r, "facts");
  return g && g->status == GradeStatus::graded && g->score ? g : nullptr;
}

CorrectVerdict correct_verdict(const std::vector<Pair>& pairs, const VerdictOptions& options) {
  CorrectVerdict v;
  int base_correct = 0, cand_correct = 0;
  for (const auto& [base, cand] : pairs) {
    const Grade* b = graded_facts(*base);
    const Grade* c = graded_facts(*cand);
    if (!b || !c) continue;
    ++v.pairs;
    base_correct += b->correct ? 1 : 0;
    cand_correct += c->correct ? 1 : 0;
    if (b->correct && !c->correct) ++v.baseline_only;
    if (c->correct && !b->correct) ++v.candidate_only;
  }
  if (v.pairs == 0) return v;
  v.baseline = static_cast<double>(base_correct) / v.pairs;
  v.candidate = static_cast<double>(cand_correct) / v.pairs;
  v.difference = *v.candidate - *v.baseline;
  v.p_value = mcnemar_exact(v.baseline_only, v.candidate_only).p_value;
  v.significant = *v.p_value < options.significance;
  return v;
}

std::map<PairKey, const TrialRecord*> trials_of(const std::vector<TrialRecord>& records, const std::string& bundle,
                                                const std::string& question_set, const std::string& label) {
  std::map<PairKey, const TrialRecord*> out;
  for (const auto& r : records) {
    if (r.bundle == bundle && r.question_set == question_set && r.config.label() == label) {
      out[{r.question_id, r.config.repeat}] = &r;
    }
  }
  return out;
}

}  // namespace

PairedVerdict verdict_between(const std::vector<TrialRecord>& records, const PricingTable& pricing, const std::string& bundle,
                        const std::string& question_set, const std::string& baseline_label,
                        const std::string& candidate_label, const VerdictOptions& options) {
  PairedVerdict v;
  v.bundle = bundle;
  v.question_set = question_set;
  v.baseline_label = baseline_label;
  v.candidate_label = candidate_label;
  const auto base = trials_of(records, bundle, question_set, baseline_label);
  const auto cand = trials_of(records, bundle, question_set, candidate_label);
  std::vector<Pair> pairs;
  for (const auto& [key, b] : base) {
    v.concept_count = b->concept_count;
    auto it = cand.find(key);
    const bool paired = it != cand.end() && b->error.empty() && it->second->error.empty();
    if (paired) pairs.push_back({b, it->second});
    else ++v.unpaired;
  }
  for (const auto& [key, c] : cand) {
    auto it = base.find(key);
    if (it == base.end() || !it->second->error.empty() || !c->error.empty()) ++v.unpaired;
  }
  v.pairs = static_cast<int>(pairs.size());
  QuestionTotals input, cost, score, recall;
  std::set<std::string> questions;
  for (const auto& [b, c] : pairs) {
    const std::string& q = b->question_id;
    questions.insert(q);
    input.add(q, trial_metric(*b, "input_tokens", pricing), trial_metric(*c, "input_tokens", pricing));
    cost.add(q, trial_metric(*b, "cost", pricing), trial_metric(*c, "cost", pricing));
    recall.add(q, b->evidence_recall, c->evidence_recall);
    const Grade* bg = graded_facts(*b);
    const Grade* cg = graded_facts(*c);
    if (bg && cg) score.add(q, bg->score, cg->score);
  }
  v.questions = static_cast<int>(questions.size());
  v.input_tokens = ratio_verdict(input, options);
  v.cost = ratio_verdict(cost, options);
  v.correct = correct_verdict(pairs, options);
  v.score = difference_verdict(score, options);
  v.recall = difference_verdict(recall, options);
  v.answer_facts = v.correct.pairs > 0;
  return v;
}

std::vector<PairedVerdict> run_verdicts(const std::vector<TrialRecord>& records, const Summary& summary,
                                  const PricingTable& pricing, const VerdictOptions& options) {
  std::vector<PairedVerdict> out;
  for (const auto& row : summary.rows) {
    if (row.baseline_label.empty()) continue;
    PairedVerdict v = verdict_between(records, pricing, row.bundle, row.question_set, row.baseline_label, row.label, options);
    v.baseline_reason = row.baseline_reason;
    v.concept_count = row.concept_count;
    out.push_back(std::move(v));
  }
  return out;
}

std::string resolve_configuration(const Summary& summary, const std::string& name, std::string_view flag) {
  std::vector<std::string> known;
  for (const auto& row : summary.rows) {
    if (row_named(summary, row, name)) return row.label;
    auto it = summary.names.find(row.label);
    const std::string entry = fmt::format("\"{}\" ({})", it == summary.names.end() ? row.label : it->second, row.label);
    if (std::find(known.begin(), known.end(), entry) == known.end()) known.push_back(entry);
  }
  throw UsageError(fmt::format("{} {}: no configuration of this run is named so; use a short name or a full label: {}", flag,
                               name, fmt::join(known, ", ")));
}

std::vector<PairedVerdict> verdicts_between(const std::vector<TrialRecord>& records, const Summary& summary,
                                      const PricingTable& pricing, const std::string& baseline,
                                      const std::string& candidate, const VerdictOptions& options) {
  std::vector<PairedVerdict> out;
  std::vector<std::pair<std::string, std::string>> done;
  for (const auto& row : summary.rows) {
    const std::pair<std::string, std::string> group{row.bundle, row.question_set};
    if (row.label != candidate || std::find(done.begin(), done.end(), group) != done.end()) continue;
    const bool has_baseline = std::any_of(summary.rows.begin(), summary.rows.end(), [&](const SummaryRow& r) {
      return r.label == baseline && r.bundle == row.bundle && r.question_set == row.question_set;
    });
    if (!has_baseline) continue;
    done.push_back(group);
    PairedVerdict v = verdict_between(records, pricing, row.bundle, row.question_set, baseline, candidate, options);
    v.baseline_reason = "named by --baseline";
    v.concept_count = row.concept_count;
    out.push_back(std::move(v));
  }
  return out;
}

namespace {

using Escape = std::function<std::string(std::string_view)>;

std::string plain(std::string_view text) { return std::string(text); }

std::string ratio_text(const RatioVerdict& r, std::string_view what) {
  if (!r.ratio) return fmt::format("{} n/a", what);
  std::string out = fmt::format("{} {:.2f}x [{:.2f}, {:.2f}]", what, *r.ratio, *r.low, *r.high);
  if (!r.measurable()) out += " (no measurable difference)";
  return out;
}

std::string share_text(double share) { return format_share(share); }

// "correct 75.0% against 91.7%: no measurable difference (McNemar p = 0.5000, 1 of 12 pairs differ)"
std::string correct_text(const CorrectVerdict& c) {
  std::string out = fmt::format("correct {} against {}: ", share_text(*c.candidate), share_text(*c.baseline));
  if (c.significant) {
    out += fmt::format("{:+.1f} points, {}", *c.difference * 100.0, *c.difference > 0 ? "higher" : "lower");
  } else {
    out += "no measurable difference";
  }
  return out + fmt::format(" (McNemar p = {:.4f}, {} of {} pairs differ)", *c.p_value, c.baseline_only + c.candidate_only,
                           c.pairs);
}

std::string difference_text(const DifferenceVerdict& d, std::string_view what) {
  if (!d.difference) return fmt::format("{} n/a", what);
  std::string out = fmt::format("{} {:.3f} against {:.3f}: ", what, *d.candidate, *d.baseline);
  if (d.significant) {
    out += fmt::format("{:+.3f} [{:+.3f}, {:+.3f}], {}", *d.difference, *d.low, *d.high, *d.difference > 0 ? "higher" : "lower");
  } else {
    out += fmt::format("no measurable difference ({:+.3f} [{:+.3f}, {:+.3f}])", *d.difference, *d.low, *d.high);
  }
  return out + fmt::format(" (sign-flip p = {:.4f})", *d.p_value);
}

std::string name_of(const std::map<std::string, std::string>& names, const std::string& label) {
  auto it = names.find(label);
  return it == names.end() ? label : it->second;
}

std::string line_with(const PairedVerdict& v, const std::map<std::string, std::string>& names, const Escape& escape) {
  std::string out = fmt::format("{}: {} against {}", escape(v.bundle), escape(name_of(names, v.candidate_label)),
                                escape(name_of(names, v.baseline_label)));
  if (!v.baseline_reason.empty()) out += fmt::format(" ({})", escape(v.baseline_reason));
  out += fmt::format(", {} question(s), {} pair(s)", v.questions, v.pairs);
  if (v.unpaired > 0) out += fmt::format(", {} unpaired trial(s) left out", v.unpaired);
  if (v.pairs == 0) return out + ": nothing to compare.";
  out += ": " + ratio_text(v.input_tokens, "input") + ", " + ratio_text(v.cost, "cost");
  if (v.answer_facts) {
    out += "; " + correct_text(v.correct) + "; " + difference_text(v.score, "answer score");
  } else {
    out += "; correct and answer score not graded: no answer facts";
  }
  return out + "; " + difference_text(v.recall, "evidence recall") + ".";
}

}  // namespace

std::string verdict_line(const PairedVerdict& verdict, const std::map<std::string, std::string>& names) {
  return line_with(verdict, names, plain);
}

std::string verdict_markdown(const std::vector<PairedVerdict>& verdicts, const std::map<std::string, std::string>& names) {
  if (verdicts.empty()) return "";
  std::string out = "## Verdict\n\n";
  for (const auto& v : verdicts) out += "- " + line_with(v, names, [](std::string_view t) { return markdown_text(t); }) + "\n";
  return out + "\n" + std::string(kVerdictHowToRead) + "\n\n";
}

std::string headline_with_verdict(const std::vector<TrialRecord>& records, const Summary& summary,
                                  const PricingTable& pricing) {
  return verdict_markdown(run_verdicts(records, summary, pricing), summary.names) + headline_markdown(summary);
}

}  // namespace okfbench::reports
