// End-to-end tests of validate, browse, open, neighbors and history: they run
// the built okfbench program on the demo bundle and the malformed corpus.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstring>
#include <filesystem>

#include "tests/support/test_support.hpp"

namespace okfbench::cli {
namespace {
using okfbench::test::CommandResult;
using ::testing::HasSubstr;
using ::testing::Not;

std::string demo() { return (okfbench::test::source_dir() / "datasets/bundles/demo").string(); }
std::string malformed() { return (okfbench::test::source_dir() / "tests/data/malformed").string(); }

CommandResult okfbench(const std::string& arguments) {
  return okfbench::test::run_command(okfbench::test::okfbench_binary().string() + " " + arguments);
}

TEST(CmdBundle, ValidateConformantBundle) {
  CommandResult result = okfbench("validate " + demo() + " --now 2026-11-29T00:00:00Z");
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("concepts: 30 in 5 layers (architecture 6, decisions 6, glossary 6, metrics 4, runbooks 8)\n"));
  EXPECT_THAT(result.out, HasSubstr("links: 96 (95 resolved, 1 broken)\n"));
  EXPECT_THAT(result.out, HasSubstr("trust: human-reviewed 13, machine-confirmed 9, unverified 8\n"));
  EXPECT_THAT(result.out, HasSubstr("stale at 2026-11-29T00:00:00Z: metrics/query-latency-p95\n"));
  EXPECT_THAT(result.out, HasSubstr("broken link: runbooks/restore-from-backup.md:18: /runbooks/verify-backup.md\n"));
  EXPECT_THAT(result.out, HasSubstr("conformant: yes\n"));
}

TEST(CmdBundle, OpenShowsAnAttestedComputationsContractAndSourceCredibility) {
  const std::string sales = (okfbench::test::source_dir() / "tests/data/kb/sales").string();
  CommandResult text = okfbench("open " + sales + " computations/revenue-year");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("source: Revenue policy: policy (policies/revenue.md; author human:finance-lead; "
                                  "last_modified 2026-06-15T00:00:00Z; usage_count 42)\nruntime: bigquery\n"
                                  "parameters: year (integer, required)\ncomputation: the sql block under # Computation\n"
                                  "executor: skills/run-on-bq.md; receipt: job_id, executed_sql, result\n"
                                  "attester: attesters/sql_equality.py\n"));
  CommandResult json = okfbench("open " + sales + " computations/revenue-year --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json out = nlohmann::json::parse(json.out);
  EXPECT_EQ(out["computation"]["runtime"], "bigquery");
  EXPECT_EQ(out["computation"]["executor"]["receipt"], nlohmann::json::parse(R"(["job_id","executed_sql","result"])"));
  EXPECT_EQ(out["computation"]["problems"], nlohmann::json::array());
  EXPECT_EQ(out["sources"][0]["usage_count"], "42");
  EXPECT_FALSE(nlohmann::json::parse(okfbench("open " + sales + " metrics/revenue --json").out).contains("computation"));
}

TEST(CmdBundle, ValidateJsonAndNonConformantExitCode) {
  CommandResult result = okfbench("validate " + malformed() + " --json");
  EXPECT_EQ(result.exit_code, 1);
  nlohmann::json report = nlohmann::json::parse(result.out);
  EXPECT_EQ(report["conformant"], false);
  EXPECT_EQ(report["concepts"], 7);
  EXPECT_EQ(report["errors"], 11);  // with the two repeated-key cases
  EXPECT_EQ(report["warnings"], 7);
  ASSERT_EQ(report["diagnostics"].size(), 18u);
  EXPECT_EQ(report["diagnostics"][0]["path"], "bom.md");
  EXPECT_EQ(report["broken_links"][0]["href"], "../../etc/passwd.md");
  // The repo profile accepts plain markdown, so only invalid UTF-8 remains an error.
  EXPECT_EQ(okfbench("validate " + malformed() + " --profile repo").exit_code, 1);
}

// A bundle folder, file and directory named with bytes that are not UTF-8:
// every command still runs, the bad files are reported (escaped) and
// skipped, and all JSON output parses.
TEST(CmdBundle, NamesThatAreNotUtf8NeverAbortACommand) {
  namespace fs = std::filesystem;
  fs::path work = okfbench::test::fresh_dir("cmd-utf8");
  fs::path root = work / "demo-\xE9";
  fs::copy(demo(), root, fs::copy_options::recursive);
  okfbench::test::write_file(root / "caf\xE9.md", "---\ntype: Note\n---\n\nslow query\n");
  okfbench::test::write_file(root / "d\xFF" / "x.md", "---\ntype: Note\n---\n\nx\n");
  std::string bundle = "'" + root.string() + "'";
  CommandResult validate = okfbench("validate " + bundle + " --json");
  EXPECT_EQ(validate.exit_code, 1) << validate.err;
  nlohmann::json report = nlohmann::json::parse(validate.out);
  EXPECT_THAT(report["bundle"].get<std::string>(), HasSubstr("demo-\\xE9"));
  EXPECT_EQ(report["concepts"], 30);
  EXPECT_EQ(report["diagnostics"][0]["path"], "caf\\xE9.md");
  EXPECT_EQ(report["diagnostics"][1]["path"], "d\\xFF");
  CommandResult search = okfbench("search " + bundle + " 'slow query' --json");
  EXPECT_EQ(search.exit_code, 0) << search.err;
  EXPECT_TRUE(nlohmann::json::accept(search.out)) << search.out;
  for (const char* surface : {"grafito", "harnessx"}) {
    CommandResult agent = okfbench("agent " + bundle + " 'A query got slow after a load' --surface " + surface);
    EXPECT_EQ(agent.exit_code, 0) << surface << ": " << agent.err;
  }
  okfbench::test::write_file(work / "spec.yaml",
                             "bundles:\n  - path: demo-\xE9\n    questions: " +
                                 (okfbench::test::source_dir() / "datasets/experiments/questions/demo.yaml").string() +
                                 "\npaths:\n  context: {budget_tokens: 1000}\n  agent: {tools: [[search, open]], "
                                 "max_turns: 3}\nmodels: [sim]\n");
  CommandResult run = okfbench("run " + (work / "spec.yaml").string() + " --out " + (work / "out").string());
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(nlohmann::json::accept(okfbench::test::read_file(work / "out" / "report.json")));
}

TEST(CmdBundle, UsageErrorsExitTwo) {
  EXPECT_EQ(okfbench("validate " + demo() + " --profile nope").exit_code, 2);
  EXPECT_EQ(okfbench("validate").exit_code, 2);
  EXPECT_EQ(okfbench("neighbors " + demo() + " runbooks/slow-queries --hops 0").exit_code, 2);
  CommandResult missing = okfbench("validate /nonexistent/bundle");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.err, HasSubstr("not a directory"));
}

TEST(CmdBundle, BrowseListsLayersAndConcepts) {
  CommandResult root = okfbench("browse " + demo());
  EXPECT_EQ(root.exit_code, 0);
  EXPECT_THAT(root.out, HasSubstr("  runbooks/  (8 concepts)\n"));
  CommandResult layer = okfbench("browse " + demo() + " glossary --json");
  ASSERT_EQ(layer.exit_code, 0);
  nlohmann::json index = nlohmann::json::parse(layer.out);
  ASSERT_EQ(index["concepts"].size(), 6u);
  EXPECT_EQ(index["concepts"][0]["id"], "glossary/cardinality-estimate");
  CommandResult outside = okfbench("browse " + demo() + " ../..");
  EXPECT_EQ(outside.exit_code, 1);
  EXPECT_THAT(outside.err, HasSubstr("no directory"));
}

TEST(CmdBundle, OpenPrintsHeaderAndBodyButNeverLeavesTheBundle) {
  CommandResult result = okfbench("open " + demo() + " /runbooks/slow-queries.md");
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_THAT(result.out, HasSubstr("id: runbooks/slow-queries\ntype: Playbook\ntitle: Triaging a slow graph query\n"));
  EXPECT_THAT(result.out, HasSubstr("trust: human-reviewed\n"));
  EXPECT_THAT(result.out, HasSubstr("2. **Refresh statistics.**"));
  CommandResult json = okfbench("open " + demo() + " metrics/query-latency-p95 --json");
  ASSERT_EQ(json.exit_code, 0);
  EXPECT_EQ(nlohmann::json::parse(json.out)["stale"], true);
  for (std::string bad : {"../../etc/passwd", "/../../../etc/passwd", "runbooks/../../x"}) {
    CommandResult escaped = okfbench("open " + demo() + " " + bad);
    EXPECT_EQ(escaped.exit_code, 1) << bad;
    EXPECT_THAT(escaped.err, HasSubstr("not found")) << bad;
    EXPECT_THAT(escaped.out, Not(HasSubstr("root:")));
  }
}

TEST(CmdBundle, NeighborsByRelationAndHops) {
  CommandResult result = okfbench("neighbors " + demo() + " runbooks/slow-queries --out --rel \"depends on\" --json");
  ASSERT_EQ(result.exit_code, 0);
  nlohmann::json out = nlohmann::json::parse(result.out);
  ASSERT_EQ(out["neighbors"].size(), 2u);
  EXPECT_EQ(out["neighbors"][0]["id"], "architecture/query-planner");
  EXPECT_EQ(out["neighbors"][1]["id"], "architecture/indexes");
  CommandResult broken = okfbench("neighbors " + demo() + " runbooks/restore-from-backup --out");
  EXPECT_THAT(broken.out, HasSubstr("unresolved  STEPS  line 18: /runbooks/verify-backup.md\n"));
  CommandResult in = okfbench("neighbors " + demo() + " decisions/0003-nightly-statistics --in");
  EXPECT_THAT(in.out, HasSubstr("1  SUPERSEDES       decisions/0005-statistics-after-load"));
  EXPECT_EQ(okfbench("neighbors " + demo() + " nope").exit_code, 1);
}

TEST(CmdBundle, HistoryNewestFirst) {
  CommandResult all = okfbench("history " + demo() + " --json");
  ASSERT_EQ(all.exit_code, 0);
  nlohmann::json entries = nlohmann::json::parse(all.out);
  ASSERT_EQ(entries.size(), 8u);
  EXPECT_EQ(entries[0]["date"], "2026-11-20");
  EXPECT_EQ(entries[7]["kind"], "Initialization");
  CommandResult one = okfbench("history " + demo() + " decisions/0003-nightly-statistics");
  EXPECT_EQ(one.exit_code, 0);
  EXPECT_THAT(one.out, HasSubstr("2026-04-03  Deprecation: [ADR 0003]"));
}

std::string lessons(const std::string& name) {
  return (okfbench::test::source_dir() / "tests/data/lessons" / name).string();
}

TEST(CmdBundle, ValidateLessonsReportsSelectionAndExclusions) {
  CommandResult result = okfbench("validate " + lessons("payments") + " --profile lessons --as-of 2026-12-02");
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out,
              HasSubstr("lessons: active 3, candidate 1, deprecated 1, rejected 1, reviewed 1\n"
                        "policy: lessons as of 2026-12-02: rejected and deprecated excluded, candidates excluded\n"
                        "selected: api/pagination-limits, api/retry-idempotency, build/retry-flaky-tests\n"
                        "excluded: api/old-page-size (status:deprecated)\n"
                        "excluded: api/retry-forever (status:rejected)\n"
                        "excluded: build/cache-warmup (status:candidate)\n"
                        "excluded: build/freeze-window (expired)\n"));
  EXPECT_THAT(result.out, HasSubstr("stale at 2026-12-02: -\n"));  // --as-of is validate's clock without --now

  CommandResult json = okfbench("validate " + lessons("payments") +
                                " --profile lessons --as-of 2026-11-15 --include-candidates --prefer-scope project --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  nlohmann::json report = nlohmann::json::parse(json.out)["lessons"];
  EXPECT_EQ(report["selected"], nlohmann::json({"api/pagination-limits", "api/retry-idempotency", "build/cache-warmup",
                                                "build/freeze-window", "build/retry-flaky-tests"}));
  EXPECT_EQ(report["preferred"], nlohmann::json({"api/retry-idempotency", "build/cache-warmup", "build/freeze-window"}));
  EXPECT_EQ(report["excluded"], nlohmann::json::parse(R"([{"id":"api/old-page-size","reason":"status:deprecated"},
                                                          {"id":"api/retry-forever","reason":"status:rejected"}])"));
}

TEST(CmdBundle, ValidateLessonsWithBadValuesIsNotConformant) {
  CommandResult result = okfbench("validate " + lessons("malformed") + " --profile lessons --as-of 2026-12-02");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.out, HasSubstr("approved.md:4: error: `status: approved` is not a lesson status"));
  EXPECT_THAT(result.out, HasSubstr("bad-expiry.md:5: error: `expires_at: 2026-13-01` is not a date"));
  EXPECT_THAT(result.out, HasSubstr("excluded: approved (status:invalid)\nexcluded: bad-expiry (expires_at:invalid)\n"
                                    "excluded: no-status (status:candidate)\n"));
}

TEST(CmdBundle, ValidateLessonFlagsAreCheckedAsUsage) {
  CommandResult bad_date = okfbench("validate " + lessons("payments") + " --profile lessons --as-of soon");
  EXPECT_EQ(bad_date.exit_code, 2);
  EXPECT_THAT(bad_date.err, HasSubstr("--as-of soon: not a date"));
  CommandResult wrong_profile = okfbench("validate " + lessons("payments") + " --include-candidates");
  EXPECT_EQ(wrong_profile.exit_code, 2);
  EXPECT_THAT(wrong_profile.err, HasSubstr("apply to --profile lessons only"));
}

std::string pack(const std::string& name) {
  return (okfbench::test::source_dir() / "tests/data/expertise" / name).string();
}

TEST(CmdBundle, ValidateExpertiseReportsSelectionAndConflicts) {
  CommandResult result =
      okfbench("validate " + pack("python-pack") + " --profile expertise --as-of 2026-06-01 --task-tag python-library");
  EXPECT_EQ(result.exit_code, 1) << result.err;  // the pack's api-style constraints disagree
  EXPECT_THAT(result.out,
              HasSubstr("pack version: 1.2.0\n"
                        "task tags: python-library\n"
                        "policy: expertise pack 1.2.0 as of 2026-06-01 for task tags python-library: rejected, "
                        "deprecated, expired and inapplicable nodes excluded\n"
                        "selected: assumptions/python-version, constraints/api-classes, constraints/api-functions, "
                        "failure-modes/mutable-defaults, verification/test-command, verification/test-command-copy\n"
                        "excluded: constraints/api-handlers (inapplicable)\n"
                        "excluded: constraints/api-legacy (status:deprecated)\n"
                        "excluded: verification/test-command-old (expired)\n"
                        "excluded: verification/test-command-tox (status:rejected)\n"
                        "conflict: key api-style: constraints/api-classes, constraints/api-functions (2 different "
                        "texts)\n"
                        "conflicts: 1\n"));
  EXPECT_THAT(result.out, HasSubstr("diagnostics: 0 errors, 0 warnings\nconformant: yes\n"));

  // A service task sees one API style: no conflict, exit 0.
  CommandResult service = okfbench("validate " + pack("python-pack") +
                                   " --profile expertise --as-of 2026-06-01 --task-tag python-service --json");
  ASSERT_EQ(service.exit_code, 0) << service.err;
  nlohmann::json report = nlohmann::json::parse(service.out)["expertise"];
  EXPECT_EQ(report["version"], "1.2.0");
  EXPECT_EQ(report["task_tags"], nlohmann::json({"python-service"}));
  EXPECT_EQ(report["conflicts"], nlohmann::json::array());
  EXPECT_EQ(report["excluded"][0], nlohmann::json::parse(R"({"id":"constraints/api-functions","reason":"inapplicable"})"));

  // Before the nose command expired it disagreed with pytest.
  CommandResult old = okfbench("validate " + pack("python-pack") + " --profile expertise --as-of 2025-06-01 --json");
  EXPECT_EQ(old.exit_code, 1);
  EXPECT_EQ(nlohmann::json::parse(old.out)["expertise"]["conflicts"][1],
            nlohmann::json::parse(R"({"key":"verification-command","ids":["verification/test-command",
                "verification/test-command-copy","verification/test-command-old"],"texts":2})"));
}

TEST(CmdBundle, ValidateBrokenPackNamesFileLineAndKey) {
  CommandResult result = okfbench("validate " + pack("broken-pack") + " --profile expertise --as-of 2026-06-01");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.out, HasSubstr("pack version: -\n"));
  EXPECT_THAT(result.out, HasSubstr("bad-expiry.md:5: error: `expires_at: next year` is not a date"));
  EXPECT_THAT(result.out, HasSubstr("index.md:2: error: the root index.md declares no `version`"));
  EXPECT_THAT(result.out, HasSubstr("no-key.md:2: error: the expertise node has no `key`"));
  EXPECT_THAT(result.out, HasSubstr("excluded: bad-expiry (expires_at:invalid)\nconflicts: 0\n"));
}

TEST(CmdBundle, TaskTagIsForTheExpertiseProfileOnly) {
  CommandResult result = okfbench("validate " + lessons("payments") + " --profile lessons --task-tag python-library");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("--task-tag applies to --profile expertise only"));
}


// `okfbench index` and the cache every bundle command loads through
// (retrieval/index_cache.hpp).
namespace index_cache {
namespace fs = std::filesystem;

// A copy of the demo bundle whose mtimes are a minute old, so no stamp is
// racy and a second command finds the cache current.
fs::path aged_demo(const std::string& name) {
  const fs::path root = okfbench::test::fresh_dir(name) / "demo";
  fs::copy(demo(), root, fs::copy_options::recursive);
  const auto then = fs::file_time_type::clock::now() - std::chrono::minutes(1);
  for (const auto& entry : fs::recursive_directory_iterator(root)) fs::last_write_time(entry.path(), then);
  fs::last_write_time(root, then);
  return root;
}

std::vector<fs::path> files_in(const fs::path& dir) {
  std::vector<fs::path> out;
  if (fs::is_directory(dir))
    for (const auto& entry : fs::directory_iterator(dir)) out.push_back(entry.path());
  return out;
}

TEST(CmdBundle, IndexWritesTheCacheThenFindsItCurrentThenStale) {
  const fs::path root = aged_demo("cmd-index");
  const fs::path cache = okfbench::test::fresh_dir("cmd-index-cache");
  const std::string args = "index " + root.string() + " --index-cache " + cache.string();
  CommandResult first = okfbench(args);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  ASSERT_EQ(files_in(cache).size(), 1u);
  const std::string file = files_in(cache).front().string();
  EXPECT_THAT(first.out, ::testing::StartsWith(file + ": written (30 concepts, 30 indexed, "));
  EXPECT_THAT(first.out, HasSubstr(" s; no cache file)\n"));
  CommandResult second = okfbench(args + " --json");
  ASSERT_EQ(second.exit_code, 0) << second.err;
  const auto json = nlohmann::json::parse(second.out);
  EXPECT_EQ(json["state"], "current");
  EXPECT_EQ(json["file"], file);
  EXPECT_EQ(json["concepts"], 30);
  EXPECT_EQ(json["cache_bytes"], fs::file_size(file));
  okfbench::test::write_file(root / "glossary/new-term.md", "---\ntype: Term\n---\n\nA new term.\n");
  CommandResult third = okfbench(args);
  EXPECT_THAT(third.out, HasSubstr(": written (31 concepts, 31 indexed, "));
  EXPECT_THAT(third.out, HasSubstr("; stale: directory 'glossary' changed)\n"));
}

TEST(CmdBundle, ProcessesIndexingOneBundleAtOnceAllSucceedAndLeaveOneWholeFile) {
  const fs::path root = aged_demo("cmd-index-processes");
  const fs::path work = okfbench::test::fresh_dir("cmd-index-processes-out");
  const fs::path cache = work / "cache";
  const std::string one = okfbench::test::okfbench_binary().string() + " index --json --index-cache " +
                          cache.string() + " " + root.string();
  CommandResult all = okfbench::test::run_command(
      "for i in 1 2 3 4; do " + one + " > " + (work / "out").string() + "$i.json & done; wait");
  ASSERT_EQ(all.exit_code, 0) << all.err;
  for (int i = 1; i <= 4; ++i) {
    const auto json = nlohmann::json::parse(okfbench::test::read_file(work / fmt::format("out{}.json", i)));
    EXPECT_EQ(json["concepts"], 30);
    EXPECT_TRUE(json["state"] == "written" || json["state"] == "current") << json.dump();
  }
  ASSERT_EQ(files_in(cache).size(), 1u);  // no temporary file left
  EXPECT_EQ(nlohmann::json::parse(okfbench(one.substr(one.find(" index ") + 1)).out)["state"], "current");
}

TEST(CmdBundle, IndexRefusesNoCacheAndReportsAFolderItCannotWrite) {
  const fs::path root = aged_demo("cmd-index-refuse");
  CommandResult off = okfbench("index " + root.string() + " --no-index-cache");
  EXPECT_EQ(off.exit_code, 2);
  EXPECT_THAT(off.err, HasSubstr("okfbench index writes the index cache: drop --no-index-cache"));
  const fs::path blocker = okfbench::test::fresh_dir("cmd-index-blocked") / "file";
  okfbench::test::write_file(blocker, "in the way\n");
  CommandResult blocked = okfbench("index " + root.string() + " --index-cache " + (blocker / "sub").string());
  EXPECT_EQ(blocked.exit_code, 1);
  EXPECT_THAT(blocked.err, HasSubstr("the index cache was not written (index cache not written: cannot create "));
}

// `index --prune` says what it removed and why (text and --json); with a
// bundle it also indexes it, the removals on stderr; alone it needs --prune.
TEST(CmdBundle, IndexPruneRemovesTheCacheFilesOfBundlesThatAreGone) {
  const fs::path cache = okfbench::test::fresh_dir("cmd-index-prune-cache");
  const fs::path kept = aged_demo("cmd-index-prune-kept");
  const fs::path gone = aged_demo("cmd-index-prune-gone");
  for (const fs::path& root : {kept, gone})
    ASSERT_EQ(okfbench("index --index-cache " + cache.string() + " " + root.string()).exit_code, 0);
  ASSERT_EQ(files_in(cache).size(), 2u);
  const std::string gone_root = fs::canonical(gone).string();
  fs::remove_all(gone);
  CommandResult text = okfbench("index --prune --index-cache " + cache.string());
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("MB): bundle " + gone_root + " is gone\n"));
  EXPECT_THAT(text.out, HasSubstr("pruned 1 file ("));
  EXPECT_EQ(files_in(cache).size(), 1u);
  CommandResult none = okfbench("index --prune --json --index-cache " + cache.string());
  ASSERT_EQ(none.exit_code, 0) << none.err;
  const auto json = nlohmann::json::parse(none.out);
  EXPECT_TRUE(json["pruned"].empty());
  EXPECT_EQ(json["bytes"], 0);
  // Ours (our name and magic) but cut short; a file without our magic is never pruned.
  const std::string ours = okfbench::test::read_file(fs::directory_iterator(cache)->path());
  okfbench::test::write_file(cache / "33333333333333333333333333333333.okfidx", ours.substr(0, 100));
  okfbench::test::write_file(cache / "44444444444444444444444444444444.okfidx", "garbage");
  CommandResult both = okfbench("index --prune --json --index-cache " + cache.string() + " " + kept.string());
  ASSERT_EQ(both.exit_code, 0) << both.err;
  EXPECT_EQ(nlohmann::json::parse(both.out)["state"], "current");
  EXPECT_THAT(both.err, HasSubstr("33333333333333333333333333333333.okfidx: corrupt: "));
  EXPECT_TRUE(fs::exists(cache / "44444444444444444444444444444444.okfidx"));
  CommandResult bare = okfbench("index --index-cache " + cache.string());
  EXPECT_EQ(bare.exit_code, 2);
  EXPECT_THAT(bare.err, HasSubstr("okfbench index needs a BUNDLE to index (or --prune alone"));
}

TEST(CmdBundle, CommandsLoadThroughTheIndexCacheUnlessToldNot) {
  const fs::path root = aged_demo("cmd-index-implicit");
  const fs::path cache = okfbench::test::fresh_dir("cmd-index-implicit-cache");
  const fs::path unused = okfbench::test::fresh_dir("cmd-index-implicit-unused");
  okfbench::test::write_file(root / "notes-without-frontmatter.md", "# Skipped\n");  // a skipped-files line
  fs::last_write_time(root / "notes-without-frontmatter.md", fs::file_time_type::clock::now() - std::chrono::minutes(1));
  fs::last_write_time(root, fs::file_time_type::clock::now() - std::chrono::minutes(1));
  // The second run answers from the cache file's search section alone (no bundle restored).
  for (const char* query : {" \"backup restore\" --k 5 --json", " \"backup restore\" --k 5", " backup --layer nope"}) {
    CommandResult plain =
        okfbench("search --no-index-cache --index-cache " + unused.string() + " " + root.string() + query);
    ASSERT_EQ(plain.exit_code, 0) << plain.err;
    EXPECT_THAT(plain.err, HasSubstr("1 file(s) of " + root.string() + " skipped with errors"));
    EXPECT_TRUE(files_in(unused).empty());
    for (int run = 0; run < 2; ++run) {  // writes the cache, then reads it
      CommandResult cached = okfbench("search --index-cache " + cache.string() + " " + root.string() + query);
      EXPECT_EQ(cached.out, plain.out) << query << " run " << run;
      EXPECT_EQ(cached.err, plain.err) << query << " run " << run;
    }
  }
  EXPECT_EQ(files_in(cache).size(), 1u);
  for (const char* command : {"validate --now 2026-11-29T00:00:00Z", "browse"}) {
    CommandResult uncached = okfbench(std::string(command) + " --no-index-cache " + root.string());
    CommandResult cached = okfbench(std::string(command) + " --index-cache " + cache.string() + " " + root.string());
    EXPECT_EQ(cached.out, uncached.out) << command;
    EXPECT_EQ(cached.exit_code, uncached.exit_code) << command;
  }
}

// validate reads the manifest and bundle sections: damage there is a warning
// and a rebuild; damage in the search section is left for a search to find.
TEST(CmdBundle, ACorruptIndexCacheIsAWarningAndTheAnswerIsTheSame) {
  const fs::path root = aged_demo("cmd-index-corrupt");
  const fs::path cache = okfbench::test::fresh_dir("cmd-index-corrupt-cache");
  const std::string validate =
      "validate --now 2026-11-29T00:00:00Z --index-cache " + cache.string() + " " + root.string();
  const std::string search = "search --index-cache " + cache.string() + " " + root.string() + " revenue";
  CommandResult first = okfbench(validate);
  ASSERT_EQ(files_in(cache).size(), 1u);
  const fs::path file = files_in(cache).front();
  std::string bytes = okfbench::test::read_file(file);
  bytes[bytes.size() - 16] ^= 0x01;  // in the bundle section, the last one
  okfbench::test::write_file(file, bytes);
  CommandResult again = okfbench(validate);
  EXPECT_EQ(again.out, first.out);
  EXPECT_EQ(again.exit_code, first.exit_code);
  EXPECT_EQ(again.err, "okfbench: warning: index cache " + file.string() + " was corrupt: checksum mismatch in the bundle section; rebuilt\n");
  EXPECT_EQ(okfbench(validate).err, "");

  bytes = okfbench::test::read_file(file);
  bytes[bytes.size() / 3] ^= 0x01;  // in the search section (postings and cards)
  okfbench::test::write_file(file, bytes);
  again = okfbench(validate);
  EXPECT_EQ(again.out, first.out);
  EXPECT_EQ(again.err, "");
  EXPECT_EQ(okfbench(search).err, "okfbench: warning: index cache " + file.string() + " was corrupt: checksum mismatch in the search section; rebuilt\n");
  EXPECT_EQ(okfbench(search).err, "");
}

// `search` reads no byte of the bundle section: with it damaged, a search
// from the cache answers as before and quietly; `context`, which restores
// the bundle, finds the damage, warns and rebuilds.
TEST(CmdBundle, SearchFromACurrentCacheReadsOnlyItsIndex) {
  const fs::path root = aged_demo("cmd-index-search-only");
  const fs::path cache = okfbench::test::fresh_dir("cmd-index-search-only-cache");
  const std::string search = "search --index-cache " + cache.string() + " " + root.string() + " \"backup restore\"";
  const CommandResult first = okfbench(search);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const fs::path file = files_in(cache).front();
  std::string bytes = okfbench::test::read_file(file);
  std::uint64_t bundle_offset = 0;
  std::memcpy(&bundle_offset, bytes.data() + 24 + 2 * 48, sizeof bundle_offset);  // the third section's offset
  ASSERT_LT(bundle_offset, bytes.size());
  bytes[bundle_offset + (bytes.size() - bundle_offset) / 2] ^= 0x01;
  okfbench::test::write_file(file, bytes);
  const CommandResult again = okfbench(search);
  EXPECT_EQ(again.out, first.out);
  EXPECT_EQ(again.err, "");
  const CommandResult context =
      okfbench("context --index-cache " + cache.string() + " " + root.string() + " \"backup restore\"");
  EXPECT_EQ(context.exit_code, 0);
  EXPECT_EQ(context.err, "okfbench: warning: index cache " + file.string() +
                             " was corrupt: checksum mismatch in the bundle section; rebuilt\n");
}

}  // namespace index_cache

}  // namespace
}  // namespace okfbench::cli
