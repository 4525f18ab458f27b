#pragma once
// Ranking measures with trec_eval's conventions (trec_eval 10.0, usnistgov),
// and the evidence measures the runner records per trial.
//
// Usage:
//   auto ev = evaluate(qrels, run, {"ndcg_cut.10", "recall.100"},
//                      {.missing = MissingQueries::count_as_zero});
//   double ndcg10 = ev.mean("ndcg_cut_10").value();
//   std::fputs(format_trec_eval(ev, QueryLines::include).c_str(), stdout);
//
// Conventions (all as trec_eval):
// - Only queries present in the qrels are evaluated; run queries without
//   judgments are ignored. Without -c, qrels queries with no retrieved
//   document are ignored too; with -c (MissingQueries::count_as_zero) they
//   are evaluated as an empty ranking, print per-query lines, and count in
//   the averages.
// - A run's documents are ranked by score descending, then docno descending
//   (byte order); the rank column is ignored.
// - A document is relevant when its gain >= relevance_level (default 1).
//   Gains < 0 in the qrels mean "in the pool, unjudged".
// - Cutoff measures (P_k, recall_k, ndcg_cut_k, ...) treat missing ranks
//   below the end of the ranking as non-relevant: P_10 of 3 relevant
//   documents in a 5-document ranking is 0.3.
// - nDCG uses the gain as given (linear), discount log2(rank + 1), and the
//   ideal ranking of all judged documents by gain (Jarvelin & Kekalainen,
//   "Cumulated gain-based evaluation of IR techniques", TOIS 2002).
// - The `all` value of a measure is the mean over evaluated queries, except
//   counts (num_ret, num_rel, num_rel_ret, num_nonrel_judged_ret: sums),
//   gm_map and gm_bpref (geometric mean with each value floored at 1e-5),
//   num_q (the number of evaluated queries) and runid (the run tag).
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "reports/trec.hpp"

namespace okfbench::reports {

// trec_eval's -c flag.
enum class MissingQueries { ignore, count_as_zero };

struct EvalOptions {
  MissingQueries missing = MissingQueries::ignore;
  int relevance_level = 1;  // trec_eval -l
};

// The qrels/run join of one query, computed once and shared by every measure
// (trec_eval form_res_rels.c).
struct QueryJoin {
  static constexpr int not_in_qrels = -1;  // retrieved, absent from the qrels
  static constexpr int unjudged = -2;      // retrieved, in the qrels with gain < 0

  std::vector<int> gains;           // gain per retrieved rank (0-based), or a marker above
  int max_gain = 0;                 // largest judged gain (0 when nothing is judged >= 0)
  std::vector<int> ideal_gains;     // gains of all judged documents, descending
  long num_ret = 0;
  long num_rel = 0;                 // judged documents with gain >= relevance_level
  long num_rel_ret = 0;
  long num_nonrel = 0;              // judged documents with 0 <= gain < relevance_level
  int relevance_level = 1;

  bool relevant_at(std::size_t rank) const { return gains[rank] >= relevance_level; }
};

QueryJoin join_query(const Judgments& judgments, const std::vector<RunEntry>& entries, int relevance_level);

// How a measure's parameters are written and how its values are named.
enum class ParamStyle {
  none,     // no parameters: one value named after the measure
  cutoffs,  // integers, one value each: "P_10"
  levels,   // reals, one value each: "iprec_at_recall_0.10" (trec_eval "%3.2f")
  settings, // reals that tune the one value: named "set_F" by default, "set_F_0.5" when given
};

// How per-query values become the `all` value, and how both print.
enum class Aggregate {
  mean,            // "%.4f" per query and for the mean
  geometric_mean,  // only the `all` line
  sum,             // counts, "%ld"
  query_count,     // num_q: only the `all` line
  run_tag,         // runid: only the `all` line, the run's tag
  per_query_text,  // relstring: only per-query lines, no `all`
};

struct Measure {
  // Fills `out` (one slot per parameter, or one slot when there are none).
  using Compute = void (*)(const QueryJoin& join, std::span<const double> params, std::span<double> out);
  using Describe = std::string (*)(const QueryJoin& join);

  std::string_view name;            // trec_eval's name, e.g. "ndcg_cut"
  std::string_view help;
  ParamStyle style = ParamStyle::none;
  std::string_view default_params;  // trec_eval's defaults, e.g. "5,10,15,20,30,100,200,500,1000"
  Aggregate aggregate = Aggregate::mean;
  Compute compute = nullptr;        // numeric measures
  Describe describe = nullptr;      // text measures (relstring)
};

// Every implemented measure, in trec_eval's output order.
std::span<const Measure> all_measures();
const Measure* find_measure(std::string_view name);

// A measure with its parameters, as requested: "map", "P.5,10", "ndcg_cut.10",
// or a nickname ("all_trec", "official", "set"), which trec_eval expands to
// its list. Values come out in trec_eval's measure order, whatever the
// request order. Repeated requests of one measure merge their cutoffs
// ("P.5" + "P.10" gives P_5 and P_10; trec_eval would keep only the first).
// Throws UsageError for an unknown name or malformed parameters.
struct MeasureRequest {
  const Measure* measure = nullptr;
  std::vector<double> params;  // empty for ParamStyle::none
  std::vector<std::string> value_names;  // e.g. {"P_5", "P_10"}
};
std::vector<MeasureRequest> parse_measures(std::span<const std::string> names);

struct Score {
  std::string name;  // e.g. "ndcg_cut_10"
  double value = 0.0;
  std::string text;  // text measures only (relstring, runid)
  Aggregate aggregate = Aggregate::mean;
};

struct QueryScores {
  std::string qid;
  std::vector<Score> scores;  // per-query scores, measure order
};

struct Evaluation {
  std::string run_tag;
  std::vector<QueryScores> queries;  // evaluated queries by qid (byte order)
  std::vector<Score> all;            // the `all` lines, measure order

  // The `all` value of a score ("ndcg_cut_10"; a sum for counts such as
  // num_rel_ret); nullopt when not evaluated.
  std::optional<double> mean(std::string_view score_name) const;
  // One query's value; nullopt when that query or score was not evaluated.
  std::optional<double> value(std::string_view qid, std::string_view score_name) const;
  // Per-query values of one score in `queries` order (for paired statistics).
  std::vector<double> per_query(std::string_view score_name) const;
};

// Evaluates `run` against `qrels`. `measures` as for parse_measures; when
// empty, trec_eval's default ("official"). Throws UsageError for a bad
// measure name and InputError when no query has both judgments and results.
Evaluation evaluate(const Qrels& qrels, const Run& run, std::span<const std::string> measures,
                    const EvalOptions& options = {});

enum class QueryLines { omit, include };

// trec_eval's output, byte for byte: per-query blocks (when asked) in qid
// order, then the `all` block; each line "%-22s\t%s\t%.4f" (counts "%ld",
// text as is).
std::string format_trec_eval(const Evaluation& evaluation, QueryLines query_lines);
std::string format_line(const Score& score, std::string_view qid);

// ---- Evidence measures for agent and context trials ----
// `relevant` holds the question's graded concepts; grade > 0 is relevant.

// Share of the relevant concepts that reached the model's context (each
// counted once). nullopt when the question has no relevant concept.
std::optional<double> evidence_recall(const Judgments& relevant, std::span<const std::string> context_ids);

struct CitationScores {
  std::optional<double> precision;  // relevant distinct citations / distinct citations; nullopt when none cited
  std::optional<double> recall;     // relevant concepts cited / relevant concepts; nullopt when none relevant
};
CitationScores citation_scores(const Judgments& relevant, std::span<const std::string> cited_ids);

}  // namespace okfbench::reports
