// The judge over real sockets: `okfbench mock-server` (the built program)
// answers the rubric in both wire formats, `okfbench grade` records the
// judge's usage apart, the response cache makes re-grading free, and faults
// and non-conforming replies become judge_error grades. Also: graders in a
// run, with the judge's spend never part of a trial's cost.
#include "engine/judge.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "agents/mock_server.hpp"
#include "engine/data_files.hpp"
#include "engine/runner.hpp"
#include "engine/spec.hpp"
#include "reports/judge.hpp"
#include "reports/pricing.hpp"
#include "core/error.hpp"
#include "retrieval/tokens.hpp"
#include "tests/engine/run_fixture.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::engine {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// `okfbench mock-server --port 0 [--fault F]` on loopback; the port is the
// first line it prints; stopped by its PID.
class MockServerProcess {
 public:
  explicit MockServerProcess(const std::string& faults = "") {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
    const std::string binary = test::okfbench_binary().string();
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(fds[1], STDOUT_FILENO);
      ::close(fds[0]);
      ::close(fds[1]);
      if (faults.empty()) {
        ::execl(binary.c_str(), binary.c_str(), "mock-server", "--port", "0", static_cast<char*>(nullptr));
      } else {
        ::execl(binary.c_str(), binary.c_str(), "mock-server", "--port", "0", "--fault", faults.c_str(),
                static_cast<char*>(nullptr));
      }
      ::_exit(127);
    }
    ::close(fds[1]);
    std::FILE* out = ::fdopen(fds[0], "r");
    if (!out || std::fscanf(out, "%d", &port_) != 1) port_ = 0;
    if (out) std::fclose(out);
  }
  ~MockServerProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  int port() const { return port_; }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
};

std::string data(const std::string& name) { return (test::source_dir() / "tests/data/grade" / name).string(); }
std::string demo() { return (test::source_dir() / "datasets/bundles/demo").string(); }

json grade_json(const std::string& env, const std::string& grader, const fs::path& cache, int expect_exit = 0) {
  const std::string command = fmt::format("{} {} grade --questions {} --answers {} --bundle {} --grader facts --grader {} "
                                          "--judge-cache {} --json",
                                          env, test::okfbench_binary().string(), data("questions.yaml"),
                                          data("answers.jsonl"), demo(), grader, cache.string());
  test::CommandResult r = test::run_command(command);
  EXPECT_EQ(r.exit_code, expect_exit) << r.err;
  return json::parse(r.out, nullptr, false);
}

// The judge grades of a `grade --json` output, in line order.
std::vector<json> judge_grades(const json& out) {
  std::vector<json> grades;
  for (const auto& g : out["grades"]) {
    if (g["grader"] == "judge") grades.push_back(g);
  }
  return grades;
}

// The verdicts the sim judge's rule gives the five answers of answers.jsonl.
const std::vector<std::string> kExpectedDetails = {
    "correct: states all 3 expected facts and cites runbooks/replica-lag",
    "partial: states 2 of 3 expected facts and cites metrics/replica-lag-seconds",
    "correct: states all 3 expected facts and cites runbooks/disk-full, glossary/checkpoint",
    "incorrect: states none of the 3 expected facts",
    "correct: no expected facts; 1 of 1 reference concepts cited (cites decisions/0002-cypher-subset)"};

void expect_wire_judge(const std::string& env_prefix, const std::string& grader, const std::string& model) {
  MockServerProcess server;
  ASSERT_GT(server.port(), 0);
  const fs::path cache = test::fresh_dir("judge_wire") / "judge.sqlite";
  const std::string env = fmt::format(fmt::runtime(env_prefix), server.port());
  json first = grade_json(env, grader, cache);
  ASSERT_TRUE(first.is_object());
  std::vector<json> grades = judge_grades(first);
  ASSERT_EQ(grades.size(), kExpectedDetails.size());
  for (std::size_t i = 0; i < grades.size(); ++i) {
    EXPECT_EQ(grades[i]["status"], "graded") << grades[i];
    EXPECT_EQ(grades[i]["detail"], kExpectedDetails[i]);
  }
  const json& judge = first["summary"]["judge"];
  EXPECT_EQ(judge["model"], model);
  EXPECT_EQ(judge["calls"], 5);
  EXPECT_EQ(judge["cache_hits"], 0);
  EXPECT_GT(judge["input_tokens"].get<int>(), 1000);  // the rubric, the facts and the reference text
  EXPECT_GT(judge["output_tokens"].get<int>(), 50);
  EXPECT_GT(judge["cost_usd"].get<double>(), 0.0);  // priced as the judge model, not as any path
  EXPECT_TRUE(judge["note"].is_null());              // a model behind a wire is not called the sim judge
  // Facts and judge agree on the four answers both graded (the fifth has no facts).
  EXPECT_EQ(judge["agreement_with_facts"]["pairs"], 4);
  EXPECT_DOUBLE_EQ(judge["agreement_with_facts"]["share"].get<double>(), 1.0);

  json again = grade_json(env, grader, cache);  // every reply now comes from the response cache
  EXPECT_EQ(again["summary"]["judge"]["cache_hits"], 5);
  EXPECT_EQ(again["summary"]["judge"]["input_tokens"], 0);
  EXPECT_DOUBLE_EQ(again["summary"]["judge"]["cost_usd"].get<double>(), 0.0);
  EXPECT_EQ(judge_grades(again), grades);
}

TEST(JudgeOverMockServer, OpenAIWire) {
  expect_wire_judge("OPENAI_BASE_URL=http://127.0.0.1:{}/v1 OPENAI_API_KEY=test-key", "judge:openai:gpt-4.1-mini",
                    "openai:gpt-4.1-mini");
}

TEST(JudgeOverMockServer, AnthropicWire) {
  expect_wire_judge("ANTHROPIC_BASE_URL=http://127.0.0.1:{} ANTHROPIC_API_KEY=test-key",
                    "judge:anthropic:claude-haiku-4-5", "anthropic:claude-haiku-4-5");
}

TEST(JudgeOverMockServer, FaultsBecomeJudgeErrorsNotCrashes) {
  // 401 is not retried; then a body that is not JSON; the rest are answered.
  MockServerProcess server("401:1,malformed:1");
  ASSERT_GT(server.port(), 0);
  const fs::path cache = test::fresh_dir("judge_fault") / "judge.sqlite";
  json out = grade_json(fmt::format("OPENAI_BASE_URL=http://127.0.0.1:{}/v1 OPENAI_API_KEY=test-key", server.port()),
                        "judge:openai:gpt-4.1-mini", cache);
  std::vector<json> grades = judge_grades(out);
  ASSERT_EQ(grades.size(), 5u);
  for (int i : {0, 1}) {
    EXPECT_EQ(grades[i]["status"], "judge_error") << grades[i];
    EXPECT_TRUE(grades[i]["score"].is_null());
    EXPECT_EQ(grades[i]["correct"], false);
    EXPECT_TRUE(grades[i]["detail"].get<std::string>().starts_with("vote 1 of 1: the judge call failed: ")) << grades[i];
  }
  EXPECT_EQ(grades[2]["detail"], kExpectedDetails[2]);
  EXPECT_EQ(out["summary"]["graders"]["judge"]["judge_errors"], 2);
  EXPECT_EQ(out["summary"]["graders"]["judge"]["graded"], 3);
}

TEST(JudgeOverMockServer, AReplyThatIsNotTheJsonAskedForIsKept) {
  // A server whose sim does not know the rubric answers in prose, as a chatty model would.
  auto counter = retrieval::make_counter("o200k_base");
  agents::MockServer server(agents::SimOptions{}, *counter);
  const int port = server.start("127.0.0.1", 0);
  const fs::path cache = test::fresh_dir("judge_prose") / "judge.sqlite";
  json out = grade_json(fmt::format("OPENAI_BASE_URL=http://127.0.0.1:{}/v1 OPENAI_API_KEY=test-key", port),
                        "judge:openai:gpt-4.1-mini", cache);
  server.stop();
  std::vector<json> grades = judge_grades(out);
  ASSERT_EQ(grades.size(), 5u);
  for (const auto& g : grades) {
    EXPECT_EQ(g["status"], "judge_error") << g;
    EXPECT_EQ(g["detail"], "vote 1 of 1: the reply is not the JSON asked for: the reply is not a JSON value");
    EXPECT_FALSE(g["raw"].get<std::string>().empty());
  }
  EXPECT_EQ(out["summary"]["judge"]["calls"], 5);  // paid for, and counted
}

TEST(Judge, SimJudgeInProcessAndItsNote) {
  const fs::path cache = test::fresh_dir("judge_sim") / "judge.sqlite";
  json out = grade_json("", "judge:sim", cache);
  std::vector<json> grades = judge_grades(out);
  ASSERT_EQ(grades.size(), kExpectedDetails.size());
  for (std::size_t i = 0; i < grades.size(); ++i) EXPECT_EQ(grades[i]["detail"], kExpectedDetails[i]);
  EXPECT_EQ(out["summary"]["judge"]["note"], reports::kSimJudgeNote);
}

TEST(Judge, GradersAreNamedOnceAndTheJudgeNeedsAModel) {
  EXPECT_EQ(make_graders({"facts", "answered"}, std::nullopt).size(), 2u);
  EXPECT_THROW(make_graders({"facts", "facts"}, std::nullopt), UsageError);
  EXPECT_THROW(make_graders({"judge"}, std::nullopt), UsageError);
  EXPECT_THROW(make_graders({"vibes"}, std::nullopt), UsageError);
  EXPECT_THROW(make_judge({"gpt-4", 1, ""}), UsageError);
  EXPECT_THROW(make_judge({"sim", 10, ""}), UsageError);
  EXPECT_TRUE(is_judge_model("openai:gpt-4.1"));
  EXPECT_FALSE(is_judge_model("openai:"));
}

TEST(Judge, ARunGradesEveryTrialAndKeepsTheJudgesSpendApart) {
  const fs::path dir = test::fresh_dir("judge_run");
  const fs::path plain = write_spec(dir, 10, 3);
  const fs::path judged = dir / "judged.yaml";
  test::write_file(judged, test::read_file(plain) + "judge: {model: sim, votes: 2}\n");
  const RunResult a = run_experiment(load_spec(plain), quiet(dir / "plain"));
  const RunResult b = run_experiment(load_spec(judged), quiet(dir / "judged"));
  EXPECT_EQ(a.failed, 0u);
  const auto plain_records = reports::read_results_jsonl(dir / "plain" / "results.jsonl");
  std::map<std::string, reports::TrialRecord> judged_records;  // by trial key: trials finish in any order
  for (auto& r : reports::read_results_jsonl(dir / "judged" / "results.jsonl")) judged_records[r.trial_key] = r;
  ASSERT_EQ(plain_records.size(), judged_records.size());
  const auto pricing = engine::load_default_pricing();
  for (const auto& p : plain_records) {
    ASSERT_TRUE(judged_records.count(p.trial_key)) << p.trial_key;
    const auto& j = judged_records.at(p.trial_key);
    ASSERT_EQ(p.grades.size(), 3u);
    EXPECT_EQ(p.grades[0].grader, "facts");
    EXPECT_EQ(p.grades[1].grader, "citations");
    EXPECT_EQ(p.grades[2].grader, "answered");
    EXPECT_FALSE(p.judge_usage.has_value());
    ASSERT_EQ(j.grades.size(), 4u);
    EXPECT_EQ(j.grades[3].grader, "judge");
    ASSERT_TRUE(j.judge_usage.has_value());
    EXPECT_EQ(j.judge_usage->calls, 2);
    EXPECT_EQ(j.judge_usage->model, "sim");
    // The same trial costs the same with or without a judge.
    EXPECT_EQ(p.turns, j.turns);
    EXPECT_EQ(*reports::trial_cost(p, pricing).dollars, *reports::trial_cost(j, pricing).dollars);
  }
  EXPECT_NE(b.headline.find("Judge: " + std::string(reports::kSimJudgeNote)), std::string::npos) << b.headline;
  EXPECT_EQ(a.headline.find("Judge:"), std::string::npos);
  EXPECT_DOUBLE_EQ(b.spent_usd, a.spent_usd);  // the trials' spend is the same
  EXPECT_EQ(a.judge_spent_usd, 0.0);
  EXPECT_GT(b.judge_spent_usd, 0.0);
  // The cost cap counts the judge's spend: a cap just above the trials' own spend stops the judged run
  // (with a fresh response cache, so the judge is paid again) and not the plain one.
  const std::string cap = fmt::format("cost_cap_usd={}", a.spent_usd * 1.01);
  const RunResult capped = run_experiment(load_spec(judged, {cap, "cache_dir=" + (dir / "cache2").string()}), quiet(dir / "capped"));
  EXPECT_TRUE(capped.stopped_at_cost_cap);
  EXPECT_LT(capped.ran, plain_records.size());
  EXPECT_FALSE(run_experiment(load_spec(plain, {cap}), quiet(dir / "plain-capped")).stopped_at_cost_cap);
  // The judge's replies were cached in the spec's cache_dir: a second run pays for none of them.
  const RunResult again = run_experiment(load_spec(judged), quiet(dir / "judged-again"));
  for (const auto& r : reports::read_results_jsonl(dir / "judged-again" / "results.jsonl")) {
    EXPECT_EQ(r.judge_usage->cache_hits, 2);
    EXPECT_EQ(*r.judge_usage->input_tokens, 0);
  }
  EXPECT_EQ(again.failed, 0u);
}

}  // namespace
}  // namespace okfbench::engine
