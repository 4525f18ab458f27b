// TREC qrels and run files: reading, errors that name file and line, writing.
#include "reports/trec.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "core/error.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::reports {
namespace {

// The message of the InputError `f` throws ("" if it throws none).
template <typename F>
std::string input_error(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(TrecQrels, ParsesJudgmentsWithAnyWhitespace) {
  const Qrels q = parse_qrels("1 0 d1 2\n\n1\t0\td2\t0\r\n10 0 d1 -1\n", "q.txt");
  ASSERT_EQ(q.queries.size(), 2u);
  EXPECT_EQ(q.queries.at("1").at("d1"), 2);
  EXPECT_EQ(q.queries.at("1").at("d2"), 0);
  EXPECT_EQ(q.queries.at("10").at("d1"), -1);
}

TEST(TrecQrels, ErrorsNameFileLineAndField) {
  EXPECT_EQ(input_error([] { parse_qrels("1 0 d1 1\n1 0 d2\n", "q.txt"); }),
            "q.txt:2: expected 4 fields 'qid iter docno gain', found 3");
  EXPECT_EQ(input_error([] { parse_qrels("1 0 d1 high\n", "q.txt"); }),
            "q.txt:1: field 4 (gain) 'high' is not an integer; relevance must be a whole number");
  EXPECT_EQ(input_error([] { parse_qrels("1 0 d1 1.5\n", "q.txt"); }).substr(0, 8), "q.txt:1:");
  EXPECT_EQ(input_error([] { parse_qrels("1 0 d1 1\n\n1 0 d1 2\n", "q.txt"); }),
            "q.txt:3: document 'd1' is judged twice for query '1'; keep one judgment per document");
}

TEST(TrecQrels, MissingFileIsAnInputError) {
  EXPECT_NE(input_error([] { read_qrels("/nonexistent/qrels.txt"); }).find("/nonexistent/qrels.txt"),
            std::string::npos);
}

TEST(TrecQrels, ReadsTheCranfieldQrels) {
  if (!test::have_data()) GTEST_SKIP() << "no reference data";
  const Qrels q = read_qrels(test::data_root() / "trec_eval" / "cran.qrels");
  EXPECT_EQ(q.queries.size(), 225u);
  std::size_t judgments = 0;
  for (const auto& [qid, j] : q.queries) judgments += j.size();
  EXPECT_EQ(judgments, 1837u);  // wc -l cran.qrels
  EXPECT_EQ(q.queries.at("1").at("184"), 3);
}

TEST(TrecRun, ParsesEntriesInFileOrderWithTheFirstTag) {
  const reports::Run r = parse_run("q1 Q0 a 1 +2.5 first\nq1 Q0 b 2 -1e3 second\nq0 Q0 a 7 0 x\n", "r.txt");
  EXPECT_EQ(r.tag, "first");
  ASSERT_EQ(r.queries.size(), 2u);
  const auto& q1 = r.queries.at("q1");
  ASSERT_EQ(q1.size(), 2u);
  EXPECT_DOUBLE_EQ(q1[0].score, 2.5);
  EXPECT_EQ(q1[1].docno, "b");
  EXPECT_DOUBLE_EQ(q1[1].score, -1000.0);
  EXPECT_EQ(q1[1].rank, 2);
  EXPECT_EQ(r.queries.begin()->first, "q0");  // queries by qid
}

TEST(TrecRun, ErrorsNameFileLineAndField) {
  EXPECT_EQ(input_error([] { parse_run("q1 Q0 a 1 2.5\n", "r.txt"); }),
            "r.txt:1: expected 6 fields 'qid Q0 docno rank score tag', found 5");
  EXPECT_EQ(input_error([] { parse_run("q1 Q0 a first 2.5 t\n", "r.txt"); }),
            "r.txt:1: field 4 (rank) 'first' is not an integer");
  EXPECT_EQ(input_error([] { parse_run("q1 Q0 a 1 2.5 t\nq1 Q0 b 2 high t\n", "r.txt"); }),
            "r.txt:2: field 5 (score) 'high' is not a finite number");
  EXPECT_EQ(input_error([] { parse_run("q1 Q0 a 1 nan t\n", "r.txt"); }),
            "r.txt:1: field 5 (score) 'nan' is not a finite number");
  EXPECT_EQ(input_error([] { parse_run("q1 Q0 a 1 3 t\nq2 Q0 a 1 3 t\nq1 Q0 a 2 2 t\n", "r.txt"); }),
            "r.txt:3: document 'a' is retrieved twice for query 'q1' (first on line 1); a run must list each "
            "document once per query");
}

TEST(TrecRun, RankedByScoreThenDocnoDescending) {
  const std::vector<RunEntry> entries = {{"d1", 1.0, 1}, {"d3", 2.0, 2}, {"d2", 1.0, 3}, {"d10", 1.0, 4}};
  const auto order = ranked(entries);
  std::vector<std::string> docnos;
  for (const RunEntry& e : order) docnos.push_back(e.docno);
  // Byte order: "d2" > "d10" > "d1".
  EXPECT_EQ(docnos, (std::vector<std::string>{"d3", "d2", "d10", "d1"}));
}

TEST(TrecRun, WriterRenumbersRanksAndRoundTrips) {
  reports::Run r;
  r.tag = "bm25";
  r.add("2", "x", 0.1);
  r.add("2", "y", 1.0 / 3.0);
  r.add("1", "z", 5.0);
  std::ostringstream out;
  write_run(out, r);
  EXPECT_EQ(out.str(),
            "1 Q0 z 1 5 bm25\n"
            "2 Q0 y 1 0.33333333333333331 bm25\n"
            "2 Q0 x 2 0.10000000000000001 bm25\n");
  const reports::Run back = parse_run(out.str(), "written");
  EXPECT_EQ(back.tag, "bm25");
  EXPECT_EQ(back.queries.at("2")[0].score, 1.0 / 3.0);  // exact round trip
  EXPECT_EQ(back.queries.at("2")[1].docno, "x");
}

TEST(TrecRun, WriterToFileAndDefaultTag) {
  reports::Run r;
  r.add("q", "a", 1.0);
  const auto path = test::fresh_dir("trec-writer") / "out.trec";
  write_run_file(path, r);
  EXPECT_EQ(test::read_file(path), "q Q0 a 1 1 okfbench\n");
  EXPECT_NE(input_error([&] { write_run_file(path.parent_path() / "missing" / "x.trec", r); }), "");
}

TEST(TrecRun, WriterRejectsDuplicates) {
  reports::Run r;
  r.add("q", "a", 1.0);
  r.add("q", "a", 2.0);
  std::ostringstream out;
  EXPECT_NE(input_error([&] { write_run(out, r); }).find("retrieved twice"), std::string::npos);
}

}  // namespace
}  // namespace okfbench::reports
