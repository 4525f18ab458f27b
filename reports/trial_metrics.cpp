#include "reports/trial_metrics.hpp"

#include <algorithm>

#include "reports/graders.hpp"
#include "reports/spend.hpp"

namespace okfbench::reports {

std::optional<std::int64_t> turn_new_input(const TrialRecord& r, std::size_t turn) {
  if (turn >= r.turns.size()) return std::nullopt;
  const TurnRecord& t = r.turns[turn];
  if (!t.input_tokens) return std::nullopt;
  const std::int64_t input = std::max<std::int64_t>(*t.input_tokens, 0);
  if (t.new_input_tokens) return std::clamp<std::int64_t>(*t.new_input_tokens, 0, input);
  if (turn == 0) return input;
  const auto& previous = r.turns[turn - 1].input_tokens;
  if (!previous) return std::nullopt;
  // Both counts are at most what a record holds (10^9 a call, range-checked
  // when read), so the difference cannot overflow.
  return std::clamp<std::int64_t>(input - std::max<std::int64_t>(*previous, 0), 0, input);
}

std::optional<std::int64_t> turn_resent_input(const TrialRecord& r, std::size_t turn) {
  const auto fresh = turn_new_input(r, turn);
  if (!fresh) return std::nullopt;
  return std::max<std::int64_t>(*r.turns[turn].input_tokens, 0) - *fresh;
}

std::optional<double> input_tokens(const TrialRecord& r) {
  if (r.turns.empty()) {
    if (r.context_tokens) return static_cast<double>(*r.context_tokens);
    return std::nullopt;
  }
  double sum = 0;
  for (const auto& t : r.turns) {
    if (!t.input_tokens) return std::nullopt;
    sum += static_cast<double>(*t.input_tokens);
  }
  return sum;
}

std::optional<double> resent_tokens(const TrialRecord& r) {
  if (r.turns.empty()) return input_tokens(r) ? std::optional(0.0) : std::nullopt;
  double sum = 0;
  for (std::size_t i = 0; i < r.turns.size(); ++i) {
    const auto resent = turn_resent_input(r, i);
    if (!resent) return std::nullopt;
    sum += static_cast<double>(*resent);
  }
  return sum;
}

std::vector<std::string> reached_ids(const TrialRecord& r) {
  if (agentic(r.config.kind)) return r.opened_ids;
  std::vector<std::string> ids;
  for (const auto& c : r.packed) ids.push_back(c.id);
  return ids;
}

std::optional<double> trial_evidence_recall(const TrialRecord& r, const Judgments& relevant) {
  return evidence_recall(relevant, reached_ids(r));
}

namespace {

using Value = std::optional<double>;

template <typename Field>
Value turn_sum(const TrialRecord& r, Field field) {
  double sum = 0;
  for (const auto& t : r.turns) {
    const std::optional<std::int64_t>& v = t.*field;
    if (!v) return std::nullopt;
    sum += static_cast<double>(*v);
  }
  return sum;
}

Value new_input_sum(const TrialRecord& r) {
  if (r.turns.empty()) return input_tokens(r);
  double sum = 0;
  for (std::size_t i = 0; i < r.turns.size(); ++i) {
    const auto fresh = turn_new_input(r, i);
    if (!fresh) return std::nullopt;
    sum += static_cast<double>(*fresh);
  }
  return sum;
}

double tool_stat(const TrialRecord& r, bool bytes) {
  double sum = 0;
  for (const auto& t : r.turns) {
    for (const auto& c : t.tool_calls) sum += bytes ? static_cast<double>(c.result_bytes) : 1.0;
  }
  return sum;
}

Value stored_measure(const TrialRecord& r, std::string_view name) {
  for (const auto& m : r.measures) {
    if (m.name == name) return m.value;
  }
  return std::nullopt;
}

bool is_grader(std::string_view name) {
  const auto& names = grader_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

// "facts" -> the facts score; "facts_correct" -> 1 or 0; nullopt when the
// trial has no such grade or it was not graded. Records without the grade
// (schema 1) fall back to a stored measure of that name ("answered").
std::optional<Value> grade_metric(const TrialRecord& r, std::string_view metric) {
  std::string_view grader = metric;
  const bool correct = metric.ends_with(kCorrectSuffix);
  if (correct) grader.remove_suffix(kCorrectSuffix.size());
  if (!is_grader(grader)) return std::nullopt;
  const Grade* g = find_grade(r, grader);
  if (!g) return correct ? Value{} : stored_measure(r, metric);
  if (g->status != GradeStatus::graded) return Value{};
  return correct ? Value{g->correct ? 1.0 : 0.0} : g->score;
}

// The share of the trial's spend that `origin` took (reports/spend.hpp).
Value origin_share(const TrialRecord& r, const PricingTable& pricing, std::string_view origin) {
  const auto spend = spend_by_origin(r, pricing);
  if (!spend) return std::nullopt;
  double total = 0;
  for (const auto& [name, dollars] : *spend) total += dollars;
  if (total <= 0) return std::nullopt;
  const auto it = spend->find(std::string(origin));
  return (it == spend->end() ? 0.0 : it->second) / total;
}

// Of the tool calls that read a concept's body (open, read_concept) and
// recorded a knowledge-access event, the share that found nothing; unknown
// when the trial made no such read.
Value empty_read_share(const TrialRecord& r) {
  double reads = 0, empty = 0;
  for (const TurnRecord& t : r.turns)
    for (const ToolCallRecord& c : t.tool_calls)
      if (c.access && c.access->body_chars) {
        reads += 1;
        empty += c.access->found ? 0 : 1;
      }
  if (reads == 0) return std::nullopt;
  return empty / reads;
}

constexpr auto lower = Direction::lower_is_better;
constexpr auto higher = Direction::higher_is_better;

}  // namespace

const std::vector<TrialMetric>& trial_metrics() {
  using P = const PricingTable&;
  static const std::vector<TrialMetric> metrics = {
      {{"input_tokens", "input tokens over all model calls of a trial", lower},
       [](const TrialRecord& r, P) { return input_tokens(r); }},
      {{"new_input_tokens", "input tokens not sent in an earlier call of the trial", lower},
       [](const TrialRecord& r, P) { return new_input_sum(r); }},
      {{"model_calls", "model calls (turns) per trial", lower},
       [](const TrialRecord& r, P) { return Value{static_cast<double>(r.turns.size())}; }},
      {{"resent_tokens", "input tokens sent again: each call's input minus its new input", lower},
       [](const TrialRecord& r, P) { return resent_tokens(r); }},
      {{"cached_tokens", "input tokens served from the prompt cache", higher},
       [](const TrialRecord& r, P) { return turn_sum(r, &TurnRecord::cached_tokens); }},
      {{"output_tokens", "output tokens over all model calls", lower},
       [](const TrialRecord& r, P) { return turn_sum(r, &TurnRecord::output_tokens); }},
      {{"tool_calls", "tool calls per trial", lower}, [](const TrialRecord& r, P) { return Value{tool_stat(r, false)}; }},
      {{"tool_bytes", "bytes of tool results per trial", lower}, [](const TrialRecord& r, P) { return Value{tool_stat(r, true)}; }},
      {{"empty_read_share", "share of the trial's concept reads (open, read_concept) that found nothing", lower},
       [](const TrialRecord& r, P) { return empty_read_share(r); }},
      {{"evidence_recall", "share of relevant concepts that reached the model (packed, or opened by the agent)", higher},
       [](const TrialRecord& r, P) { return r.evidence_recall; }},
      {{"cost", "dollars per trial under the pricing table", lower},
       [](const TrialRecord& r, P pricing) { return trial_cost(r, pricing).dollars; }},
      {{"schema_share", "share of the trial's spend on tool schemas (the tool definitions every call sends)", lower},
       [](const TrialRecord& r, P pricing) { return origin_share(r, pricing, "tools"); }},
  };
  return metrics;
}

const std::vector<MetricInfo>& builtin_metrics() {
  static const std::vector<MetricInfo> infos = [] {
    std::vector<MetricInfo> out;
    for (const auto& m : trial_metrics()) out.push_back(m.info);
    return out;
  }();
  return infos;
}

MetricInfo metric_info(std::string_view name) {
  for (const auto& m : trial_metrics()) {
    if (m.info.name == name) return m.info;
  }
  std::string_view grader = name;
  if (grader.ends_with(kCorrectSuffix)) grader.remove_suffix(kCorrectSuffix.size());
  if (is_grader(grader)) {
    const Grader* g = find_builtin_grader(grader);
    std::string help = g ? g->help : "LLM-as-judge score: correct 1, partial 0.5, incorrect 0";
    if (grader != name) help = "1 when the " + std::string(grader) + " grader judged the answer correct";
    return {std::string(name), help, higher};
  }
  return {std::string(name), "stored per-trial measure", higher};
}

std::optional<double> trial_metric(const TrialRecord& r, std::string_view metric, const PricingTable& pricing) {
  if (!r.error.empty()) return std::nullopt;
  for (const auto& m : trial_metrics()) {
    if (m.info.name == metric) return m.compute(r, pricing);
  }
  if (auto grade = grade_metric(r, metric)) return *grade;
  return stored_measure(r, metric);
}

}  // namespace okfbench::reports
