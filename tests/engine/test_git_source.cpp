// Git sources with the real `git` program over a local repository (file:// URLs).
#include "engine/git_source.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <functional>
#include <future>
#include <memory>
#include <atomic>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "retrieval/bundle.hpp"
#include "tests/support/git_fixture.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::engine {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

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

// ext:: hands the rest of the URL to a shell, fd:: reads a descriptor: refused
// before any git runs, as are schemes git might have a remote helper for.
TEST(ParseGitSource, RefusesExtFdAndUnknownTransports) {
  for (const char* url : {"ext::sh -c touch% /tmp/okfbench-pwned.git", "fd::3/kb.git", "ext::sh -c x.git#main:x",
                          "foo://host/kb.git", "hg://host/kb.git"}) {
    try {
      parse_git_source(url);
      ADD_FAILURE() << url << ": expected a UsageError";
    } catch (const UsageError& e) {
      EXPECT_THAT(e.what(), HasSubstr("use an https://, http://, ssh://, git:// or file:// URL")) << url;
    }
  }
  EXPECT_TRUE(parse_git_source("ssh://git@host/kb.git"));
  EXPECT_TRUE(parse_git_source("http://host/kb.git"));
}

TEST(ParseGitSource, TextsAndShownSourcesNeverCarryUrlCredentials) {
  const auto parsed = parse_git_source("https://tok:SECRET1234@example.com/acme/kb.git#v1:bundles/sales");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->url, "https://tok:SECRET1234@example.com/acme/kb.git");  // what git is given
  EXPECT_EQ(parsed->text(), "https://example.com/acme/kb.git#v1:bundles/sales");
  EXPECT_EQ(shown_source("https://tok:SECRET1234@example.com/acme/kb.git"), "https://example.com/acme/kb.git");
  EXPECT_EQ(shown_source("x SECRET1234 y"), "x [REDACTED] y");  // remembered once parsed
  EXPECT_EQ(shown_source("tests/data/kb/sales"), "tests/data/kb/sales");
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

// The caller's GIT_ALLOW_PROTOCOL (or injected configuration) cannot let a
// URL run a command: every git command gets okfbench's own allow-list.
TEST_F(GitCheckoutTest, TheCallersProtocolPolicyCannotLetAUrlRunACommand) {
  const fs::path marker = dir_ / "ran";
  ::setenv("GIT_ALLOW_PROTOCOL", "ext:file", 1);
  ::setenv("GIT_CONFIG_COUNT", "1", 1);
  ::setenv("GIT_CONFIG_KEY_0", "protocol.ext.allow", 1);
  ::setenv("GIT_CONFIG_VALUE_0", "always", 1);
  GitSource ext{"ext::sh -c touch% " + marker.string(), "", ""};  // built directly: parse_git_source refuses it
  EXPECT_THROW(GitCheckout::open(ext, options_), InputError);
  for (const char* name : {"GIT_ALLOW_PROTOCOL", "GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0", "GIT_CONFIG_VALUE_0"})
    ::unsetenv(name);
  EXPECT_FALSE(fs::exists(marker));
  EXPECT_NO_THROW(GitCheckout::open(source(fixture_.url, "v1"), options_));  // file:// stays allowed
}

// A checkout edited inside the cache (a file changed, added, or staged) is
// not served as its commit: it is cloned again.
TEST_F(GitCheckoutTest, AnEditedCheckoutIsNotServedAsItsCommit) {
  const GitSource sales = source(fixture_.url, "v1", "bundles/sales");
  fs::path root;
  {
    const GitCheckout first = GitCheckout::open(sales, options_);
    root = first.root();
    EXPECT_FALSE(fs::exists(root.parent_path().parent_path() / ".git" / "FETCH_HEAD"));  // it names the URL
  }
  const fs::path revenue = root / "metrics" / "revenue.md";
  const std::string original = test::read_file(revenue);
  const std::vector<std::function<void()>> edits = {
      [&] { test::write_file(revenue, original + "\nPlanted text.\n"); },
      [&] { test::write_file(root / "metrics" / "planted.md", "---\ntype: Metric\ntitle: Planted\n---\nx\n"); },
      [&] {
        test::write_file(revenue, original + "\nStaged.\n");
        test::run_command("git -C '" + root.string() + "' add -A");
      },
  };
  for (const auto& edit : edits) {
    edit();
    const GitCheckout again = GitCheckout::open(sales, options_);
    EXPECT_TRUE(again.cloned());
    EXPECT_EQ(test::read_file(again.root() / "metrics" / "revenue.md"), original);
    EXPECT_THAT(ids(again.root()), ElementsAre("computations/revenue-year", "metrics/gross-margin", "metrics/revenue"));
  }
  EXPECT_FALSE(GitCheckout::open(sales, options_).cloned());  // a clean checkout is reused
}

TEST_F(GitCheckoutTest, ACloneOverItsSizeLimitIsStoppedAndLeavesNothing) {
  GitOptions few_files = options_;
  few_files.max_files = 10;
  GitOptions few_bytes = options_;
  few_bytes.max_bytes = 2000;
  for (const auto& [options, said] : {std::pair{few_files, "passed 10 files and folders"},
                                      std::pair{few_bytes, "passed 2000 bytes"}}) {
    try {
      GitCheckout::open(source(fixture_.url, "v1"), options);
      ADD_FAILURE() << "expected an InputError";
    } catch (const InputError& e) {
      EXPECT_THAT(e.what(), HasSubstr(said));
      EXPECT_THAT(e.what(), HasSubstr("raise --git-max-"));
    }
    EXPECT_EQ(cache_entries(options_.cache_dir).size(), 1u);  // only the lock file
  }
  EXPECT_TRUE(GitCheckout::open(source(fixture_.url, "v1"), options_).cloned());  // the defaults let it in
}

// A FIFO at the lock path would block open(2): an error naming it instead.
TEST_F(GitCheckoutTest, AFifoAtTheLockPathIsAnErrorNotAHang) {
  const GitSource v1 = source(fixture_.url, "v1");
  { GitCheckout::open(v1, options_); }
  fs::path lock;
  for (const auto& entry : fs::directory_iterator(options_.cache_dir))
    if (entry.path().extension() == ".lock") lock = entry.path();
  ASSERT_FALSE(lock.empty());
  fs::remove(lock);
  ASSERT_EQ(::mkfifo(lock.c_str(), 0600), 0);
  auto done = std::make_shared<std::promise<std::string>>();
  std::future<std::string> said = done->get_future();
  std::thread([done, v1, options = options_] {
    try {
      GitCheckout::open(v1, options);
      done->set_value("opened");
    } catch (const std::exception& e) {
      done->set_value(e.what());
    }
  }).detach();
  ASSERT_EQ(said.wait_for(std::chrono::seconds(20)), std::future_status::ready) << "blocked on the FIFO";
  EXPECT_THAT(said.get(), HasSubstr("is not a regular file"));
}

TEST_F(GitCheckoutTest, ACacheFolderOthersCanWriteIsRefused) {
  fs::create_directories(options_.cache_dir);
  fs::permissions(options_.cache_dir, fs::perms::others_write, fs::perm_options::add);
  try {
    GitCheckout::open(source(fixture_.url, "v1"), options_);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("writable by group or others"));
    EXPECT_THAT(e.what(), HasSubstr("chmod go-w"));
  }
  EXPECT_TRUE(fs::is_empty(options_.cache_dir));
}

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

// A URL's credentials never reach git's arguments, which any user can read
// in ps: git gets the URL without them and a credential helper, defined in
// its environment, that answers with them (asked here with `git credential
// fill`, as git asks when the server wants them).
TEST_F(GitCheckoutTest, UrlCredentialsReachGitThroughItsEnvironmentNotItsArguments) {
  const fs::path log = dir_ / "git-calls.log";
  const fs::path wrapper = dir_ / "logging-git";
  test::write_file(wrapper, "#!/bin/sh\necho \"ARGV $*\" >> '" + log.string() +
                                "'\nprintf 'protocol=http\\nhost=127.0.0.1\\n\\n' | git credential fill >> '" +
                                log.string() + "' 2>&1\nexec git \"$@\"\n");
  fs::permissions(wrapper, fs::perms::owner_all);
  GitOptions options = options_;
  options.program = wrapper.string();
  options.cache_dir = dir_ / "cache-credentials";
  const std::string secret = "s3cr3t-T0KEN-value-42";
  EXPECT_THROW(GitCheckout::open(source("http://robot%40ci:" + secret + "@127.0.0.1:9/repo.git"), options), InputError);
  const std::string calls = test::read_file(log);
  ASSERT_THAT(calls, HasSubstr("ARGV -c protocol.allow=never"));
  ASSERT_THAT(calls, HasSubstr("http://127.0.0.1:9/repo.git"));
  std::istringstream lines(calls);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("ARGV ")) {
      EXPECT_THAT(line, Not(HasSubstr(secret))) << "a git argument carries the password";
    }
  }
  EXPECT_THAT(calls, HasSubstr("username=robot@ci\npassword=" + secret));
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
