// The malformed-input corpus: every file in tests/data/malformed/ is one case,
// and expected.tsv says which diagnostic it must produce.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "retrieval/bundle.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::retrieval {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;

struct Expected {
  std::string path;
  Severity severity;
  int line;
  std::string message;
};

std::vector<Expected> read_expected(const fs::path& file) {
  std::vector<Expected> cases;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    Expected item;
    std::string severity, number;
    std::getline(fields, item.path, '\t');
    std::getline(fields, severity, '\t');
    std::getline(fields, number, '\t');
    std::getline(fields, item.message);
    item.severity = severity == "error" ? Severity::error : Severity::warning;
    item.line = std::stoi(number);
    cases.push_back(item);
  }
  return cases;
}

fs::path corpus() { return okfbench::test::source_dir() / "tests/data/malformed"; }

TEST(BundleMalformed, EveryCaseGivesItsDiagnostic) {
  Bundle bundle = Bundle::load(corpus());
  std::vector<Expected> cases = read_expected(corpus() / "expected.tsv");
  ASSERT_EQ(cases.size(), 18u);
  ASSERT_EQ(bundle.diagnostics().size(), cases.size());
  for (const Expected& expected : cases) {
    auto found = std::find_if(bundle.diagnostics().begin(), bundle.diagnostics().end(), [&](const Diagnostic& d) {
      return d.path == expected.path && d.line == expected.line && d.message.find(expected.message) != std::string::npos;
    });
    ASSERT_NE(found, bundle.diagnostics().end()) << expected.path << ": " << expected.message;
    EXPECT_EQ(found->severity, expected.severity) << expected.path;
  }
}

TEST(BundleMalformed, ErrorsSkipTheFileWarningsKeepIt) {
  Bundle bundle = Bundle::load(corpus());
  std::vector<std::string> loaded;
  for (const Concept& item : bundle.concepts()) loaded.push_back(item.id);
  EXPECT_THAT(loaded, ::testing::ElementsAre("bom", "clash", "clash/inner", "crlf", "escaping-link",
                                             "invalid-timestamp", "verified-no-actor"));
  EXPECT_EQ(bundle.find("bom")->title, "With BOM");
  const Concept* crlf = bundle.find("crlf");
  EXPECT_EQ(crlf->title, "Windows");
  EXPECT_EQ(crlf->body.find('\r'), std::string::npos);
  ASSERT_EQ(crlf->links.size(), 1u);
  EXPECT_EQ(crlf->links[0].target, "bom");
  const Concept* escaping = bundle.find("escaping-link");
  ASSERT_EQ(escaping->links.size(), 1u);
  EXPECT_FALSE(escaping->links[0].resolved);
  EXPECT_EQ(escaping->links[0].target, "");
  EXPECT_EQ(bundle.find("invalid-timestamp")->stale_after, "next tuesday");
  EXPECT_FALSE(bundle.find("invalid-timestamp")->is_stale("2099-01-01T00:00:00Z"));
  EXPECT_TRUE(bundle.find("verified-no-actor")->verified.empty());
  EXPECT_EQ(bundle.find("verified-no-actor")->trust, TrustTier::unverified);
}

TEST(BundleMalformed, RepeatedKeysAreReportedWhereverTheyAre) {
  fs::path root = okfbench::test::fresh_dir("repeated-keys");
  // An unknown key, a key inside a list entry, and one repeated twice: each
  // repetition is one diagnostic at its own line, naming the first.
  okfbench::test::write_file(root / "extra.md", "---\ntype: X\nowner: a\nowner: b\n---\n");
  okfbench::test::write_file(root / "entry.md",
                             "---\ntype: X\nverified:\n  - by: human:a\n    by: human:b\n---\n");
  okfbench::test::write_file(root / "thrice.md", "---\ntype: X\ntags: [a]\ntags: [b]\ntags: [c]\n---\n");
  okfbench::test::write_file(root / "aliases.md", "---\ntype: X\nbase: &b {k: 1}\nuse: *b\nagain: *b\n---\n");
  okfbench::test::write_file(root / "index.md", "---\nokf_version: \"0.2\"\nokf_version: \"0.3\"\n---\n# Root\n");
  Bundle repo = Bundle::load(root, {.profile = Profile::repo});
  Bundle okf = Bundle::load(root);
  auto messages = [](const Bundle& bundle, const std::string& path) {
    std::vector<std::string> out;
    for (const Diagnostic& d : bundle.diagnostics()) {
      if (d.path == path) out.push_back(fmt::format("{}: {}", d.line, d.message.substr(0, d.message.find(':'))));
    }
    return out;
  };
  EXPECT_THAT(messages(repo, "extra.md"), ::testing::ElementsAre("4: duplicate key `owner` (first at line 3)"));
  EXPECT_THAT(messages(repo, "entry.md"), ::testing::ElementsAre("5: duplicate key `verified[0].by` (first at line 4)"));
  EXPECT_THAT(messages(repo, "thrice.md"), ::testing::ElementsAre("4: duplicate key `tags` (first at line 3)",
                                                                  "5: duplicate key `tags` (first at line 3)"));
  EXPECT_THAT(messages(repo, "aliases.md"), ::testing::IsEmpty());  // one node met three times is not a repeat
  EXPECT_EQ(repo.find("extra")->extra.at("owner"), "a");
  EXPECT_EQ(repo.find("thrice")->tags, (std::vector<std::string>{"a"}));
  EXPECT_EQ(repo.find("entry")->verified.at(0).by, "human:a");
  EXPECT_EQ(okf.find("extra"), nullptr);
  EXPECT_NE(okf.find("aliases"), nullptr);
  // The root index.md (okf profile) is not a concept: a warning, as for its other frontmatter problems.
  EXPECT_THAT(messages(okf, "index.md"),
              ::testing::ElementsAre("3: duplicate key `okf_version` in root index.md frontmatter (first at line 2)"));
  for (const Diagnostic& d : okf.diagnostics()) {
    if (d.path == "index.md") {
      EXPECT_EQ(d.severity, Severity::warning);
    }
  }
}

TEST(BundleMalformed, OversizedFileIsSkipped) {
  fs::path root = okfbench::test::fresh_dir("oversized");
  okfbench::test::write_file(root / "big.md", "---\ntype: X\n---\n\n" + std::string(2000, 'x') + "\n");
  okfbench::test::write_file(root / "small.md", "---\ntype: X\n---\n");
  Bundle bundle = Bundle::load(root, {.max_file_bytes = 1000});
  ASSERT_EQ(bundle.concepts().size(), 1u);
  ASSERT_EQ(bundle.diagnostics().size(), 1u);
  EXPECT_EQ(bundle.diagnostics()[0].path, "big.md");
  EXPECT_EQ(bundle.diagnostics()[0].severity, Severity::error);
  EXPECT_THAT(bundle.diagnostics()[0].message, HasSubstr("2018 bytes, over the limit of 1000 bytes"));
}

TEST(BundleMalformed, RepoProfileKeepsWhatOkfSkips) {
  Bundle bundle = Bundle::load(corpus(), {.profile = Profile::repo});
  // Files without usable frontmatter load as plain markdown; invalid UTF-8 and
  // the empty file still cannot be concepts.
  EXPECT_NE(bundle.find("no-frontmatter"), nullptr);
  EXPECT_NE(bundle.find("unterminated-fence"), nullptr);
  EXPECT_NE(bundle.find("invalid-yaml"), nullptr);
  EXPECT_EQ(bundle.find("missing-type")->type, "Document");
  EXPECT_EQ(bundle.find("invalid-utf8"), nullptr);
  EXPECT_EQ(bundle.find("empty"), nullptr);
  // A repeated key is a warning here, and its first value counts, at any depth.
  ASSERT_NE(bundle.find("duplicate-key"), nullptr);
  EXPECT_EQ(bundle.find("duplicate-key")->title, "First title");
  ASSERT_NE(bundle.find("duplicate-nested-key"), nullptr);
  EXPECT_EQ(bundle.find("duplicate-nested-key")->generated_by, "process:first");
  for (const Diagnostic& diagnostic : bundle.diagnostics()) {
    if (diagnostic.path != "invalid-utf8.md") {
      EXPECT_EQ(diagnostic.severity, Severity::warning) << diagnostic.path;
    }
  }
}

TEST(BundleMalformed, DeepNestingNeitherCrashesNorHangs) {
  fs::path root = okfbench::test::fresh_dir("deep");
  std::string quotes;
  for (int i = 0; i < 20000; ++i) quotes += "> ";
  std::string brackets(20000, '[');
  okfbench::test::write_file(root / "quotes.md", "---\ntype: X\n---\n" + quotes + "[deep](a.md)\n");
  okfbench::test::write_file(root / "brackets.md", "---\ntype: X\n---\n" + brackets + "\n");
  okfbench::test::write_file(root / "yaml.md", "---\ntype: X\nx: " + brackets + "\n---\n");
  Bundle bundle = Bundle::load(root, {.profile = Profile::repo});
  EXPECT_EQ(bundle.concepts().size(), 3u);
  EXPECT_NE(bundle.find("quotes"), nullptr);
}

TEST(BundleMalformed, OddYamlShapesNeverThrow) {
  std::vector<std::string> shapes = {
      "tags: {a: b}", "tags: [[1], {x: y}]", "sources: [[1]]", "sources: {a: b}", "sources: [{id: x}]",
      "generated: [1]", "generated: {at: 5}", "verified: human:x", "verified: [[human:x]]", "verified: [{by: [1]}]",
      "title: {a: 1}", "description: [a]", "status: [draft]", "status: archived", "stale_after: [2026-01-01]",
      "links: {a: b}", "links: [{rel: x}]", "links: [[x]]", "? [a, b]\n: c", "usage_window: {from: soon}",
      "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
      "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
      "e: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]"};
  fs::path root = okfbench::test::fresh_dir("shapes");
  for (std::size_t i = 0; i < shapes.size(); ++i)
    okfbench::test::write_file(root / fmt::format("s{}.md", 100 + i), fmt::format("---\ntype: X\n{}\n---\nBody\n", shapes[i]));
  Bundle bundle = Bundle::load(root);
  EXPECT_EQ(bundle.concepts().size(), shapes.size());
  EXPECT_GE(bundle.diagnostics().size(), 18u);
  for (const Diagnostic& d : bundle.diagnostics()) EXPECT_EQ(d.severity, Severity::warning) << d.path << d.message;
  const Concept* bomb = bundle.find("s120");
  ASSERT_NE(bomb, nullptr);
  EXPECT_EQ(bomb->extra.count("e"), 0u);  // 100,000 nodes once expanded: not dumped
  EXPECT_EQ(bomb->extra.count("c"), 1u);
}

}  // namespace
}  // namespace okfbench::retrieval
