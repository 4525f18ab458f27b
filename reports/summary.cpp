#include "reports/summary.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <tuple>

#include "reports/format.hpp"

namespace okfbench::reports {

namespace {

using Tokens = std::optional<double>;

// Sum of turn inputs; nullopt when any turn's input is unknown.
Tokens input_tokens_of(const TrialRecord& r) {
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

Tokens resent_tokens_of(const TrialRecord& r) {
  if (r.turns.empty()) return input_tokens_of(r) ? Tokens{0.0} : std::nullopt;
  double sum = 0, largest = 0;
  for (const auto& t : r.turns) {
    if (!t.input_tokens) return std::nullopt;
    sum += static_cast<double>(*t.input_tokens);
    largest = std::max(largest, static_cast<double>(*t.input_tokens));
  }
  return sum - largest;
}

template <typename Field>
Tokens turn_sum(const TrialRecord& r, Field field) {
  double sum = 0;
  for (const auto& t : r.turns) {
    const std::optional<std::int64_t>& v = t.*field;
    if (!v) return std::nullopt;
    sum += static_cast<double>(*v);
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

Tokens stored_measure(const TrialRecord& r, std::string_view name) {
  for (const auto& m : r.measures) {
    if (m.name == name) return m.value;
  }
  return std::nullopt;
}

}  // namespace

const std::vector<MetricInfo>& builtin_metrics() {
  static const std::vector<MetricInfo> metrics = {
      {"input_tokens", "input tokens over all model calls of a trial", Direction::lower_is_better},
      {"model_calls", "model calls (turns) per trial", Direction::lower_is_better},
      {"resent_tokens", "input tokens sent again: sum of inputs minus the largest", Direction::lower_is_better},
      {"cached_tokens", "input tokens served from the prompt cache", Direction::higher_is_better},
      {"output_tokens", "output tokens over all model calls", Direction::lower_is_better},
      {"tool_calls", "tool calls per trial", Direction::lower_is_better},
      {"tool_bytes", "bytes of tool results per trial", Direction::lower_is_better},
      {"evidence_recall", "share of relevant concepts that reached the model", Direction::higher_is_better},
      {"cost", "dollars per trial under the pricing table", Direction::lower_is_better},
  };
  return metrics;
}

MetricInfo metric_info(std::string_view name) {
  for (const auto& m : builtin_metrics()) {
    if (m.name == name) return m;
  }
  return {std::string(name), "stored per-trial measure", Direction::higher_is_better};
}

std::optional<double> trial_metric(const TrialRecord& r, std::string_view metric, const PricingTable& pricing) {
  if (!r.error.empty()) return std::nullopt;
  if (metric == "input_tokens") return input_tokens_of(r);
  if (metric == "model_calls") return static_cast<double>(r.turns.size());
  if (metric == "resent_tokens") return resent_tokens_of(r);
  if (metric == "cached_tokens") return turn_sum(r, &TurnRecord::cached_tokens);
  if (metric == "output_tokens") return turn_sum(r, &TurnRecord::output_tokens);
  if (metric == "tool_calls") return tool_stat(r, false);
  if (metric == "tool_bytes") return tool_stat(r, true);
  if (metric == "evidence_recall") return r.evidence_recall;
  if (metric == "cost") return trial_cost(r, pricing).dollars;
  return stored_measure(r, metric);
}

namespace {

struct Accumulator {
  double sum = 0;
  int known = 0;
  int unknown = 0;
  void add(std::optional<double> v) {
    if (v) {
      sum += *v;
      ++known;
    } else {
      ++unknown;
    }
  }
  MeanValue mean() const {
    MeanValue m;
    m.known = known;
    m.unknown = unknown;
    if (known > 0) m.mean = sum / known;
    return m;
  }
};

struct TurnAccumulator {
  double new_tokens = 0, resent = 0, cached = 0;
  int trials = 0;
};

void add_turn_splits(const TrialRecord& r, std::vector<TurnAccumulator>& turns) {
  std::optional<std::int64_t> previous_input = 0;
  for (std::size_t i = 0; i < r.turns.size(); ++i) {
    const TurnRecord& t = r.turns[i];
    if (!t.input_tokens) {
      previous_input.reset();
      continue;
    }
    auto input = static_cast<double>(*t.input_tokens);
    std::optional<double> fresh;
    if (t.new_input_tokens) fresh = static_cast<double>(*t.new_input_tokens);
    else if (previous_input) fresh = std::max(0.0, input - static_cast<double>(*previous_input));
    previous_input = t.input_tokens;
    if (!fresh) continue;
    double cached = std::min(static_cast<double>(t.cached_tokens.value_or(0)), input - std::min(*fresh, input));
    if (turns.size() <= i) turns.resize(i + 1);
    turns[i].new_tokens += std::min(*fresh, input);
    turns[i].cached += cached;
    turns[i].resent += input - std::min(*fresh, input) - cached;
    ++turns[i].trials;
  }
}

struct RowBuilder {
  SummaryRow row;
  Accumulator input, calls, resent, cached, output, tool_calls, tool_bytes, recall, cost;
  double resent_sum = 0, input_sum = 0;
  std::map<std::string, double> bytes_by_tool;
  std::map<std::string, Accumulator> measures;
  std::vector<TurnAccumulator> turns;
  std::vector<std::string> measure_names;

  void add(const TrialRecord& r, const PricingTable& pricing) {
    ++row.trials;
    if (!r.error.empty()) {
      ++row.errors;
      return;
    }
    auto in = input_tokens_of(r);
    auto re = resent_tokens_of(r);
    input.add(in);
    resent.add(re);
    if (in && re) {
      input_sum += *in;
      resent_sum += *re;
    }
    calls.add(trial_metric(r, "model_calls", pricing));
    cached.add(trial_metric(r, "cached_tokens", pricing));
    output.add(trial_metric(r, "output_tokens", pricing));
    tool_calls.add(tool_stat(r, false));
    tool_bytes.add(tool_stat(r, true));
    recall.add(r.evidence_recall);
    TrialCost c = trial_cost(r, pricing);
    cost.add(c.dollars);
    row.cost_cache_unknown_turns += c.turns_cache_unknown;
    for (const auto& t : r.turns) {
      for (const auto& call : t.tool_calls) bytes_by_tool[call.name] += static_cast<double>(call.result_bytes);
    }
    for (const auto& m : r.measures) measures[m.name].add(m.value);
    add_turn_splits(r, turns);
  }

  SummaryRow finish() {
    row.input_tokens = input.mean();
    row.model_calls = calls.mean();
    row.resent_tokens = resent.mean();
    if (input_sum > 0) row.resent_share = resent_sum / input_sum;
    row.cached_tokens = cached.mean();
    row.output_tokens = output.mean();
    row.tool_calls = tool_calls.mean();
    row.tool_bytes = tool_bytes.mean();
    row.evidence_recall = recall.mean();
    row.cost = cost.mean();
    int ok_trials = row.trials - row.errors;
    for (const auto& [tool, bytes] : bytes_by_tool) row.tool_bytes_by_tool[tool] = bytes / std::max(ok_trials, 1);
    for (const auto& [name, acc] : measures) row.measures[name] = acc.mean();
    for (std::size_t i = 0; i < turns.size(); ++i) {
      const auto& t = turns[i];
      if (t.trials == 0) continue;
      row.per_turn.push_back({static_cast<int>(i + 1), t.new_tokens / t.trials, t.resent / t.trials,
                              t.cached / t.trials, t.trials});
    }
    return row;
  }
};

using RowKey = std::tuple<std::int64_t, std::string, std::string, int, std::string>;

RowKey key_of(const TrialRecord& r) {
  return {r.concept_count, r.bundle, r.question_set, static_cast<int>(r.config.kind), r.config.label()};
}

void set_one_shot_ratios(std::vector<SummaryRow>& rows) {
  for (auto& row : rows) {
    if (row.config.kind != PathKind::agent || !row.input_tokens.mean) continue;
    for (const auto& base : rows) {  // rows are sorted, so the first match has the smallest label
      bool same = base.config.kind == PathKind::context && base.bundle == row.bundle &&
                  base.question_set == row.question_set && base.config.model == row.config.model;
      if (same && base.input_tokens.mean && *base.input_tokens.mean > 0) {
        row.one_shot_ratio = *row.input_tokens.mean / *base.input_tokens.mean;
        break;
      }
    }
  }
}

std::string pricing_note(const std::vector<TrialRecord>& records, const PricingTable& pricing) {
  std::vector<std::string> notes;
  for (const auto& alias : pricing.aliases()) {
    bool used = std::any_of(records.begin(), records.end(),
                            [&](const TrialRecord& r) { return r.config.model == alias.model; });
    if (used) notes.push_back(fmt::format("{} priced as {}", alias.model, alias.priced_as));
  }
  return fmt::format("{}", fmt::join(notes, "; "));
}

}  // namespace

Summary summarize(const std::vector<TrialRecord>& records, const PricingTable& pricing) {
  std::map<RowKey, RowBuilder> builders;
  for (const auto& r : records) {
    auto [it, inserted] = builders.try_emplace(key_of(r));
    if (inserted) {
      SummaryRow& row = it->second.row;
      row.bundle = r.bundle;
      row.concept_count = r.concept_count;
      row.question_set = r.question_set;
      row.config = r.config;
      row.config.repeat = 0;
      row.label = r.config.label();
    }
    it->second.add(r, pricing);
  }
  Summary summary;
  for (auto& [key, builder] : builders) summary.rows.push_back(builder.finish());
  set_one_shot_ratios(summary.rows);
  summary.priced_as_note = pricing_note(records, pricing);
  return summary;
}

std::optional<double> row_metric(const SummaryRow& row, std::string_view metric) {
  const std::pair<std::string_view, const MeanValue*> fields[] = {
      {"input_tokens", &row.input_tokens}, {"model_calls", &row.model_calls}, {"resent_tokens", &row.resent_tokens},
      {"cached_tokens", &row.cached_tokens}, {"output_tokens", &row.output_tokens}, {"tool_calls", &row.tool_calls},
      {"tool_bytes", &row.tool_bytes}, {"evidence_recall", &row.evidence_recall}, {"cost", &row.cost}};
  for (const auto& [name, value] : fields) {
    if (name == metric) return value->mean;
  }
  auto it = row.measures.find(std::string(metric));
  return it == row.measures.end() ? std::nullopt : it->second.mean;
}

std::string headline_markdown(const Summary& summary) {
  std::string out =
      "| bundle | concepts | path | trials | input tokens | model calls | resent | cached | tool bytes | "
      "evidence recall | cost | x one-shot |\n"
      "|---|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n";
  for (const auto& row : summary.rows) {
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", row.bundle,
                       format_count(static_cast<double>(row.concept_count)), row.label,
                       row.errors ? fmt::format("{} ({} failed)", row.trials, row.errors) : std::to_string(row.trials),
                       format_mean_count(row.input_tokens), format_mean_decimal(row.model_calls, 1),
                       format_share(row.resent_share), format_mean_count(row.cached_tokens),
                       format_mean_count(row.tool_bytes), format_mean_decimal(row.evidence_recall, 3),
                       format_mean_dollars(row.cost), format_ratio(row.one_shot_ratio));
  }
  if (summary.rows.empty()) out += "\nNo trials were stored in this run.\n";
  int cache_unknown = 0;
  for (const auto& row : summary.rows) cache_unknown += row.cost_cache_unknown_turns;
  if (!summary.priced_as_note.empty()) out += "\nCost: " + summary.priced_as_note + ".\n";
  if (cache_unknown > 0) {
    out += fmt::format(
        "\n{} model call(s) did not report cache counts; their cost is priced as uncached (an upper bound).\n",
        cache_unknown);
  }
  return out;
}

}  // namespace okfbench::reports
