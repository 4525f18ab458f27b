// A combined spec entry (several bundles as one trial set): one index for
// context(), MultiBundleTools for the agent, ids recorded as BUNDLE:ID and
// graded against a question set written the same way.
#include "engine/run_bundles.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <map>
#include <set>

#include "engine/run_plan.hpp"
#include "engine/runner.hpp"
#include "engine/spec.hpp"
#include "reports/record.hpp"
#include "core/error.hpp"
#include "tests/engine/run_fixture.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::engine {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// DIR/spec.yaml over tests/data/kb's sales and support bundles as one entry,
// the context path and the search+open agent, sim without a cache model.
fs::path write_kb_spec(const fs::path& dir, const std::string& questions = "") {
  const fs::path kb = test::source_dir() / "tests/data/kb";
  const fs::path spec = dir / "spec.yaml";
  test::write_file(spec, fmt::format(R"(name: kb
seed: 1
bundles:
  - name: kb
    paths: [{0}/sales, {{path: {0}/support}}]
    questions: {1}
paths:
  context: {{budget_tokens: 2000, k: 2, hops: 1}}
  agent: {{surface: harnessx, tools: [[search_concepts, read_concept]], max_turns: 6}}
models: [sim]
cache_models: [none]
)",
                                     kb.string(), questions.empty() ? (kb / "questions.yaml").string() : questions));
  return spec;
}

std::map<std::string, const reports::TrialRecord*> by_trial(const std::vector<reports::TrialRecord>& records,
                                                             reports::PathKind kind) {
  std::map<std::string, const reports::TrialRecord*> out;
  for (const auto& r : records)
    if (r.config.kind == kind) out[r.question_id] = &r;
  return out;
}

TEST(RunBundles, ACombinedEntryLoadsItsBundlesIntoOneIndex) {
  const ExperimentSpec spec = load_spec(write_kb_spec(test::fresh_dir("run-bundles-load")));
  const LoadedBundle b = load_bundle(spec, spec.bundles[0]);
  EXPECT_TRUE(b.combined());
  EXPECT_EQ(b.bundle, nullptr);
  EXPECT_EQ(b.concept_count(), 5u);
  ASSERT_EQ(b.named().size(), 2u);
  EXPECT_EQ(b.named()[0].name, "sales");
  EXPECT_EQ(b.named()[1].name, "support");
  EXPECT_EQ(b.index->stats().documents, 5u);
  EXPECT_EQ(b.questions.questions.size(), 3u);
}

TEST(RunBundles, ACombinedEntryLoadsEachPartThroughTheIndexCache) {
  const fs::path dir = test::fresh_dir("run-bundles-cache");
  const ExperimentSpec spec = load_spec(write_kb_spec(dir));
  const fs::path cache = dir / "index";
  const LoadedBundle first = load_bundle(spec, spec.bundles[0], {}, cache);
  std::size_t files = 0;
  for (const auto& entry : fs::directory_iterator(cache)) files += entry.path().extension() == ".okfidx" ? 1 : 0;
  EXPECT_EQ(files, 2u) << "one cache file per part";
  const LoadedBundle again = load_bundle(spec, spec.bundles[0], {}, cache);
  EXPECT_EQ(again.concept_count(), first.concept_count());
  EXPECT_EQ(again.index->search("refund", {}).size(), first.index->search("refund", {}).size());
}

TEST(RunBundles, RelevantIdsMustNameTheirBundle) {
  const fs::path dir = test::fresh_dir("run-bundles-ids");
  test::write_file(dir / "q.yaml",
                   "questions:\n  - id: a\n    text: refunds\n    relevant:\n      runbooks/refunds: 1\n"
                   "      billing:x: 1\n      sales:runbooks/refunds: 1\n");
  const ExperimentSpec spec = load_spec(write_kb_spec(dir, (dir / "q.yaml").string()));
  try {
    load_bundle(spec, spec.bundles[0]);
    FAIL() << "no error";
  } catch (const InputError& e) {
    const std::string q = (dir / "q.yaml").string();
    EXPECT_EQ(std::string(e.what()),
              "3 judged concept id(s) not found in the bundles searched as one:\n"
              "  " + q + ":6: question 'a' judges 'billing:x', whose bundle 'billing' is not loaded; the bundles are sales, support\n"
              "  " + q + ":5: question 'a' judges 'runbooks/refunds', which names no bundle; write BUNDLE:ID with BUNDLE one of sales, support\n"
              "  " + q + ":7: question 'a' judges 'sales:runbooks/refunds', which is not a concept of bundle 'sales'");
  }
}

// The trials over the combined entry: the pack and the agent's tools cover
// both bundles, every id is BUNDLE:ID, and evidence recall and citations are
// graded against the question set's BUNDLE:ID judgments. The refund question
// judges sales:metrics/revenue too, which neither path reaches: support's
// runbook links to /metrics/revenue.md, which does not resolve inside
// support (tests/data/kb/README.md), so its evidence recall is 1 of 2.
TEST(RunBundles, SimRunOverACombinedEntryGradesBundleQualifiedIds) {
  const fs::path dir = test::fresh_dir("run-bundles-run");
  const ExperimentSpec spec = load_spec(write_kb_spec(dir));
  const RunResult run = run_experiment(spec, quiet(dir / "out"));
  EXPECT_EQ(run.planned, 6u);
  EXPECT_EQ(run.failed, 0u);
  const auto stored = reports::read_run_dir(dir / "out");
  ASSERT_EQ(stored.records.size(), 6u);
  for (const auto& r : stored.records) {
    EXPECT_EQ(r.bundle, "kb");
    EXPECT_EQ(r.concept_count, 5);
    EXPECT_TRUE(r.error.empty()) << r.error;
  }
  const auto context = by_trial(stored.records, reports::PathKind::context);
  const auto agent = by_trial(stored.records, reports::PathKind::agent);
  using Ids = std::vector<std::string>;
  const reports::TrialRecord& margin = *context.at("margin");
  EXPECT_EQ(margin.retrieved_ids, (Ids{"sales:metrics/revenue", "sales:metrics/gross-margin"}));
  ASSERT_EQ(margin.packed.size(), 3u);
  EXPECT_EQ(margin.packed[2].id, "sales:computations/revenue-year");
  EXPECT_EQ(margin.packed[2].reason, "via LINKS_TO from sales:metrics/revenue");
  EXPECT_EQ(margin.evidence_recall, 1.0);
  EXPECT_EQ(margin.citations, (Ids{"sales:metrics/gross-margin", "sales:metrics/revenue"}));
  const reports::TrialRecord& refund = *context.at("refund-revenue");
  EXPECT_EQ(refund.retrieved_ids, (Ids{"support:runbooks/refunds", "support:runbooks/escalation"}));
  EXPECT_EQ(refund.packed.size(), 2u);
  EXPECT_EQ(refund.evidence_recall, 0.5);
  EXPECT_EQ(context.at("escalation")->evidence_recall, 1.0);

  const reports::TrialRecord& refund_agent = *agent.at("refund-revenue");
  EXPECT_EQ(refund_agent.retrieved_ids, (Ids{"support:runbooks/refunds", "support:runbooks/escalation", "sales:metrics/revenue",
                                             "sales:computations/revenue-year", "sales:metrics/gross-margin"}));
  EXPECT_EQ(refund_agent.opened_ids, (Ids{"support:runbooks/refunds"}));
  EXPECT_EQ(refund_agent.evidence_recall, 0.5);
  EXPECT_EQ(refund_agent.citations, (Ids{"support:runbooks/refunds"}));
  EXPECT_EQ(agent.at("margin")->opened_ids, (Ids{"sales:metrics/revenue", "sales:metrics/gross-margin"}));
  EXPECT_EQ(agent.at("margin")->evidence_recall, 1.0);
  EXPECT_EQ(agent.at("escalation")->opened_ids, (Ids{"support:runbooks/escalation"}));
  EXPECT_EQ(agent.at("escalation")->evidence_recall, 1.0);
  // The manifest hashes each bundle of the entry and its one question set.
  std::set<std::string> inputs;
  for (const auto& h : stored.manifest.inputs) inputs.insert(h.kind + " " + h.name);
  EXPECT_TRUE(inputs.count("bundle kb/sales") && inputs.count("bundle kb/support") && inputs.count("questions kb"));
  EXPECT_FALSE(inputs.count("bundle kb"));
}

// A dry run plans the same trials, with keys that the entry's bundles and
// question set determine; a single-bundle entry beside it keeps its keys.
TEST(RunBundles, DryRunPlansTheCombinedEntryWithStableKeys) {
  const fs::path dir = test::fresh_dir("run-bundles-dry");
  const ExperimentSpec spec = load_spec(write_kb_spec(dir));
  RunOptions dry = quiet(dir / "out");
  dry.mode = Mode::dry_run;
  const RunResult first = run_experiment(spec, dry);
  ASSERT_EQ(first.trials.size(), 6u);
  EXPECT_EQ(first.trials[0].bundle_name, "kb");
  EXPECT_EQ(first.trials[0].question_id, "refund-revenue");
  const RunResult again = run_experiment(load_spec(write_kb_spec(dir)), dry);
  for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(again.trials[i].key, first.trials[i].key);
  EXPECT_FALSE(fs::exists(dir / "out"));
}

// One id in two bundles: the pack holds the copy that won the tie (ties go by
// id, then bundle name: copy before sales), sim cites it bare, and the
// citation is credited to the bundle whose concept reached the model only.
TEST(RunBundles, ABareCitationOfAnIdInTwoBundlesGoesToTheOneThatWasRead) {
  const fs::path dir = test::fresh_dir("run-bundles-cite");
  const fs::path kb = test::source_dir() / "tests/data/kb";
  fs::copy(kb / "sales", dir / "copy", fs::copy_options::recursive);
  test::write_file(dir / "q.yaml",
                   "questions:\n  - id: margin\n    text: What is gross margin?\n    relevant:\n"
                   "      copy:metrics/revenue: 1\n      sales:metrics/revenue: 1\n");
  test::write_file(dir / "spec.yaml", fmt::format("bundles:\n  - paths: [{}, {}]\n    questions: {}\n"
                                                  "paths:\n  context: {{budget_tokens: 2000, k: 1, hops: 0}}\n",
                                                  (kb / "sales").string(), (dir / "copy").string(), (dir / "q.yaml").string()));
  const RunResult run = run_experiment(load_spec(dir / "spec.yaml"), quiet(dir / "out"));
  ASSERT_EQ(run.failed, 0u);
  const auto stored = reports::read_run_dir(dir / "out");
  ASSERT_EQ(stored.records.size(), 1u);
  const reports::TrialRecord& r = stored.records[0];
  EXPECT_EQ(r.bundle, "sales+copy");
  ASSERT_EQ(r.packed.size(), 1u);
  EXPECT_EQ(r.packed[0].id, "copy:metrics/revenue");
  EXPECT_THAT(r.answer, HasSubstr("[metrics/revenue]"));
  EXPECT_EQ(r.citations, (std::vector<std::string>{"copy:metrics/revenue"}));
  EXPECT_EQ(r.evidence_recall, 0.5);
  EXPECT_EQ(r.measures, (std::vector<reports::MeasureValue>{{"citation_precision", 1.0}, {"citation_recall", 0.5}}));
}

}  // namespace
}  // namespace okfbench::engine
