#include "harness/runner.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "harness/spec.hpp"
#include "tests/harness/run_fixture.hpp"
#include "harness/store.hpp"
#include "reports/record.hpp"
#include "retrieval/error.hpp"
#include "tests/support/test_support.hpp"

extern char** environ;

namespace okfbench::harness {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

reports::TrialRecord record(const std::string& key, std::int64_t input) {
  reports::TrialRecord r;
  r.trial_key = key;
  r.bundle = "b";
  r.question_id = "q-" + key;
  r.config.kind = reports::PathKind::agent;
  r.config.model = "sim";
  reports::TurnRecord turn;
  turn.input_tokens = input;
  turn.output_tokens = 10;
  r.turns.push_back(turn);
  r.evidence_recall = 0.5;
  return r;
}

std::vector<std::string> lines_of(const fs::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(ResultStore, StoresEachKeyOnceAndReopens) {
  const fs::path dir = test::fresh_dir("store");
  {
    ResultStore store = ResultStore::open(dir);
    EXPECT_TRUE(store.add(record("a", 100)));
    EXPECT_TRUE(store.add(record("b", 200)));
    EXPECT_FALSE(store.add(record("a", 999)));  // the key is taken: nothing changes
    EXPECT_EQ(store.size(), 2u);
  }
  ResultStore store = ResultStore::open(dir);
  EXPECT_EQ(store.keys(), (std::set<std::string>{"a", "b"}));
  const auto records = store.records();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0], record("a", 100));
  EXPECT_EQ(records[1], record("b", 200));
  EXPECT_EQ(lines_of(dir / "results.jsonl").size(), 2u);
  EXPECT_EQ(reports::trial_from_json_text(lines_of(dir / "results.jsonl")[1], "test"), record("b", 200));
}

TEST(ResultStore, RepairsAJsonlFileCutByAKill) {
  const fs::path dir = test::fresh_dir("store-repair");
  {
    ResultStore store = ResultStore::open(dir);
    store.add(record("a", 1));
    store.add(record("b", 2));
  }
  // A kill in the middle of an append leaves half a line; one between commit and append leaves none.
  const std::string whole = test::read_file(dir / "results.jsonl");
  test::write_file(dir / "results.jsonl", whole.substr(0, whole.size() - 20));
  ResultStore store = ResultStore::open(dir);
  EXPECT_EQ(test::read_file(dir / "results.jsonl"), whole);
  EXPECT_TRUE(fs::exists(dir / "results.sqlite-wal") || fs::exists(dir / "results.sqlite"));
}

// A small experiment over a generated bundle, its cache inside the test folder.
TEST(Runner, RunsEveryTrialStoresItAndResumesWithoutRepeating) {
  const fs::path dir = test::fresh_dir("runner-run");
  const ExperimentSpec spec = load_spec(write_spec(dir, 40, 4));
  const RunResult first = run_experiment(spec, quiet(dir / "out"));
  EXPECT_EQ(first.planned, 16u);  // 4 questions x (2 context + 2 agent configurations)
  EXPECT_EQ(first.ran, 16u);
  EXPECT_EQ(first.already_stored, 0u);
  EXPECT_EQ(first.failed, 0u);
  for (const char* file : {"results.sqlite", "results.jsonl", "manifest.json", "report.md", "report.json"}) {
    EXPECT_TRUE(fs::exists(dir / "out" / file)) << file;
  }
  const auto stored = reports::read_run_dir(dir / "out");
  EXPECT_EQ(stored.manifest.spec_hash, spec.hash);
  EXPECT_EQ(stored.manifest.cache_models, (std::vector<std::string>{"openai"}));
  ASSERT_EQ(stored.records.size(), 16u);
  std::set<std::string> keys;
  for (const auto& r : stored.records) {
    keys.insert(r.trial_key);
    EXPECT_TRUE(r.error.empty()) << r.error;
    EXPECT_EQ(r.concept_count, 40);
    ASSERT_FALSE(r.turns.empty());
    EXPECT_GT(r.turns[0].input_tokens.value_or(0), 0);
    ASSERT_TRUE(r.evidence_recall.has_value());
    if (r.config.kind == reports::PathKind::context) {
      EXPECT_EQ(r.turns.size(), 1u);
      EXPECT_FALSE(r.packed.empty());
      EXPECT_LE(r.context_tokens.value_or(1 << 30), *r.config.budget_tokens);
    } else {
      EXPECT_GE(r.turns.size(), 2u);  // at least a tool call and an answer
      EXPECT_FALSE(r.turns[0].tool_calls.empty());
      EXPECT_EQ(r.config.max_turns, 6);
    }
  }
  EXPECT_EQ(keys.size(), 16u);
  EXPECT_THAT(first.headline, HasSubstr("gen-40"));

  const RunResult again = run_experiment(spec, quiet(dir / "out"));
  EXPECT_EQ(again.ran, 0u);
  EXPECT_EQ(again.already_stored, 16u);
  EXPECT_EQ(reports::read_run_dir(dir / "out").records.size(), 16u);

  // Another spec may not write into this folder.
  const ExperimentSpec other = load_spec(dir / "spec.yaml", {"paths.context.budget_tokens=500"});
  try {
    run_experiment(other, quiet(dir / "out"));
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("holds a run of another spec"));
  }

  // A folder written with an older record schema is not resumed (its trial keys would all differ).
  reports::RunManifest old = stored.manifest;
  old.schema_version = 1;
  test::write_file(dir / "out" / "manifest.json", reports::manifest_to_json_text(old));
  try {
    run_experiment(spec, quiet(dir / "out"));
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("holds a run written with record schema 1 (this okfbench writes 2)"));
  }
}

TEST(Runner, SameSpecGivesTheSameRecords) {
  const fs::path dir = test::fresh_dir("runner-determinism");
  const ExperimentSpec spec = load_spec(write_spec(dir, 30, 3));
  run_experiment(spec, quiet(dir / "a"));
  run_experiment(spec, quiet(dir / "b"));
  auto a = reports::read_run_dir(dir / "a").records;
  auto b = reports::read_run_dir(dir / "b").records;
  ASSERT_EQ(a.size(), b.size());
  auto by_key = [](auto& records) {
    std::map<std::string, reports::TrialRecord> out;
    for (auto& r : records) {
      r.timings = {};
      out[r.trial_key] = r;
    }
    return out;
  };
  EXPECT_EQ(by_key(a), by_key(b));
}

TEST(Runner, StopsAtTheCostCapAndContinuesWithAHigherOne) {
  const fs::path dir = test::fresh_dir("runner-cap");
  const fs::path spec_file = write_spec(dir, 30, 5, "cost_cap_usd: 0.000001\n");
  const RunResult capped = run_experiment(load_spec(spec_file, {"concurrency=1"}), quiet(dir / "out"));
  EXPECT_TRUE(capped.stopped_at_cost_cap);
  EXPECT_EQ(capped.ran, 1u);  // one worker: the first trial's spend already passes the cap
  EXPECT_GT(capped.spent_usd, 0.000001);
  const RunResult rest = run_experiment(load_spec(spec_file, {"cost_cap_usd=100"}), quiet(dir / "out"));
  EXPECT_FALSE(rest.stopped_at_cost_cap);
  EXPECT_EQ(rest.already_stored, 1u);
  EXPECT_EQ(rest.ran, capped.planned - 1);
}

TEST(Runner, DryRunPlansWithoutWritingAndShardsPartitionTheTrials) {
  const fs::path dir = test::fresh_dir("runner-dry");
  const ExperimentSpec spec = load_spec(write_spec(dir, 30, 5));
  RunOptions dry = quiet(dir / "out");
  dry.mode = Mode::dry_run;
  const RunResult all = run_experiment(spec, dry);
  EXPECT_EQ(all.planned, 20u);
  EXPECT_EQ(all.trials.size(), 20u);
  EXPECT_GT(all.estimated_input_tokens, 20 * 300);
  EXPECT_FALSE(fs::exists(dir / "out"));
  std::set<std::string> keys;
  for (const auto& t : all.trials) keys.insert(t.key);
  EXPECT_EQ(keys.size(), 20u);
  std::set<std::string> sharded;
  std::size_t total = 0;
  for (std::size_t k = 1; k <= 3; ++k) {
    dry.shard = {k, 3};
    const RunResult part = run_experiment(spec, dry);
    total += part.planned;
    for (const auto& t : part.trials) sharded.insert(t.key);
  }
  EXPECT_EQ(total, 20u);
  EXPECT_EQ(sharded, keys);
}

TEST(Runner, ParsesShards) {
  EXPECT_EQ(parse_shard("2/4").index, 2u);
  EXPECT_EQ(parse_shard("2/4").count, 4u);
  EXPECT_EQ(parse_shard("1000000/1000000").index, 1'000'000u);
  for (const char* bad : {"0/4", "5/4", "2", "a/b", "2/4x", "/4", "2/", "+2/4", "2/+4", "02/4", "1/0x10", "-1/4", "1/-4",
                          "1/1000001", "4294967297/4294967297", "18446744073709551617/18446744073709551618", "1 /4", "1/4/4"}) {
    EXPECT_THROW(parse_shard(bad), UsageError) << bad;
  }
}

// Counts the complete lines of a file that is being appended to.
std::size_t complete_lines(const fs::path& path) {
  const std::string text = fs::exists(path) ? test::read_file(path) : std::string();
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

TEST(Runner, AKilledRunResumesWithoutRepeatingOrLosingATrial) {
  const fs::path dir = test::fresh_dir("runner-kill");
  const fs::path spec_file = write_spec(dir, 300, 30, "repeats: 2\n");
  const fs::path out = dir / "out";
  const std::string binary = test::okfbench_binary().string();
  const std::string spec_arg = spec_file.string();
  const std::string out_arg = out.string();
  std::vector<char*> argv = {const_cast<char*>(binary.c_str()), const_cast<char*>("run"),
                             const_cast<char*>(spec_arg.c_str()), const_cast<char*>("--out"),
                             const_cast<char*>(out_arg.c_str()), const_cast<char*>("--progress"),
                             const_cast<char*>("quiet"), nullptr};
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, binary.c_str(), nullptr, nullptr, argv.data(), environ), 0);
  // Kill it once some trials are stored but well before the 240 it plans.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (complete_lines(out / "results.jsonl") < 15 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the run finished before it could be killed";
  const std::size_t before = ResultStore::open(out).size();
  EXPECT_GE(before, 15u);
  EXPECT_LT(before, 240u);

  const test::CommandResult resumed =
      test::run_command(fmt::format("'{}' run '{}' --out '{}' --progress lines", binary, spec_arg, out_arg));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_THAT(resumed.err, HasSubstr(fmt::format("240 trials planned, {} already stored", before)));
  const auto records = reports::read_run_dir(out).records;
  EXPECT_EQ(records.size(), 240u);
  std::set<std::string> keys;
  for (const auto& r : records) keys.insert(r.trial_key);
  EXPECT_EQ(keys.size(), 240u);
  EXPECT_EQ(ResultStore::open(out).size(), 240u);
}

TEST(Runner, APlanOverTheTrialLimitIsRefusedBeforeItIsAllocated) {
  // 602 configurations x 1,000 repeats fit one question (the spec's check);
  // over 5 questions they are 3,010,000 trials, which the runner refuses.
  const fs::path dir = test::fresh_dir("runner-plan-limit");
  std::string ks = "[";
  for (int k = 1; k <= 300; ++k) ks += fmt::format("{}{}", k > 1 ? "," : "", k);
  const ExperimentSpec spec = load_spec(write_spec(dir, 20, 5), {"repeats=1000", "paths.context.k=" + ks + "]"});
  RunOptions options = quiet(dir / "out");
  options.mode = Mode::dry_run;
  try {
    run_experiment(spec, options);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("spec.yaml: the plan has 3010000 trials (5 questions x 602 configurations x 1000 "
                                    "repeats), more than the 1000000 a run holds"));
  }
  EXPECT_FALSE(fs::exists(dir / "out"));
}

TEST(Runner, CommandLineRunsADryRunAndReportsBadSpecs) {
  const fs::path dir = test::fresh_dir("runner-cli");
  const fs::path spec_file = write_spec(dir, 20, 2);
  const std::string binary = test::okfbench_binary().string();
  const auto dry = test::run_command(fmt::format("'{}' run '{}' --dry-run --set paths.context.budget_tokens=[100,200,400]", binary,
                                                 spec_file.string()));
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_THAT(dry.out, HasSubstr("10 trials, about"));  // 2 questions x (3 context + 2 agent configurations)
  EXPECT_THAT(dry.out, HasSubstr("context budget=400 k=3 hops=1 strategy=grafito model=sim cache=openai"));
  // A bad value that --set wrote is a usage error naming the argument; one in the file names its line.
  const auto bad = test::run_command(fmt::format("'{}' run '{}' --set paths.agent.max_turns=zero", binary, spec_file.string()));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("--set paths.agent.max_turns=zero: paths.agent.max_turns: expected an integer from 1 to 1000, got \"zero\""));
  const auto index = test::run_command(fmt::format("'{}' run '{}' --set bundles.99999999999999999999.path=x", binary, spec_file.string()));
  EXPECT_EQ(index.exit_code, 2);
  EXPECT_THAT(index.err, HasSubstr("usage error: --set bundles.99999999999999999999.path=x: bundles is a list of 1; address "
                                   "an element by its index from 0 to 0"));
  const auto shard = test::run_command(fmt::format("'{}' run '{}' --dry-run --shard 1/18446744073709551617", binary, spec_file.string()));
  EXPECT_EQ(shard.exit_code, 2);
  EXPECT_THAT(shard.err, HasSubstr("--shard 1/18446744073709551617: expected K/N with N an integer from 1 to 1000000"));
  const auto usage = test::run_command(fmt::format("'{}' run '{}' --set nonsense", binary, spec_file.string()));
  EXPECT_EQ(usage.exit_code, 2);
}

}  // namespace
}  // namespace okfbench::harness
