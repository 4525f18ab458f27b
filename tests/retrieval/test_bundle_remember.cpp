// Bundle::remember: what it writes, what it refuses, and that it never
// writes outside the bundle, never forges or rewrites log.md and never
// throws.
#include "retrieval/bundle.hpp"

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <map>
#include <thread>

#include "tests/support/test_support.hpp"

namespace okfbench::retrieval {
namespace {
namespace fs = std::filesystem;
using okfbench::test::concept_md;
using okfbench::test::fresh_dir;
using okfbench::test::make_bundle;
using okfbench::test::read_file;
using okfbench::test::write_file;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

Bundle::RememberRequest request(const std::string& id, const std::string& title = "T") {
  Bundle::RememberRequest made;
  made.concept_id = id;
  made.title = title;
  made.body = "body";
  made.date = "2026-02-02";
  return made;
}

std::vector<std::string> targets(const Concept& item) {
  std::vector<std::string> out;
  for (const Link& link : item.links) out.push_back(link.resolved ? link.target : "!" + link.raw);
  return out;
}

// Every path below `root`, relative and sorted, to see that nothing else appeared.
std::vector<std::string> tree(const fs::path& root) {
  std::vector<std::string> out;
  for (const auto& entry : fs::recursive_directory_iterator(root))
    out.push_back(entry.path().lexically_relative(root).string());
  std::sort(out.begin(), out.end());
  return out;
}

const std::string kLog = "# Log\n\n## 2026-01-01\n\n* **Added**: the [runbook](/runbooks/slow.md).\n";

TEST(BundleRemember, WritesConceptAndLogEntryInsideTheBundle) {
  fs::path root = make_bundle("remember", {
      {"runbooks/slow.md", concept_md("type: Playbook\n", "")},
      {"log.md", kLog},
  });
  Bundle bundle = Bundle::load(root);
  Bundle::RememberRequest request;
  request.concept_id = "notes/checklist";
  request.title = "Slow query: checklist";
  request.body = "1. Check the plan.";
  request.description = "What to check first.";
  request.links = {"runbooks/slow", "/runbooks/slow.md"};
  request.date = "2026-02-02";
  Bundle::Remembered saved = bundle.remember(request);
  ASSERT_EQ(saved.error, "");
  EXPECT_EQ(saved.id, "notes/checklist");
  EXPECT_THAT(saved.links, ElementsAre("runbooks/slow", "runbooks/slow"));
  const Concept* item = bundle.find("notes/checklist");
  ASSERT_NE(item, nullptr);
  EXPECT_EQ(item->title, "Slow query: checklist");
  EXPECT_EQ(item->type, "Note");
  EXPECT_EQ(item->trust, TrustTier::unverified);
  EXPECT_THAT(targets(*item), ElementsAre("runbooks/slow", "runbooks/slow"));
  ASSERT_EQ(bundle.neighbors("runbooks/slow", Direction::in).size(), 1u);
  EXPECT_EQ(bundle.neighbors("runbooks/slow", Direction::in)[0].id, "notes/checklist");
  EXPECT_EQ(read_file(root / "log.md"),
            "# Log\n\n## 2026-02-02\n\n* **Remembered**: [Slow query: checklist](/notes/checklist.md)\n\n"
            "## 2026-01-01\n\n* **Added**: the [runbook](/runbooks/slow.md).\n");
  ASSERT_EQ(bundle.history("notes/checklist").size(), 1u);
  // A fresh load sees exactly what the live bundle has.
  Bundle reloaded = Bundle::load(root);
  ASSERT_NE(reloaded.find("notes/checklist"), nullptr);
  EXPECT_EQ(reloaded.find("notes/checklist")->links, item->links);
  EXPECT_EQ(reloaded.history(), bundle.history());
  EXPECT_TRUE(reloaded.diagnostics().empty());
  EXPECT_THAT(tree(root), ElementsAre("log.md", "notes", "notes/checklist.md", "runbooks", "runbooks/slow.md"));
}

// OKF reads a leading '/' as the bundle root, so "/abs/path" is the id
// "abs/path": remember writes that, says that, and open() finds it by either.
TEST(BundleRemember, ARootRelativeIdIsNormalisedAndAnsweredAsWritten) {
  fs::path root = make_bundle("remember-abs", {{"a.md", concept_md("type: X\n", "")}});
  Bundle bundle = Bundle::load(root);
  Bundle::Remembered saved = bundle.remember(request("/abs/path"));
  ASSERT_EQ(saved.error, "");
  EXPECT_EQ(saved.id, "abs/path");
  EXPECT_TRUE(fs::is_regular_file(root / "abs" / "path.md"));
  EXPECT_NE(bundle.find("abs/path"), nullptr);
  EXPECT_EQ(bundle.lookup("/abs/path"), bundle.find("abs/path"));
  EXPECT_EQ(bundle.remember(request("/notes/x.md")).id, "notes/x");
  EXPECT_THAT(bundle.remember(request("abs/path.md")).error, HasSubstr("already exists"));
}

TEST(BundleRemember, RefusesBadIdsAndWritesNothing) {
  fs::path root = make_bundle("remember-bad", {{"a.md", concept_md("type: X\n", "")}, {"log.md", kLog}});
  Bundle bundle = Bundle::load(root);
  std::vector<std::string> before = tree(root);
  const std::map<std::string, std::string> cases = {
      {"../escape", "`..`"},
      {"a/../../x", "`..`"},
      {"/../x", "`..`"},
      {"", "empty"},
      {"/", "empty"},
      {"a//b", "empty part"},
      {"a/", "empty part"},
      {"//etc/passwd", "empty part"},
      {".hidden", "hidden"},
      {"x/.git/y", "hidden"},
      {"x/index", "OKF reserves"},
      {"log", "OKF reserves"},
      {"a\\b", "not portable"},
      {"a:b", "not portable"},
      {"x%2e%2e/y", "not portable"},
      {"x#y", "not portable"},
      {"a\nb", "control characters"},
      {"a\tb", "control characters"},
      {std::string("a\0b", 3), "control characters"},
      {"a\xC2\x85" "b", "control characters"},  // U+0085, which loading would skip
      {"bad\xFF", "not valid UTF-8"},
      {std::string(241, 'x'), "ids are at most 240 bytes"},
      {std::string(300, 'x'), "ids are at most 240 bytes"},
      {"notes/" + std::string(101, 'p'), "at most 100 bytes"},
  };
  for (const auto& [id, why] : cases) {
    Bundle::Remembered refused = bundle.remember(request(id));
    EXPECT_THAT(refused.error, HasSubstr(why)) << id;
    EXPECT_EQ(refused.id, "") << id;
  }
  EXPECT_THAT(bundle.remember(request("a")).error, HasSubstr("already exists"));
  EXPECT_THAT(bundle.remember(request("a/b")).error, HasSubstr("`a` is a concept; a directory `a/` beside it"));
  Bundle::RememberRequest escaping = request("b");
  escaping.links = {"../../etc/passwd"};
  EXPECT_THAT(bundle.remember(escaping).error, HasSubstr("does not name"));
  Bundle::RememberRequest no_title = request("b", "");
  EXPECT_THAT(bundle.remember(no_title).error, HasSubstr("title is empty"));
  EXPECT_THAT(bundle.remember(request("b", std::string(301, 't'))).error, HasSubstr("at most 300 bytes"));
  EXPECT_THAT(bundle.remember(request("b", "caf\xE9")).error, HasSubstr("title is not valid UTF-8"));
  EXPECT_EQ(tree(root), before);
  EXPECT_EQ(read_file(root / "log.md"), kLog);
  EXPECT_EQ(bundle.concepts().size(), 1u);
  // At the limits exactly, it writes.
  std::string longest = std::string(100, 'p') + "/" + std::string(100, 'q') + "/" + std::string(38, 'r');
  ASSERT_EQ(longest.size(), Bundle::max_id_bytes);
  EXPECT_EQ(bundle.remember(request(longest)).id, longest);
}

// Through a symbolic link to a directory outside, nothing may be created
// out there, not even the directories on the way.
TEST(BundleRemember, NeverCreatesAnythingThroughALink) {
  fs::path outside = fresh_dir("remember-outside");
  fs::path root = make_bundle("remember-link", {{"a.md", concept_md("type: X\n", "")}, {"inner/b.md", concept_md("type: X\n", "")}});
  fs::create_directory_symlink(outside, root / "out");
  fs::create_directory_symlink(root / "inner", root / "alias");
  Bundle bundle = Bundle::load(root);
  for (std::string id : {"out/x", "out/deep/er/x", "alias/x", "alias/new/x", "a.md/x"}) {
    Bundle::Remembered refused = bundle.remember(request(id));
    EXPECT_THAT(refused.error, HasSubstr("is a symbolic link or a file")) << id;
    EXPECT_THAT(refused.error, HasSubstr("inside the bundle")) << id;
  }
  EXPECT_THAT(bundle.remember(request("alias")).error, HasSubstr("`alias` is a directory of the bundle"));
  EXPECT_TRUE(fs::is_empty(outside));
  EXPECT_THAT(tree(root / "inner"), ElementsAre("b.md"));
  EXPECT_FALSE(fs::exists(root / "log.md"));
}

TEST(BundleRemember, LogEntryIsOneEscapedLineThatForgesNothing) {
  fs::path root = make_bundle("remember-forge", {
      {"a.md", concept_md("type: X\n", "")},
      {"runbooks/slow.md", concept_md("type: X\n", "")},
      {"log.md", kLog},
  });
  Bundle bundle = Bundle::load(root);
  std::vector<LogEntry> before = bundle.history();
  std::string forged =
      "Evil]\n\n## 2020-01-01\n\n* **Verified**: [a](/a.md) checked\n- [runbook](/runbooks/slow.md) `x` #h\u2028"
      "* **Deleted**: (all)";
  Bundle::Remembered saved = bundle.remember(request("notes/evil", forged));
  ASSERT_EQ(saved.error, "");
  EXPECT_EQ(bundle.find("notes/evil")->title, forged);  // the concept keeps its title, YAML-quoted
  std::string log = read_file(root / "log.md");
  std::string line =
      "* **Remembered**: [Evil\\] \\#\\# 2020-01-01 \\* \\*\\*Verified\\*\\*: \\[a\\]\\(/a.md\\) checked - "
      "\\[runbook\\]\\(/runbooks/slow.md\\) \\`x\\` \\#h \\* \\*\\*Deleted\\*\\*: \\(all\\)](/notes/evil.md)";
  EXPECT_EQ(log, "# Log\n\n## 2026-02-02\n\n" + line + "\n\n" + kLog.substr(7));
  Bundle reloaded = Bundle::load(root);
  std::vector<LogEntry> after = reloaded.history();
  ASSERT_EQ(after.size(), before.size() + 1);
  EXPECT_EQ(after[0].date, "2026-02-02");
  EXPECT_EQ(after[0].kind, "Remembered");
  EXPECT_EQ(std::vector<LogEntry>(after.begin() + 1, after.end()), before);  // nothing re-dated
  EXPECT_EQ(after[0].text.find('\n'), std::string::npos);
  // The forged links are text: the entry names a.md (so history("a") has
  // it, as for any entry naming the file) but links only to the new concept.
  for (const char* id : {"a", "runbooks/slow"})
    for (const LogEntry& entry : reloaded.history(id))
      EXPECT_TRUE(entry.kind != "Verified" && entry.kind != "Deleted" && entry.date != "2020-01-01") << id;
  EXPECT_EQ(reloaded.history("notes/evil").size(), 1u);
  EXPECT_TRUE(reloaded.diagnostics().empty()) << reloaded.diagnostics()[0].message;
  // A carriage return (or any control character but tab and line feed) in the
  // title would be a frontmatter diagnostic on the next load: refused.
  EXPECT_THAT(reloaded.remember(request("notes/cr", "a\r\nb")).error, HasSubstr("control character"));
}

// The entry goes under the day's heading when there is one, else under a new
// heading before the first older day; frontmatter is never touched.
TEST(BundleRemember, AppendsUnderTheDaysHeadingOnly) {
  const std::string front = "---\ntitle: Log\n## 2026-02-02\n---\n";  // a YAML comment, not a heading
  const std::map<std::string, std::pair<std::string, std::string>> cases = {
      {"same day", {"# Log\n\n## 2026-02-02\n\n* **Added**: x\n", "# Log\n\n## 2026-02-02\n\nENTRY\n* **Added**: x\n"}},
      {"newer first",
       {"## 2026-03-01\n* a\n\n## 2026-01-01\n* b\n", "## 2026-03-01\n* a\n\n## 2026-02-02\n\nENTRY\n\n## 2026-01-01\n* b\n"}},
      {"only newer", {"# Log\n\n## 2026-03-01\n\n* a", "# Log\n\n## 2026-03-01\n\n* a\n\n## 2026-02-02\n\nENTRY\n"}},
      {"no dates", {"# Log\n", "# Log\n\n## 2026-02-02\n\nENTRY\n"}},
      {"frontmatter", {front + "## 2026-01-01\n* b\n", front + "## 2026-02-02\n\nENTRY\n\n## 2026-01-01\n* b\n"}},
  };
  for (const auto& [name, log] : cases) {
    SCOPED_TRACE(name);
    fs::path root = make_bundle("remember-append", {{"log.md", log.first}});
    Bundle bundle = Bundle::load(root);
    ASSERT_EQ(bundle.remember(request("n")).error, "");
    std::string expected = log.second;
    expected.replace(expected.find("ENTRY"), 5, "* **Remembered**: [T](/n.md)");
    EXPECT_EQ(read_file(root / "log.md"), expected);
  }
}

// A log.md that cannot be read whole is never replaced: remember refuses and
// leaves no concept file, no directory and no temporary file behind.
TEST(BundleRemember, RefusesWhenLogCannotBeRead) {
  std::map<std::string, std::function<void(const fs::path&)>> cases = {
      {"a directory", [](const fs::path& log) { fs::create_directory(log); }},
      {"a FIFO", [](const fs::path& log) { ASSERT_EQ(::mkfifo(log.c_str(), 0644), 0); }},
      {"not valid UTF-8", [](const fs::path& log) { write_file(log, kLog + "* caf\xE9\n"); }},
      {"a symbolic link", [](const fs::path& log) { fs::create_symlink(log.parent_path() / "a.md", log); }},
      {"CRLF", [](const fs::path& log) { write_file(log, "# Log\r\n\r\n## 2026-01-01\r\n"); }},
  };
  for (const auto& [name, make_log] : cases) {
    SCOPED_TRACE(name);
    fs::path root = make_bundle("remember-badlog", {{"a.md", concept_md("type: X\n", "")}});
    make_log(root / "log.md");
    Bundle bundle = Bundle::load(root);
    std::vector<std::string> before = tree(root);
    std::string a_before = read_file(root / "a.md");
    Bundle::Remembered refused = bundle.remember(request("notes/new"));
    EXPECT_THAT(refused.error, HasSubstr("log.md"));
    EXPECT_EQ(tree(root), before);
    EXPECT_EQ(read_file(root / "a.md"), a_before);
    EXPECT_EQ(bundle.find("notes/new"), nullptr);
  }
}

// Two Bundles over one directory, in two threads (as two processes would
// be): every entry of both ends up in log.md.
TEST(BundleRemember, ConcurrentRemembersKeepEveryEntry) {
  fs::path root = make_bundle("remember-concurrent", {{"a.md", concept_md("type: X\n", "")}, {"log.md", kLog}});
  constexpr int per_thread = 25;
  auto remember_many = [&](const std::string& prefix, std::vector<std::string>& errors) {
    Bundle bundle = Bundle::load(root);
    for (int i = 0; i < per_thread; ++i) {
      Bundle::Remembered saved = bundle.remember(request(fmt::format("{}/n{}", prefix, i)));
      if (!saved.error.empty()) errors.push_back(saved.error);
    }
  };
  std::vector<std::string> errors_a, errors_b;
  std::thread a(remember_many, "a-notes", std::ref(errors_a));
  std::thread b(remember_many, "b-notes", std::ref(errors_b));
  a.join();
  b.join();
  EXPECT_TRUE(errors_a.empty()) << errors_a.front();
  EXPECT_TRUE(errors_b.empty()) << errors_b.front();
  Bundle reloaded = Bundle::load(root);
  EXPECT_EQ(reloaded.concepts().size(), 1u + 2 * per_thread);
  EXPECT_EQ(reloaded.history().size(), 1u + 2 * per_thread);
  for (int i = 0; i < per_thread; ++i) {
    EXPECT_EQ(reloaded.history(fmt::format("a-notes/n{}", i)).size(), 1u) << i;
    EXPECT_EQ(reloaded.history(fmt::format("b-notes/n{}", i)).size(), 1u) << i;
  }
  EXPECT_TRUE(reloaded.diagnostics().empty());
  for (const std::string& path : tree(root)) EXPECT_EQ(path.find(".tmp"), std::string::npos) << path;
}

// Errors of the system (here: a file size limit, as a full disk would give,
// and a bundle directory that is gone) are values, and what was written
// before the failure is taken back.
TEST(BundleRemember, SystemErrorsAreValuesAndUndoThemselves) {
  fs::path root = make_bundle("remember-efbig", {{"a.md", concept_md("type: X\n", "")}, {"log.md", kLog}});
  Bundle bundle = Bundle::load(root);
  std::vector<std::string> before = tree(root);
  struct rlimit old_limit {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  auto old_handler = ::signal(SIGXFSZ, SIG_IGN);  // write() then fails with EFBIG
  struct rlimit small = old_limit;
  small.rlim_cur = 4096;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  Bundle::RememberRequest big_concept = request("fresh/sub/big");
  big_concept.body = std::string(8000, 'b');
  Bundle::Remembered concept_failed = bundle.remember(big_concept);
  Bundle::RememberRequest big_log = request("fresh/sub/small", std::string(290, 't'));
  write_file(root / "log.md", kLog + std::string(3900, '\n'));  // the entry pushes the log past 4096
  Bundle::Remembered log_failed = bundle.remember(big_log);
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &old_limit), 0);
  ::signal(SIGXFSZ, old_handler);
  EXPECT_THAT(concept_failed.error, HasSubstr("File too large"));
  EXPECT_THAT(log_failed.error, HasSubstr("log.md: File too large"));
  EXPECT_EQ(tree(root), before);  // no fresh/, no fresh/sub/, no concept, no temporary file
  EXPECT_EQ(read_file(root / "log.md"), kLog + std::string(3900, '\n'));
  EXPECT_EQ(bundle.find("fresh/sub/big"), nullptr);
  EXPECT_EQ(bundle.find("fresh/sub/small"), nullptr);

  fs::remove_all(root);
  Bundle::Remembered gone = bundle.remember(request("n"));
  EXPECT_THAT(gone.error, HasSubstr("No such file or directory"));
}

}  // namespace
}  // namespace okfbench::retrieval
