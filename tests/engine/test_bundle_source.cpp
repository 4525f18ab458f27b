// Bundle sources on the command line: folders and git URLs in validate,
// search, context and agent, with the --git-* flags.
#include "engine/bundle_source.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.hpp"
#include "tests/support/git_fixture.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::engine {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

TEST(BundleSourceFolder, AFolderIsItselfAndNamedAfterItself) {
  const BundleSourceFolder folder = BundleSourceFolder::open("tests/data/kb/sales/", {});
  EXPECT_EQ(folder.root(), "tests/data/kb/sales/");
  EXPECT_EQ(folder.name(), "sales");
  EXPECT_EQ(folder.checkout(), nullptr);
  SourceFlags flags;
  flags.ref = "v1";
  EXPECT_THROW(BundleSourceFolder::open("tests/data/kb/sales", flags), UsageError);
  EXPECT_EQ(folder_name("a/b/"), "b");
  EXPECT_EQ(folder_name("a/./b"), "b");
}

class BundleSourceCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::fresh_dir("bundle-source");
    fixture_ = test::make_git_fixture(dir_);
  }
  std::string okfbench(const std::string& args) const {
    return "XDG_CACHE_HOME='" + (dir_ / "xdg").string() + "' " + test::okfbench_binary().string() + " " + args;
  }
  fs::path dir_;
  test::GitFixture fixture_;
};

TEST_F(BundleSourceCli, SearchValidateAndContextTakeGitUrls) {
  const auto search = test::run_command(okfbench("search '" + fixture_.url + "#v1:bundles/sales' revenue --json --k 2"));
  ASSERT_EQ(search.exit_code, 0) << search.err;
  const auto hits = nlohmann::json::parse(search.out)["hits"];
  ASSERT_EQ(hits.size(), 2u);
  EXPECT_EQ(hits[0]["id"], "metrics/revenue");
  EXPECT_EQ(hits[1]["id"], "computations/revenue-year");
  // The cache is $XDG_CACHE_HOME/okfbench/git.
  EXPECT_TRUE(fs::is_directory(dir_ / "xdg/okfbench/git"));

  const auto validate = test::run_command(
      okfbench("validate " + fixture_.url + " --git-ref next --git-subdir bundles/sales --json"));
  ASSERT_EQ(validate.exit_code, 0) << validate.err;
  EXPECT_EQ(nlohmann::json::parse(validate.out)["concepts"], 4);

  const auto context = test::run_command(
      okfbench("context '" + fixture_.url + "#main:bundles/support' refund --json --hops 0 --k 1"));
  ASSERT_EQ(context.exit_code, 0) << context.err;
  const auto pack = nlohmann::json::parse(context.out);
  ASSERT_EQ(pack["concepts"].size(), 1u);
  EXPECT_EQ(pack["concepts"][0]["id"], "runbooks/refunds");
}

// A token in a bundle URL's user-info never reaches stdout, stderr or a file.
TEST_F(BundleSourceCli, UrlCredentialsAreNeverShownOrWritten) {
  const std::string url = "http://tok:SECRET1234@127.0.0.1:9/acme/kb.git";
  const std::string flags = " --git-cache '" + (dir_ / "git").string() + "' --git-timeout 20";
  for (const std::string& command :
       {"validate '" + url + "'" + flags, "validate '" + url + "' --json" + flags, "search '" + url + "' revenue" + flags,
        "search '" + url + "#v1:bundles/sales' revenue --json" + flags,
        "search '" + (test::source_dir() / "tests/data/kb/sales").string() + "' '" + url + "' revenue" + flags}) {
    const auto ran = test::run_command(okfbench(command));
    EXPECT_NE(ran.exit_code, 0) << command;
    EXPECT_THAT(ran.err, HasSubstr("127.0.0.1:9/acme/kb.git")) << command;
    EXPECT_THAT(ran.out + ran.err, ::testing::Not(HasSubstr("SECRET1234"))) << command << "\n" << ran.out << ran.err;
  }
  for (const auto& entry : fs::recursive_directory_iterator(dir_)) {
    if (entry.is_regular_file() && !entry.is_symlink()) {
      EXPECT_THAT(test::read_file(entry.path()), ::testing::Not(HasSubstr("SECRET1234"))) << entry.path();
    }
  }
}

TEST_F(BundleSourceCli, ARunLoadsGitBundlesFromItsSpec) {
  test::write_file(dir_ / "spec.yaml",
                   "bundles:\n  - path: " + fixture_.url + "\n    ref: v1\n    subdir: bundles/sales\n"
                   "paths:\n  context: {budget_tokens: 500}\n");
  const auto run = test::run_command(okfbench("run " + (dir_ / "spec.yaml").string() + " --out " + (dir_ / "out").string() +
                                              " --progress quiet"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::istringstream lines(test::read_file(dir_ / "out" / "results.jsonl"));
  std::vector<std::string> questions;
  for (std::string line; std::getline(lines, line);) {
    const nlohmann::json record = nlohmann::json::parse(line);
    EXPECT_EQ(record["bundle"], "sales");
    questions.push_back(record["question_id"]);
  }
  std::sort(questions.begin(), questions.end());  // trials finish in any order
  EXPECT_EQ(questions, (std::vector<std::string>{"margin", "revenue"}));
}

// A combined spec entry with a folder and a git source: the checkout's commit
// goes into the entry's identity (so its trial keys), and the trials grade
// BUNDLE:ID judgments over both (the same values as RunBundles' run over two
// folders: the git bundle is a copy of tests/data/kb/support).
TEST_F(BundleSourceCli, ARunCombinesAFolderAndAGitBundle) {
  const fs::path kb = test::source_dir() / "tests/data/kb";
  test::write_file(dir_ / "spec.yaml",
                   "bundles:\n  - paths:\n      - " + (kb / "sales").string() + "\n      - {path: '" + fixture_.url +
                       "', ref: v1, subdir: bundles/support}\n    questions: " + (kb / "questions.yaml").string() +
                       "\npaths:\n  context: {budget_tokens: 2000, k: 2, hops: 1}\n");
  const auto run = test::run_command(okfbench("run " + (dir_ / "spec.yaml").string() + " --out " + (dir_ / "out").string() +
                                              " --progress quiet"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::istringstream lines(test::read_file(dir_ / "out" / "results.jsonl"));
  std::map<std::string, double> recall;
  for (std::string line; std::getline(lines, line);) {
    const nlohmann::json record = nlohmann::json::parse(line);
    EXPECT_EQ(record["bundle"], "sales+support");
    recall[record["question_id"]] = record["evidence_recall"];
  }
  EXPECT_EQ(recall, (std::map<std::string, double>{{"escalation", 1.0}, {"margin", 1.0}, {"refund-revenue", 0.5}}));
  const auto manifest = nlohmann::json::parse(test::read_file(dir_ / "out" / "manifest.json"));
  EXPECT_THAT(manifest.dump(), HasSubstr("sales+support/support"));
}

TEST_F(BundleSourceCli, ErrorsHaveExitCodesAndSayWhatToDo) {
  const auto no_git = test::run_command("PATH=/nonexistent " + okfbench("validate " + fixture_.url));
  EXPECT_EQ(no_git.exit_code, 1);
  EXPECT_THAT(no_git.err, HasSubstr("cannot run `git` (No such file or directory): install git"));
  const auto bad_ref = test::run_command(okfbench("agent '" + fixture_.url + "#gone' question"));
  EXPECT_EQ(bad_ref.exit_code, 1);
  EXPECT_THAT(bad_ref.err, HasSubstr("#gone: `git fetch` failed (exit 128)"));
  const auto folder_ref = test::run_command(okfbench("search " + (test::source_dir() / "tests/data/kb/sales").string() + " x --git-ref v1"));
  EXPECT_EQ(folder_ref.exit_code, 2);
  EXPECT_THAT(folder_ref.err, HasSubstr("--git-ref and --git-subdir need a git URL"));
  const auto timeout = test::run_command(okfbench("search " + fixture_.url + " x --git-timeout 0"));
  EXPECT_EQ(timeout.exit_code, 2);
}

// okfbench run checks a spec's git bundle out once and reuses it until
// --refresh; the trial keys name the commit, so --dry-run shows which one.
TEST_F(BundleSourceCli, RunReusesItsCheckoutUntilRefresh) {
  test::write_file(dir_ / "spec.yaml",
                   "bundles:\n  - path: " + fixture_.url + "\n    subdir: bundles/sales\n"
                   "paths:\n  context: {budget_tokens: 500}\n");
  auto keys = [&](const std::string& flags) {
    const auto run = test::run_command(okfbench("run " + (dir_ / "spec.yaml").string() + " --dry-run " + flags));
    EXPECT_EQ(run.exit_code, 0) << run.err;
    std::vector<std::string> out;
    std::istringstream lines(run.out);
    for (std::string line; std::getline(lines, line);)
      if (line.find(" sales ") != std::string::npos) out.push_back(line.substr(0, line.find(' ')));
    return out;
  };
  const std::vector<std::string> first = keys("");
  ASSERT_EQ(first.size(), 2u);
  test::commit_on_main(fixture_, "bundles/sales/metrics/churn.md", "---\ntype: Metric\ntitle: Churn\n---\nLost customers.\n");
  EXPECT_EQ(keys(""), first);             // the cached checkout, not the new commit
  const std::vector<std::string> refreshed = keys("--refresh");
  ASSERT_EQ(refreshed.size(), 2u);
  EXPECT_NE(refreshed, first);            // cloned again: the new commit
  EXPECT_EQ(keys(""), refreshed);         // and that checkout is the cache now
  const auto timeout = test::run_command(okfbench("run " + (dir_ / "spec.yaml").string() + " --dry-run --git-timeout 0"));
  EXPECT_EQ(timeout.exit_code, 2);
  const auto cache = dir_ / "elsewhere";
  EXPECT_EQ(keys("--git-cache " + cache.string()), refreshed);
  EXPECT_TRUE(fs::is_directory(cache));
}

// Several bundles at once: a folder and a git source side by side, searched
// as one index; the order is the combined index's (retrieval's
// SearchIndex.SeveralBundlesShareStatisticsExactlyAsOneMergedBundle).
TEST_F(BundleSourceCli, SearchAndContextTakeSeveralBundlesAtOnce) {
  const std::string both = (test::source_dir() / "tests/data/kb/sales").string() + " '" + fixture_.url + "#v1:bundles/support' ";
  const auto text = test::run_command(okfbench("search " + both + "'refund revenue'"));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(text.out,
            "  1    1.8289  [support] runbooks/refunds  Refunds - How to refund an order and what it does to revenue.\n"
            "  2    0.4359  [support] runbooks/escalation  Escalation - Who takes a support case that the first line "
            "cannot close.\n"
            "  3    0.2583  [sales] metrics/revenue  Revenue - Recognized revenue from delivered orders.\n"
            "  4    0.2243  [sales] computations/revenue-year  Revenue for a year - Sanctioned SQL for the recognized "
            "revenue of one fiscal year.\n"
            "  5    0.1858  [sales] metrics/gross-margin  Gross margin - Revenue minus the cost of goods sold, as a "
            "share of revenue.\n");
  const auto search = test::run_command(okfbench("search " + both + "'refund revenue' --json --k 3"));
  ASSERT_EQ(search.exit_code, 0) << search.err;
  const auto found = nlohmann::json::parse(search.out);
  std::vector<std::string> hits;
  for (const auto& hit : found["hits"])
    hits.push_back(hit["bundle"].get<std::string>() + ":" + hit["id"].get<std::string>());
  EXPECT_EQ(hits, (std::vector<std::string>{"support:runbooks/refunds", "support:runbooks/escalation", "sales:metrics/revenue"}));

  const auto context = test::run_command(okfbench("context " + both + "'gross margin' --json --k 1"));
  ASSERT_EQ(context.exit_code, 0) << context.err;
  const auto pack = nlohmann::json::parse(context.out);
  ASSERT_EQ(pack["concepts"].size(), 2u);
  EXPECT_EQ(pack["concepts"][0]["bundle"], "sales");
  EXPECT_EQ(pack["concepts"][0]["id"], "metrics/gross-margin");
  EXPECT_EQ(pack["concepts"][1]["bundle"], "sales");
  EXPECT_EQ(pack["concepts"][1]["id"], "metrics/revenue");
  EXPECT_THAT(pack["text"].get<std::string>(), HasSubstr("id: metrics/gross-margin | bundle: sales | type: Metric"));
}

TEST_F(BundleSourceCli, SeveralBundlesRefuseOneNameTwiceAndOneBundleFlags) {
  const std::string sales = (test::source_dir() / "tests/data/kb/sales").string();
  const auto twice = test::run_command(okfbench("search " + sales + " '" + fixture_.url + "#v1:bundles/sales' revenue"));
  EXPECT_EQ(twice.exit_code, 2);
  EXPECT_THAT(twice.err, HasSubstr("two bundles are named 'sales' (" + sales + " and " + fixture_.url +
                                   "#v1:bundles/sales): a bundle is named after its folder"));
  const auto ref = test::run_command(okfbench("search " + sales + " " + fixture_.url + " revenue --git-ref v1"));
  EXPECT_EQ(ref.exit_code, 2);
  EXPECT_THAT(ref.err, HasSubstr("--git-ref and --git-subdir apply to one bundle"));
  const std::string support = (test::source_dir() / "tests/data/kb/support").string();
  const auto hybrid = test::run_command(okfbench("context " + sales + " " + support + " revenue --retrieval hybrid"));
  EXPECT_EQ(hybrid.exit_code, 2);
  EXPECT_THAT(hybrid.err, HasSubstr("--retrieval hybrid takes one bundle"));
  const auto rerank = test::run_command(okfbench("search " + sales + " " + support + " revenue --hybrid sim"));
  EXPECT_EQ(rerank.exit_code, 2);
  EXPECT_THAT(rerank.err, HasSubstr("--hybrid and --rerank search one bundle"));
  const auto none = test::run_command(okfbench("search " + sales));
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_THAT(none.err, HasSubstr("At least 2 required"));
}

// The agent over a folder and a git source: sim searches both, then reads
// and follows in the bundle the hit named; events say "*" for the search.
TEST_F(BundleSourceCli, AgentTakesSeveralBundlesAtOnce) {
  const std::string both = (test::source_dir() / "tests/data/kb/sales").string() + " '" + fixture_.url + "#v1:bundles/support' ";
  const auto agent =
      test::run_command(okfbench("agent " + both + "'How is a disputed refund escalated?' --surface harnessx --json"));
  ASSERT_EQ(agent.exit_code, 0) << agent.err;
  const auto run = nlohmann::json::parse(agent.out);
  EXPECT_EQ(run["opened"], nlohmann::json::parse(R"([{"bundle":"support","id":"runbooks/refunds"}])"));
  std::vector<std::string> events;
  for (const auto& call : run["tool_calls"])
    events.push_back(call["name"].get<std::string>() + "@" + call["access"]["bundle"].get<std::string>() +
                     (call["access"]["found"].get<bool>() ? "" : " miss"));
  EXPECT_EQ(events, (std::vector<std::string>{"search_concepts@*", "read_concept@support", "get_neighbors@support"}));
}

}  // namespace
}  // namespace okfbench::engine
