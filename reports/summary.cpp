#include "reports/summary.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include "reports/config_names.hpp"
#include "reports/format.hpp"
#include "reports/judge.hpp"
#include "reports/spend.hpp"

namespace okfbench::reports {

void GradeTally::add(const TrialRecord& r) {
  for (const auto& g : r.grades) {
    GraderStats& stats = stats_[g.grader];
    if (g.status == GradeStatus::not_graded) ++stats.not_graded;
    if (g.status == GradeStatus::judge_error) ++stats.judge_errors;
    if (g.status != GradeStatus::graded || !g.score) continue;
    ++stats.graded;
    score_sums_[g.grader] += *g.score;
    stats.correct += g.correct ? 1 : 0;
  }
  if (!r.judge_usage) return;
  const JudgeUsage& u = *r.judge_usage;
  JudgeTotals& t = judge_;
  if (t.trials++ == 0) {
    t.input_tokens = t.output_tokens = 0;
    t.dollars = 0.0;
  }
  t.calls += u.calls;
  t.cache_hits += u.cache_hits;
  t.input_tokens = t.input_tokens && u.input_tokens ? std::optional(*t.input_tokens + *u.input_tokens) : std::nullopt;
  t.output_tokens = t.output_tokens && u.output_tokens ? std::optional(*t.output_tokens + *u.output_tokens) : std::nullopt;
  const std::optional<double> dollars = judge_cost(u, pricing_);
  t.dollars = t.dollars && dollars ? std::optional(*t.dollars + *dollars) : std::nullopt;
  if (t.model.find(u.model) == std::string::npos) t.model += (t.model.empty() ? "" : ", ") + u.model;
}

std::map<std::string, GraderStats> GradeTally::grader_stats() const {
  std::map<std::string, GraderStats> out = stats_;
  for (auto& [name, stats] : out) {
    if (stats.graded == 0) continue;
    stats.mean_score = score_sums_.at(name) / stats.graded;
    stats.share_correct = static_cast<double>(stats.correct) / stats.graded;
  }
  return out;
}

JudgeTotals GradeTally::judge_totals() const { return judge_; }

namespace {

// The tally over records a run holds; pricing only matters to the judge's.
GradeTally tally_of(const std::vector<const TrialRecord*>& records, const PricingTable& pricing) {
  GradeTally tally(pricing);
  for (const TrialRecord* r : records) tally.add(*r);
  return tally;
}

}  // namespace

std::map<std::string, GraderStats> grader_stats(const std::vector<const TrialRecord*>& records) {
  static const PricingTable kNoPrices;
  return tally_of(records, kNoPrices).grader_stats();
}

JudgeTotals judge_totals(const std::vector<const TrialRecord*>& records, const PricingTable& pricing) {
  return tally_of(records, pricing).judge_totals();
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

// The three parts of each turn's input: new (turn_new_input), cached (at most
// what was re-sent) and re-sent but not cached.
void add_turn_splits(const TrialRecord& r, std::vector<TurnAccumulator>& turns) {
  const auto splits = trial_turn_splits(r);
  for (std::size_t i = 0; i < splits.size(); ++i) {
    if (!splits[i]) continue;
    if (turns.size() <= i) turns.resize(i + 1);
    turns[i].new_tokens += splits[i]->new_tokens;
    turns[i].cached += splits[i]->cached_tokens;
    turns[i].resent += splits[i]->resent_uncached_tokens;
    ++turns[i].trials;
  }
}

std::optional<double> sample_sd(const std::vector<double>& values) {
  if (values.size() < 2) return std::nullopt;
  double mean = 0;
  for (double v : values) mean += v;
  mean /= static_cast<double>(values.size());
  double squares = 0;
  for (double v : values) squares += (v - mean) * (v - mean);
  return std::sqrt(squares / static_cast<double>(values.size() - 1));
}

struct RowBuilder {
  SummaryRow row;
  std::map<std::string, QuestionPassRate> questions;  // by question id
  std::map<std::string, int> trials_per_question;
  std::vector<const TrialRecord*> finished;
  double answer_cost = 0;
  bool answer_cost_unknown = false;
  Accumulator schema, input, fresh, calls, resent, cached, output, tool_calls, tool_bytes, recall, cost;
  double resent_sum = 0, input_sum = 0;
  std::map<std::string, double> bytes_by_tool;
  std::map<std::string, Accumulator> measures;
  std::vector<TurnAccumulator> turns;
  std::vector<std::string> measure_names;

  void add_grades(const TrialRecord& r, std::optional<double> cost) {
    finished.push_back(&r);
    const Grade* answer = find_grade(r, kAnswerGrader);
    if (!answer || answer->status != GradeStatus::graded || !answer->score) return;
    if (cost) answer_cost += *cost;
    else answer_cost_unknown = true;
    QuestionPassRate& q = questions[r.question_id];
    q.question_id = r.question_id;
    ++q.repeats;
    q.correct += answer->correct ? 1 : 0;
    q.scores.push_back(*answer->score);
  }

  void add(const TrialRecord& r, const PricingTable& pricing) {
    ++row.trials;
    row.repeats = std::max(row.repeats, ++trials_per_question[r.question_id]);
    if (!r.error.empty()) {
      ++row.errors;
      return;
    }
    auto in = input_tokens(r);
    auto re = resent_tokens(r);
    input.add(in);
    resent.add(re);
    if (in && re) {
      input_sum += *in;
      resent_sum += *re;
    }
    fresh.add(trial_metric(r, "new_input_tokens", pricing));
    schema.add(trial_metric(r, "schema_share", pricing));
    calls.add(trial_metric(r, "model_calls", pricing));
    cached.add(trial_metric(r, "cached_tokens", pricing));
    output.add(trial_metric(r, "output_tokens", pricing));
    tool_calls.add(trial_metric(r, "tool_calls", pricing));
    tool_bytes.add(trial_metric(r, "tool_bytes", pricing));
    recall.add(r.evidence_recall);
    if (auto spend = spend_by_origin(r, pricing)) {
      ++row.spend_attributed_trials;
      row.attribution_difference += attribution_difference(r).value_or(0);
      for (const auto& [origin, dollars] : *spend) row.spend_by_origin[origin] += dollars;
    }
    TrialCost c = trial_cost(r, pricing);
    cost.add(c.dollars);
    add_grades(r, c.dollars);
    row.cost_cache_unknown_turns += c.turns_cache_unknown;
    for (const auto& t : r.turns) {
      for (const auto& call : t.tool_calls) bytes_by_tool[call.name] += static_cast<double>(call.result_bytes);
    }
    for (const auto& m : r.measures) measures[m.name].add(m.value);
    add_turn_splits(r, turns);
  }

  SummaryRow finish(const PricingTable& pricing) {
    row.input_tokens = input.mean();
    row.new_input_tokens = fresh.mean();
    row.schema_share = schema.mean();
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
    finish_grades(pricing);
    return row;
  }

  void finish_grades(const PricingTable& pricing) {
    row.grades = grader_stats(finished);
    row.judge = judge_totals(finished, pricing);
    auto answer = row.grades.find(kAnswerGrader);
    if (answer != row.grades.end() && answer->second.correct > 0 && !answer_cost_unknown) {
      row.cost_per_correct = answer_cost / answer->second.correct;
    }
    for (auto& [id, q] : questions) {
      q.pass_rate = static_cast<double>(q.correct) / q.repeats;
      q.score_sd = sample_sd(q.scores);
      row.pass_rates.push_back(q);
    }
    if (row.grades.count("judge") && row.grades.count("facts")) row.judge_facts = agreement(finished, "judge", "facts");
  }
};

using RowKey = std::tuple<std::int64_t, std::string, std::string, int, std::string>;

RowKey key_of(const TrialRecord& r) {
  return {r.concept_count, r.bundle, r.question_set, static_cast<int>(r.config.kind), r.config.label()};
}

bool same_group(const SummaryRow& a, const SummaryRow& b) {
  return a.bundle == b.bundle && a.question_set == b.question_set;
}

bool named(const std::map<std::string, std::string>& names, const SummaryRow& row, const std::string& name) {
  if (name.empty()) return false;
  auto it = names.find(row.label);
  return row.label == name || (it != names.end() && it->second == name);
}

BaselineChoice baseline_among(const std::vector<SummaryRow>& rows, const std::map<std::string, std::string>& names,
                              const std::string& named_baseline, const SummaryRow& row) {
  if (!agentic(row.config.kind)) return {};
  for (const auto& base : rows) {
    if (same_group(base, row) && named(names, base, named_baseline)) {
      if (&base == &row) return {};
      return {&base, "the spec's baseline"};
    }
  }
  // Default: the context row with the candidate's model that reads least; a tie goes to the smaller label.
  const SummaryRow* best = nullptr;
  for (const auto& base : rows) {
    bool same = base.config.kind == PathKind::context && same_group(base, row) && base.config.model == row.config.model;
    if (!same || !base.input_tokens.mean || *base.input_tokens.mean <= 0) continue;
    if (!best || *base.input_tokens.mean < *best->input_tokens.mean ||
        (*base.input_tokens.mean == *best->input_tokens.mean && base.label < best->label)) {
      best = &base;
    }
  }
  if (!best) return {};
  std::string reason = "cheapest context configuration by input tokens";
  if (!named_baseline.empty()) reason = fmt::format("{}; the spec's baseline {} did not run here", reason, named_baseline);
  return {best, reason};
}

std::optional<double> mean_ratio(const MeanValue& a, const MeanValue& b) {
  if (!a.mean || !b.mean || *b.mean <= 0) return std::nullopt;
  return *a.mean / *b.mean;
}

void set_one_shot_ratios(std::vector<SummaryRow>& rows, const std::map<std::string, std::string>& names,
                         const std::string& named_baseline) {
  for (auto& row : rows) {
    const BaselineChoice choice = baseline_among(rows, names, named_baseline, row);
    if (!choice.row) continue;
    const SummaryRow& base = *choice.row;
    row.baseline_label = base.label;
    row.baseline_reason = choice.reason;
    row.one_shot_ratio = mean_ratio(row.input_tokens, base.input_tokens);
    row.cost_ratio = mean_ratio(row.cost, base.cost);
    if (row.cost_per_correct && base.cost_per_correct && *base.cost_per_correct > 0) {
      row.equal_quality_ratio = *row.cost_per_correct / *base.cost_per_correct;
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

// Records in a fixed order (question, repeat, trial key), so sums of floating
// point values do not depend on the order in which trials finished and were
// stored.
std::vector<const TrialRecord*> in_stable_order(const std::vector<TrialRecord>& records) {
  std::vector<const TrialRecord*> out;
  for (const auto& r : records) out.push_back(&r);
  std::stable_sort(out.begin(), out.end(), [](const TrialRecord* a, const TrialRecord* b) {
    return std::tie(a->question_id, a->config.repeat, a->trial_key) < std::tie(b->question_id, b->config.repeat, b->trial_key);
  });
  return out;
}

}  // namespace

std::vector<std::optional<TurnSplit>> trial_turn_splits(const TrialRecord& r) {
  std::vector<std::optional<TurnSplit>> splits(r.turns.size());
  for (std::size_t i = 0; i < r.turns.size(); ++i) {
    const auto fresh = turn_new_input(r, i);
    if (!fresh) continue;
    const auto resent = static_cast<double>(*turn_resent_input(r, i));
    const double cached = std::min(static_cast<double>(std::max<std::int64_t>(r.turns[i].cached_tokens.value_or(0), 0)), resent);
    splits[i] = TurnSplit{static_cast<int>(i + 1), static_cast<double>(*fresh), resent - cached, cached, 1};
  }
  return splits;
}

BaselineChoice choose_baseline(const Summary& summary, const SummaryRow& row) {
  return baseline_among(summary.rows, summary.names, summary.named_baseline, row);
}

const SummaryRow* one_shot_row(const Summary& summary, const SummaryRow& row) { return choose_baseline(summary, row).row; }

bool row_named(const Summary& summary, const SummaryRow& row, const std::string& name) {
  return named(summary.names, row, name);
}

Summary summarize(const std::vector<TrialRecord>& records, const PricingTable& pricing, const std::string& baseline) {
  std::map<RowKey, RowBuilder> builders;
  for (const TrialRecord* record : in_stable_order(records)) {
    const TrialRecord& r = *record;
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
  for (auto& [key, builder] : builders) summary.rows.push_back(builder.finish(pricing));
  std::vector<PathConfig> configs;
  for (const auto& row : summary.rows) configs.push_back(row.config);
  summary.names = short_config_names(configs);
  summary.named_baseline = baseline;
  set_one_shot_ratios(summary.rows, summary.names, baseline);
  summary.priced_as_note = pricing_note(records, pricing);
  const bool sim_judge = std::any_of(records.begin(), records.end(), [](const TrialRecord& r) {
    return r.judge_usage && r.judge_usage->model == "sim";
  });
  if (sim_judge) summary.judge_note = kSimJudgeNote;
  return summary;
}

std::optional<double> row_metric(const SummaryRow& row, std::string_view metric) {
  const std::pair<std::string_view, const MeanValue*> fields[] = {
      {"input_tokens", &row.input_tokens}, {"new_input_tokens", &row.new_input_tokens}, {"model_calls", &row.model_calls}, {"resent_tokens", &row.resent_tokens},
      {"cached_tokens", &row.cached_tokens}, {"output_tokens", &row.output_tokens}, {"tool_calls", &row.tool_calls},
      {"tool_bytes", &row.tool_bytes}, {"evidence_recall", &row.evidence_recall}, {"cost", &row.cost}, {"schema_share", &row.schema_share}};
  for (const auto& [name, value] : fields) {
    if (name == metric) return value->mean;
  }
  std::string_view grader = metric;
  const bool correct = grader.ends_with(kCorrectSuffix);
  if (correct) grader.remove_suffix(kCorrectSuffix.size());
  if (auto g = row.grades.find(std::string(grader)); g != row.grades.end()) {
    return correct ? g->second.share_correct : g->second.mean_score;
  }
  auto it = row.measures.find(std::string(metric));
  return it == row.measures.end() ? std::nullopt : it->second.mean;
}

namespace {

std::string format_cost_per_correct(const SummaryRow& row) {
  auto g = row.grades.find(kAnswerGrader);
  if (g == row.grades.end() || g->second.graded == 0) return "n/a";
  if (g->second.correct == 0) return "none correct";
  return row.cost_per_correct ? format_dollars(*row.cost_per_correct) : "n/a";
}

std::string format_answer_score(const SummaryRow& row) {
  auto g = row.grades.find(kAnswerGrader);
  if (g == row.grades.end() || !g->second.mean_score) return "n/a";
  std::string out = format_decimal(*g->second.mean_score, 3);
  if (g->second.not_graded > 0) out += fmt::format(" ({} not graded)", g->second.not_graded);
  return out;
}

std::string format_share_correct(const SummaryRow& row) {
  auto g = row.grades.find(kAnswerGrader);
  return g == row.grades.end() ? "n/a" : format_share(g->second.share_correct);
}

}  // namespace

std::vector<std::string> headline_cells(const SummaryRow& row) {
  return {row.bundle,
          format_count(static_cast<double>(row.concept_count)),
          row.label,
          row.errors ? fmt::format("{} ({} failed)", row.trials, row.errors) : std::to_string(row.trials),
          format_mean_count(row.input_tokens),
          format_mean_decimal(row.model_calls, 1),
          format_share(row.resent_share),
          format_mean_count(row.cached_tokens),
          format_mean_count(row.tool_bytes),
          format_mean_decimal(row.evidence_recall, 3),
          format_mean_dollars(row.cost),
          format_ratio(row.one_shot_ratio),
          format_ratio(row.cost_ratio),
          format_answer_score(row),
          format_share_correct(row),
          format_cost_per_correct(row),
          format_ratio(row.equal_quality_ratio)};
}

const std::vector<std::string>& headline_columns() {
  static const std::vector<std::string> columns = {
      "bundle", "concepts", "path", "trials", "input tokens", "model calls", "resent", "cached", "tool bytes",
      "evidence recall", "cost", "input × baseline", "cost × baseline", "answer score", "correct", "cost per correct",
      "cost per correct × baseline"};
  return columns;
}

std::string headline_notes(const Summary& summary) {
  std::string out;
  int cache_unknown = 0;
  for (const auto& row : summary.rows) cache_unknown += row.cost_cache_unknown_turns;
  if (!summary.priced_as_note.empty()) out += "\nCost: " + markdown_text(summary.priced_as_note) + ".\n";
  if (!summary.judge_note.empty()) out += "\nJudge: " + summary.judge_note + ".\n";
  if (cache_unknown > 0) {
    out += fmt::format(
        "\n{} model call(s) did not report cache counts; their cost is priced as uncached (an upper bound).\n",
        cache_unknown);
  }
  return out;
}

std::vector<std::string> baseline_captions(const Summary& summary) {
  std::vector<std::string> out;
  std::map<std::string, std::set<std::string>> sets_of_bundle;
  for (const auto& row : summary.rows) sets_of_bundle[row.bundle].insert(row.question_set);
  std::vector<std::pair<std::string, std::string>> groups;
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> bases;
  for (const auto& row : summary.rows) {
    if (row.baseline_label.empty()) continue;
    const std::pair<std::string, std::string> group{row.bundle, row.question_set};
    if (!bases.count(group)) groups.push_back(group);
    auto it = summary.names.find(row.baseline_label);
    const std::string text =
        fmt::format("{} ({})", it == summary.names.end() ? row.baseline_label : it->second, row.baseline_reason);
    auto& list = bases[group];
    if (std::find(list.begin(), list.end(), text) == list.end()) list.push_back(text);
  }
  for (const auto& group : groups) {
    std::string place = group.first;
    if (sets_of_bundle[group.first].size() > 1) place += " / " + group.second;
    out.push_back(fmt::format("{}: {}", place, fmt::join(bases[group], "; ")));
  }
  return out;
}

std::string baseline_caption_markdown(const Summary& summary) {
  const auto captions = baseline_captions(summary);
  if (captions.empty()) return "";
  std::vector<std::string> escaped;
  for (const auto& c : captions) escaped.push_back(markdown_text(c));
  return fmt::format("Baseline of the × baseline columns: {}.\n\n", fmt::join(escaped, "; "));
}

std::string headline_markdown(const Summary& summary) {
  std::string out = baseline_caption_markdown(summary);
  out += fmt::format("| {} |\n|---|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n",
                     fmt::join(headline_columns(), " | "));
  for (const auto& row : summary.rows) {
    std::vector<std::string> cells = headline_cells(row);
    for (std::size_t i : {0u, 2u}) cells[i] = markdown_text(cells[i]);  // the bundle and the path; the rest are numbers
    out += fmt::format("| {} |\n", fmt::join(cells, " | "));
  }
  if (summary.rows.empty()) out += "\nNo trials were stored in this run.\n";
  return out + headline_notes(summary);
}

}  // namespace okfbench::reports
