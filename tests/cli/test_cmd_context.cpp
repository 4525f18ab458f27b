// End-to-end tests of `okfbench context`.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/test_support.hpp"

namespace okfbench::test {
namespace {

std::string okfbench() { return okfbench_binary().string(); }

TEST(CmdContext, PrintsPackAndFooter) {
  if (!have_data()) GTEST_SKIP() << "no reference data";
  const std::string bundle = (data_root() / "okf" / "acme_retail").string();
  auto r = run_command(okfbench() + " context " + bundle + " 'gross margin definition' --budget 300 --hops 0");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("### ", 0), 0u) << r.out;
  auto footer = r.out.rfind("\n---\ntokens: ");
  ASSERT_NE(footer, std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" / 300 (o200k_base) | concepts: ", footer), std::string::npos) << r.out.substr(footer);

  auto json = run_command(okfbench() + " context " + bundle + " 'gross margin definition' --budget 300 --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  auto pack = nlohmann::json::parse(json.out);
  EXPECT_LE(pack["tokens"].get<int>(), 300);
  EXPECT_EQ(pack["strategy"], "grafito");
  EXPECT_FALSE(pack["concepts"].empty());

  auto weaver = run_command(okfbench() + " context " + bundle + " 'gross margin' --strategy weaver --json");
  ASSERT_EQ(weaver.exit_code, 0) << weaver.err;
  EXPECT_EQ(nlohmann::json::parse(weaver.out)["strategy"], "weaver");

  auto none = run_command(okfbench() + " context " + bundle + " 'qqqq zzzz'");
  EXPECT_EQ(none.exit_code, 0);
  EXPECT_EQ(none.out, "---\ntokens: 0 / 2000 (o200k_base) | concepts: 0 (0 seed, 0 via) | truncated: no\n");
}

std::vector<std::string> ids(const nlohmann::json& items, bool seeds_only) {
  std::vector<std::string> out;
  for (const auto& item : items)
    if (!seeds_only || item["reason"] == "seed") out.push_back(item["id"]);
  return out;
}

// The pack's seeds are the hits of the search the method names.
TEST(CmdContext, RetrievalMethodChoosesTheSeedSearch) {
  const std::string demo = (source_dir() / "datasets" / "bundles" / "demo").string();
  const std::string q = " 'slow query after a data load' --json";
  for (auto [method, search_flags] : {std::pair{"bm25f", ""}, std::pair{"hybrid", " --hybrid sim"},
                                      std::pair{"hybrid+rerank", " --hybrid sim --rerank sim"}}) {
    auto search = run_command(okfbench() + " search " + demo + q + " --k 5" + search_flags);
    ASSERT_EQ(search.exit_code, 0) << search.err;
    auto pack = run_command(okfbench() + " context " + demo + q + " --k 5 --hops 0 --budget 100000 --retrieval " + method);
    ASSERT_EQ(pack.exit_code, 0) << method << pack.err;
    EXPECT_EQ(ids(nlohmann::json::parse(pack.out)["concepts"], true),
              ids(nlohmann::json::parse(search.out)["hits"], false))
        << method;
  }
  auto bad = run_command(okfbench() + " context " + demo + " q --retrieval magic");
  EXPECT_EQ(bad.exit_code, 2);
}

TEST(CmdContext, BadArgumentsExitWithCodes) {
  EXPECT_EQ(run_command(okfbench() + " context /nonexistent/bundle q").exit_code, 1);
  auto dir = fresh_dir("cmd-context");
  EXPECT_EQ(run_command(okfbench() + " context " + dir.string() + " q --budget 0").exit_code, 2);
  EXPECT_EQ(run_command(okfbench() + " context " + dir.string() + " q --strategy other").exit_code, 2);
  EXPECT_EQ(run_command(okfbench() + " context " + dir.string() + " q --encoding nope").exit_code, 2);
}

TEST(CmdContext, LessonsProfileAppliesThePolicyAndListsExclusions) {
  const std::string bundle = (source_dir() / "tests/data/lessons/payments").string();
  auto r = run_command(okfbench() + " context " + bundle +
                       " 'page size refunds' --profile lessons --as-of 2026-12-02 --k 2 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto pack = nlohmann::json::parse(r.out);
  std::vector<std::string> ids;
  for (const auto& c : pack["concepts"]) ids.push_back(c["id"]);
  EXPECT_EQ(ids, (std::vector<std::string>{"api/pagination-limits", "api/retry-idempotency"}));
  EXPECT_EQ(pack["policy"], "lessons as of 2026-12-02: rejected and deprecated excluded, candidates excluded");
  EXPECT_EQ(pack["excluded"], nlohmann::json::parse(R"([{"id":"api/old-page-size","reason":"status:deprecated"},
      {"id":"api/retry-forever","reason":"status:rejected"},{"id":"build/cache-warmup","reason":"status:candidate"},
      {"id":"build/freeze-window","reason":"expired"}])"));

  auto text = run_command(okfbench() + " context " + bundle + " 'freeze' --profile lessons --as-of 2026-11-15 --hops 0");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("id: build/freeze-window | type: Lesson | seed"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("\npolicy: lessons as of 2026-11-15: rejected and deprecated excluded, candidates excluded\n"
                          "excluded: api/old-page-size (status:deprecated)\n"),
            std::string::npos)
      << text.out;
}

TEST(CmdContext, ExpertiseProfileLeavesExpiredAndInapplicableNodesOut) {
  const std::string pack = (source_dir() / "tests/data/expertise/python-pack").string();
  auto r = run_command(okfbench() + " context " + pack +
                       " 'public API tests' --profile expertise --as-of 2026-06-01 --task-tag python-service --k 10 "
                       "--hops 0 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto out = nlohmann::json::parse(r.out);
  std::vector<std::string> ids;
  for (const auto& c : out["concepts"]) ids.push_back(c["id"]);
  EXPECT_EQ(ids, (std::vector<std::string>{"constraints/api-classes", "verification/test-command-copy",
                                           "verification/test-command"}));
  EXPECT_EQ(out["excluded"], nlohmann::json::parse(R"([{"id":"constraints/api-functions","reason":"inapplicable"},
      {"id":"constraints/api-legacy","reason":"status:deprecated"},
      {"id":"verification/test-command-old","reason":"expired"},
      {"id":"verification/test-command-tox","reason":"status:rejected"}])"));
  EXPECT_EQ(run_command(okfbench() + " context " + pack + " q --task-tag x").exit_code, 2);  // okf profile
}

}  // namespace
}  // namespace okfbench::test
