// The walk of Bundle::load: a tree that changes while it loads is never
// followed out of the root, links inside the root are followed by their
// real path, and names that are not UTF-8 are reported and skipped.
#include "retrieval/bundle.hpp"

#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <atomic>
#include <map>
#include <thread>

#include "retrieval/utf8.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::retrieval {
namespace {
namespace fs = std::filesystem;
using okfbench::test::concept_md;
using okfbench::test::fresh_dir;
using okfbench::test::make_bundle;
using okfbench::test::write_file;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> ids(const Bundle& bundle) {
  std::vector<std::string> out;
  for (const Concept& item : bundle.concepts()) out.push_back(item.id);
  return out;
}

// Swaps `path` for a symbolic link to `outside` and back, each by an atomic
// rename, until stopped: a file, or a directory (then kept aside meanwhile).
class Swapper {
 public:
  Swapper(fs::path file, fs::path file_outside, fs::path dir, fs::path dir_outside)
      : thread_([=, this] {
          std::string text = concept_md("type: X\n", "inside\n");
          fs::path aside = dir.parent_path() / ".aside";
          while (!stop_) {
            fs::create_symlink(file_outside, file.parent_path() / ".link");
            fs::rename(file.parent_path() / ".link", file);
            write_file(file.parent_path() / ".file", text);
            fs::rename(file.parent_path() / ".file", file);
            fs::rename(dir, aside);
            fs::create_directory_symlink(dir_outside, dir);
            std::this_thread::yield();
            fs::remove(dir);
            fs::rename(aside, dir);
            ++swaps_;
          }
        }) {}
  ~Swapper() {
    stop_ = true;
    thread_.join();
  }
  long swaps() const { return swaps_; }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<long> swaps_{0};
  std::thread thread_;
};

// The race the walk used to lose: readdir says "regular file", then the file
// becomes a link to a file outside before it is opened. The outside text
// must never reach a concept or a diagnostic, on either read path.
TEST(BundleWalk, FilesSwappedForLinksWhileLoadingAreNeverFollowedOut) {
  const std::string secret = "OUTSIDE-SECRET";
  fs::path outside = make_bundle("race-outside", {
      {"secret.md", concept_md("type: Secret\ntitle: " + secret + "\n", secret + "\n")},
      {"sub/victim.md", concept_md("type: Secret\ntitle: " + secret + "\n", secret + "\n")},
  });
  std::map<std::string, std::string> files;
  for (int i = 0; i < 100; ++i) files[fmt::format("c{:03}.md", i)] = concept_md("type: X\n", "inside\n");
  files["c050-victim.md"] = concept_md("type: X\n", "inside\n");  // sorts into a full batch of 32
  files["c060-dir/victim.md"] = concept_md("type: X\n", "inside\n");
  fs::path root = make_bundle("race", files);
  std::size_t loads = 0, refused = 0;
  {
    Swapper swapper(root / "c050-victim.md", outside / "secret.md", root / "c060-dir", outside / "sub");
    for (int round = 0; round < 240; ++round) {
      Bundle bundle = Bundle::load(root, {.threads = round % 3 == 0 ? 1u : 2u, .io_uring = round % 2 == 0});
      ++loads;
      for (const Concept& item : bundle.concepts()) {
        ASSERT_EQ(item.body.find(secret), std::string::npos) << item.id << " after " << loads << " loads";
        ASSERT_EQ(item.title.find(secret), std::string::npos) << item.id;
      }
      for (const Diagnostic& diagnostic : bundle.diagnostics()) {
        ASSERT_EQ(diagnostic.message.find(secret), std::string::npos);
        refused += diagnostic.message.find("symbolic link") != std::string::npos ? 1 : 0;
      }
      ASSERT_GE(bundle.concepts().size(), 100u);
    }
    RecordProperty("swaps", static_cast<int>(swapper.swaps()));
  }
  RecordProperty("links_refused", static_cast<int>(refused));
  EXPECT_EQ(loads, 240u);
}

// Links that stay inside the root keep working, a directory link included,
// and are read by the target's own path; links out, cycles and links to the
// root are not followed.
TEST(BundleWalk, LinksInsideTheRootAreFollowedByTheirRealPath) {
  fs::path outside = make_bundle("links-outside", {{"leak.md", concept_md("type: Secret\n", "")}});
  fs::path root = make_bundle("links", {
      {"a.md", concept_md("type: X\n", "A\n")},
      {"real/b.md", concept_md("type: X\n", "B\n")},
      {"real/deep/c.md", concept_md("type: X\n", "C\n")},
  });
  fs::create_symlink("a.md", root / "relative.md");
  fs::create_symlink(root / "real" / "deep" / "c.md", root / "absolute.md");
  fs::create_symlink("../relative.md", root / "real" / "chain.md");  // a link to a link
  fs::create_directory_symlink("real", root / "view");
  fs::create_directory_symlink("..", root / "real" / "up");  // a cycle back to the root
  fs::create_symlink(outside / "leak.md", root / "real" / "leak.md");
  Bundle bundle = Bundle::load(root);
  EXPECT_THAT(ids(bundle), ElementsAre("a", "absolute", "real/b", "real/chain", "real/deep/c", "relative"));
  EXPECT_EQ(bundle.find("absolute")->body, "\nC\n");
  EXPECT_EQ(bundle.find("real/chain")->body, "\nA\n");
  ASSERT_EQ(bundle.diagnostics().size(), 1u);
  EXPECT_EQ(bundle.diagnostics()[0].path, "real/leak.md");
  EXPECT_THAT(bundle.diagnostics()[0].message, HasSubstr("outside the bundle root"));
}

// A concept id is a path and travels as JSON and into text reports: a name
// that is not UTF-8 or holds a control character is an error diagnostic
// with those bytes escaped, and the file (or the directory with all below
// it) is skipped.
TEST(BundleWalk, NamesThatAreNotUtf8AreReportedEscapedAndSkipped) {
  fs::path root = make_bundle("names", {
      {"good.md", concept_md("type: X\n", "[bad](caf%E9.md)\n")},
      {"caf\xE9.md", concept_md("type: X\n", "Latin-1 name\n")},
      {"d\xFF\xFE/x.md", concept_md("type: X\n", "in a Latin-1 directory\n")},
      {"ok/also\xC3(.md", concept_md("type: X\n", "truncated sequence\n")},
      {"notes\xE9.txt", "not markdown, ignored\n"},
      {"two\nlines.md", concept_md("type: X\n", "a newline in the name\n")},
      {"next\xC2\x85line.md", concept_md("type: X\n", "U+0085 in the name\n")},
  });
  fs::create_symlink("good.md", root / "link\xE9.md");
  Bundle bundle = Bundle::load(root);
  EXPECT_THAT(ids(bundle), ElementsAre("good"));
  std::vector<std::string> paths;
  for (const Diagnostic& diagnostic : bundle.diagnostics()) {
    paths.push_back(diagnostic.path);
    EXPECT_EQ(invalid_utf8_offset(diagnostic.path), std::string::npos);
    EXPECT_EQ(invalid_utf8_offset(diagnostic.message), std::string::npos);
  }
  EXPECT_THAT(paths, ElementsAre("caf\\xE9.md", "d\\xFF\\xFE", "link\\xE9.md", "next\\xC2\\x85line.md",
                                 "ok/also\\xC3(.md", "two\\x0Alines.md"));
  EXPECT_EQ(bundle.diagnostics()[0].severity, Severity::error);
  EXPECT_THAT(bundle.diagnostics()[0].message, HasSubstr("file name is not valid UTF-8 (byte 0xE9 at offset 3)"));
  EXPECT_THAT(bundle.diagnostics()[1].message, HasSubstr("directory name is not valid UTF-8"));
  EXPECT_THAT(bundle.diagnostics()[1].message, HasSubstr("with everything below it"));
  EXPECT_THAT(bundle.diagnostics()[5].message, HasSubstr("file name contains a control character (byte 0x0A"));
  // Every string the bundle hands out serialises as JSON.
  nlohmann::json out = nlohmann::json::array();
  for (const Diagnostic& d : bundle.diagnostics()) out.push_back({{"path", d.path}, {"message", d.message}});
  for (const Concept& c : bundle.concepts())
    for (const Link& link : c.links) out.push_back({{"raw", link.raw}, {"target", link.target}});
  EXPECT_NO_THROW(out.dump());
  EXPECT_EQ(bundle.find("good")->links.at(0).resolved, false);
}

}  // namespace
}  // namespace okfbench::retrieval
