// paths.external end to end: example agents on the official SDKs (and
// failing ones) run by the runner behind its proxy and MCP server, against
// an in-process mock-server.
#include "engine/external_trial.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <stdlib.h>

#include <fstream>
#include <map>
#include <sstream>

#include "agents/mock_server.hpp"
#include "engine/forecast.hpp"
#include "engine/runner.hpp"
#include "engine/spec.hpp"
#include "reports/record.hpp"
#include "retrieval/tokens.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::engine {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kAgents = test::source_dir() / "tests/engine/external_agents";

// Why the node agents cannot run here, or "" when they can.
std::string node_missing() {
  if (std::system("node --version >/dev/null 2>&1") != 0) return "node is not installed";
  for (const char* module : {"tests/proxy/node_modules/openai", "tests/proxy/node_modules/@anthropic-ai/sdk",
                             "tests/mcp/node_modules/@modelcontextprotocol/sdk"})
    if (!fs::exists(test::source_dir() / module)) return fmt::format("{} is missing: run scripts/setup.sh", module);
  return {};
}

struct Mock {
  std::unique_ptr<retrieval::TokenCounter> counter = retrieval::make_counter("o200k_base");
  agents::MockServer server;
  explicit Mock(const std::string& faults = "") : server({}, *counter, agents::parse_faults(faults)) { server.start(); }
  ~Mock() { server.stop(); }
};

// A spec over the demo bundle's first `questions` questions with the given
// external entries and one openai: model at `mock`.
fs::path write_external_spec(const fs::path& dir, const std::string& external, const std::string& mock,
                             std::size_t questions = 2, const std::string& extra = "", int concurrency = 2) {
  const fs::path spec = dir / "spec.yaml";
  test::write_file(spec, fmt::format(R"(name: external
concurrency: {concurrency}
cache_dir: {cache}
max_questions: {questions}
bundles:
  - path: {src}/datasets/bundles/demo
    questions: {src}/datasets/experiments/questions/demo.yaml
paths:
  external:
{external}
models:
  - {{name: openai:mock, base_url: {mock}/v1, request_timeout_seconds: 3,
     price: {{input_per_mtok: 1, output_per_mtok: 2}}}}
{extra}
)",
                                     fmt::arg("cache", (dir / "cache").string()), fmt::arg("questions", questions),
                                     fmt::arg("src", test::source_dir().string()), fmt::arg("external", external),
                                     fmt::arg("mock", mock), fmt::arg("extra", extra),
                                     fmt::arg("concurrency", concurrency)));
  return spec;
}

RunOptions quiet_run(const fs::path& out) {
  RunOptions o;
  o.out_dir = out;
  o.progress = Progress::quiet;
  o.allow_over_forecast = true;
  return o;
}

std::map<std::string, reports::TrialRecord> by_agent(const fs::path& out, std::vector<reports::TrialRecord>* all = nullptr) {
  std::map<std::string, reports::TrialRecord> records;
  for (auto& r : reports::read_results_jsonl(out / "results.jsonl")) {
    if (all) all->push_back(r);
    records[r.config.external + "|" + r.question_id] = r;
  }
  return records;
}

TEST(ExternalTrial, SdkAgentsRecordTheTokensTheMockReported) {
  if (const std::string why = node_missing(); !why.empty()) GTEST_SKIP() << why;
  Mock mock;
  const fs::path dir = test::fresh_dir("external-sdk");
  const fs::path usage_log = dir / "usage.jsonl";
  ::setenv("AGENT_USAGE_LOG", usage_log.c_str(), 1);
  const std::string external = fmt::format(
      "    - {{command: [node, {0}/openai_agent.mjs], args: [[], [--stream]], label: openai-sdk, timeout_s: 60}}\n"
      "    - {{command: [node, {0}/anthropic_agent.mjs], args: [[], [--stream]], label: anthropic-sdk, timeout_s: 60}}",
      kAgents.string());
  const ExperimentSpec spec = load_spec(write_external_spec(dir, external, mock.server.base_url()));
  const RunResult result = run_experiment(spec, quiet_run(dir / "run"));
  ::unsetenv("AGENT_USAGE_LOG");
  EXPECT_EQ(result.planned, 8u);
  EXPECT_EQ(result.failed, 0u);
  // What each agent's SDK received from the mock, call by call.
  std::map<std::string, std::vector<std::pair<std::int64_t, std::int64_t>>> seen;
  std::ifstream lines(usage_log);
  for (std::string line; std::getline(lines, line);) {
    const json u = json::parse(line);
    seen[u["trial"].get<std::string>()].emplace_back(u["input"].get<std::int64_t>(), u["output"].get<std::int64_t>());
  }
  for (const auto& [name, r] : by_agent(dir / "run")) {
    SCOPED_TRACE(name);
    EXPECT_EQ(r.config.kind, reports::PathKind::external);
    EXPECT_TRUE(r.error.empty()) << r.error;
    EXPECT_FALSE(r.answer.empty());
    const auto& calls = seen[r.trial_key];
    ASSERT_EQ(r.turns.size(), calls.size());
    ASSERT_GE(r.turns.size(), 2u);  // the mock's sim searches and opens before it answers
    std::size_t with_access = 0;
    for (std::size_t i = 0; i < calls.size(); ++i) {
      EXPECT_EQ(r.turns[i].input_tokens, calls[i].first) << "turn " << i + 1;
      EXPECT_EQ(r.turns[i].output_tokens, calls[i].second) << "turn " << i + 1;
      // Re-sent: the input of the call this one continues, as the SDK saw it.
      const std::int64_t resent = i == 0 ? 0 : calls[i - 1].first;
      EXPECT_EQ(*r.turns[i].input_tokens - *r.turns[i].new_input_tokens, resent) << "turn " << i + 1;
      for (const auto& c : r.turns[i].tool_calls) {
        EXPECT_GT(c.result_bytes, 0);
        with_access += c.access ? 1 : 0;
      }
    }
    EXPECT_GT(with_access, 0u);
    EXPECT_FALSE(r.opened_ids.empty());
    EXPECT_TRUE(r.turns.back().tool_calls.empty());
  }
}

TEST(ExternalTrial, EachBrokenAgentIsOneFailedTrialAndTheRunFinishes) {
  Mock mock;
  const fs::path dir = test::fresh_dir("external-broken");
  const fs::path pid_file = dir / "hang.pid";
  const std::string script = (kAgents / "misbehaving_agent.py").string();
  const std::string external = fmt::format(
      "    - {{command: [python3, {0}, crash], label: crash}}\n"
      "    - {{command: [python3, {0}, hang, {1}], label: hang, timeout_s: 2}}\n"
      "    - {{command: [python3, {0}, silent], label: silent}}\n"
      "    - {{command: [python3, {0}, signal], label: signal}}\n"
      "    - {{command: [python3, {0}, flood], label: flood}}\n"
      "    - {{command: [no-such-agent-program], label: missing}}\n"
      "    - {{command: [python3, {0}, silent], label: json, answer: json}}",
      script, pid_file.string());
  const ExperimentSpec spec = load_spec(write_external_spec(dir, external, mock.server.base_url(), 1));
  const RunResult result = run_experiment(spec, quiet_run(dir / "run"));
  EXPECT_EQ(result.planned, 7u);
  EXPECT_EQ(result.ran, 7u);
  EXPECT_EQ(result.failed, 7u);
  const auto records = by_agent(dir / "run");
  const auto error_of = [&](const std::string& label) { return records.at(label + "|demo-01").error; };
  EXPECT_NE(error_of("crash").find("exited with status 3"), std::string::npos) << error_of("crash");
  EXPECT_NE(error_of("crash").find("crashed on purpose"), std::string::npos) << "the stderr tail is kept";
  EXPECT_NE(error_of("hang").find("timed out after 2 s"), std::string::npos) << error_of("hang");
  EXPECT_EQ(records.at("hang|demo-01").error_class, "transient");
  EXPECT_NE(error_of("silent").find("printed nothing"), std::string::npos) << error_of("silent");
  EXPECT_NE(error_of("signal").find("killed by signal 9"), std::string::npos) << error_of("signal");
  EXPECT_NE(error_of("flood").find("printed more than"), std::string::npos) << error_of("flood");
  EXPECT_NE(error_of("missing").find("could not start"), std::string::npos) << error_of("missing");
  EXPECT_NE(error_of("json").find("printed nothing"), std::string::npos) << error_of("json");
  for (const auto& [name, r] : records) EXPECT_LE(r.error.size(), kStderrTail + 400) << name << ": the tail is bounded";
  // The hanging agent's own child went with its process group.
  const pid_t orphan = static_cast<pid_t>(std::stol(test::read_file(pid_file)));
  for (int i = 0; i < 50 && ::kill(orphan, 0) == 0; ++i) ::usleep(100'000);
  EXPECT_NE(::kill(orphan, 0), 0) << "pid " << orphan << " outlived its trial";
}

// The upstream's faults reach the agent through the proxy: one trial fails,
// the next (the fault used up) succeeds.
void expect_one_failure(const std::string& faults, const std::string& name, const std::string& flags) {
  if (const std::string why = node_missing(); !why.empty()) GTEST_SKIP() << why;
  Mock mock(faults);
  const fs::path dir = test::fresh_dir(name);
  const std::string external =
      fmt::format("    - {{command: [node, {}/openai_agent.mjs{}], label: sdk, timeout_s: 30}}", kAgents.string(), flags);
  const ExperimentSpec spec = load_spec(write_external_spec(dir, external, mock.server.base_url(), 2, "", 1));
  const RunResult result = run_experiment(spec, quiet_run(dir / "run"));
  EXPECT_EQ(result.ran, 2u);
  EXPECT_EQ(result.failed, 1u);
  const auto records = by_agent(dir / "run");
  EXPECT_FALSE(records.at("sdk|demo-01").error.empty());
  EXPECT_EQ(records.at("sdk|demo-01").error_class, "transient") << records.at("sdk|demo-01").error;
  EXPECT_TRUE(records.at("sdk|demo-02").error.empty()) << records.at("sdk|demo-02").error;
}

TEST(ExternalTrial, AStreamCutMidwayIsOneFailedTrial) { expect_one_failure("cut:1:2", "external-cut", ", --stream"); }

TEST(ExternalTrial, AHungUpstreamIsOneFailedTrial) { expect_one_failure("stall:1:3600", "external-stall", ""); }

TEST(ExternalTrial, ResumeSkipsStoredTrialsAndTheCostCapCountsProxyUsage) {
  Mock mock;
  const fs::path dir = test::fresh_dir("external-resume");
  const std::string external = fmt::format("    - {{command: [python3, {}/okfbench_agent.py, {}, {}/datasets/bundles/demo], "
                                           "label: ours, answer: json}}",
                                           kAgents.string(), test::okfbench_binary().string(), test::source_dir().string());
  // Each trial costs far more than the cap at this price: one round runs, then the cap stops the run.
  const fs::path file = write_external_spec(dir, external, mock.server.base_url(), 3, "cost_cap_usd: 0.000001", 1);
  ExperimentSpec spec = load_spec(file);
  const RunResult capped = run_experiment(spec, quiet_run(dir / "run"));
  EXPECT_TRUE(capped.stopped_at_cost_cap);
  EXPECT_EQ(capped.ran, 1u);
  EXPECT_GT(capped.spent_usd, 0.0) << "priced from the proxy's usage";
  spec = load_spec(file, {"cost_cap_usd=100"});
  const RunResult resumed = run_experiment(spec, quiet_run(dir / "run"));
  EXPECT_EQ(resumed.already_stored, 1u);
  EXPECT_EQ(resumed.ran, 2u);
  EXPECT_EQ(resumed.failed, 0u);
  const RunResult again = run_experiment(spec, quiet_run(dir / "run"));
  EXPECT_EQ(again.ran, 0u);
  // show reads an external trial as any other.
  const auto records = by_agent(dir / "run");
  const std::string key = records.begin()->second.trial_key;
  const test::CommandResult shown =
      test::run_command(fmt::format("{} show {} {} --json", test::okfbench_binary().string(), (dir / "run").string(), key));
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  const json show = json::parse(shown.out);
  EXPECT_EQ(show["record"]["config"]["kind"], "external");
  const test::CommandResult text =
      test::run_command(fmt::format("{} show {} {}", test::okfbench_binary().string(), (dir / "run").string(), key));
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("external agent=ours"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("last call failed"), std::string::npos) << text.out;
  // The reports and the explorer hold its row like any other.
  EXPECT_NE(test::read_file(dir / "run/report.md").find("external agent=ours"), std::string::npos);
  EXPECT_NE(test::read_file(dir / "run/report.html").find("external agent=ours"), std::string::npos);
}

TEST(ExternalTrial, TheForecastRunsOurLoopInTheAgentsPlace) {
  const fs::path dir = test::fresh_dir("external-forecast");
  const std::string external = "    - {command: [does-not-run-offline], label: theirs}";
  const ExperimentSpec spec = load_spec(write_external_spec(dir, external, "http://127.0.0.1:9", 2));
  const Forecast f = forecast_run(spec, quiet_run(dir / "run"));
  ASSERT_EQ(f.rows.size(), 1u);
  EXPECT_EQ(f.rows[0].config, "external agent=theirs model=openai:mock cache=provider");
  EXPECT_EQ(f.rows[0].trials, 2u);
  EXPECT_GT(f.rows[0].input_tokens.value, 0);
  EXPECT_GT(f.rows[0].calls.value, 2) << "several turns of the agent loop per question";
  ASSERT_TRUE(f.rows[0].usd);
}

TEST(ExternalTrial, OurOwnAgentBehindTheProxyMeasuresWhatTheAgentPathDoes) {
  Mock mock;
  const fs::path dir = test::fresh_dir("external-ours");
  const std::string external = fmt::format("    - {{command: [python3, {}/okfbench_agent.py, {}, {}/datasets/bundles/demo, "
                                           "--tools, 'search,open,follow', --max-turns, '6'], label: ours, answer: json}}\n"
                                           "  agent: {{tools: [search, open, follow], max_turns: 6}}",
                                           kAgents.string(), test::okfbench_binary().string(), test::source_dir().string());
  const ExperimentSpec spec = load_spec(write_external_spec(dir, external, mock.server.base_url(), 3));
  const RunResult result = run_experiment(spec, quiet_run(dir / "run"));
  EXPECT_EQ(result.failed, 0u);
  std::map<std::string, std::map<reports::PathKind, reports::TrialRecord>> by_question;
  for (auto& r : reports::read_results_jsonl(dir / "run/results.jsonl")) by_question[r.question_id][r.config.kind] = r;
  ASSERT_EQ(by_question.size(), 3u);
  for (auto& [question, kinds] : by_question) {
    SCOPED_TRACE(question);
    const auto& ours = kinds.at(reports::PathKind::agent);
    const auto& theirs = kinds.at(reports::PathKind::external);
    ASSERT_EQ(ours.turns.size(), theirs.turns.size());
    for (std::size_t i = 0; i < ours.turns.size(); ++i) {
      EXPECT_EQ(ours.turns[i].input_tokens, theirs.turns[i].input_tokens) << "turn " << i + 1;
      EXPECT_EQ(ours.turns[i].output_tokens, theirs.turns[i].output_tokens) << "turn " << i + 1;
      EXPECT_EQ(ours.turns[i].new_input_tokens, theirs.turns[i].new_input_tokens) << "turn " << i + 1;
      // Both carry the mock's cached count; its values differ, since both paths
      // share one mock whose prefix cache the first of them filled.
      EXPECT_EQ(ours.turns[i].cached_tokens.has_value(), theirs.turns[i].cached_tokens.has_value());
      ASSERT_EQ(ours.turns[i].tool_calls.size(), theirs.turns[i].tool_calls.size()) << "turn " << i + 1;
      for (std::size_t j = 0; j < ours.turns[i].tool_calls.size(); ++j) {
        EXPECT_EQ(ours.turns[i].tool_calls[j].name, theirs.turns[i].tool_calls[j].name);
        EXPECT_EQ(ours.turns[i].tool_calls[j].result_bytes, theirs.turns[i].tool_calls[j].result_bytes);
      }
    }
    EXPECT_EQ(ours.answer, theirs.answer);
  }
}

TEST(ExternalTrial, LogsBecomeTurnsWithToolCallsOnTheTurnThatAskedForThem) {
  const std::vector<std::string> proxy = {
      R"({"seq":1,"conversation":"c1","turn":1,"usage":{"input_tokens":100,"cached_input_tokens":0,"output_tokens":10},"tool_results":[],"latency_ms":5})",
      R"({"seq":2,"conversation":"c1","turn":2,"usage":{"input_tokens":160,"cached_input_tokens":64,"output_tokens":20},"tool_results":[{"tool_call_id":"a","tool":"search","bytes":300}],"latency_ms":7})",
      R"({"seq":3,"conversation":"c2","turn":1,"usage":null,"usage_unknown":"the request failed","tool_results":[]})"};
  reports::SessionEvent call;
  call.event = "call";
  call.tool = "search";
  call.arguments = R"({"query":"slow"})";
  call.access = {"list", "demo", {"a/b", "c/d"}};
  reports::SessionEvent read = call;
  read.tool = "open";
  read.arguments = R"({"concept_id":"a/b"})";
  read.access = {"read", "demo", {"a/b"}};
  const ExternalTrialResult r = read_external_logs(proxy, {call, read});
  ASSERT_EQ(r.turns.size(), 3u);
  EXPECT_EQ(r.turns[0].new_input_tokens, 100);
  EXPECT_EQ(r.turns[1].new_input_tokens, 60);
  EXPECT_EQ(r.turns[1].cached_tokens, 64);
  EXPECT_FALSE(r.turns[2].input_tokens) << "unknown, never 0";
  ASSERT_EQ(r.turns[0].tool_calls.size(), 1u);
  EXPECT_EQ(r.turns[0].tool_calls[0].result_bytes, 300);
  EXPECT_EQ(r.turns[0].tool_calls[0].access->query, "slow");
  ASSERT_EQ(r.turns[2].tool_calls.size(), 1u) << "an MCP call no request carried back goes on the last turn";
  EXPECT_EQ(r.turns[2].tool_calls[0].access->path, "a/b");
  EXPECT_EQ(r.retrieved, (std::vector<std::string>{"a/b", "c/d"}));
  EXPECT_EQ(r.opened, (std::vector<std::string>{"a/b"}));
}

TEST(ExternalTrial, AnswerFromJsonNeedsAnAnswerString) {
  std::string problem;
  EXPECT_EQ(external_answer("  the answer\n", false, problem), "the answer");
  EXPECT_EQ(external_answer(R"({"answer": "x [a/b]"})", true, problem), "x [a/b]");
  EXPECT_FALSE(external_answer(R"({"text": "x"})", true, problem));
  EXPECT_NE(problem.find("\"answer\" string"), std::string::npos);
  EXPECT_FALSE(external_answer(" \n", false, problem));
  EXPECT_NE(problem.find("printed nothing"), std::string::npos);
}

}  // namespace
}  // namespace okfbench::engine
