// End-to-end tests of `okfbench mcp` over stdio, and of `report` / `compare`
// on the session logs it writes. The official SDK client drives both
// transports in tests/mcp/sdk_client.mjs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/git_fixture.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::test {
namespace {
using ::testing::HasSubstr;
using nlohmann::json;

std::string okfbench() { return okfbench_binary().string(); }
std::string demo() { return (source_dir() / "datasets" / "bundles" / "demo").string(); }

std::string session_input(const std::vector<json>& calls) {
  std::string text = json({{"jsonrpc", "2.0"}, {"id", 0}, {"method", "initialize"},
                           {"params", {{"protocolVersion", "2025-06-18"}, {"capabilities", json::object()},
                                       {"clientInfo", {{"name", "cli-test"}, {"version", "1"}}}}}})
                         .dump() +
                     "\n" + json({{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/list"}}).dump() + "\n";
  int id = 2;
  for (const json& args : calls)
    text += json({{"jsonrpc", "2.0"}, {"id", id++}, {"method", "tools/call"}, {"params", args}}).dump() + "\n";
  return text;
}

// Runs one stdio session; returns the reply lines.
std::vector<json> serve(const std::filesystem::path& dir, const std::string& log, const std::vector<json>& calls) {
  write_file(dir / (log + ".in"), session_input(calls));
  CommandResult r = run_command(okfbench() + " mcp " + demo() + " --session-log " + (dir / log).string() + " < " +
                                (dir / (log + ".in")).string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<json> replies;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) replies.push_back(json::parse(line));  // stdout holds only replies
  return replies;
}

TEST(CmdMcp, AStdioSessionIsReportedAndCompared) {
  auto dir = fresh_dir("cmd-mcp");
  json open = {{"name", "open"}, {"arguments", {{"concept_id", "runbooks/slow-queries"}}}};
  std::vector<json> first = serve(dir, "a.jsonl", {{{"name", "search"}, {"arguments", {{"query", "slow query"}}}}, open, open});
  ASSERT_EQ(first.size(), 5u);
  EXPECT_EQ(first[4]["result"]["isError"], false);
  serve(dir, "b.jsonl", {open});
  CommandResult report = run_command(okfbench() + " report " + (dir / "a.jsonl").string());
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_THAT(report.out, HasSubstr("1 session(s) (cli-test 1); 3 call(s), 0 with an error"));
  EXPECT_THAT(report.out, HasSubstr("| runbooks/slow-queries | 2 |"));
  EXPECT_THAT(report.out, HasSubstr("## Repeated calls (1)"));
  CommandResult compare = run_command(okfbench() + " compare " + (dir / "a.jsonl").string() + " " + (dir / "b.jsonl").string());
  ASSERT_EQ(compare.exit_code, 0) << compare.err;
  EXPECT_THAT(compare.out, HasSubstr("| calls | 3 | 1 | -2 (-66.7%) |"));
}

TEST(CmdMcp, UsageAndInputErrorsHaveTheirExitCodes) {
  auto dir = fresh_dir("cmd-mcp-errors");
  auto remember = run_command(okfbench() + " mcp " + demo() + " --tools search,remember < /dev/null");
  EXPECT_EQ(remember.exit_code, 2);
  EXPECT_THAT(remember.err, HasSubstr("--allow-write"));
  EXPECT_EQ(run_command(okfbench() + " mcp " + demo() + " --transport sse < /dev/null").exit_code, 2);
  EXPECT_EQ(run_command(okfbench() + " mcp " + demo() + " --surface other < /dev/null").exit_code, 2);
  EXPECT_EQ(run_command(okfbench() + " mcp " + demo() + " " + demo() + " < /dev/null").exit_code, 2);  // one name twice
  auto log = run_command(okfbench() + " mcp " + demo() + " --session-log " + (dir / "no" / "s.jsonl").string() + " < /dev/null");
  EXPECT_EQ(log.exit_code, 1);
  EXPECT_THAT(log.err, HasSubstr("s.jsonl"));
  write_file(dir / "a.jsonl", "");
  auto mixed = run_command(okfbench() + " compare " + (dir / "a.jsonl").string() + " " + dir.string());
  EXPECT_EQ(mixed.exit_code, 2);
  write_file(dir / "bad.jsonl", "{\"event\":\"call\",\"seq\":\"x\"}\n");
  auto bad = run_command(okfbench() + " report " + (dir / "bad.jsonl").string());
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.err, HasSubstr("bad.jsonl:1"));
}

TEST(CmdMcp, ServesAGitSourceNamedByItsSubdirectory) {
  auto dir = fresh_dir("cmd-mcp-git");
  GitFixture repo = make_git_fixture(dir);
  write_file(dir / "in.jsonl", session_input({}) + json({{"jsonrpc", "2.0"}, {"id", 9}, {"method", "resources/list"}}).dump() + "\n");
  CommandResult r = run_command(okfbench() + " mcp '" + repo.url + "' --git-ref v1 --git-subdir bundles/sales --git-cache '" +
                                (dir / "cache").string() + "' < '" + (dir / "in.jsonl").string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out);
  std::string line;
  for (int i = 0; i < 3; ++i) std::getline(lines, line);
  json resources = json::parse(line)["result"]["resources"];
  ASSERT_FALSE(resources.empty());
  EXPECT_EQ(resources[0]["uri"].get<std::string>().rfind("okf://sales/", 0), 0u) << resources[0];
  CommandResult folder_with_ref = run_command(okfbench() + " mcp " + demo() + " --git-ref v1 < /dev/null");
  EXPECT_EQ(folder_with_ref.exit_code, 2);
}

}  // namespace
}  // namespace okfbench::test
