// End-to-end tests of `okfbench search`, `okfbench convert` and `okfbench eval`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>

#include "tests/support/test_support.hpp"

namespace okfbench::test {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

std::string okfbench() { return okfbench_binary().string(); }

fs::path tiny_bundle() {
  fs::path dir = fresh_dir("cmd-search");
  write_file(dir / "bundle/metrics/active-users.md",
             "---\ntype: Metric\ntitle: Active Users\ndescription: Daily active users.\ntags: [engagement]\n---\n"
             "A user is active on a day when they emit one event.\n");
  write_file(dir / "bundle/tables/events.md", "---\ntype: Table\ntitle: Events\n---\nOne row per event.\n");
  write_file(dir / "questions.yaml",
             "questions:\n  - id: q1\n    text: active users\n    relevant: {metrics/active-users: 1}\n"
             "  - id: q2\n    text: event rows\n    relevant: {tables/events: 2}\n");
  return dir;
}

TEST(CmdSearch, PrintsRankedHitsAndJson) {
  fs::path dir = tiny_bundle();
  auto text = run_command(okfbench() + " search " + (dir / "bundle").string() + " 'active users'");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, ::testing::StartsWith("  1  "));
  EXPECT_THAT(text.out, HasSubstr("metrics/active-users  Active Users - Daily active users."));
  auto json = run_command(okfbench() + " search " + (dir / "bundle").string() + " event --json --type table");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  auto out = nlohmann::json::parse(json.out);
  ASSERT_EQ(out["hits"].size(), 1u);
  EXPECT_EQ(out["hits"][0]["id"], "tables/events");
  EXPECT_EQ(out["hits"][0]["rank"], 1);
  EXPECT_GT(out["hits"][0]["score"].get<double>(), 0.0);
  auto none = run_command(okfbench() + " search " + (dir / "bundle").string() + " zebra");
  EXPECT_EQ(none.out, "no results\n");
}

TEST(CmdSearch, BadArgumentsHaveExitCodes) {
  fs::path dir = tiny_bundle();
  EXPECT_EQ(run_command(okfbench() + " search " + (dir / "bundle").string() + " x --k 0").exit_code, 2);
  EXPECT_EQ(run_command(okfbench() + " search " + (dir / "bundle").string() + " x --stemmer krovetz").exit_code, 2);
  auto missing = run_command(okfbench() + " search /nonexistent/bundle x");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.err, HasSubstr("/nonexistent/bundle is not a directory"));
}

TEST(CmdSearch, HybridFusesWithEmbeddingsAndCachesThem) {
  fs::path dir = tiny_bundle();
  std::string bundle = (dir / "bundle").string();
  std::string cache = (dir / "embeddings.sqlite").string();
  auto json = run_command(okfbench() + " search " + bundle + " 'active users' --json --hybrid sim --embed-cache " + cache);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  auto out = nlohmann::json::parse(json.out);
  EXPECT_EQ(out["hybrid"]["embedding_model"], "sim");
  EXPECT_EQ(out["hybrid"]["rrf_k"], 60.0);
  ASSERT_EQ(out["hits"].size(), 2u);  // both concepts: the embedding ranking lists every one
  EXPECT_EQ(out["hits"][0]["id"], "metrics/active-users");
  EXPECT_DOUBLE_EQ(out["hits"][0]["score"].get<double>(), 1.0 / 61 + 1.0 / 61);  // first in both rankings
  EXPECT_TRUE(fs::exists(cache));
  auto eval = run_command(okfbench() + " eval --bundle " + bundle + " --questions " + (dir / "questions.yaml").string() +
                          " --hybrid sim --embed-cache " + cache);
  ASSERT_EQ(eval.exit_code, 0) << eval.err;
  EXPECT_THAT(eval.out, HasSubstr("ndcg_cut_10           \tall\t1.0000"));
  EXPECT_THAT(eval.err, HasSubstr("embedded 2 concepts with sim"));
  EXPECT_EQ(run_command(okfbench() + " search " + bundle + " x --hybrid gemini:x").exit_code, 2);
  EXPECT_EQ(run_command(okfbench() + " search " + bundle + " x --embed-cache " + cache).exit_code, 2);
  EXPECT_EQ(run_command(okfbench() + " search " + bundle + " x --hybrid sim --rrf-k 0").exit_code, 2);
}

std::vector<std::string> hit_ids(const nlohmann::json& hits) {
  std::vector<std::string> ids;
  for (const auto& hit : hits) ids.push_back(hit["id"]);
  return ids;
}

TEST(CmdSearch, RerankReordersHybridsHitsAndCachesScores) {
  const std::string demo = (source_dir() / "datasets" / "bundles" / "demo").string();
  const std::string q = " 'slow query after a data load' --json --k 5 --hybrid sim";
  auto hybrid = run_command(okfbench() + " search " + demo + q);
  ASSERT_EQ(hybrid.exit_code, 0) << hybrid.err;
  fs::path cache = fresh_dir("cmd-rerank") / "rerank.sqlite";
  auto reranked = run_command(okfbench() + " search " + demo + q + " --rerank sim --rerank-depth 5 --rerank-cache " +
                              cache.string());
  ASSERT_EQ(reranked.exit_code, 0) << reranked.err;
  auto out = nlohmann::json::parse(reranked.out);
  EXPECT_EQ(out["rerank"], (nlohmann::json{{"model", "sim"}, {"depth", 5}}));
  // Depth 5 of 5 hits: the same concepts, in the reranker's order, its scores falling.
  std::vector<std::string> before = hit_ids(nlohmann::json::parse(hybrid.out)["hits"]);
  std::vector<std::string> after = hit_ids(out["hits"]);
  EXPECT_NE(after, before);
  std::sort(before.begin(), before.end());
  std::sort(after.begin(), after.end());
  EXPECT_EQ(after, before);
  for (std::size_t i = 1; i < out["hits"].size(); ++i)
    EXPECT_GE(out["hits"][i - 1]["score"].get<double>(), out["hits"][i]["score"].get<double>());
  EXPECT_TRUE(fs::exists(cache));
  auto alone = run_command(okfbench() + " search " + demo + " x --rerank sim");
  EXPECT_EQ(alone.exit_code, 2);
  EXPECT_THAT(alone.err, HasSubstr("--rerank needs --hybrid MODEL"));
  EXPECT_EQ(run_command(okfbench() + " search " + demo + " x --hybrid sim --rerank cohere:x").exit_code, 2);
  EXPECT_EQ(run_command(okfbench() + " search " + demo + " x --hybrid sim --rerank sim --rerank-depth 0").exit_code, 2);
}

TEST(CmdEval, PrintsTrecEvalLinesAndWritesARun) {
  fs::path dir = tiny_bundle();
  auto r = run_command(okfbench() + " eval --bundle " + (dir / "bundle").string() + " --questions " +
                       (dir / "questions.yaml").string() + " --measures ndcg_cut.10,recip_rank --per-query --run " +
                       (dir / "out.trec").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("recip_rank            \tq1\t1.0000\n"));
  EXPECT_THAT(r.out, HasSubstr("ndcg_cut_10           \tall\t1.0000\n"));
  EXPECT_THAT(r.out, HasSubstr("| ndcg_cut_10 | 1.0000 |"));
  std::string run = read_file(dir / "out.trec");
  EXPECT_THAT(run, ::testing::StartsWith("q1 Q0 metrics/active-users 1 "));
  EXPECT_THAT(run, HasSubstr("q2 Q0 tables/events 1 "));
}

TEST(CmdEval, UnknownJudgedConceptIsAnErrorWithFileAndLine) {
  fs::path dir = tiny_bundle();
  write_file(dir / "bad.yaml", "questions:\n  - id: q1\n    text: users\n    relevant:\n      metrics/gone: 1\n");
  auto r = run_command(okfbench() + " eval --bundle " + (dir / "bundle").string() + " --questions " +
                       (dir / "bad.yaml").string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("bad.yaml:5: question 'q1' judges 'metrics/gone'"));
  auto usage = run_command(okfbench() + " eval --bundle " + (dir / "bundle").string());
  EXPECT_EQ(usage.exit_code, 2);
}

TEST(CmdEval, RegressionSpecPrintsOkAndFailLines) {
  if (!have_data()) GTEST_SKIP() << "no reference data";
  fs::path dir = fresh_dir("cmd-spec");
  write_file(dir / "cran.yaml",
             "name: cran-test\ncorpus: {format: cranfield, path: collections/cranfield}\n"
             "statistics: {documents: 1400, questions: 225}\n"
             "measures:\n  - {measure: ndcg_cut.10, score: ndcg_cut_10, expected: 0.3611}\n"
             "  - {measure: P.10, score: P_10, expected: 0.9999}\n");
  std::string base = okfbench() + " eval --spec " + (dir / "cran.yaml").string() + " --data " +
                     data_root().string() + " --work " + (dir / "work").string();
  auto r = run_command(base);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("[OK] cran-test: index documents 1400 (expected 1400)\n"));
  EXPECT_THAT(r.out, HasSubstr("[OK] cran-test: ndcg_cut_10 0.3611 (expected 0.3611)\n"));
  EXPECT_THAT(r.out, HasSubstr("[FAIL] cran-test: P_10 0.2382 (expected 0.9999)\n"));
  EXPECT_EQ(run_command(base + " --verify").exit_code, 1);
  write_file(dir / "broken.yaml", "name: x\ncorpus: {format: trec, path: p}\nmeasures: []\n");
  auto broken = run_command(okfbench() + " eval --spec " + (dir / "broken.yaml").string() + " --data /tmp");
  EXPECT_EQ(broken.exit_code, 1);
  EXPECT_THAT(broken.err, HasSubstr("broken.yaml:2: `format` must be beir, smart or cranfield"));
}

TEST(CmdConvert, WritesBundleAndQuestions) {
  if (!have_data()) GTEST_SKIP() << "no reference data";
  fs::path dir = fresh_dir("cmd-convert");
  auto r = run_command(okfbench() + " convert cranfield " + (data_root() / "collections/cranfield").string() +
                       " --out " + (dir / "cran").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("(1400 concepts, 0 renamed to safe ids, 0 links)"));
  EXPECT_THAT(r.out, HasSubstr("(cranfield, 225 questions"));
  EXPECT_TRUE(fs::exists(dir / "cran/cranfield/1400.md"));
  auto again = run_command(okfbench() + " convert cranfield " + (data_root() / "collections/cranfield").string() +
                           " --out " + (dir / "cran").string());
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_THAT(again.err, HasSubstr("already exists"));
  EXPECT_EQ(run_command(okfbench() + " convert trec x --out " + (dir / "y").string()).exit_code, 2);
}

// Several bundles: one index over both (shared statistics), relevant ids and
// the run file's document ids BUNDLE:ID. P@2 by hand: escalation ranks its one
// relevant runbook first (1/2), margin both sales metrics (2/2), the refund
// question the refunds runbook and then escalation (1/2): mean 0.6667.
TEST(CmdEval, SeveralBundlesAreRankedAsOneIndex) {
  const fs::path kb = source_dir() / "tests/data/kb";
  const fs::path run = fresh_dir("cmd-eval-several") / "run.txt";
  const std::string bundles = " eval --bundle " + (kb / "sales").string() + " --bundle " + (kb / "support").string();
  auto r = run_command(okfbench() + bundles + " --questions " + (kb / "questions.yaml").string() +
                       " --measures P.2,recall.5,recip_rank --json --per-query --run " + run.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = nlohmann::json::parse(r.out);
  EXPECT_EQ(out["index"]["documents"], 5);
  EXPECT_NEAR(out["measures"]["P_2"].get<double>(), 2.0 / 3.0, 1e-9);
  EXPECT_EQ(out["measures"]["recall_5"], 1.0);
  EXPECT_EQ(out["measures"]["recip_rank"], 1.0);
  EXPECT_EQ(out["per_query"]["refund-revenue"]["P_2"], 0.5);
  const std::string lines = read_file(run);
  EXPECT_THAT(lines, HasSubstr("refund-revenue Q0 support:runbooks/refunds 1 "));
  EXPECT_THAT(lines, HasSubstr("refund-revenue Q0 sales:metrics/revenue 3 "));
  EXPECT_THAT(lines, HasSubstr("margin Q0 sales:metrics/gross-margin 2 "));

  auto bare = run_command(okfbench() + bundles + " --questions " + (kb / "sales/questions.yaml").string());
  EXPECT_EQ(bare.exit_code, 1);
  EXPECT_THAT(bare.err, HasSubstr("sales/questions.yaml:7: question 'margin' judges 'metrics/gross-margin', which names "
                                  "no bundle; write BUNDLE:ID with BUNDLE one of sales, support"));
  auto hybrid = run_command(okfbench() + bundles + " --questions " + (kb / "questions.yaml").string() + " --hybrid sim");
  EXPECT_EQ(hybrid.exit_code, 2);
  EXPECT_THAT(hybrid.err, HasSubstr("--hybrid and --rerank search one bundle"));
}

}  // namespace
}  // namespace okfbench::test
