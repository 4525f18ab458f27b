// Git sources with the real `git` program over a local repository (file:// URLs).
#include "engine/git_source.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "retrieval/bundle.hpp"
#include "core/error.hpp"
#include "tests/support/git_fixture.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::engine {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> ids(const fs::path& root) {
  const retrieval::Bundle bundle = retrieval::Bundle::load(root);
  std::vector<std::string> out;
  for (const retrieval::Concept& c : bundle.concepts()) out.push_back(c.id);
  return out;
}

// Every entry of the cache folder, sorted, with a trailing "/" for folders.
std::vector<std::string> cache_entries(const fs::path& cache) {
  std::vector<std::string> out;
  for (const auto& entry : fs::directory_iterator(cache))
    out.push_back(entry.path().filename().string() + (entry.is_directory() ? "/" : ""));
  std::sort(out.begin(), out.end());
  return out;
}

GitSource source(const std::string& url, const std::string& ref = {}, const std::string& subdir = {}) {
  return GitSource{url, ref, subdir};
}

TEST(ParseGitSource, GitHubAndGitLabTreeLinks) {
  EXPECT_EQ(parse_git_source("https://github.com/GoogleCloudPlatform/open-knowledge-format/tree/main/bundles/ga4"),
            source("https://github.com/GoogleCloudPlatform/open-knowledge-format.git", "main", "bundles/ga4"));
  EXPECT_EQ(parse_git_source("https://github.com/acme/kb/tree/v2"), source("https://github.com/acme/kb.git", "v2"));
  EXPECT_EQ(parse_git_source("https://gitlab.com/acme/data/kb/-/tree/release/bundles/sales/"),
            source("https://gitlab.com/acme/data/kb.git", "release", "bundles/sales"));
  EXPECT_EQ(parse_git_source("https://github.com/acme/kb"), source("https://github.com/acme/kb"));
}

TEST(ParseGitSource, FragmentsAndFlags) {
  EXPECT_EQ(parse_git_source("git@github.com:acme/kb.git#v2:bundles/sales"),
            source("git@github.com:acme/kb.git", "v2", "bundles/sales"));
  EXPECT_EQ(parse_git_source("file:///srv/kb#:a//./b/"), source("file:///srv/kb", "", "a/b"));
  EXPECT_EQ(parse_git_source("file:///srv/kb#next"), source("file:///srv/kb", "next"));
  EXPECT_EQ(parse_git_source("/srv/kb.git"), source("/srv/kb.git"));
  // Flags replace what the text says.
  EXPECT_EQ(parse_git_source("https://github.com/acme/kb/tree/main/x", "v3", "y/z"),
            source("https://github.com/acme/kb.git", "v3", "y/z"));
}

TEST(ParseGitSource, FoldersAreNotGitSources) {
  EXPECT_EQ(parse_git_source("datasets/bundles/demo"), std::nullopt);
  EXPECT_EQ(parse_git_source("/work/shared/data/okf/ga4"), std::nullopt);
  EXPECT_EQ(parse_git_source("./kb#notes"), std::nullopt);
}

TEST(ParseGitSource, RefusesEscapesAndOptionLikeValues) {
  EXPECT_THROW(parse_git_source("file:///srv/kb#main:../etc"), UsageError);
  EXPECT_THROW(parse_git_source("file:///srv/kb", "", "a/../../b"), UsageError);
  EXPECT_THROW(parse_git_source("file:///srv/kb#--upload-pack=evil"), UsageError);
  EXPECT_THROW(parse_git_source("https://"), UsageError);
}

TEST(ParseGitSource, DefaultNames) {
  EXPECT_EQ(parse_git_source("https://github.com/acme/kb/tree/main/bundles/sales")->default_name(), "sales");
  EXPECT_EQ(parse_git_source("git@github.com:acme/kb.git")->default_name(), "kb");
  EXPECT_EQ(parse_git_source("file:///srv/okf-kb/")->default_name(), "okf-kb");
  EXPECT_EQ(source("file:///srv/kb", "v1", "a/b").text(), "file:///srv/kb#v1:a/b");
  EXPECT_EQ(source("file:///srv/kb").text(), "file:///srv/kb");
}

class GitCheckoutTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::fresh_dir("git-source");
    fixture_ = test::make_git_fixture(dir_);
    options_.cache_dir = dir_ / "cache";
  }
  fs::path dir_;
  test::GitFixture fixture_;
  GitOptions options_;
};

TEST_F(GitCheckoutTest, ChecksOutATagABranchAndASubdirectory) {
  {
    const GitCheckout tag = GitCheckout::open(source(fixture_.url, "v1", "bundles/sales"), options_);
    EXPECT_TRUE(tag.cloned());
    EXPECT_EQ(tag.commit(), fixture_.v1_commit);
    EXPECT_THAT(ids(tag.root()), ElementsAre("computations/revenue-year", "metrics/gross-margin", "metrics/revenue"));
  }
  const GitCheckout branch = GitCheckout::open(source(fixture_.url, "next", "bundles/sales"), options_);
  EXPECT_EQ(branch.commit(), fixture_.next_commit);
  EXPECT_THAT(ids(branch.root()),
              ElementsAre("computations/revenue-year", "metrics/churn", "metrics/gross-margin", "metrics/revenue"));
  const GitCheckout head = GitCheckout::open(source(fixture_.url, "", "bundles/support"), options_);
  EXPECT_EQ(head.commit(), fixture_.v1_commit);  // main is where v1 is
  EXPECT_THAT(ids(head.root()), ElementsAre("runbooks/escalation", "runbooks/refunds"));
  // A shallow clone: one commit of history.
  const test::CommandResult log = test::run_command("git -C '" + branch.root().string() + "' rev-list --count HEAD");
  EXPECT_EQ(log.out, "1\n");
}

TEST_F(GitCheckoutTest, ReusesTheCheckoutUntilRefresh) {
  const GitSource main = source(fixture_.url, "main", "bundles/sales");
  std::string first;
  {
    const GitCheckout a = GitCheckout::open(main, options_);
    EXPECT_TRUE(a.cloned());
    first = a.commit();
  }
  const std::string newer = test::commit_on_main(fixture_, "bundles/sales/metrics/aov.md",
                                                 "---\ntype: Metric\ntitle: Average order value\n---\nMean.\n");
  {
    const GitCheckout again = GitCheckout::open(main, options_);
    EXPECT_FALSE(again.cloned());
    EXPECT_EQ(again.commit(), first);
    EXPECT_EQ(ids(again.root()).size(), 3u);
  }
  GitOptions refresh = options_;
  refresh.refresh = true;
  {
    const GitCheckout fresh = GitCheckout::open(main, refresh);
    EXPECT_TRUE(fresh.cloned());
    EXPECT_EQ(fresh.commit(), newer);
    EXPECT_THAT(ids(fresh.root()), ElementsAre("computations/revenue-year", "metrics/aov", "metrics/gross-margin",
                                               "metrics/revenue"));
  }
  // One checkout and its lock: the temporary and the replaced folders are gone.
  const std::vector<std::string> entries = cache_entries(options_.cache_dir);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_THAT(entries[1], ::testing::EndsWith("/"));
  EXPECT_EQ(entries[0], entries[1].substr(0, entries[1].size() - 1) + ".lock");
}

TEST_F(GitCheckoutTest, AFailedCloneLeavesNoFolderBehind) {
  try {
    GitCheckout::open(source(fixture_.url, "no-such-ref"), options_);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr(fixture_.url + "#no-such-ref: `git fetch` failed (exit 128): "));
    EXPECT_THAT(e.what(), HasSubstr("no-such-ref"));
  }
  const std::vector<std::string> entries = cache_entries(options_.cache_dir);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_THAT(entries[0], ::testing::EndsWith(".lock"));
  // The next load retries and succeeds once the ref exists.
  EXPECT_NO_THROW(GitCheckout::open(source(fixture_.url, "v1"), options_));
}

TEST_F(GitCheckoutTest, TheSubdirectoryMustBeAFolderInsideTheRepository) {
  try {
    GitCheckout::open(source(fixture_.url, "v1", "escape"), options_);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("the subdirectory `escape` resolves outside the repository"));
  }
  try {
    GitCheckout::open(source(fixture_.url, "v1", "bundles/missing"), options_);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("no folder `bundles/missing` in the repository at commit " +
                                    fixture_.v1_commit.substr(0, 12)));
  }
  EXPECT_THROW(GitCheckout::open(source(fixture_.url, "v1", "README.md"), options_), InputError);
}

TEST_F(GitCheckoutTest, AMissingGitProgramIsAClearError) {
  GitOptions options = options_;
  options.program = "/nonexistent/bin/git";
  try {
    GitCheckout::open(source(fixture_.url), options);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), fixture_.url + ": cannot run `/nonexistent/bin/git` (No such file or directory): "
                                                    "install git (apt-get install git) or put it on PATH");
  }
  EXPECT_EQ(cache_entries(options_.cache_dir).size(), 1u);  // only the lock file
}

TEST_F(GitCheckoutTest, TheTimeoutBoundsTheLockWaitAndEachGitCommand) {
  const GitSource sales = source(fixture_.url, "v1", "bundles/sales");
  GitOptions short_wait = options_;
  short_wait.timeout = std::chrono::milliseconds(100);
  {
    const GitCheckout held = GitCheckout::open(sales, options_);  // holds the lock while it lives
    try {
      GitCheckout::open(sales, short_wait);
      FAIL() << "expected an InputError";
    } catch (const InputError& e) {
      EXPECT_THAT(e.what(), HasSubstr("timed out after 100 ms waiting for "));
      EXPECT_THAT(e.what(), HasSubstr("raise --git-timeout"));
    }
  }
  // A git that never finishes is stopped.
  const fs::path slow = dir_ / "slow-git";
  test::write_file(slow, "#!/bin/sh\nexec sleep 30\n");
  fs::permissions(slow, fs::perms::owner_all);
  GitOptions hanging = short_wait;
  hanging.program = slow.string();
  hanging.cache_dir = dir_ / "cache-slow";
  try {
    GitCheckout::open(sales, hanging);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("`git init` did not finish within 100 ms"));
  }
  EXPECT_EQ(cache_entries(hanging.cache_dir).size(), 1u);
}

TEST_F(GitCheckoutTest, ThreadsShareOneCloneAndLoadUnderTheLock) {
  const GitSource sales = source(fixture_.url, "v1", "bundles/sales");
  std::atomic<int> clones{0};
  std::mutex mutex;
  std::vector<std::size_t> counts;
  std::vector<std::jthread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      const GitCheckout checkout = GitCheckout::open(sales, options_);
      clones += checkout.cloned() ? 1 : 0;
      const std::size_t n = retrieval::Bundle::load(checkout.root()).concepts().size();
      std::lock_guard<std::mutex> hold(mutex);
      counts.push_back(n);
    });
  }
  threads.clear();  // joins
  EXPECT_EQ(clones.load(), 1);
  EXPECT_THAT(counts, ElementsAre(3u, 3u, 3u, 3u));
}

}  // namespace
}  // namespace okfbench::engine
