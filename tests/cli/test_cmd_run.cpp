// `okfbench run` with no spec: the default experiment's headline table
// (stdout, before the line that reports timings and the folder) is golden,
// so any change to what a path costs or what its answers are worth shows up
// in review. scripts/update-golden.sh regenerates it.
//
// Also `okfbench run` (the built program) against a hostile OpenAI-compatible
// endpoint: the mock server, in this process, on a loopback port. Keys never
// reach a file or a stream, hostile replies never crash a run, and a run
// resumes after any of them.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <sstream>
#include <string>

#include "agents/mock_server.hpp"
#include "retrieval/tokens.hpp"
#include "tests/reports/fixtures.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::cli {
namespace {

TEST(DefaultExperiment, HeadlineIsGolden) {
  const auto dir = test::fresh_dir("default_experiment");
  test::CommandResult r = test::run_command(fmt::format("cd {} && {} run --out {} --set cache_dir={} --progress quiet",
                                                        dir.string(), test::okfbench_binary().string(),
                                                        (dir / "out").string(), (dir / "cache").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto end = r.out.find(" trials planned: ");
  ASSERT_NE(end, std::string::npos) << r.out;
  const std::string headline = r.out.substr(0, r.out.rfind('\n', end) + 1);
  EXPECT_NE(headline.find("| answer score | correct | cost per correct | cost per correct × baseline |"),
            std::string::npos);
  // The verdict comes first, with its baseline named, and never says better or worse.
  EXPECT_EQ(headline.rfind("## Verdict\n\n- gen-10: agent", 0), 0u) << headline;
  EXPECT_NE(headline.find("against one-shot (cheapest context configuration by input tokens)"), std::string::npos);
  EXPECT_EQ(headline.find("better"), std::string::npos);
  EXPECT_EQ(headline.find("worse"), std::string::npos);
  reports::fixtures::expect_golden("default_headline.md", headline);
}

}  // namespace
}  // namespace okfbench::cli

namespace okfbench::engine {
namespace {
namespace fs = std::filesystem;

constexpr const char* kKey = "sk-run-SECRET-7d41c9e2aa";

struct Endpoint {
  explicit Endpoint(std::string_view faults = "")
      : counter(retrieval::make_counter("o200k_base")), server({}, *counter, agents::parse_faults(faults)) {
    server.start();
  }
  std::unique_ptr<retrieval::TokenCounter> counter;
  agents::MockServer server;
};

// DIR/spec.yaml: the demo bundle with the given questions, the agent path with
// search and open, one OpenAI model.
fs::path write_spec(const fs::path& dir, const std::string& questions_yaml) {
  test::write_file(dir / "questions.yaml", "name: hostile\nquestions:\n" + questions_yaml);
  test::write_file(dir / "spec.yaml", fmt::format(R"(name: hostile
seed: 1
concurrency: 1
cache_dir: {}
bundles:
  - path: {}
    name: demo
    questions: {}
paths:
  agent:
    tools: [[search, open]]
    max_turns: 4
models: [openai:gpt-4o-mini]
)",
                                                  (dir / "cache").string(),
                                                  (test::source_dir() / "datasets" / "bundles" / "demo").string(),
                                                  (dir / "questions.yaml").string()));
  return dir / "spec.yaml";
}

std::string question(const std::string& id, const std::string& text) {
  return fmt::format("  - id: \"{}\"\n    text: \"{}\"\n    relevant: {{\"runbooks/replica-lag\": 2}}\n", id, text);
}

test::CommandResult run(const fs::path& dir, const std::string& environment) {
  return test::run_command(fmt::format("{} {} run {} --out {} --progress quiet", environment,
                                       test::okfbench_binary().string(), (dir / "spec.yaml").string(),
                                       (dir / "out").string()));
}

std::string environment(const Endpoint& e, const std::string& key = kKey) {
  return fmt::format("OPENAI_BASE_URL={}/v1 OPENAI_API_KEY={}", e.server.base_url(), key);
}

// Every file of the run folder (results.jsonl, results.sqlite and its WAL,
// report.md, report.html, report.json, manifest.json) that contains `text`.
std::vector<std::string> files_containing(const fs::path& dir, const std::string& text) {
  std::vector<std::string> found;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    if (entry.is_regular_file() && test::read_file(entry.path()).find(text) != std::string::npos)
      found.push_back(entry.path().filename().string());
  return found;
}

std::vector<nlohmann::json> records(const fs::path& dir) {
  std::vector<nlohmann::json> out;
  std::istringstream lines(test::read_file(dir / "out" / "results.jsonl"));
  for (std::string line; std::getline(lines, line);) out.push_back(nlohmann::json::parse(line));  // throws on bad UTF-8
  return out;
}

TEST(CmdRun, AKeyEchoedByA401ReachesNoFileAndNoStream) {
  Endpoint e("echo:1000:401");
  fs::path dir = test::fresh_dir("cmd-run-echo");
  write_spec(dir, question("q1", "Why is the replica lagging?") + question("q2", "Replica lag again?"));
  test::CommandResult r = run(dir, environment(e));
  EXPECT_EQ(r.exit_code, 1) << r.err;  // both trials failed
  ASSERT_TRUE(fs::exists(dir / "out" / "results.jsonl")) << r.err;
  EXPECT_EQ(files_containing(dir / "out", kKey), std::vector<std::string>{});
  EXPECT_EQ(files_containing(dir / "out", "SECRET"), std::vector<std::string>{});
  EXPECT_EQ(r.out.find("SECRET"), std::string::npos) << r.out;
  EXPECT_EQ(r.err.find("SECRET"), std::string::npos) << r.err;
  std::vector<nlohmann::json> stored = records(dir);
  ASSERT_EQ(stored.size(), 2u);
  EXPECT_NE(stored[0]["error"].get<std::string>().find("Incorrect API key provided: [REDACTED]"), std::string::npos)
      << stored[0]["error"];
  EXPECT_GE(e.server.requests(), 2u);
}

// The key in the question reaches the tool-call arguments the model writes;
// the store redacts what the HTTP layer never saw.
TEST(CmdRun, AKeyInsideTheConversationIsRedactedFromRecordsAndReports) {
  Endpoint e;
  fs::path dir = test::fresh_dir("cmd-run-conversation");
  write_spec(dir, question("q1", fmt::format("Why is the replica lagging? My key is {}", kKey)));
  test::CommandResult r = run(dir, environment(e));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(files_containing(dir / "out", kKey), std::vector<std::string>{});
  EXPECT_NE(test::read_file(dir / "out" / "results.jsonl").find("[REDACTED]"), std::string::npos);
  EXPECT_EQ(r.out.find(kKey), std::string::npos);
  EXPECT_EQ(r.err.find(kKey), std::string::npos);
}

TEST(CmdRun, AKeyInTheBaseUrlNeverReachesTheManifestOrReports) {
  Endpoint e;
  fs::path dir = test::fresh_dir("cmd-run-userinfo");
  write_spec(dir, question("q1", "Why is the replica lagging?"));
  std::string base = e.server.base_url();
  std::string with_key = "http://user:sk-url-SECRET-31@" + base.substr(std::string("http://").size()) + "/v1";
  test::CommandResult r = run(dir, fmt::format("OPENAI_BASE_URL={} OPENAI_API_KEY=", with_key));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(files_containing(dir / "out", "sk-url-SECRET-31"), std::vector<std::string>{});
  // The URL's user-info as written ("user:" alone occurs in the chart library inlined in report.html).
  EXPECT_EQ(files_containing(dir / "out", "//user:"), std::vector<std::string>{});
  EXPECT_NE(test::read_file(dir / "out" / "manifest.json").find(base + "/v1"), std::string::npos);
  EXPECT_EQ(r.out.find("SECRET"), std::string::npos);
  EXPECT_EQ(r.err.find("SECRET"), std::string::npos);
}

TEST(CmdRun, AKeyWithALineBreakIsAUsageErrorBeforeAnyRequest) {
  Endpoint e;
  fs::path dir = test::fresh_dir("cmd-run-crlf");
  write_spec(dir, question("q1", "Why is the replica lagging?"));
  test::CommandResult r = run(dir, fmt::format("OPENAI_BASE_URL={}/v1 OPENAI_API_KEY=\"$(printf 'sk-abc\\r\\nX-Injected: pwned')\"",
                                               e.server.base_url()));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("OPENAI_API_KEY: contains the control character 0x0D"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("pwned"), std::string::npos) << r.err;
  EXPECT_EQ(e.server.requests(), 0u);
}

TEST(CmdRun, A0xFFReplyAndALatin1QuestionIdNeverAbortAndTheRunResumes) {
  Endpoint e("badutf8");
  fs::path dir = test::fresh_dir("cmd-run-utf8");
  write_spec(dir, question("caf\xE9-1", "Why is the replica lagging?") + question("q2", "Replica lag again?"));
  test::CommandResult first = run(dir, environment(e));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  std::vector<nlohmann::json> stored = records(dir);
  ASSERT_EQ(stored.size(), 2u);
  EXPECT_EQ(stored[0]["question_id"], "caf\xEF\xBF\xBD-1");  // replaced, U+FFFD
  EXPECT_NE(stored[0].dump().find("\xEF\xBF\xBD"), std::string::npos);
  std::size_t served = e.server.requests();
  test::CommandResult again = run(dir, environment(e));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(e.server.requests(), served);  // both trials were stored: nothing runs again
  EXPECT_EQ(records(dir).size(), 2u);
  EXPECT_NE(again.out.find("2 stored before"), std::string::npos) << again.out;
}

TEST(CmdRun, ToolCallsBeyondThePerTurnCapAreRecordedAsDropped) {
  Endpoint e("calls:1:200");
  fs::path dir = test::fresh_dir("cmd-run-calls");
  write_spec(dir, question("q1", "Why is the replica lagging?"));
  test::CommandResult r = run(dir, environment(e));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<nlohmann::json> stored = records(dir);
  ASSERT_EQ(stored.size(), 1u);
  const nlohmann::json& first = stored[0]["turns"][0];
  EXPECT_EQ(first["tool_calls"].size(), 64u);
  EXPECT_EQ(first["dropped_tool_calls"], 136);
}

TEST(CmdRun, ToolArgumentsNested100000DeepFailTheTrialCleanly) {
  Endpoint e("deep:1:100000");
  fs::path dir = test::fresh_dir("cmd-run-deep");
  write_spec(dir, question("q1", "Why is the replica lagging?"));
  test::CommandResult r = run(dir, environment(e));
  EXPECT_EQ(r.exit_code, 1) << r.err;  // a failed trial, not a signal
  std::vector<nlohmann::json> stored = records(dir);
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_NE(stored[0]["error"].get<std::string>().find("nest deeper than 128 levels"), std::string::npos)
      << stored[0]["error"];
}

// The cassette lines of a file, in order.
std::vector<std::string> cassette_lines(const fs::path& file) {
  std::vector<std::string> lines;
  std::istringstream in(test::read_file(file));
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// One model stack (agents::stack_model) for every command: `agent` and `run`
// record the same cassette for the same exchanges, and a cassette holds every
// exchange whether the response cache answered it or the endpoint did, so a
// run recorded with a warm cache replays whole.
TEST(ModelStack, AgentAndRunWriteTheSameCassetteForTheSameExchangesCachedOrNot) {
  Endpoint e;
  fs::path dir = test::fresh_dir("model-stack-cassette");
  write_spec(dir, question("q1", "Why is the replica lagging?"));
  const std::string env = environment(e);
  const auto run_recorded = [&](const std::string& name) {
    test::CommandResult r = test::run_command(fmt::format(
        "{} {} run {} --out {} --progress quiet --record {} --cache-db {}", env, test::okfbench_binary().string(),
        (dir / "spec.yaml").string(), (dir / name).string(), (dir / (name + "-tapes")).string(), (dir / "run.db").string()));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::vector<fs::path> tapes;
    for (const auto& f : fs::directory_iterator(dir / (name + "-tapes"))) tapes.push_back(f.path());
    EXPECT_EQ(tapes.size(), 1u);
    return tapes.empty() ? std::vector<std::string>{} : cassette_lines(tapes.front());
  };
  const auto agent_recorded = [&](const std::string& name) {
    test::CommandResult r = test::run_command(fmt::format(
        "{} {} agent {} 'Why is the replica lagging?' --model openai:gpt-4o-mini --tools search,open --max-turns 4 "
        "--record {} --cache-db {}",
        env, test::okfbench_binary().string(), (test::source_dir() / "datasets" / "bundles" / "demo").string(),
        (dir / (name + ".jsonl")).string(), (dir / "agent.db").string()));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return cassette_lines(dir / (name + ".jsonl"));
  };
  const std::vector<std::string> run_cold = run_recorded("cold");
  const std::size_t sent = e.server.requests();
  const std::vector<std::string> run_warm = run_recorded("warm");
  EXPECT_EQ(e.server.requests(), sent) << "the second run is answered by the response cache";
  const std::vector<std::string> agent_cold = agent_recorded("agent-cold");
  const std::vector<std::string> agent_warm = agent_recorded("agent-warm");
  ASSERT_GE(run_cold.size(), 2u);  // search, open, answer: one line per model call
  EXPECT_EQ(run_warm, run_cold);
  EXPECT_EQ(agent_cold, run_cold);
  EXPECT_EQ(agent_warm, run_cold);
}

// Everything a run makes lives under its --out or the cache folder
// ($XDG_CACHE_HOME/okfbench): generated bundles used to land in
// ./okfbench-out/cache wherever the command ran, and a run without --out in
// ./okfbench-out/<time>.
TEST(RunFolders, NothingIsWrittenToTheWorkingDirectory) {
  const fs::path dir = test::fresh_dir("run-working-dir");
  const fs::path cwd = dir / "cwd";
  fs::create_directories(cwd);
  test::write_file(dir / "spec.yaml", "name: wd\nbundles:\n  - generate: {concepts: 10, questions: 2}\npaths:\n"
                                      "  context: {budget_tokens: 500}\n");
  const std::string env = fmt::format("cd '{}' && XDG_CACHE_HOME='{}'", cwd.string(), (dir / "xdg").string());
  const std::string program = test::okfbench_binary().string();
  const std::string spec = (dir / "spec.yaml").string();
  for (const std::string& args : {fmt::format("run '{}' --out '{}' --progress quiet", spec, (dir / "out").string()),
                                  fmt::format("run '{}' --dry-run", spec), fmt::format("run '{}' --progress quiet", spec)}) {
    const test::CommandResult r = test::run_command(fmt::format("{} '{}' {}", env, program, args));
    ASSERT_EQ(r.exit_code, 0) << args << "\n" << r.err;
    EXPECT_TRUE(fs::is_empty(cwd)) << args << " wrote " << fs::directory_iterator(cwd)->path();
  }
  EXPECT_TRUE(fs::exists(dir / "out" / "spend.json"));
  EXPECT_FALSE(fs::is_empty(dir / "xdg" / "okfbench" / "bundles"));  // the generated bundle
  EXPECT_FALSE(fs::is_empty(dir / "xdg" / "okfbench" / "runs"));     // the run without --out
  // A cache_dir written in the spec is relative to the spec's folder, as its other paths.
  test::write_file(dir / "spec.yaml", test::read_file(dir / "spec.yaml") + "cache_dir: spec-cache\n");
  const test::CommandResult r = test::run_command(fmt::format("{} '{}' run '{}' --dry-run", env, program, spec));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_empty(cwd));
  EXPECT_FALSE(fs::is_empty(dir / "spec-cache"));
}

}  // namespace
}  // namespace okfbench::engine
