#include "reports/measures.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <unordered_set>

#include "core/error.hpp"

namespace okfbench::reports {
namespace {

constexpr double kMinGeoMean = 1e-5;    // trec_eval MIN_GEO_MEAN: floor before taking logs
constexpr double kInfApEpsilon = 1e-5;  // trec_eval INFAP_EPSILON
constexpr double kRbpPersistence = 0.9;  // trec_eval's default p for rbp and rbp_resid

// ---- shared pieces of the per-query computations ----

// relevant_so_far[i] = relevant documents among the first i retrieved.
std::vector<long> relevant_prefix(const QueryJoin& join) {
  std::vector<long> prefix(join.gains.size() + 1, 0);
  for (std::size_t i = 0; i < join.gains.size(); ++i) prefix[i + 1] = prefix[i] + (join.relevant_at(i) ? 1 : 0);
  return prefix;
}

long relevant_in_top(const std::vector<long>& prefix, long k) {
  return prefix[static_cast<std::size_t>(std::clamp<long>(k, 0, static_cast<long>(prefix.size()) - 1))];
}

double ratio(double numerator, double denominator) { return denominator != 0.0 ? numerator / denominator : 0.0; }

// Average precision over the first `cutoff` ranks, normalised by all relevant documents.
double average_precision(const QueryJoin& join, long cutoff) {
  double sum = 0.0;
  long found = 0;
  const long end = std::min<long>(cutoff, join.num_ret);
  for (long i = 0; i < end; ++i) {
    if (join.relevant_at(static_cast<std::size_t>(i))) sum += static_cast<double>(++found) / static_cast<double>(i + 1);
  }
  return ratio(sum, static_cast<double>(join.num_rel));
}

// Gain as nDCG counts it: the judged level itself; unjudged and unpooled count 0.
double level_gain(int gain) { return gain > 0 ? gain : 0.0; }

// The ideal gain at 0-based position i: positive judged gains, best first, then 0.
double ideal_gain(const QueryJoin& join, std::size_t i) {
  return i < join.ideal_gains.size() ? level_gain(join.ideal_gains[i]) : 0.0;
}

std::size_t positive_ideal_count(const QueryJoin& join) {
  return static_cast<std::size_t>(
      std::count_if(join.ideal_gains.begin(), join.ideal_gains.end(), [](int g) { return g > 0; }));
}

double discount(std::size_t i) { return std::log2(static_cast<double>(i) + 2.0); }

double dcg(const QueryJoin& join, std::size_t cutoff) {
  double sum = 0.0;
  for (std::size_t i = 0; i < std::min(cutoff, join.gains.size()); ++i) sum += level_gain(join.gains[i]) / discount(i);
  return sum;
}

double ideal_dcg(const QueryJoin& join, std::size_t cutoff) {
  double sum = 0.0;
  for (std::size_t i = 0; i < std::min(cutoff, join.ideal_gains.size()); ++i) sum += ideal_gain(join, i) / discount(i);
  return sum;
}

// Interpolated precision at recall levels (trec_eval m_iprec_at_recall.c):
// for each level, the highest precision at any rank at or after the rank
// where round(level * R) relevant documents have been retrieved; 0 for a
// level the ranking never reaches.
std::vector<double> interpolated_precision(const QueryJoin& join, std::span<const double> levels) {
  std::vector<double> out(levels.size(), 0.0);
  if (join.num_ret == 0) return out;
  std::vector<long> needed(levels.size());
  for (std::size_t c = 0; c < levels.size(); ++c) needed[c] = std::lround(levels[c] * static_cast<double>(join.num_rel));
  double best = static_cast<double>(join.num_rel_ret) / static_cast<double>(join.num_ret);
  long relevant = join.num_rel_ret;
  // Walk up from the bottom so `best` is the max precision at this rank or below.
  for (long i = join.num_ret; i > 0 && relevant > 0; --i) {
    best = std::max(best, static_cast<double>(relevant) / static_cast<double>(i));
    if (join.relevant_at(static_cast<std::size_t>(i - 1))) {
      for (std::size_t c = 0; c < levels.size(); ++c) {
        if (needed[c] == relevant) out[c] = best;
      }
      --relevant;
    }
  }
  for (std::size_t c = 0; c < levels.size(); ++c) {
    if (needed[c] <= relevant) out[c] = best;  // levels met before the first relevant document (e.g. 0.0)
  }
  return out;
}

// ---- the measures: one function each ----

void num_ret(const QueryJoin& j, std::span<const double>, std::span<double> out) { out[0] = static_cast<double>(j.num_ret); }
void num_rel(const QueryJoin& j, std::span<const double>, std::span<double> out) { out[0] = static_cast<double>(j.num_rel); }
void num_rel_ret(const QueryJoin& j, std::span<const double>, std::span<double> out) {
  out[0] = static_cast<double>(j.num_rel_ret);
}

void map(const QueryJoin& j, std::span<const double>, std::span<double> out) { out[0] = average_precision(j, j.num_ret); }

void rprec(const QueryJoin& j, std::span<const double>, std::span<double> out) {
  out[0] = ratio(static_cast<double>(relevant_in_top(relevant_prefix(j), j.num_rel)), static_cast<double>(j.num_rel));
}

// Buckley & Voorhees, "Retrieval Evaluation with Incomplete Information", SIGIR 2004.
void bpref(const QueryJoin& j, std::span<const double>, std::span<double> out) {
  double sum = 0.0;
  long nonrel_above = 0;
  const double bound = static_cast<double>(std::min(j.num_nonrel, j.num_rel));
  for (int gain : j.gains) {
    if (gain < 0) continue;  // unjudged or not in the pool: no preference either way
    if (gain < j.relevance_level) {
      ++nonrel_above;
    } else {
      sum += nonrel_above > 0 ? 1.0 - static_cast<double>(std::min(nonrel_above, j.num_rel)) / bound : 1.0;
    }
  }
  out[0] = ratio(sum, static_cast<double>(j.num_rel));
}

void recip_rank(const QueryJoin& j, std::span<const double>, std::span<double> out) {
  out[0] = 0.0;
  for (std::size_t i = 0; i < j.gains.size(); ++i) {
    if (j.relevant_at(i)) {
      out[0] = 1.0 / static_cast<double>(i + 1);
      return;
    }
  }
}

void iprec_at_recall(const QueryJoin& j, std::span<const double> levels, std::span<double> out) {
  auto values = interpolated_precision(j, levels);
  std::copy(values.begin(), values.end(), out.begin());
}

void precision(const QueryJoin& j, std::span<const double> cutoffs, std::span<double> out) {
  auto prefix = relevant_prefix(j);
  for (std::size_t c = 0; c < cutoffs.size(); ++c) {
    const long k = static_cast<long>(cutoffs[c]);
    out[c] = static_cast<double>(relevant_in_top(prefix, k)) / static_cast<double>(k);
  }
}

void recall(const QueryJoin& j, std::span<const double> cutoffs, std::span<double> out) {
  auto prefix = relevant_prefix(j);
  for (std::size_t c = 0; c < cutoffs.size(); ++c) {
    out[c] = ratio(static_cast<double>(relevant_in_top(prefix, static_cast<long>(cutoffs[c]))),
                   static_cast<double>(j.num_rel));
  }
}

// Yilmaz & Aslam, "Estimating Average Precision with Incomplete and Imperfect
// Judgments", CIKM 2006: precision at each relevant document estimated from
// the judged documents above it.
void inf_ap(const QueryJoin& j, std::span<const double>, std::span<double> out) {
  double sum = 0.0;
  long rel_above = 0, nonrel_above = 0, unjudged_above = 0;
  for (std::size_t i = 0; i < j.gains.size(); ++i) {
    const int gain = j.gains[i];
    if (gain == QueryJoin::not_in_qrels) continue;
    if (gain == QueryJoin::unjudged) {
      ++unjudged_above;
    } else if (gain < j.relevance_level) {
      ++nonrel_above;
    } else if (i == 0) {
      sum += 1.0;
      ++rel_above;
    } else {
      const double above = static_cast<double>(i);
      const double judged = static_cast<double>(rel_above + nonrel_above + unjudged_above);
      sum += 1.0 / (above + 1.0) + (above / (above + 1.0)) * (judged / above) *
                                       ((static_cast<double>(rel_above) + kInfApEpsilon) /
                                        (static_cast<double>(rel_above + nonrel_above) + 2 * kInfApEpsilon));
      ++rel_above;
    }
  }
  out[0] = ratio(sum, static_cast<double>(j.num_rel));
}

// Precision at multiples of R: the cutoff is (long)(m * R + 0.9) as in trec_eval.
void rprec_mult(const QueryJoin& j, std::span<const double> multiples, std::span<double> out) {
  auto prefix = relevant_prefix(j);
  for (std::size_t c = 0; c < multiples.size(); ++c) {
    const long k = static_cast<long>(multiples[c] * static_cast<double>(j.num_rel) + 0.9);
    out[c] = ratio(static_cast<double>(relevant_in_top(prefix, k)), static_cast<double>(k));
  }
}

// Linear utility a*rel_ret + b*nonrel_ret + c*rel_not_ret (+ d*nonrel_not_ret,
// which needs the collection size and is 0 by default).
void utility(const QueryJoin& j, std::span<const double> abcd, std::span<double> out) {
  if (j.num_ret == 0) {
    out[0] = 0.0;  // trec_eval -c: a query without results scores 0
    return;
  }
  const double rel_ret = static_cast<double>(j.num_rel_ret);
  out[0] = abcd[0] * rel_ret + abcd[1] * (static_cast<double>(j.num_ret) - rel_ret) +
           abcd[2] * (static_cast<double>(j.num_rel) - rel_ret);
}

void eleven_point_average(const QueryJoin& j, std::span<const double> levels, std::span<double> out) {
  auto values = interpolated_precision(j, levels);
  double sum = 0.0;
  for (double v : values) sum += v;
  out[0] = sum / static_cast<double>(levels.size());
}

// trec_eval "binG": each relevant document contributes 1 / log2(2 + non-relevant above it).
void bin_g(const QueryJoin& j, std::span<const double>, std::span<double> out) {
  double sum = 0.0;
  long found = 0;
  for (std::size_t i = 0; i < j.gains.size(); ++i) {
    if (!j.relevant_at(i)) continue;
    ++found;
    sum += 1.0 / std::log2(static_cast<double>(i + 3 - static_cast<std::size_t>(found)));
  }
  out[0] = found > 0 ? ratio(sum, static_cast<double>(j.num_rel)) : 0.0;
}

// trec_eval "G": gain(d) / log2(2 + ideal cost so far - gain so far), normalised by all gain.
void g_measure(const QueryJoin& j, std::span<const double>, std::span<double> out) {
  double total_ideal = 0.0;
  for (std::size_t i = 0; i < j.ideal_gains.size(); ++i) total_ideal += ideal_gain(j, i);
  double sum = 0.0, gained = 0.0, cost = 0.0;
  for (std::size_t i = 0; i < j.gains.size(); ++i) {
    const double g = level_gain(j.gains[i]);
    gained += g;
    cost += std::max(ideal_gain(j, i), 1.0);  // every rank costs at least 1
    if (g != 0.0) sum += g / std::log2(2.0 + cost - gained);
  }
  out[0] = ratio(sum, total_ideal);
}

void ndcg(const QueryJoin& j, std::span<const double>, std::span<double> out) {
  const double ideal = ideal_dcg(j, j.ideal_gains.size());
  out[0] = ratio(dcg(j, j.gains.size()), ideal);
}

// trec_eval "ndcg_rel": nDCG averaged at each document with positive gain;
// one not retrieved counts the nDCG at the end of the ranking.
void ndcg_rel(const QueryJoin& j, std::span<const double>, std::span<double> out) {
  const std::size_t positives = positive_ideal_count(j);
  double results = 0.0, ideal = 0.0, sum = 0.0;
  long positive_ret = 0;
  for (std::size_t i = 0; i < j.gains.size(); ++i) {
    const double g = level_gain(j.gains[i]);
    results += g / discount(i);
    ideal += ideal_gain(j, i) / discount(i);
    if (g > 0) {
      sum += results / ideal;
      ++positive_ret;
    }
  }
  if (j.gains.size() < positives) ideal = ideal_dcg(j, positives);
  if (positives > 0) sum += static_cast<double>(static_cast<long>(positives) - positive_ret) * results / ideal;
  out[0] = sum > 0.0 ? sum / static_cast<double>(positives) : 0.0;
}

// trec_eval "Rndcg": nDCG averaged at the ranks where the ideal gain changes
// level (the R levels), plus the end of the ranking when it runs past them.
void rndcg(const QueryJoin& j, std::span<const double>, std::span<double> out) {
  out[0] = 0.0;
  if (j.num_rel == 0) return;
  const std::size_t ret = j.gains.size();
  double results = 0.0, ideal = 0.0, sum = 0.0;
  long points = 0;
  double current = ideal_gain(j, 0);  // the ideal gain level we are in
  auto step_ideal = [&](std::size_t i) {
    const double g = ideal_gain(j, i);
    if (g != current) {  // an R level ends here: take nDCG over the ranks before
      if (ideal > 0.0) {
        sum += results / ideal;
        ++points;
      }
      current = g;
    }
    ideal += g / discount(i);
  };
  std::size_t i = 0;
  for (; i < ret && current > 0.0; ++i) {
    step_ideal(i);
    results += level_gain(j.gains[i]) / discount(i);
  }
  if (i < ret) {  // the ideal has no gain left; the rest of the ranking still counts once
    results = dcg(j, ret);
    if (ideal > 0.0) {
      sum += results / ideal;
      ++points;
    }
  }
  for (; current > 0.0; ++i) step_ideal(i);  // the ranking ended before the ideal did
  out[0] = ratio(sum, static_cast<double>(points));
}

void ndcg_cut(const QueryJoin& j, std::span<const double> cutoffs, std::span<double> out) {
  for (std::size_t c = 0; c < cutoffs.size(); ++c) {
    const auto k = static_cast<std::size_t>(cutoffs[c]);
    const double ideal = ideal_dcg(j, k);
    out[c] = ideal > 0.0 ? dcg(j, k) / ideal : dcg(j, k);
  }
}

void map_cut(const QueryJoin& j, std::span<const double> cutoffs, std::span<double> out) {
  for (std::size_t c = 0; c < cutoffs.size(); ++c) out[c] = average_precision(j, static_cast<long>(cutoffs[c]));
}

void relative_precision(const QueryJoin& j, std::span<const double> cutoffs, std::span<double> out) {
  auto prefix = relevant_prefix(j);
  for (std::size_t c = 0; c < cutoffs.size(); ++c) {
    const long k = static_cast<long>(cutoffs[c]);
    out[c] = ratio(static_cast<double>(relevant_in_top(prefix, k)), static_cast<double>(std::min(k, j.num_rel)));
  }
}

void success(const QueryJoin& j, std::span<const double> cutoffs, std::span<double> out) {
  auto prefix = relevant_prefix(j);
  for (std::size_t c = 0; c < cutoffs.size(); ++c) {
    out[c] = relevant_in_top(prefix, static_cast<long>(cutoffs[c])) > 0 ? 1.0 : 0.0;
  }
}

double set_precision(const QueryJoin& j) {
  return ratio(static_cast<double>(j.num_rel_ret), static_cast<double>(j.num_ret));
}
double set_recall_value(const QueryJoin& j) {
  return ratio(static_cast<double>(j.num_rel_ret), static_cast<double>(j.num_rel));
}

void set_p(const QueryJoin& j, std::span<const double>, std::span<double> out) { out[0] = set_precision(j); }
void set_relative_p(const QueryJoin& j, std::span<const double>, std::span<double> out) {
  out[0] = ratio(static_cast<double>(j.num_rel_ret), static_cast<double>(std::min(j.num_ret, j.num_rel)));
}
void set_recall(const QueryJoin& j, std::span<const double>, std::span<double> out) { out[0] = set_recall_value(j); }
// One division, not set_P * set_recall: the two round differently and
// trec_eval's 4-decimal output shows it (49/800 prints 0.0612, not 0.0613).
void set_map(const QueryJoin& j, std::span<const double>, std::span<double> out) {
  const double rel_ret = static_cast<double>(j.num_rel_ret);
  out[0] = ratio(rel_ret * rel_ret, static_cast<double>(j.num_ret) * static_cast<double>(j.num_rel));
}

// van Rijsbergen's F with weight beta: (1 + b^2) P R / (b^2 P + R).
void set_f(const QueryJoin& j, std::span<const double> beta, std::span<double> out) {
  const double p = set_precision(j), r = set_recall_value(j), b2 = beta[0] * beta[0];
  out[0] = ratio((1.0 + b2) * p * r, b2 * p + r);
}

void num_nonrel_judged_ret(const QueryJoin& j, std::span<const double>, std::span<double> out) {
  out[0] = static_cast<double>(
      std::count_if(j.gains.begin(), j.gains.end(), [&](int g) { return g >= 0 && g < j.relevance_level; }));
}

// Moffat & Zobel, "Rank-Biased Precision for Measurement of Retrieval
// Effectiveness", TOIS 2008: (1 - p) sum gain_i p^(i-1), gains scaled to
// [0, 1] by the query's largest judged level when it exceeds 1.
void rbp(const QueryJoin& j, std::span<const double>, std::span<double> out) {
  const double top = static_cast<double>(j.max_gain);
  const double scale = top > 1.0 ? top : 1.0;
  double sum = 0.0, weight = 1.0;
  for (int gain : j.gains) {
    sum += level_gain(gain) / scale * weight;
    weight *= kRbpPersistence;
  }
  out[0] = (1.0 - kRbpPersistence) * sum;
}

// The rbp mass still undecided: unjudged retrieved documents plus everything
// below the ranking (p^n); 0 when every retrieved document is judged.
void rbp_resid(const QueryJoin& j, std::span<const double>, std::span<double> out) {
  double unjudged = 0.0, weight = 1.0;
  bool any = false;
  for (int gain : j.gains) {
    if (gain < 0) {
      unjudged += weight;
      any = true;
    }
    weight *= kRbpPersistence;
  }
  out[0] = any ? weight + (1.0 - kRbpPersistence) * unjudged : 0.0;
}

// Share of unjudged documents in the top k (missing ranks count as judged).
void unjudged_at(const QueryJoin& j, std::span<const double> cutoffs, std::span<double> out) {
  for (std::size_t c = 0; c < cutoffs.size(); ++c) {
    const auto k = static_cast<std::size_t>(cutoffs[c]);
    const auto end = j.gains.begin() + static_cast<long>(std::min(k, j.gains.size()));
    out[c] = static_cast<double>(std::count_if(j.gains.begin(), end, [](int g) { return g < 0; })) /
             static_cast<double>(k);
  }
}

std::string relstring(const QueryJoin& j) {
  std::string text;
  for (std::size_t i = 0; i < std::min<std::size_t>(10, j.gains.size()); ++i) {
    const int g = j.gains[i];
    text += g > 9 ? '>' : g >= 0 ? static_cast<char>('0' + g) : g == QueryJoin::not_in_qrels ? '-' : '.';
  }
  return text;
}

constexpr std::string_view kCutoffs = "5,10,15,20,30,100,200,500,1000";
constexpr std::string_view kRecallLevels = "0.0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1.0";

// In trec_eval's order (measures.c), which is also the output order.
const std::array kMeasures = {
    Measure{"runid", "Run tag of the evaluated run.", ParamStyle::none, "", Aggregate::run_tag},
    Measure{"num_q", "Number of evaluated queries.", ParamStyle::none, "", Aggregate::query_count},
    Measure{"num_ret", "Number of retrieved documents.", ParamStyle::none, "", Aggregate::sum, num_ret},
    Measure{"num_rel", "Number of relevant documents (gain >= relevance level).", ParamStyle::none, "", Aggregate::sum,
            num_rel},
    Measure{"num_rel_ret", "Number of relevant retrieved documents.", ParamStyle::none, "", Aggregate::sum, num_rel_ret},
    Measure{"map", "Mean average precision: precision at each relevant document, averaged over all relevant.",
            ParamStyle::none, "", Aggregate::mean, map},
    Measure{"gm_map", "Geometric mean of average precision (each floored at 1e-5).", ParamStyle::none, "",
            Aggregate::geometric_mean, map},
    Measure{"Rprec", "Precision after R documents, R = number of relevant.", ParamStyle::none, "", Aggregate::mean, rprec},
    Measure{"bpref", "Binary preference (Buckley & Voorhees 2004): judged non-relevant ranked above relevant.",
            ParamStyle::none, "", Aggregate::mean, bpref},
    Measure{"recip_rank", "Reciprocal rank of the first relevant document.", ParamStyle::none, "", Aggregate::mean,
            recip_rank},
    Measure{"iprec_at_recall", "Interpolated precision at recall levels.", ParamStyle::levels, kRecallLevels,
            Aggregate::mean, iprec_at_recall},
    Measure{"P", "Precision at cutoffs; missing ranks count as non-relevant.", ParamStyle::cutoffs, kCutoffs,
            Aggregate::mean, precision},
    Measure{"relstring", "Relevance of the first 10 documents: digit = gain, '-' not in qrels, '.' unjudged.",
            ParamStyle::none, "", Aggregate::per_query_text, nullptr, relstring},
    Measure{"recall", "Recall at cutoffs.", ParamStyle::cutoffs, kCutoffs, Aggregate::mean, recall},
    Measure{"infAP", "Inferred AP (Yilmaz & Aslam 2006); equals AP with complete judgments.", ParamStyle::none, "",
            Aggregate::mean, inf_ap},
    Measure{"gm_bpref", "Geometric mean of bpref (each floored at 1e-5).", ParamStyle::none, "",
            Aggregate::geometric_mean, bpref},
    Measure{"Rprec_mult", "Precision at multiples of R.", ParamStyle::levels, "0.2,0.4,0.6,0.8,1.0,1.2,1.4,1.6,1.8,2.0",
            Aggregate::mean, rprec_mult},
    Measure{"utility", "Linear utility a*rel_ret + b*nonrel_ret + c*rel_not_ret; settings a,b,c,d.",
            ParamStyle::settings, "1,-1,0,0", Aggregate::mean, utility},
    Measure{"11pt_avg", "Interpolated precision averaged over the given recall levels.", ParamStyle::settings,
            kRecallLevels, Aggregate::mean, eleven_point_average},
    Measure{"binG", "Binary G: relevant documents discounted by log2(2 + non-relevant above).", ParamStyle::none, "",
            Aggregate::mean, bin_g},
    Measure{"G", "Normalized gain G (trec_eval, experimental).", ParamStyle::none, "", Aggregate::mean, g_measure},
    Measure{"ndcg", "nDCG over the whole ranking, linear gain, ideal from the qrels.", ParamStyle::none, "",
            Aggregate::mean, ndcg},
    Measure{"ndcg_rel", "nDCG averaged over documents with positive gain.", ParamStyle::none, "", Aggregate::mean,
            ndcg_rel},
    Measure{"Rndcg", "nDCG averaged at the R levels of the ideal ranking.", ParamStyle::none, "", Aggregate::mean, rndcg},
    Measure{"ndcg_cut", "nDCG at cutoffs, linear gain, ideal from the qrels.", ParamStyle::cutoffs, kCutoffs,
            Aggregate::mean, ndcg_cut},
    Measure{"map_cut", "Average precision over the first k documents.", ParamStyle::cutoffs, kCutoffs, Aggregate::mean,
            map_cut},
    Measure{"relative_P", "Relevant in the top k divided by min(k, R).", ParamStyle::cutoffs, kCutoffs, Aggregate::mean,
            relative_precision},
    Measure{"success", "1 when a relevant document is in the top k.", ParamStyle::cutoffs, "1,5,10", Aggregate::mean,
            success},
    Measure{"set_P", "Precision of the whole retrieved set.", ParamStyle::none, "", Aggregate::mean, set_p},
    Measure{"set_relative_P", "Relevant retrieved divided by min(retrieved, R).", ParamStyle::none, "", Aggregate::mean,
            set_relative_p},
    Measure{"set_recall", "Recall of the whole retrieved set.", ParamStyle::none, "", Aggregate::mean, set_recall},
    Measure{"set_map", "set_P times set_recall.", ParamStyle::none, "", Aggregate::mean, set_map},
    Measure{"set_F", "F measure of the retrieved set; setting beta (default 1).", ParamStyle::settings, "1.0",
            Aggregate::mean, set_f},
    Measure{"num_nonrel_judged_ret", "Number of retrieved documents judged non-relevant.", ParamStyle::none, "",
            Aggregate::sum, num_nonrel_judged_ret},
    Measure{"rbp", "Rank-biased precision, p = 0.9 (Moffat & Zobel 2008).", ParamStyle::none, "", Aggregate::mean, rbp},
    Measure{"rbp_resid", "Rank-biased precision residual, p = 0.9.", ParamStyle::none, "", Aggregate::mean, rbp_resid},
    Measure{"unj", "Share of unjudged documents in the top k.", ParamStyle::cutoffs, "5,10,20", Aggregate::mean,
            unjudged_at},
};

// trec_eval's nicknames (measures.c), limited to what is implemented here.
const std::map<std::string_view, std::vector<std::string_view>>& nicknames() {
  static const std::map<std::string_view, std::vector<std::string_view>> table = [] {
    std::map<std::string_view, std::vector<std::string_view>> t;
    t["official"] = {"runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map",
                     "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P"};
    t["set"] = {"runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility",
                "set_P", "set_recall", "set_relative_P", "set_map", "set_F"};
    for (const Measure& m : kMeasures) t["all_trec"].push_back(m.name);
    return t;
  }();
  return table;
}

// ---- parsing measure requests ----

std::vector<std::string_view> split_commas(std::string_view text) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    std::size_t comma = text.find(',', start);
    parts.push_back(text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) return parts;
    start = comma + 1;
  }
}

double parse_param(std::string_view measure, std::string_view text, ParamStyle style) {
  double value = 0.0;
  if (style == ParamStyle::cutoffs) {
    long k = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), k);
    if (error != std::errc{} || end != text.data() + text.size() || k <= 0) {
      throw UsageError(fmt::format("measure '{}': cutoff '{}' is not a positive integer", measure, text));
    }
    return static_cast<double>(k);
  }
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size() || !std::isfinite(value)) {
    throw UsageError(fmt::format("measure '{}': parameter '{}' is not a number", measure, text));
  }
  return value;
}

std::vector<double> parse_params(const Measure& m, std::string_view text) {
  std::vector<double> params;
  for (std::string_view part : split_commas(text)) params.push_back(parse_param(m.name, part, m.style));
  if (m.style == ParamStyle::cutoffs || m.style == ParamStyle::levels) {
    std::sort(params.begin(), params.end());
    if (std::adjacent_find(params.begin(), params.end()) != params.end()) {
      throw UsageError(fmt::format("measure '{}': duplicate cutoff in '{}'", m.name, text));
    }
  }
  if (m.name == "utility" && params.size() != 4) {
    throw UsageError(fmt::format("measure 'utility' takes 4 settings a,b,c,d; got '{}'", text));
  }
  if (m.name == "set_F" && params.size() != 1) {
    throw UsageError(fmt::format("measure 'set_F' takes one setting (beta); got '{}'", text));
  }
  return params;
}

std::vector<std::string> value_names(const Measure& m, const std::vector<double>& params, std::string_view printable) {
  std::vector<std::string> names;
  switch (m.style) {
    case ParamStyle::none:
      names.emplace_back(m.name);
      break;
    case ParamStyle::cutoffs:
      for (double p : params) names.push_back(fmt::format("{}_{}", m.name, static_cast<long>(p)));
      break;
    case ParamStyle::levels:
      for (double p : params) {
        char buffer[64];
        std::snprintf(buffer, sizeof buffer, "%3.2f", p);  // trec_eval's spelling of the level
        names.push_back(fmt::format("{}_{}", m.name, buffer));
      }
      break;
    case ParamStyle::settings:
      names.push_back(printable.empty() ? std::string(m.name) : fmt::format("{}_{}", m.name, printable));
      break;
  }
  return names;
}

struct Wanted {
  bool explicit_params = false;
  std::string printable;
  std::vector<double> params;
};

void want(std::map<const Measure*, Wanted>& wanted, const Measure& m, std::string_view param_text) {
  Wanted& w = wanted[&m];
  if (param_text.empty()) return;
  if (m.style == ParamStyle::none) {
    throw UsageError(fmt::format("measure '{}' takes no parameters (got '{}')", m.name, param_text));
  }
  auto params = parse_params(m, param_text);
  if (m.style == ParamStyle::settings) {
    if (w.explicit_params) return;  // as trec_eval: the first settings given win
    w.params = std::move(params);
    w.printable = std::string(param_text);
  } else {
    // Deliberate difference: trec_eval keeps only the first "-m P.k"; here
    // repeated requests of one measure add their cutoffs ("P.5" + "P.10").
    if (w.explicit_params) params.insert(params.end(), w.params.begin(), w.params.end());
    std::sort(params.begin(), params.end());
    params.erase(std::unique(params.begin(), params.end()), params.end());
    w.params = std::move(params);
  }
  w.explicit_params = true;
}

// ---- evaluation ----

std::string format_number(double value, Aggregate aggregate) {
  char buffer[64];
  if (aggregate == Aggregate::sum || aggregate == Aggregate::query_count) {
    std::snprintf(buffer, sizeof buffer, "%ld", static_cast<long>(value));
  } else {
    std::snprintf(buffer, sizeof buffer, "%6.4f", value);
  }
  return buffer;
}

bool printed_per_query(Aggregate s) { return s == Aggregate::mean || s == Aggregate::sum || s == Aggregate::per_query_text; }

void check_unique_docnos(const std::string& qid, const std::vector<RunEntry>& entries) {
  std::vector<std::string_view> docnos;
  docnos.reserve(entries.size());
  for (const RunEntry& e : entries) docnos.push_back(e.docno);
  std::sort(docnos.begin(), docnos.end());
  auto dup = std::adjacent_find(docnos.begin(), docnos.end());
  if (dup != docnos.end()) {
    throw InputError(fmt::format("run: document '{}' is retrieved twice for query '{}'; list each document once per "
                                 "query",
                                 *dup, qid));
  }
}

}  // namespace

QueryJoin join_query(const Judgments& judgments, const std::vector<RunEntry>& entries, int relevance_level) {
  QueryJoin join;
  join.relevance_level = relevance_level;
  std::vector<const RunEntry*> order;
  order.reserve(entries.size());
  for (const RunEntry& e : entries) order.push_back(&e);
  std::sort(order.begin(), order.end(), [](const RunEntry* a, const RunEntry* b) {
    if (a->score != b->score) return a->score > b->score;
    return a->docno > b->docno;
  });
  join.gains.reserve(order.size());
  for (const RunEntry* e : order) {
    auto it = judgments.find(e->docno);
    const int gain = it == judgments.end() ? QueryJoin::not_in_qrels : it->second < 0 ? QueryJoin::unjudged : it->second;
    join.gains.push_back(gain);
    if (gain >= 0 && gain >= relevance_level) ++join.num_rel_ret;
  }
  join.num_ret = static_cast<long>(join.gains.size());
  for (const auto& [docno, gain] : judgments) {
    if (gain < 0) continue;
    join.max_gain = std::max(join.max_gain, gain);
    join.ideal_gains.push_back(gain);
    if (gain >= relevance_level) ++join.num_rel;
    else ++join.num_nonrel;
  }
  std::sort(join.ideal_gains.begin(), join.ideal_gains.end(), std::greater<>());
  return join;
}

std::span<const Measure> all_measures() { return kMeasures; }

const Measure* find_measure(std::string_view name) {
  for (const Measure& m : kMeasures) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

std::vector<MeasureRequest> parse_measures(std::span<const std::string> names) {
  std::map<const Measure*, Wanted> wanted;
  for (const std::string& full : names) {
    const std::size_t dot = full.find('.');
    const std::string_view root = std::string_view(full).substr(0, dot);
    const std::string_view param_text = dot == std::string::npos ? "" : std::string_view(full).substr(dot + 1);
    if (auto nick = nicknames().find(root); nick != nicknames().end()) {
      if (!param_text.empty()) throw UsageError(fmt::format("measure set '{}' takes no parameters", root));
      for (std::string_view member : nick->second) want(wanted, *find_measure(member), "");
      continue;
    }
    const Measure* m = find_measure(root);
    if (m == nullptr) {
      throw UsageError(fmt::format("unknown measure '{}'; known: all_trec, official, set, or one of `okfbench "
                                   "trec-eval --list-measures`",
                                   full));
    }
    if (dot != std::string::npos && param_text.empty()) {
      throw UsageError(fmt::format("measure '{}': empty parameter list after '.'", full));
    }
    want(wanted, *m, param_text);
  }
  std::vector<MeasureRequest> requests;
  for (const Measure& m : kMeasures) {  // output in trec_eval's order, not request order
    auto it = wanted.find(&m);
    if (it == wanted.end()) continue;
    MeasureRequest r;
    r.measure = &m;
    r.params = it->second.explicit_params || m.default_params.empty() ? it->second.params
                                                                      : parse_params(m, m.default_params);
    r.value_names = value_names(m, r.params, it->second.printable);
    requests.push_back(std::move(r));
  }
  return requests;
}

Evaluation evaluate(const Qrels& qrels, const Run& run, std::span<const std::string> measures,
                    const EvalOptions& options) {
  static const std::vector<std::string> kOfficial = {"official"};
  const auto requests = parse_measures(measures.empty() ? std::span<const std::string>(kOfficial) : measures);
  if (options.relevance_level < 0) {
    throw UsageError(fmt::format("relevance level {} is negative; use 1 (default) or higher", options.relevance_level));
  }
  Evaluation ev;
  ev.run_tag = run.tag;
  std::vector<std::vector<double>> per_request_values;  // [value slot][query]
  static const std::vector<RunEntry> kNoResults;
  std::vector<double> slot;
  for (const auto& [qid, judgments] : qrels.queries) {
    auto found = run.queries.find(qid);
    if (found == run.queries.end() && options.missing == MissingQueries::ignore) continue;
    const auto& entries = found == run.queries.end() ? kNoResults : found->second;
    check_unique_docnos(qid, entries);
    const QueryJoin join = join_query(judgments, entries, options.relevance_level);
    QueryScores q{qid, {}};
    std::size_t value_index = 0;
    for (const MeasureRequest& r : requests) {
      const Measure& m = *r.measure;
      if (m.aggregate == Aggregate::per_query_text) {
        q.scores.push_back(Score{r.value_names[0], 0.0, fmt::format("'{}'", m.describe(join)), m.aggregate});
        continue;
      }
      if (m.compute == nullptr) continue;
      slot.assign(r.value_names.size(), 0.0);
      m.compute(join, r.params, slot);
      for (std::size_t v = 0; v < slot.size(); ++v, ++value_index) {
        if (per_request_values.size() <= value_index) per_request_values.emplace_back();
        per_request_values[value_index].push_back(slot[v]);
        if (printed_per_query(m.aggregate)) q.scores.push_back(Score{r.value_names[v], slot[v], "", m.aggregate});
      }
    }
    ev.queries.push_back(std::move(q));
  }
  if (ev.queries.empty()) {
    throw InputError(fmt::format("no query has both relevance judgments and retrieved documents (qrels: {} queries, "
                                 "run: {} queries); check that the query ids match",
                                 qrels.queries.size(), run.queries.size()));
  }
  const double n = static_cast<double>(ev.queries.size());
  std::size_t value_index = 0;
  for (const MeasureRequest& r : requests) {
    const Measure& m = *r.measure;
    switch (m.aggregate) {
      case Aggregate::run_tag:
        ev.all.push_back(Score{r.value_names[0], 0.0, run.tag, m.aggregate});
        continue;
      case Aggregate::query_count:
        ev.all.push_back(Score{r.value_names[0], n, "", m.aggregate});
        continue;
      case Aggregate::per_query_text:
        continue;
      default:
        break;
    }
    for (const std::string& name : r.value_names) {
      const auto& values = per_request_values[value_index++];
      double total = 0.0;
      for (double v : values) total += m.aggregate == Aggregate::geometric_mean ? std::log(std::max(v, kMinGeoMean)) : v;
      const double value = m.aggregate == Aggregate::sum              ? total
                           : m.aggregate == Aggregate::geometric_mean ? std::exp(total / n)
                                                                  : total / n;
      ev.all.push_back(Score{name, value, "", m.aggregate});
    }
  }
  return ev;
}

std::optional<double> Evaluation::mean(std::string_view score_name) const {
  for (const Score& s : all) {
    if (s.name == score_name && s.text.empty()) return s.value;
  }
  return std::nullopt;
}

std::optional<double> Evaluation::value(std::string_view qid, std::string_view score_name) const {
  for (const QueryScores& q : queries) {
    if (q.qid != qid) continue;
    for (const Score& s : q.scores) {
      if (s.name == score_name && s.text.empty()) return s.value;
    }
  }
  return std::nullopt;
}

std::vector<double> Evaluation::per_query(std::string_view score_name) const {
  std::vector<double> values;
  for (const QueryScores& q : queries) {
    for (const Score& s : q.scores) {
      if (s.name == score_name && s.text.empty()) values.push_back(s.value);
    }
  }
  return values;
}

std::string format_line(const Score& score, std::string_view qid) {
  const std::string value = score.text.empty() && score.aggregate != Aggregate::run_tag &&
                                    score.aggregate != Aggregate::per_query_text
                                ? format_number(score.value, score.aggregate)
                                : score.text;
  char name[64];
  std::snprintf(name, sizeof name, "%-22s", score.name.c_str());
  return fmt::format("{}\t{}\t{}\n", name, qid, value);
}

std::string format_trec_eval(const Evaluation& evaluation, QueryLines query_lines) {
  std::string out;
  if (query_lines == QueryLines::include) {
    for (const QueryScores& q : evaluation.queries) {
      for (const Score& s : q.scores) out += format_line(s, q.qid);
    }
  }
  for (const Score& s : evaluation.all) out += format_line(s, "all");
  return out;
}

// ---- evidence measures ----

std::optional<double> evidence_recall(const Judgments& relevant, std::span<const std::string> context_ids) {
  const std::unordered_set<std::string_view> reached(context_ids.begin(), context_ids.end());
  long wanted = 0, found = 0;
  for (const auto& [id, grade] : relevant) {
    if (grade <= 0) continue;
    ++wanted;
    if (reached.contains(id)) ++found;
  }
  if (wanted == 0) return std::nullopt;
  return static_cast<double>(found) / static_cast<double>(wanted);
}

CitationScores citation_scores(const Judgments& relevant, std::span<const std::string> cited_ids) {
  const std::set<std::string_view> cited(cited_ids.begin(), cited_ids.end());
  long relevant_total = 0, relevant_cited = 0;
  for (const auto& [id, grade] : relevant) {
    if (grade <= 0) continue;
    ++relevant_total;
    if (cited.contains(id)) ++relevant_cited;
  }
  CitationScores scores;
  if (!cited.empty()) scores.precision = static_cast<double>(relevant_cited) / static_cast<double>(cited.size());
  if (relevant_total > 0) scores.recall = static_cast<double>(relevant_cited) / static_cast<double>(relevant_total);
  return scores;
}

}  // namespace okfbench::reports
