// Measures against trec_eval: golden outputs of trec_eval 10.0-rc3 on three
// runs over the Cranfield qrels ($OKFBENCH_DATA/trec_eval), and exact values on
// tiny hand-computed rankings.
#include "reports/measures.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <sstream>

#include "core/error.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::reports {
namespace {

namespace fs = std::filesystem;

fs::path trec_dir() { return test::data_root() / "trec_eval"; }

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Compares our all_trec output with trec_eval's, byte for byte; on a
// difference names the first few lines that differ.
void expect_same_as_trec_eval(const std::string& run_name, MissingQueries missing, const std::string& golden_name) {
  const fs::path golden = trec_dir() / golden_name;
  if (!fs::exists(golden)) GTEST_SKIP() << "no reference output " << golden;
  const Qrels qrels = read_qrels(trec_dir() / "cran.qrels");
  const reports::Run run = read_run(trec_dir() / run_name);
  const std::vector<std::string> measures = {"all_trec"};
  const Evaluation ev = evaluate(qrels, run, measures, {.missing = missing});
  const auto ours = lines_of(format_trec_eval(ev, QueryLines::include));
  const auto theirs = lines_of(test::read_file(golden));
  int shown = 0;
  for (std::size_t i = 0; i < std::max(ours.size(), theirs.size()) && shown < 10; ++i) {
    const std::string a = i < ours.size() ? ours[i] : "<missing>";
    const std::string b = i < theirs.size() ? theirs[i] : "<missing>";
    if (a != b) {
      ADD_FAILURE() << golden_name << " line " << i + 1 << "\n  ours:      " << a << "\n  trec_eval: " << b;
      ++shown;
    }
  }
  EXPECT_EQ(ours.size(), theirs.size());
}

TEST(MeasuresGolden, Fts5Complete) {
  if (!test::have_data()) GTEST_SKIP() << "no reference data";
  expect_same_as_trec_eval("run.fts5", MissingQueries::count_as_zero, "run.fts5.all_trec.c.out");
}

TEST(MeasuresGolden, Fts5) {
  if (!test::have_data()) GTEST_SKIP() << "no reference data";
  expect_same_as_trec_eval("run.fts5", MissingQueries::ignore, "run.fts5.all_trec.out");
}

TEST(MeasuresGolden, TiesComplete) {
  if (!test::have_data()) GTEST_SKIP() << "no reference data";
  expect_same_as_trec_eval("run.ties", MissingQueries::count_as_zero, "run.ties.all_trec.c.out");
}

TEST(MeasuresGolden, Ties) {
  if (!test::have_data()) GTEST_SKIP() << "no reference data";
  expect_same_as_trec_eval("run.ties", MissingQueries::ignore, "run.ties.all_trec.out");
}

TEST(MeasuresGolden, SparseComplete) {
  if (!test::have_data()) GTEST_SKIP() << "no reference data";
  expect_same_as_trec_eval("run.sparse", MissingQueries::count_as_zero, "run.sparse.all_trec.c.out");
}

// Without -c, trec_eval ignores the queries with no results: the per-query
// values of the evaluated queries are the same as with -c, and the means are
// over those queries only. (No reference file exists for this case.)
TEST(MeasuresGolden, SparseWithoutCompleteAveragesOnlyRetrievedQueries) {
  if (!test::have_data()) GTEST_SKIP() << "no reference data";
  const Qrels qrels = read_qrels(trec_dir() / "cran.qrels");
  const reports::Run run = read_run(trec_dir() / "run.sparse");
  const std::vector<std::string> measures = {"map", "ndcg_cut.10"};
  const Evaluation partial = evaluate(qrels, run, measures);
  const Evaluation complete = evaluate(qrels, run, measures, {.missing = MissingQueries::count_as_zero});
  ASSERT_EQ(partial.queries.size(), run.queries.size());
  EXPECT_EQ(complete.queries.size(), qrels.queries.size());
  double sum = 0.0;
  for (const QueryScores& q : partial.queries) {
    EXPECT_EQ(partial.value(q.qid, "map"), complete.value(q.qid, "map")) << q.qid;
    sum += *partial.value(q.qid, "map");
  }
  EXPECT_DOUBLE_EQ(*partial.mean("map"), sum / static_cast<double>(partial.queries.size()));
  EXPECT_DOUBLE_EQ(*complete.mean("map"), sum / static_cast<double>(qrels.queries.size()));
}

// ---- the okfbench trec-eval command ----

std::string trec_eval_command(const std::string& args) {
  return test::okfbench_binary().string() + " trec-eval " + args;
}

TEST(TrecEvalCommand, OutputIsByteIdenticalToTrecEval) {
  if (!test::have_data()) GTEST_SKIP() << "no reference data";
  const std::string dir = trec_dir().string();
  const auto result =
      test::run_command(trec_eval_command("-q -c -m all_trec " + dir + "/cran.qrels " + dir + "/run.sparse"));
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(result.out == test::read_file(trec_dir() / "run.sparse.all_trec.c.out"));
  const auto plain = test::run_command(trec_eval_command("-m all_trec " + dir + "/cran.qrels " + dir + "/run.ties"));
  std::string golden_all;
  for (const std::string& line : lines_of(test::read_file(trec_dir() / "run.ties.all_trec.out"))) {
    if (line.find("\tall\t") != std::string::npos) golden_all += line + "\n";
  }
  EXPECT_EQ(plain.out, golden_all);
}

TEST(TrecEvalCommand, ErrorsExitWithCodes) {
  if (!test::have_data()) GTEST_SKIP() << "no reference data";
  const std::string qrels = (trec_dir() / "cran.qrels").string();
  const auto missing = test::run_command(trec_eval_command(qrels + " /nonexistent.run"));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("/nonexistent.run"), std::string::npos);
  const fs::path bad = test::fresh_dir("trec-eval-cmd") / "bad.run";
  test::write_file(bad, "1 Q0 184 1 2.0 t\n1 Q0 29 2 high t\n");
  const auto malformed = test::run_command(trec_eval_command(qrels + " " + bad.string()));
  EXPECT_EQ(malformed.exit_code, 1);
  EXPECT_NE(malformed.err.find("bad.run:2: field 5 (score) 'high'"), std::string::npos) << malformed.err;
  const auto unknown = test::run_command(trec_eval_command("-m nope " + qrels + " " + bad.string()));
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("unknown measure 'nope'"), std::string::npos);
}

// ---- hand-computed rankings ----

// One query, judgments: a=3, b=1, c=0 (judged non-relevant), d=2, e=-1 (unjudged).
Qrels small_qrels() {
  Qrels q;
  q.add("q1", "a", 3);
  q.add("q1", "b", 1);
  q.add("q1", "c", 0);
  q.add("q1", "d", 2);
  q.add("q1", "e", -1);
  return q;
}

// Ranking by score: c (0), a (3), x (not judged), b (1). d is never retrieved.
Run small_run() {
  reports::Run r;
  r.tag = "hand";
  r.add("q1", "a", 9.0);
  r.add("q1", "b", 5.0);
  r.add("q1", "c", 10.0);
  r.add("q1", "x", 7.0);
  return r;
}

double measure(const std::string& name, const std::string& value_name) {
  const std::vector<std::string> names = {name};
  return *evaluate(small_qrels(), small_run(), names).mean(value_name);
}

TEST(Measures, HandComputedRanking) {
  // Relevant: a (rank 2), b (rank 4); R = 3 (a, b, d).
  EXPECT_DOUBLE_EQ(measure("map", "map"), (1.0 / 2 + 2.0 / 4) / 3);
  EXPECT_DOUBLE_EQ(measure("recip_rank", "recip_rank"), 0.5);
  EXPECT_DOUBLE_EQ(measure("P.2", "P_2"), 0.5);
  EXPECT_DOUBLE_EQ(measure("P.10", "P_10"), 0.2);  // pads with non-relevant
  EXPECT_DOUBLE_EQ(measure("recall.2", "recall_2"), 1.0 / 3);
  EXPECT_DOUBLE_EQ(measure("Rprec", "Rprec"), 1.0 / 3);  // top 3: c, a, x
  EXPECT_DOUBLE_EQ(measure("success.1", "success_1"), 0.0);
  EXPECT_DOUBLE_EQ(measure("success.2", "success_2"), 1.0);
  // bpref: one judged non-relevant (c) above a and above b; min(N=1, R=3) = 1.
  EXPECT_DOUBLE_EQ(measure("bpref", "bpref"), 0.0);
  // nDCG@4: gains 0,3,0,1 -> 3/log2(3) + 1/log2(5); ideal 3,2,1 -> 3 + 2/log2(3) + 1/2.
  const double dcg4 = 3 / std::log2(3.0) + 1 / std::log2(5.0);
  const double idcg4 = 3 + 2 / std::log2(3.0) + 1 / std::log2(4.0);
  EXPECT_DOUBLE_EQ(measure("ndcg_cut.4", "ndcg_cut_4"), dcg4 / idcg4);
  EXPECT_DOUBLE_EQ(measure("ndcg", "ndcg"), dcg4 / idcg4);
  EXPECT_DOUBLE_EQ(measure("ndcg_cut.1", "ndcg_cut_1"), 0.0);
  EXPECT_DOUBLE_EQ(measure("num_rel_ret", "num_rel_ret"), 2.0);
  EXPECT_DOUBLE_EQ(measure("num_nonrel_judged_ret", "num_nonrel_judged_ret"), 1.0);
  EXPECT_DOUBLE_EQ(measure("set_F", "set_F"), 2 * 0.5 * (2.0 / 3) / (0.5 + 2.0 / 3));
}

TEST(Measures, RelevanceLevelRaisesTheBar) {
  const std::vector<std::string> names = {"map", "num_rel"};
  const Evaluation ev = evaluate(small_qrels(), small_run(), names, {.relevance_level = 2});
  EXPECT_DOUBLE_EQ(*ev.mean("num_rel"), 2.0);  // a and d
  EXPECT_DOUBLE_EQ(*ev.mean("map"), (1.0 / 2) / 2);
}

TEST(Measures, TiesRankByDocnoDescending) {
  Qrels q;
  q.add("1", "doc1", 1);
  reports::Run r;
  r.add("1", "doc1", 1.0);
  r.add("1", "doc2", 1.0);  // same score: doc2 > doc1, so doc2 ranks first
  const std::vector<std::string> names = {"recip_rank"};
  EXPECT_DOUBLE_EQ(*evaluate(q, r, names).mean("recip_rank"), 0.5);
}

TEST(Measures, RelstringShowsGainsAndMarkers) {
  const std::vector<std::string> names = {"relstring"};
  const Evaluation ev = evaluate(small_qrels(), small_run(), names);
  EXPECT_EQ(format_trec_eval(ev, QueryLines::include), "relstring             \tq1\t'03-1'\n");
}

TEST(Measures, OutputFollowsTrecEvalOrderAndFormat) {
  const std::vector<std::string> names = {"P.5", "num_ret", "runid", "map", "num_q"};
  const Evaluation ev = evaluate(small_qrels(), small_run(), names);
  EXPECT_EQ(format_trec_eval(ev, QueryLines::include),
            "num_ret               \tq1\t4\n"
            "map                   \tq1\t0.3333\n"
            "P_5                   \tq1\t0.4000\n"
            "runid                 \tall\thand\n"
            "num_q                 \tall\t1\n"
            "num_ret               \tall\t4\n"
            "map                   \tall\t0.3333\n"
            "P_5                   \tall\t0.4000\n");
}

TEST(Measures, RepeatedRequestsMergeCutoffs) {
  const std::vector<std::string> names = {"P.10", "P.5,2"};
  const auto requests = parse_measures(names);
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].value_names, (std::vector<std::string>{"P_2", "P_5", "P_10"}));
}

TEST(Measures, NicknamesExpand) {
  const std::vector<std::string> official = {"official"};
  const auto requests = parse_measures(official);
  ASSERT_EQ(requests.size(), 12u);
  EXPECT_EQ(requests.front().measure->name, "runid");
  EXPECT_EQ(requests.back().measure->name, "P");
  EXPECT_EQ(requests[10].value_names.front(), "iprec_at_recall_0.00");
}

TEST(Measures, BadMeasureNamesAreUsageErrors) {
  for (std::string bad : {"nope", "P.0", "P.x", "P.5,5", "map.3", "P.", "set_F.1,2", "all_trec.5"}) {
    const std::vector<std::string> names = {bad};
    EXPECT_THROW(parse_measures(names), UsageError) << bad;
  }
}

TEST(Measures, NoCommonQueryIsAnInputError) {
  Qrels q;
  q.add("1", "a", 1);
  reports::Run r;
  r.add("2", "a", 1.0);
  const std::vector<std::string> names = {"map"};
  EXPECT_THROW(evaluate(q, r, names), InputError);
  // With -c the judged query counts as an empty ranking.
  EXPECT_DOUBLE_EQ(*evaluate(q, r, names, {.missing = MissingQueries::count_as_zero}).mean("map"), 0.0);
}

TEST(Measures, DuplicateRetrievedDocumentIsAnInputError) {
  reports::Run r;
  r.add("q1", "a", 2.0);
  r.add("q1", "a", 1.0);
  const std::vector<std::string> names = {"map"};
  EXPECT_THROW(evaluate(small_qrels(), r, names), InputError);
}

TEST(Measures, GeometricMeanFloorsZeros) {
  Qrels q;
  q.add("1", "a", 1);
  q.add("2", "b", 1);
  reports::Run r;
  r.add("1", "a", 1.0);  // AP 1
  r.add("2", "z", 1.0);  // AP 0 -> floored at 1e-5
  const std::vector<std::string> names = {"gm_map"};
  EXPECT_NEAR(*evaluate(q, r, names).mean("gm_map"), std::sqrt(1e-5), 1e-15);
}

TEST(Measures, HugeGainsNeedNoTablePerLevel) {
  Qrels q;
  q.add("1", "a", 2147483647);
  q.add("1", "b", 1);
  reports::Run r;
  r.add("1", "b", 2.0);
  r.add("1", "a", 1.0);
  const std::vector<std::string> names = {"ndcg", "rbp", "map"};
  const Evaluation ev = evaluate(q, r, names);
  EXPECT_DOUBLE_EQ(*ev.mean("map"), (1.0 + 1.0) / 2);
  const double big = 2147483647.0;
  EXPECT_DOUBLE_EQ(*ev.mean("ndcg"), (1.0 + big / std::log2(3.0)) / (big + 1.0 / std::log2(3.0)));
  // rbp scales gains by the largest judged level: 0.1 * (1/big + 0.9 * 1).
  EXPECT_DOUBLE_EQ(*ev.mean("rbp"), 0.1 * (1.0 / big + 0.9));
}

// ---- evidence measures ----

TEST(EvidenceMeasures, EvidenceRecallCountsGradedConceptsOnce) {
  const Judgments relevant = {{"a", 2}, {"b", 1}, {"c", 0}, {"d", 1}};
  const std::vector<std::string> context = {"a", "c", "a", "x"};
  EXPECT_DOUBLE_EQ(*evidence_recall(relevant, context), 1.0 / 3);
  EXPECT_FALSE(evidence_recall(Judgments{{"c", 0}}, context).has_value());
}

TEST(EvidenceMeasures, CitationPrecisionAndRecall) {
  const Judgments relevant = {{"a", 2}, {"b", 1}, {"c", 0}};
  const std::vector<std::string> cited = {"a", "c", "a", "x"};
  const CitationScores s = citation_scores(relevant, cited);
  EXPECT_DOUBLE_EQ(*s.precision, 1.0 / 3);  // a of {a, c, x}
  EXPECT_DOUBLE_EQ(*s.recall, 0.5);         // a of {a, b}
  const CitationScores none = citation_scores(relevant, {});
  EXPECT_FALSE(none.precision.has_value());
  EXPECT_DOUBLE_EQ(*none.recall, 0.0);
}

}  // namespace
}  // namespace okfbench::reports
