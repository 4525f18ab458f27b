#include "engine/runner.hpp"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <mutex>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "agents/mock_server.hpp"
#include "engine/data_files.hpp"
#include "core/file_lock.hpp"
#include "engine/forecast.hpp"
#include "engine/run_bundles.hpp"
#include "engine/run_pricing.hpp"
#include "engine/spec.hpp"
#include "engine/spend.hpp"
#include "engine/store.hpp"
#include "retrieval/tokens.hpp"
#include "tests/engine/fake_clock.hpp"
#include "tests/engine/run_fixture.hpp"
#include "reports/forecast.hpp"
#include "reports/pricing.hpp"
#include "reports/record.hpp"
#include "reports/transcript.hpp"
#include "core/error.hpp"
#include "tests/support/test_support.hpp"

extern char** environ;

namespace okfbench::engine {
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

// The seed ids `okfbench context` packs for `question` with the configuration's settings and `method`.
std::vector<std::string> context_seeds(const fs::path& bundle, const std::string& question, const reports::PathConfig& c,
                                       const std::string& method) {
  std::string quoted = "'";
  for (char ch : question) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  quoted += "'";
  const test::CommandResult out = test::run_command(
      fmt::format("'{}' context '{}' {} --k {} --hops {} --budget {} --retrieval {} --json", test::okfbench_binary().string(),
                  bundle.string(), quoted, *c.k, *c.hops, *c.budget_tokens, method));
  EXPECT_EQ(out.exit_code, 0) << out.err;
  const nlohmann::json pack = nlohmann::json::parse(out.out);
  std::vector<std::string> seeds;
  for (const auto& item : pack["concepts"])
    if (item["reason"] == "seed") seeds.push_back(item["id"]);
  return seeds;
}

// paths.context.retrieval: [bm25f, hybrid] doubles the context trials; the
// bm25f ones keep the labels and keys of the spec without the key, the hybrid
// ones seed with what `okfbench context --retrieval hybrid` seeds with, which
// is not what bm25f seeds with on every question.
TEST(Runner, RetrievalSweepRunsEachMethodAndKeepsBm25fKeys) {
  const fs::path dir = test::fresh_dir("runner-retrieval");
  const fs::path spec_file = write_spec(dir, 40, 4);
  const ExperimentSpec plain = load_spec(spec_file);
  const ExperimentSpec swept = load_spec(spec_file, {"paths.context.retrieval=[bm25f, hybrid]"});
  const RunResult before = run_experiment(plain, quiet(dir / "plain"));
  const RunResult after = run_experiment(swept, quiet(dir / "swept"));
  EXPECT_EQ(before.planned, 16u);  // 4 questions x (2 context + 2 agent configurations)
  EXPECT_EQ(after.planned, 24u);   // 4 questions x (2 x 2 context + 2 agent configurations)
  EXPECT_EQ(after.failed, 0u);

  std::set<std::string> plain_keys;
  std::set<std::string> plain_labels;
  for (const auto& r : reports::read_run_dir(dir / "plain").records) {
    plain_keys.insert(r.trial_key);
    plain_labels.insert(r.config.label());
  }
  std::set<std::string> bm25f_keys;
  std::set<std::string> labels;
  std::size_t context = 0;
  std::vector<reports::TrialRecord> hybrid;
  for (const auto& r : reports::read_run_dir(dir / "swept").records) {
    EXPECT_TRUE(r.error.empty()) << r.error;
    labels.insert(r.config.label());
    if (r.config.kind == reports::PathKind::context) ++context;
    if (r.config.retrieval.empty()) bm25f_keys.insert(r.trial_key);
    else hybrid.push_back(r);
  }
  EXPECT_EQ(context, 16u);
  EXPECT_EQ(bm25f_keys, plain_keys);
  EXPECT_EQ(labels.size(), 6u);
  EXPECT_TRUE(std::includes(labels.begin(), labels.end(), plain_labels.begin(), plain_labels.end()));
  EXPECT_TRUE(labels.count("context budget=1000 k=3 hops=1 strategy=grafito retrieval=hybrid model=sim cache=openai"));
  ASSERT_EQ(hybrid.size(), 8u);

  const LoadedBundle bundle = load_bundle(swept, swept.bundles.at(0));
  std::size_t differ = 0;
  for (const auto& r : hybrid) {
    EXPECT_EQ(r.config.retrieval, "hybrid");
    const auto q = std::find_if(bundle.questions.questions.begin(), bundle.questions.questions.end(),
                                [&](const datasets::Question& x) { return x.id == r.question_id; });
    ASSERT_NE(q, bundle.questions.questions.end());
    const std::vector<std::string> seeds = context_seeds(bundle.dir, q->text, r.config, "hybrid");
    EXPECT_EQ(r.retrieved_ids, seeds) << r.config.label() << " " << q->text;
    if (seeds != context_seeds(bundle.dir, q->text, r.config, "bm25f")) ++differ;
  }
  EXPECT_GT(differ, 0u);  // else the comparison above could not tell the methods apart
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
  for (const char* file : {"results.sqlite", "results.jsonl", "manifest.json", "report.md", "report.html", "report.json"}) {
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
    EXPECT_THAT(e.what(), HasSubstr("holds a run written with record schema 1 (this okfbench writes 3)"));
  }
}

// A lessons bundle in a spec: both paths see only the lessons the policy
// selects (tests/data/lessons/payments as of 2026-12-02 keeps three).
TEST(Runner, ALessonsPolicyInASpecReachesBothPaths) {
  const fs::path dir = test::fresh_dir("runner-lessons");
  test::write_file(dir / "questions.yaml",
                   "name: payments\nquestions:\n"
                   "  - id: q1\n    text: \"How should I retry payment calls?\"\n"
                   "    relevant: {\"api/retry-idempotency\": 2}\n"
                   "  - id: q2\n    text: \"What page size should refunds use?\"\n"
                   "    relevant: {\"api/pagination-limits\": 2}\n");
  test::write_file(dir / "spec.yaml",
                   fmt::format("name: lessons\nbundles:\n  - path: {}\n    questions: questions.yaml\n"
                               "    profile: lessons\n    lessons: {{as_of: 2026-12-02}}\n"
                               "paths:\n  context: {{k: 5, hops: 1, retrieval: [bm25f, hybrid+rerank]}}\n"
                               "  agent: {{tools: [[browse, search, open, follow]], max_turns: 6, retrieval: [bm25f, hybrid]}}\n",
                               (test::source_dir() / "tests/data/lessons/payments").string()));
  const RunResult result = run_experiment(load_spec(dir / "spec.yaml"), quiet(dir / "out"));
  EXPECT_EQ(result.ran, 8u);
  EXPECT_EQ(result.failed, 0u);
  // Every method honours the selection: hybrid ranks only the kept concepts.
  const std::set<std::string> allowed = {"api/pagination-limits", "api/retry-idempotency", "build/retry-flaky-tests"};
  std::set<std::string> seen;
  std::size_t hybrid = 0;
  for (const auto& r : reports::read_run_dir(dir / "out").records) {
    EXPECT_TRUE(r.error.empty()) << r.error;
    hybrid += r.config.retrieval.empty() ? 0 : 1;
    for (const auto& id : r.retrieved_ids) seen.insert(id);
    for (const auto& id : r.opened_ids) seen.insert(id);
    for (const auto& p : r.packed) seen.insert(p.id);
  }
  EXPECT_EQ(seen, allowed);
  EXPECT_EQ(hybrid, 4u);
}

TEST(Runner, ASimProfileChangesTheAgentsBehaviourAndNotTheContextPath) {
  const fs::path dir = test::fresh_dir("runner-profile");
  test::write_file(dir / "p.yaml", "searches: 3\nadd_terms: 1\nparallel_opens: 0\n");
  const ExperimentSpec spec =
      load_spec(write_spec(dir, 40, 3), {"models=[sim, sim:p.yaml]", "paths.agent.tools=[[search, open]]", "paths.agent.max_turns=20"});
  run_experiment(spec, quiet(dir / "out"));
  std::map<std::string, std::size_t> searches, calls;
  std::map<std::string, std::int64_t> context_input;
  for (const auto& r : reports::read_run_dir(dir / "out").records) {
    ASSERT_TRUE(r.error.empty()) << r.error;
    if (r.config.kind == reports::PathKind::context) {
      context_input[r.config.model] += r.turns.at(0).input_tokens.value_or(0);
      continue;
    }
    calls[r.config.model] += r.turns.size();
    for (const auto& turn : r.turns)
      for (const auto& call : turn.tool_calls) searches[r.config.model] += call.name == "search" ? 1 : 0;
  }
  EXPECT_EQ(searches["sim"], 3u);  // one a question
  EXPECT_EQ(searches["sim:p.yaml"], 9u);
  EXPECT_GT(calls["sim:p.yaml"], calls["sim"]);
  EXPECT_EQ(context_input["sim"], context_input["sim:p.yaml"]);
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
  RunOptions over = quiet(dir / "out");
  over.allow_over_forecast = true;  // the forecast is far above the cap
  const RunResult capped = run_experiment(load_spec(spec_file, {"concurrency=1"}), over);
  EXPECT_TRUE(capped.stopped_at_cost_cap);
  EXPECT_EQ(capped.ran, 1u);  // one worker: the first trial's spend already passes the cap
  EXPECT_GT(capped.spent_usd, 0.000001);
  const RunResult rest = run_experiment(load_spec(spec_file, {"cost_cap_usd=100"}), quiet(dir / "out"));
  EXPECT_FALSE(rest.stopped_at_cost_cap);
  EXPECT_EQ(rest.already_stored, 1u);
  EXPECT_EQ(rest.ran, capped.planned - 1);
}

TEST(Runner, AForecastAboveTheCapIsRefusedBeforeAnyTrial) {
  const fs::path dir = test::fresh_dir("runner-over-forecast");
  const fs::path spec_file = write_spec(dir, 30, 5, "cost_cap_usd: 0.000001\n");
  try {
    run_experiment(load_spec(spec_file), quiet(dir / "out"));
    ADD_FAILURE() << "no error";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("is above the cost cap $0.000001 (cost_cap_usd)"));
    EXPECT_THAT(e.what(), HasSubstr("--allow-over-forecast"));
  }
  // Refused before the manifest and the store: the folder can start again with another spec.
  EXPECT_FALSE(fs::exists(dir / "out" / "manifest.json"));
  EXPECT_FALSE(fs::exists(dir / "out" / "results.sqlite"));
  const RunResult smaller = run_experiment(load_spec(spec_file, {"cost_cap_usd=100", "max_questions=1"}), quiet(dir / "out"));
  EXPECT_EQ(smaller.ran, smaller.planned);
  // On resume the recorded forecast is checked against the cap again.
  EXPECT_THROW(run_experiment(load_spec(spec_file, {"cost_cap_usd=0.000001", "max_questions=1"}), quiet(dir / "out")),
               UsageError);
}

TEST(Runner, NoForecastSkipsTheForecastAndItsCheck) {
  const fs::path dir = test::fresh_dir("runner-no-forecast");
  RunOptions o = quiet(dir / "out");
  o.forecast = false;
  const RunResult capped = run_experiment(load_spec(write_spec(dir, 30, 5, "cost_cap_usd: 0.000001\n")), o);
  EXPECT_TRUE(capped.stopped_at_cost_cap);  // started without a word: nothing was forecast to check
  EXPECT_FALSE(reports::read_manifest(dir / "out" / "manifest.json").forecast);
}

// Trials are interleaved across bundles and configurations, so a run stopped
// by the cost cap has a sample of every row of the report, not only of the
// first bundle's.
TEST(Runner, ACappedRunHoldsATrialOfEveryRow) {
  const fs::path dir = test::fresh_dir("runner-capped-rows");
  const std::string two_bundles = "  - generate: {concepts: 40, questions: 5, seed: 9}\n";
  const fs::path spec_file = write_spec(dir, 30, 5);
  std::string text = test::read_file(spec_file);
  text.insert(text.find("paths:"), two_bundles);
  test::write_file(spec_file, text);
  const RunResult full = run_experiment(load_spec(spec_file), quiet(dir / "full"));
  std::set<std::pair<std::string, std::string>> rows;
  for (const auto& r : reports::read_run_dir(dir / "full").records) rows.insert({r.bundle, r.config.label()});
  ASSERT_EQ(rows.size(), 8u);  // 2 bundles x 4 configurations
  RunOptions over = quiet(dir / "capped");
  over.allow_over_forecast = true;
  const RunResult capped = run_experiment(
      load_spec(spec_file, {"concurrency=1", fmt::format("cost_cap_usd={}", full.spent_usd * 0.3)}), over);
  ASSERT_TRUE(capped.stopped_at_cost_cap);
  EXPECT_LT(capped.ran, full.ran / 2);
  std::set<std::pair<std::string, std::string>> sampled;
  for (const auto& r : reports::read_run_dir(dir / "capped").records) sampled.insert({r.bundle, r.config.label()});
  EXPECT_EQ(sampled, rows);
  // The order is the spec's alone: resuming runs exactly the trials left.
  const RunResult rest = run_experiment(load_spec(spec_file), quiet(dir / "capped"));
  EXPECT_EQ(rest.already_stored, capped.ran);
  EXPECT_EQ(rest.ran, full.ran - capped.ran);
}

// "spent" was the folder's total even on resume; now this session's and the total, in stdout and spend.json.
TEST(Runner, SpendIsGivenForThisSessionAndInTotal) {
  const fs::path dir = test::fresh_dir("runner-session-spend");
  const fs::path spec_file = write_spec(dir, 30, 5, "cost_cap_usd: 0.000001\n");
  RunOptions over = quiet(dir / "out");
  over.allow_over_forecast = true;
  const RunResult first = run_experiment(load_spec(spec_file, {"concurrency=1"}), over);
  EXPECT_DOUBLE_EQ(first.session_usd, first.spent_usd);
  const RunResult second = run_experiment(load_spec(spec_file, {"cost_cap_usd=100"}), quiet(dir / "out"));
  EXPECT_GT(second.session_usd, 0);
  EXPECT_NEAR(second.session_usd, second.spent_usd - first.spent_usd, 1e-12);
  EXPECT_THAT(spend_line(second), HasSubstr(fmt::format("spent ${:.6f} this session, ${:.6f} in all", second.session_usd,
                                                        second.spent_usd)));
  const auto j = nlohmann::json::parse(test::read_file(dir / "out" / "spend.json"));
  ASSERT_EQ(j["sessions"].size(), 2u);
  EXPECT_EQ(j["sessions"][0]["trials_run"], first.ran);
  EXPECT_EQ(j["sessions"][1]["trials_run"], second.ran);
  EXPECT_NEAR(j["sessions"][1]["usd"].get<double>(), second.session_usd, 1e-6);
  EXPECT_NEAR(j["total_usd"].get<double>(), second.spent_usd, 1e-6);
  EXPECT_EQ(j["cost_cap_usd"], 100);
  EXPECT_FALSE(j["stopped_at_cost_cap"].get<bool>());
  // Dollars are written to the micro-dollar, never as 0.23971999999999996.
  for (const auto& session : j["sessions"]) {
    const double usd = session["usd"].get<double>();
    EXPECT_EQ(usd, std::round(usd * 1e6) / 1e6);
  }
}

TEST(Runner, DryRunPlansWithoutWritingAndShardsPartitionTheTrials) {
  const fs::path dir = test::fresh_dir("runner-dry");
  const ExperimentSpec spec = load_spec(write_spec(dir, 30, 5));
  RunOptions dry = quiet(dir / "out");
  dry.mode = Mode::dry_run;
  const RunResult all = run_experiment(spec, dry);
  EXPECT_EQ(all.planned, 20u);
  EXPECT_EQ(all.trials.size(), 20u);
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
  // Transcripts: one for every stored trial, none lost to the kill, none twice.
  const reports::TranscriptSet transcripts = reports::read_transcripts(out / reports::kTranscriptsFile);
  EXPECT_EQ(transcripts.trial_lines, 240u);
  std::set<std::string> transcript_keys;
  for (const auto& t : transcripts.trials) transcript_keys.insert(t.trial_key);
  EXPECT_EQ(transcript_keys, keys);
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
  EXPECT_THAT(dry.out, HasSubstr("10 trials, "));  // 2 questions x (3 context + 2 agent configurations)
  EXPECT_THAT(dry.out, HasSubstr(" input tokens forecast in all (the total row below)"));
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

// ---------------------------------------------------------------- against a provider
// A mock OpenAI/Anthropic server on loopback, answered by the sim policy.
struct Provider {
  explicit Provider(std::string_view faults = "")
      : counter(retrieval::make_counter("o200k_base")), server(agents::SimOptions{}, *counter, agents::parse_faults(faults)) {
    server.start("127.0.0.1", 0);
  }
  std::string v1() const { return server.base_url() + "/v1"; }
  std::unique_ptr<retrieval::TokenCounter> counter;
  agents::MockServer server;
};

// One generated bundle of 20 concepts, the context path (one model call per
// trial) and, with `agent`, the search+open agent path; `models` is the YAML
// list of models.
fs::path write_provider_spec(const fs::path& dir, std::size_t questions, const std::string& models,
                             const std::string& extra = "", bool agent = false) {
  const fs::path spec = dir / "spec.yaml";
  test::write_file(spec, fmt::format(R"(name: provider
seed: 3
concurrency: 1
cache_dir: {}
bundles:
  - generate: {{concepts: 20, questions: {}}}
paths:
  context: {{budget_tokens: 300, k: 3, hops: 1}}
{}models:
{}
{})",
                                     (dir / "cache").string(), questions,
                                     agent ? "  agent: {tools: [search, open], max_turns: 4}\n" : "", models, extra));
  return spec;
}

std::string openai_model(const Provider& p, const std::string& name = "openai:gpt-4o-mini", const std::string& settings = "") {
  return fmt::format("  - {{name: '{}', base_url: '{}'{}}}", name, p.v1(), settings.empty() ? "" : ", " + settings);
}

std::map<std::string, reports::TrialRecord> by_key_without_timings(std::vector<reports::TrialRecord> records) {
  std::map<std::string, reports::TrialRecord> out;
  for (auto& r : records) {
    r.timings = {};
    for (reports::TurnRecord& t : r.turns) t.ms = t.first_token_ms = std::nullopt;  // measured live, unset in replays
    out[r.trial_key] = r;
  }
  return out;
}

// The manifest's forecast set against the stored run (reports/forecast.hpp).
std::vector<reports::ForecastCheck> forecast_checks(const fs::path& out) {
  const reports::StoredRun run = reports::read_run_dir(out);
  return reports::check_forecast(run.manifest, run.records, run_pricing(load_spec(out / ".." / "spec.yaml")));
}

TEST(Runner, ARunRecordsItsForecastAndForSimItIsExactlyTheActual) {
  const fs::path dir = test::fresh_dir("runner-forecast-sim");
  const ExperimentSpec spec = load_spec(write_spec(dir, 30, 3));
  run_experiment(spec, quiet(dir / "out"));
  const auto manifest = reports::read_manifest(dir / "out" / "manifest.json");
  ASSERT_TRUE(manifest.forecast);
  EXPECT_EQ(manifest.forecast->total.trials, 12u);  // 3 questions x 4 configurations
  const auto checks = forecast_checks(dir / "out");
  ASSERT_EQ(checks.size(), 5u);  // 4 configurations and the total
  for (const auto& c : checks) {
    EXPECT_EQ(c.actual.trials, c.forecast.trials) << c.forecast.config;
    EXPECT_EQ(c.actual.input_tokens, c.forecast.input_tokens.value) << c.forecast.config;
    EXPECT_EQ(c.actual.output_tokens, c.forecast.output_tokens.value) << c.forecast.config;
    EXPECT_EQ(c.actual.calls, c.forecast.calls.value) << c.forecast.config;
    EXPECT_EQ(c.input_error(), 0.0) << c.forecast.config;
    ASSERT_TRUE(c.actual.usd && c.forecast.usd);
    EXPECT_NEAR(*c.actual.usd, c.forecast.usd->value, 5e-7 + 1e-12);  // the manifest keeps dollars to 1e-6
    EXPECT_EQ(c.forecast.basis, c.forecast.bundle.empty() ? "" : "exact (sim)");
  }
  EXPECT_THAT(test::read_file(dir / "out" / "report.md"), HasSubstr("## Forecast against actual"));
  EXPECT_THAT(test::read_file(dir / "out" / "report.html"), HasSubstr("<table id=\"forecast\">"));
  // A resume keeps the forecast the run started with; without one the manifest has none.
  run_experiment(spec, quiet(dir / "out"));
  EXPECT_EQ(reports::read_manifest(dir / "out" / "manifest.json"), manifest);
  RunOptions without = quiet(dir / "plain");
  without.forecast = false;
  run_experiment(spec, without);
  EXPECT_FALSE(reports::read_manifest(dir / "plain" / "manifest.json").forecast);
}

TEST(Runner, AProviderRunRecordsItsProfileForecastAndHowFarItWasOff) {
  Provider p;  // answers with sim's default policy
  const fs::path dir = test::fresh_dir("runner-forecast-profile");
  test::write_file(dir / "p.yaml", "searches: 3\nopens_per_search: 2\nparallel_opens: 0\n");
  const fs::path spec_file = write_provider_spec(dir, 4, openai_model(p, "openai:gpt-4o-mini", "price: {input_per_mtok: 1, output_per_mtok: 2}"),
                                                 "forecast: {openai:gpt-4o-mini: p.yaml}\n", /*agent=*/true);
  const ExperimentSpec spec = load_spec(spec_file);
  run_experiment(spec, quiet(dir / "out"));
  const auto manifest = reports::read_manifest(dir / "out" / "manifest.json");
  ASSERT_TRUE(manifest.forecast);
  // What the manifest holds is exactly the dry run's forecast of the same spec, as JSON writes it (dollars to 1e-6).
  EXPECT_EQ(*manifest.forecast, nlohmann::json(forecast_run(spec, quiet(dir / "unused"))).get<Forecast>());
  const auto checks = forecast_checks(dir / "out");
  ASSERT_EQ(checks.size(), 3u);
  const auto& agent = checks[0];
  ASSERT_EQ(agent.forecast.config.rfind("agent", 0), 0u) << agent.forecast.config;
  EXPECT_EQ(agent.forecast.basis, "profile " + (dir / "p.yaml").string());
  // The actual is what the provider reported for the stored trials.
  double input = 0;
  for (const auto& r : reports::read_run_dir(dir / "out").records) {
    if (r.config.label() != agent.forecast.config) continue;
    for (const auto& t : r.turns) input += static_cast<double>(t.input_tokens.value_or(0));
  }
  EXPECT_EQ(agent.actual.input_tokens, input);
  EXPECT_EQ(agent.actual.trials, 4u);
  // Three searches and one-at-a-time opens read more than sim's one search: the forecast is high.
  ASSERT_TRUE(agent.input_error());
  EXPECT_GT(*agent.input_error(), 0.2);
  EXPECT_DOUBLE_EQ(*agent.input_error(), agent.forecast.input_tokens.value / input - 1);
  EXPECT_THAT(test::read_file(dir / "out" / "report.md"), HasSubstr(fmt::format("| {:+.1f}% |", 100 * *agent.input_error())));
}

TEST(Runner, ProviderModelsArePricedAndTheCostCapStopsThem) {
  Provider p;
  const fs::path dir = test::fresh_dir("runner-provider-cap");
  const fs::path spec = write_provider_spec(dir, 6, openai_model(p), "cost_cap_usd: 0.00001\n");
  RunOptions over = quiet(dir / "out");
  over.allow_over_forecast = true;
  const RunResult capped = run_experiment(load_spec(spec), over);
  EXPECT_TRUE(capped.stopped_at_cost_cap);
  EXPECT_EQ(capped.ran, 1u);  // one worker: the first trial's spend passes the cap
  EXPECT_EQ(capped.unpriced, 0u);
  EXPECT_GT(capped.spent_usd, 0.00001);
  EXPECT_EQ(p.server.requests(), 1u);
  const auto manifest = reports::read_manifest(dir / "out" / "manifest.json");
  ASSERT_EQ(manifest.prices.size(), 1u);
  EXPECT_EQ(manifest.prices[0].model, "openai:gpt-4o-mini");
  EXPECT_EQ(manifest.prices[0].price.model, "gpt-4o-mini");
  ASSERT_EQ(manifest.models.size(), 1u);
  EXPECT_EQ(manifest.models[0].endpoint, p.v1());

  // The command line: exit 1 and a message that says how to go on.
  const auto cli = test::run_command(fmt::format("'{}' run '{}' --out '{}' --progress quiet --allow-over-forecast",
                                                 test::okfbench_binary().string(), spec.string(), (dir / "cli").string()));
  EXPECT_EQ(cli.exit_code, 1) << cli.err;
  EXPECT_THAT(cli.err, HasSubstr("okfbench: stopped at the cost cap of $1e-05"));
  EXPECT_THAT(cli.err, HasSubstr("with 5 trials not run; raise cost_cap_usd"));
}

TEST(Runner, AnUnpricedProviderModelUnderACapDoesNotStart) {
  Provider p;
  const fs::path dir = test::fresh_dir("runner-unpriced");
  const fs::path spec = write_provider_spec(dir, 2, openai_model(p, "openai:house-model"), "cost_cap_usd: 1\n");
  try {
    run_experiment(load_spec(spec), quiet(dir / "out"));
    FAIL() << "expected a UsageError";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("no price for openai:house-model"));
  }
  EXPECT_EQ(p.server.requests(), 0u);
  EXPECT_FALSE(fs::exists(dir / "cache"));  // refused before any bundle was built
  const std::string binary = test::okfbench_binary().string();
  const auto refused = test::run_command(fmt::format("'{}' run '{}' --out '{}'", binary, spec.string(), (dir / "cli").string()));
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.err, HasSubstr("no price for openai:house-model"));
  const auto allowed = test::run_command(
      fmt::format("'{}' run '{}' --out '{}' --allow-unpriced --progress quiet", binary, spec.string(), (dir / "allowed").string()));
  EXPECT_EQ(allowed.exit_code, 0) << allowed.err;
  EXPECT_THAT(allowed.out, HasSubstr("(2 trials without a price)"));

  // A price in the spec makes it a capped run like any other.
  const fs::path priced = write_provider_spec(
      dir, 2, openai_model(p, "openai:house-model", "price: {input_per_mtok: 1, output_per_mtok: 2}"), "cost_cap_usd: 1\n");
  const RunResult run = run_experiment(load_spec(priced), quiet(dir / "priced"));
  EXPECT_EQ(run.ran, 2u);
  EXPECT_EQ(run.unpriced, 0u);
  EXPECT_GT(run.spent_usd, 0);
  const auto stored = reports::read_run_dir(dir / "priced");
  std::int64_t input = 0, output = 0;
  for (const auto& r : stored.records) {
    for (const auto& t : r.turns) {
      input += *t.input_tokens;
      output += *t.output_tokens;
    }
  }
  EXPECT_NEAR(run.spent_usd, (static_cast<double>(input) * 1 + static_cast<double>(output) * 2) / 1e6, 1e-12);
  EXPECT_EQ(stored.manifest.prices.at(0).price.input, 1.0);
}

TEST(Runner, AJudgesSpendCountsTowardsTheCap) {
  const fs::path dir = test::fresh_dir("runner-judge-spend");
  const RunResult run = run_experiment(load_spec(write_spec(dir, 20, 2, "judge: {model: sim}\n")), quiet(dir / "out"));
  const auto pricing = engine::load_default_pricing();
  double trials = 0, judges = 0;
  for (const auto& r : reports::read_run_dir(dir / "out").records) {
    trials += reports::trial_cost(r, pricing).dollars.value_or(0);
    ASSERT_TRUE(r.judge_usage.has_value());
    judges += reports::judge_cost(*r.judge_usage, pricing).value_or(0);
  }
  EXPECT_GT(judges, 0);
  EXPECT_NEAR(run.spent_usd, trials, 1e-12);
  EXPECT_NEAR(run.judge_spent_usd, judges, 1e-12);
}

TEST(Runner, RetriesArePacedByRequestsPerMinute) {
  Provider p("429:2:0");  // two rate-limited attempts with Retry-After: 0, then an answer
  const fs::path dir = test::fresh_dir("runner-rpm");
  const fs::path spec = write_provider_spec(dir, 1, openai_model(p), "requests_per_minute: 60\n");
  FakeClock clock;
  RunOptions options = quiet(dir / "out");
  options.pacing_clock = &clock;
  const RunResult run = run_experiment(load_spec(spec), options);
  EXPECT_EQ(run.failures_remaining, 0u);
  EXPECT_EQ(p.server.requests(), 3u);
  // Attempts 2 and 3 (the retries) each waited for their one-second slot.
  EXPECT_EQ(clock.offsets(), (std::vector<std::chrono::milliseconds>{std::chrono::milliseconds(1000), std::chrono::milliseconds(2000)}));
}

TEST(Runner, TokensPerMinuteSpacesRequestsByTheirEstimatedInput) {
  Provider p;
  const fs::path dir = test::fresh_dir("runner-tpm");
  const fs::path spec = write_provider_spec(dir, 3, openai_model(p), "tokens_per_minute: 6000\n");
  FakeClock clock;
  RunOptions options = quiet(dir / "out");
  options.pacing_clock = &clock;
  run_experiment(load_spec(spec), options);
  ASSERT_EQ(clock.sleeps.size(), 2u);  // three trials, one call each: the second and third wait
  // Each gap is 60 s x (estimated tokens) / 6000: about a context pack's size (at most 300 tokens plus
  // the prompt around it) in hundredths of a second.
  const auto first = clock.offsets()[0];
  const auto second = clock.offsets()[1] - clock.offsets()[0];
  for (auto gap : {first, second}) {
    EXPECT_GT(gap, std::chrono::milliseconds(1500));
    EXPECT_LT(gap, std::chrono::milliseconds(5000));
  }
}

TEST(Runner, TransientFailuresAreRetriedByResumeAtMostThreeTimes) {
  Provider p("429:1000:0");  // every attempt is rate-limited
  const fs::path dir = test::fresh_dir("runner-transient");
  const ExperimentSpec spec = load_spec(write_provider_spec(dir, 1, openai_model(p)));
  const RunResult first = run_experiment(spec, quiet(dir / "out"));
  EXPECT_EQ(first.failed, 1u);
  EXPECT_EQ(first.failures_remaining, 1u);
  EXPECT_EQ(first.retryable, 1u);
  ASSERT_EQ(first.failures.size(), 1u);
  EXPECT_EQ(first.failures[0].error_class, "transient");
  EXPECT_THAT(first.failures[0].message, HasSubstr("failed after 5 attempt(s); last error: HTTP 429"));
  for (int resume = 1; resume <= 3; ++resume) {
    const RunResult again = run_experiment(spec, quiet(dir / "out"));
    EXPECT_EQ(again.ran, 1u) << resume;
    EXPECT_EQ(again.retried, 1u) << resume;
    EXPECT_EQ(again.failures_remaining, 1u);
  }
  const RunResult exhausted = run_experiment(spec, quiet(dir / "out"));
  EXPECT_EQ(exhausted.ran, 0u);
  EXPECT_EQ(exhausted.failures_remaining, 1u);
  EXPECT_EQ(exhausted.retryable, 0u);
  EXPECT_EQ(p.server.requests(), 4u * 5u);  // four runs of five attempts
  ResultStore store = ResultStore::open(dir / "out");
  EXPECT_EQ(store.records().at(0).runs, kMaxTrialRuns);
  EXPECT_EQ(store.superseded().size(), 3u);
  EXPECT_EQ(reports::read_run_dir(dir / "out").records.size(), 1u);  // results.jsonl holds the latest run only
  // The transcript of the latest run only, with the failed call in it.
  const reports::TranscriptSet transcripts = reports::read_transcripts(dir / "out" / reports::kTranscriptsFile);
  EXPECT_EQ(transcripts.trial_lines, 1u);
  ASSERT_EQ(transcripts.trials.size(), 1u);
  ASSERT_EQ(transcripts.trials[0].turns.size(), 1u);
  EXPECT_THAT(transcripts.trials[0].turns[0].error, HasSubstr("HTTP 429"));
  EXPECT_FALSE(transcripts.trials[0].turns[0].reply);
  // --transcripts errors keeps the failed trial.
  RunOptions errors = quiet(dir / "errors");
  errors.transcripts = TranscriptMode::errors;
  run_experiment(spec, errors);
  EXPECT_EQ(reports::read_transcripts(dir / "errors" / reports::kTranscriptsFile).trials.size(), 1u);
}

TEST(Runner, NoKeyReachesTheTranscripts) {
  Provider p;
  const fs::path dir = test::fresh_dir("runner-transcript-key");
  // The key is also text of a concept, so it reaches the conversation: the
  // packed context on the context path, the opened body on the agent path.
  const std::string key = "sk-okfbench-transcript-test-0042";
  test::write_file(dir / "kb" / "vault.md", "---\ntype: Note\ntitle: Where the vault key lives\n---\n"
                                            "The vault key is " + key + " and it lives in the vault.\n");
  test::write_file(dir / "questions.yaml", "name: vault\nquestions:\n  - id: v1\n    text: \"Where does the vault key live?\"\n"
                                           "    relevant: {\"vault\": 2}\n");
  ::setenv("OKFBENCH_TEST_TRANSCRIPT_KEY", key.c_str(), 1);
  test::write_file(dir / "spec.yaml", fmt::format(R"(name: key
seed: 3
concurrency: 1
cache_dir: {}
bundles:
  - {{path: {}, name: vault, questions: {}}}
paths:
  context: {{budget_tokens: 300, k: 3, hops: 1}}
  agent: {{tools: [search, open], max_turns: 4}}
models:
  - {{name: 'openai:gpt-4o-mini', base_url: '{}', api_key_env: OKFBENCH_TEST_TRANSCRIPT_KEY}}
)",
                                                 (dir / "cache").string(), (dir / "kb").string(),
                                                 (dir / "questions.yaml").string(), p.v1()));
  const RunResult result = run_experiment(load_spec(dir / "spec.yaml"), quiet(dir / "out"));
  ::unsetenv("OKFBENCH_TEST_TRANSCRIPT_KEY");
  ASSERT_EQ(result.failed, 0u);
  const reports::TranscriptSet transcripts = reports::read_transcripts(dir / "out" / reports::kTranscriptsFile);
  ASSERT_EQ(transcripts.trials.size(), 2u);
  std::string everything;
  for (const auto& [hash, prompt] : transcripts.prompts) everything += nlohmann::json(prompt).dump();
  for (const auto& t : transcripts.trials) everything += nlohmann::json(t).dump();
  EXPECT_EQ(everything.find(key), std::string::npos);
  EXPECT_THAT(everything, HasSubstr("The vault key is [REDACTED]"));
}

TEST(Runner, ATransientFailureThatRecoversOnResumeIsStoredAsARun) {
  Provider p("429:5:0");  // the first trial's five attempts are rate-limited, then the server answers
  const fs::path dir = test::fresh_dir("runner-recover");
  const fs::path spec = write_provider_spec(dir, 2, openai_model(p));
  const std::string binary = test::okfbench_binary().string();
  const std::string command = fmt::format("'{}' run '{}' --out '{}' --progress quiet", binary, spec.string(), (dir / "out").string());
  const auto first = test::run_command(command);
  EXPECT_EQ(first.exit_code, 1);
  EXPECT_THAT(first.err, HasSubstr("okfbench: 1 trial(s) failed (1 transient, 0 permanent):"));
  EXPECT_THAT(first.err, HasSubstr("1 x transient: OpenAI " + p.v1() + "/chat/completions: failed after 5 attempt(s); last error: HTTP 429"));
  EXPECT_THAT(first.err, HasSubstr("run again with --out " + (dir / "out").string() + " to retry the 1 transient failure(s)"));
  const auto second = test::run_command(command);
  EXPECT_EQ(second.exit_code, 0) << second.err;
  EXPECT_THAT(second.out, HasSubstr("2 trials planned: 1 run now (0 failed, 1 of them run again), 2 stored before"));
  const auto records = reports::read_run_dir(dir / "out").records;
  ASSERT_EQ(records.size(), 2u);
  for (const auto& r : records) EXPECT_TRUE(r.error.empty()) << r.error;
}

TEST(Runner, PermanentFailuresWaitForRetryFailed) {
  Provider p("401");
  const fs::path dir = test::fresh_dir("runner-permanent");
  const ExperimentSpec spec = load_spec(write_provider_spec(dir, 1, openai_model(p)));
  const RunResult first = run_experiment(spec, quiet(dir / "out"));
  ASSERT_EQ(first.failures.size(), 1u);
  EXPECT_EQ(first.failures[0].error_class, "permanent");
  EXPECT_EQ(first.retryable, 0u);
  EXPECT_EQ(run_experiment(spec, quiet(dir / "out")).ran, 0u);  // resume leaves it
  RunOptions retry = quiet(dir / "out");
  retry.retry_failed = true;
  const RunResult forced = run_experiment(spec, retry);
  EXPECT_EQ(forced.ran, 1u);
  EXPECT_EQ(forced.failures_remaining, 0u);  // the server answers now
  EXPECT_EQ(p.server.requests(), 2u);
}

TEST(Runner, TheTrialDeadlineEndsAModelThatNeverAnswers) {
  Provider p("delay:10:3");  // every request is answered after 3 s
  const fs::path dir = test::fresh_dir("runner-deadline");
  const ExperimentSpec spec = load_spec(write_provider_spec(
      dir, 1, openai_model(p, "openai:gpt-4o-mini", "request_timeout_seconds: 0.3, trial_deadline_seconds: 1")));
  const auto start = std::chrono::steady_clock::now();
  const RunResult run = run_experiment(spec, quiet(dir / "out"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(2500));  // the server would take 3 s
  ASSERT_EQ(run.failures.size(), 1u);
  EXPECT_EQ(run.failures[0].error_class, "transient");
  EXPECT_THAT(run.failures[0].message, HasSubstr("the trial deadline passed after"));
  EXPECT_THAT(run.failures[0].message, HasSubstr("timed out"));  // the 0.3 s request timeout cut the first attempt
}

TEST(Runner, ARecordedRunReplaysWithTheServerGone) {
  const fs::path dir = test::fresh_dir("runner-replay");
  const fs::path cassettes = dir / "cassettes";
  std::vector<reports::TrialRecord> recorded;
  {
    Provider p;
    RunOptions options = quiet(dir / "recorded");
    options.record_dir = cassettes;
    const RunResult run = run_experiment(load_spec(write_provider_spec(dir, 3, openai_model(p), "", true)), options);
    EXPECT_EQ(run.failures_remaining, 0u);
    recorded = reports::read_run_dir(dir / "recorded").records;
  }  // the server is stopped here
  ASSERT_EQ(recorded.size(), 6u);
  std::size_t files = 0;
  for (const auto& r : recorded) files += fs::exists(cassettes / (r.trial_key + ".jsonl"));
  EXPECT_EQ(files, 6u);  // one cassette per trial
  const fs::path replay = write_provider_spec(
      dir, 3, fmt::format("  - {{name: openai:gpt-4o-mini, base_url: 'http://127.0.0.1:9/v1', replay: '{}'}}", cassettes.string()),
      "", true);
  const RunResult again = run_experiment(load_spec(replay), quiet(dir / "replayed"));
  EXPECT_EQ(again.failures_remaining, 0u);
  EXPECT_EQ(by_key_without_timings(reports::read_run_dir(dir / "replayed").records), by_key_without_timings(recorded));
}

TEST(Runner, AReplayModelAnswersFromOneCassette) {
  const fs::path dir = test::fresh_dir("runner-replay-cassette");
  std::vector<reports::TrialRecord> recorded;
  {
    Provider p;
    RunOptions options = quiet(dir / "recorded");
    options.record_dir = dir / "cassettes";
    run_experiment(load_spec(write_provider_spec(dir, 2, openai_model(p), "", true)), options);
    recorded = reports::read_run_dir(dir / "recorded").records;
  }
  std::string all;  // the per-trial cassettes of the run, as one
  for (const auto& r : recorded) all += test::read_file(dir / "cassettes" / (r.trial_key + ".jsonl"));
  test::write_file(dir / "all.jsonl", all);
  const RunResult replayed =
      run_experiment(load_spec(write_provider_spec(dir, 2, "  - replay:all.jsonl", "", true)), quiet(dir / "replayed"));
  EXPECT_EQ(replayed.failures_remaining, 0u);
  std::map<std::string, std::string> answers;  // by question and configuration without the model
  for (const auto& r : recorded) answers[r.question_id + (r.config.kind == reports::PathKind::agent ? "/agent" : "/context")] = r.answer;
  const auto records = reports::read_run_dir(dir / "replayed").records;
  ASSERT_EQ(records.size(), recorded.size());
  for (const auto& r : records) {
    EXPECT_EQ(r.config.model, "replay:all.jsonl");
    EXPECT_EQ(r.answer, answers.at(r.question_id + (r.config.kind == reports::PathKind::agent ? "/agent" : "/context")));
  }
}

TEST(Runner, TheResponseCacheAnswersARunAgainWithoutTheServer) {
  const fs::path dir = test::fresh_dir("runner-cache-db");
  std::vector<reports::TrialRecord> first;
  std::string models;
  {
    Provider p;
    models = openai_model(p);
    RunOptions options = quiet(dir / "first");
    options.cache_db = dir / "responses.sqlite";
    run_experiment(load_spec(write_provider_spec(dir, 2, models, "", true)), options);
    first = reports::read_run_dir(dir / "first").records;
  }
  RunOptions options = quiet(dir / "second");
  options.cache_db = dir / "responses.sqlite";
  const RunResult second = run_experiment(load_spec(write_provider_spec(dir, 2, models, "", true)), options);
  EXPECT_EQ(second.failures_remaining, 0u);
  EXPECT_EQ(by_key_without_timings(reports::read_run_dir(dir / "second").records), by_key_without_timings(first));
}

TEST(Runner, ModelSettingsReachTheRequest) {
  // A one-route server that keeps what arrives and answers like a provider.
  httplib::Server server;
  std::mutex mutex;
  std::vector<std::string> auth, team, bodies;
  server.Post("/v1/chat/completions", [&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lock(mutex);
    auth.push_back(req.get_header_value("Authorization"));
    team.push_back(req.get_header_value("X-Team"));
    bodies.push_back(req.body);
    res.set_content(R"({"model": "m", "choices": [{"message": {"role": "assistant", "content": "done"}, "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 10, "completion_tokens": 2}})",
                    "application/json");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  std::jthread serving([&] { server.listen_after_bind(); });
  while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ::setenv("OKFBENCH_TEST_GATEWAY_KEY", "sk-test-gateway", 1);
  const fs::path dir = test::fresh_dir("runner-settings");
  const fs::path spec = write_provider_spec(
      dir, 1,
      fmt::format("  - {{name: 'openai:vendor/model-x', base_url: 'http://127.0.0.1:{}/v1', api_key_env: OKFBENCH_TEST_GATEWAY_KEY, "
                  "headers: {{X-Team: evals}}, max_output_tokens: 77, temperature: 0.25}}",
                  port));
  const RunResult run = run_experiment(load_spec(spec), quiet(dir / "out"));
  server.stop();
  EXPECT_EQ(run.failures_remaining, 0u);
  ASSERT_EQ(bodies.size(), 1u);
  EXPECT_EQ(auth[0], "Bearer sk-test-gateway");
  EXPECT_EQ(team[0], "evals");
  const auto body = nlohmann::json::parse(bodies[0]);
  EXPECT_EQ(body["model"], "vendor/model-x");
  EXPECT_EQ(body["max_tokens"], 77);
  EXPECT_EQ(body["temperature"], 0.25);
  for (const char* file : {"manifest.json", "results.jsonl", "report.md", "report.json"}) {
    EXPECT_EQ(test::read_file(dir / "out" / file).find("sk-test-gateway"), std::string::npos) << file;
  }
  ::unsetenv("OKFBENCH_TEST_GATEWAY_KEY");
  try {
    run_experiment(load_spec(spec), quiet(dir / "no-key"));
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("the environment variable OKFBENCH_TEST_GATEWAY_KEY is not set"));
  }
}

// ---------------------------------------------------------------- the folder and its inputs
TEST(Runner, TheManifestHashesWhatTheRunReadAndResumeRefusesChangedData) {
  const fs::path dir = test::fresh_dir("runner-inputs");
  fs::copy(test::source_dir() / "datasets" / "bundles" / "demo", dir / "demo", fs::copy_options::recursive);
  fs::copy_file(test::source_dir() / "datasets" / "experiments" / "questions" / "demo.yaml", dir / "demo.yaml");
  test::write_file(dir / "spec.yaml", R"(name: inputs
bundles:
  - {path: demo, questions: demo.yaml}
paths:
  context: {budget_tokens: 300}
models: [sim]
max_questions: 2
)");
  run_experiment(load_spec(dir / "spec.yaml"), quiet(dir / "out"));
  const auto manifest = reports::read_manifest(dir / "out" / "manifest.json");
  std::set<std::string> kinds;
  for (const auto& input : manifest.inputs) {
    kinds.insert(input.kind);
    EXPECT_EQ(input.sha256.size(), 64u) << input.kind;
  }
  EXPECT_EQ(kinds, (std::set<std::string>{"bundle", "questions", "tokenizer", "pricing"}));
  EXPECT_EQ(run_experiment(load_spec(dir / "spec.yaml"), quiet(dir / "out")).ran, 0u);  // unchanged: resumes

  // One concept edited: the stored trials no longer describe this bundle.
  const fs::path edited = [&] {
    for (const auto& e : fs::recursive_directory_iterator(dir / "demo"))
      if (e.path().extension() == ".md" && e.path().filename() != "index.md" && e.path().filename() != "log.md") return e.path();
    return fs::path();
  }();
  test::write_file(edited, test::read_file(edited) + "\nOne more line.\n");
  try {
    run_experiment(load_spec(dir / "spec.yaml"), quiet(dir / "out"));
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("bundle demo (sha256"));
    EXPECT_THAT(e.what(), HasSubstr("changed since the run started; pass a new --out folder"));
  }
}

TEST(Runner, ResumeKeepsTheRecordedPricesWhenTheTableChanges) {
  const fs::path dir = test::fresh_dir("runner-reprice");
  const ExperimentSpec spec = load_spec(write_spec(dir, 20, 2));
  const RunResult first = run_experiment(spec, quiet(dir / "out"));
  std::string table = test::read_file(test::source_dir() / "datasets" / "pricing.yaml");
  const std::string row = "  - model: gpt-4.1-mini\n    input: 0.40\n";
  ASSERT_NE(table.find(row), std::string::npos);
  table.replace(table.find(row), row.size(), "  - model: gpt-4.1-mini\n    input: 40.0\n");
  test::write_file(dir / "pricing.yaml", table);
  ::setenv("OKFBENCH_PRICING", (dir / "pricing.yaml").c_str(), 1);
  const RunResult resumed = run_experiment(spec, quiet(dir / "out"));
  ::unsetenv("OKFBENCH_PRICING");
  EXPECT_EQ(resumed.ran, 0u);
  EXPECT_NEAR(resumed.spent_usd, first.spent_usd, 1e-12);  // not re-priced at 100x
}

TEST(Runner, ASecondRunOnTheSameFolderIsRefusedNamingTheHolder) {
  const fs::path dir = test::fresh_dir("runner-lock");
  const fs::path spec = write_spec(dir, 20, 2);
  fs::create_directories(dir / "out");
  const FileLock held = FileLock::acquire(dir / "out" / "okfbench.lock", FileLock::Wait::no);
  const auto second = test::run_command(fmt::format("'{}' run '{}' --out '{}' --progress quiet", test::okfbench_binary().string(),
                                                    spec.string(), (dir / "out").string()));
  EXPECT_EQ(second.exit_code, 1);
  EXPECT_THAT(second.err, HasSubstr(fmt::format("okfbench.lock is held by okfbench pid {} on host", ::getpid())));
  EXPECT_THAT(second.err, HasSubstr("wait for it to finish or pass another --out"));
  EXPECT_FALSE(fs::exists(dir / "out" / "results.sqlite"));
}

// Starts `okfbench ARGS...` with stderr to `err`; returns its PID.
pid_t spawn_okfbench(std::vector<std::string> args, const fs::path& err) {
  const std::string binary = test::okfbench_binary().string();
  args.insert(args.begin(), binary);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  EXPECT_EQ(posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

int exit_code_of(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(Runner, TwoShardsStartedAtOnceBuildTheCachedBundleOnce) {
  const fs::path dir = test::fresh_dir("runner-shards-at-once");
  const fs::path spec = write_spec(dir, 3000, 4);
  const pid_t a = spawn_okfbench({"run", spec.string(), "--shard", "1/2", "--out", (dir / "s1").string(), "--progress", "quiet"}, dir / "a.err");
  const pid_t b = spawn_okfbench({"run", spec.string(), "--shard", "2/2", "--out", (dir / "s2").string(), "--progress", "quiet"}, dir / "b.err");
  EXPECT_EQ(exit_code_of(a), 0) << test::read_file(dir / "a.err");
  EXPECT_EQ(exit_code_of(b), 0) << test::read_file(dir / "b.err");
  const std::string logs = test::read_file(dir / "a.err") + test::read_file(dir / "b.err");
  std::size_t generated = 0;
  for (auto at = logs.find("generating gen-3000"); at != std::string::npos; at = logs.find("generating gen-3000", at + 1)) ++generated;
  EXPECT_EQ(generated, 1u) << logs;
  for (const char* shard : {"s1", "s2"}) {
    for (const auto& r : reports::read_run_dir(dir / shard).records) {
      EXPECT_EQ(r.concept_count, 3000);
      EXPECT_TRUE(r.error.empty()) << r.error;
    }
  }
  for (const auto& entry : fs::directory_iterator(dir / "cache")) {
    EXPECT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos) << entry.path();
  }
}

TEST(Runner, AFullDiskEndsTheRunWithExitOneAndNoTemporaryFiles) {
  const fs::path dir = test::fresh_dir("runner-full");
  const fs::path spec = write_spec(dir, 200, 20);
  const std::string binary = test::okfbench_binary().string();
  // Build the cached bundle with no limit, so the limit hits the results.
  ASSERT_EQ(test::run_command(fmt::format("'{}' run '{}' --out '{}' --progress quiet", binary, spec.string(), (dir / "warm").string())).exit_code, 0);
  // RLIMIT_FSIZE with SIGXFSZ ignored: a write past 64 KiB fails with EFBIG, as on a full disk.
  const auto full = test::run_command(fmt::format("bash -c \"trap '' XFSZ; ulimit -f 64; exec '{}' run '{}' --out '{}' --progress quiet\"",
                                                  binary, spec.string(), (dir / "out").string()));
  EXPECT_EQ(full.exit_code, 1) << full.err;
  EXPECT_THAT(full.err, HasSubstr("okfbench: error: "));
  EXPECT_THAT(full.err, ::testing::AnyOf(HasSubstr("File too large"), HasSubstr("disk is full"), HasSubstr("disk I/O error")));
  for (const auto& entry : fs::directory_iterator(dir / "out")) {
    EXPECT_FALSE(entry.path().extension() == ".tmp") << entry.path();
  }
  // With room again the run resumes and finishes.
  const auto resumed = test::run_command(fmt::format("'{}' run '{}' --out '{}' --progress quiet", binary, spec.string(), (dir / "out").string()));
  EXPECT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(reports::read_run_dir(dir / "out").records.size(), 80u);
}

}  // namespace
}  // namespace okfbench::engine
