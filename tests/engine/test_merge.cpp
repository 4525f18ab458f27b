// merge_runs and `okfbench merge`: shards of one spec become one run folder.
#include "engine/merge.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <map>

#include "core/file_lock.hpp"
#include "engine/runner.hpp"
#include "engine/spec.hpp"
#include "reports/record.hpp"
#include "reports/transcript.hpp"
#include "core/error.hpp"
#include "tests/engine/run_fixture.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::engine {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::map<std::string, reports::TrialRecord> by_key(const fs::path& run_dir) {
  std::map<std::string, reports::TrialRecord> out;
  for (reports::TrialRecord& r : reports::read_run_dir(run_dir).records) {
    r.timings = {};
    out[r.trial_key] = r;
  }
  return out;
}

struct ShardedRun {
  fs::path dir = test::fresh_dir("merge");
  ExperimentSpec spec = load_spec(write_spec(dir, 30, 3));
  ShardedRun() {
    run_experiment(spec, quiet(dir / "all"));
    for (std::size_t k = 1; k <= 2; ++k) {
      RunOptions options = quiet(dir / fmt::format("shard{}", k));
      options.shard = {k, 2};
      run_experiment(spec, options);
    }
  }
};

TEST(Merge, ShardsGiveTheSameRunAsOneRun) {
  ShardedRun run;
  MergeResult merged = merge_runs({run.dir / "shard1", run.dir / "shard2"}, run.dir / "merged");
  EXPECT_EQ(merged.folders, 2u);
  EXPECT_EQ(merged.read, 12u);  // 3 questions x 4 configurations
  EXPECT_EQ(merged.added, 12u);
  EXPECT_EQ(merged.already_stored, 0u);
  EXPECT_EQ(merged.total, 12u);
  EXPECT_THAT(merged.headline, HasSubstr("|"));
  EXPECT_EQ(by_key(run.dir / "merged"), by_key(run.dir / "all"));
  for (const char* file : {"results.sqlite", "results.jsonl", "manifest.json", "report.md", "report.html", "report.json"})
    EXPECT_TRUE(fs::exists(run.dir / "merged" / file)) << file;
  EXPECT_EQ(reports::read_run_dir(run.dir / "merged").manifest.spec_hash, run.spec.hash);
  // The shards' forecasts add up to the whole run's (sim: exact, so the same figures).
  const auto merged_forecast = reports::read_manifest(run.dir / "merged" / "manifest.json").forecast;
  const auto whole_forecast = reports::read_manifest(run.dir / "all" / "manifest.json").forecast;
  ASSERT_TRUE(merged_forecast && whole_forecast);
  EXPECT_EQ(reports::read_manifest(run.dir / "shard1" / "manifest.json").forecast->shard, "1/2");
  EXPECT_EQ(merged_forecast->total.trials, 12u);
  EXPECT_EQ(merged_forecast->total.input_tokens, whole_forecast->total.input_tokens);
  ASSERT_EQ(merged_forecast->rows.size(), whole_forecast->rows.size());
  for (std::size_t i = 0; i < whole_forecast->rows.size(); ++i)
    EXPECT_EQ(merged_forecast->rows[i].input_tokens, whole_forecast->rows[i].input_tokens) << whole_forecast->rows[i].config;

  // The shards' transcripts come along, one per trial.
  const auto transcripts = reports::read_transcripts(run.dir / "merged" / reports::kTranscriptsFile);
  EXPECT_EQ(transcripts.trial_lines, 12u);
  for (const auto& [key, record] : by_key(run.dir / "merged")) EXPECT_NE(transcripts.find(key), nullptr) << key;

  MergeResult again = merge_runs({run.dir / "shard1", run.dir / "shard2"}, run.dir / "merged");
  EXPECT_EQ(again.added, 0u);
  EXPECT_EQ(again.already_stored, 12u);
  EXPECT_EQ(again.total, 12u);
  EXPECT_EQ(reports::read_transcripts(run.dir / "merged" / reports::kTranscriptsFile).trial_lines, 12u);
}

TEST(Merge, IntoOneOfTheShards) {
  ShardedRun run;
  std::size_t second = reports::read_run_dir(run.dir / "shard2").records.size();
  MergeResult merged = merge_runs({run.dir / "shard2"}, run.dir / "shard1");
  EXPECT_EQ(merged.added, second);
  EXPECT_EQ(by_key(run.dir / "shard1"), by_key(run.dir / "all"));
}

TEST(Merge, RefusesShardsOfAnotherSpecAndWritesNothing) {
  ShardedRun run;
  const ExperimentSpec other = load_spec(run.dir / "spec.yaml", {"paths.context.budget_tokens=500"});
  run_experiment(other, quiet(run.dir / "other"));
  try {
    merge_runs({run.dir / "shard1", run.dir / "other"}, run.dir / "merged");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("merge only the shards of one spec"));
    EXPECT_THAT(e.what(), HasSubstr("other"));
  }
  EXPECT_FALSE(fs::exists(run.dir / "merged"));
  EXPECT_THROW(merge_runs({run.dir / "other"}, run.dir / "shard1"), InputError);  // DIR holds another spec
  EXPECT_THROW(merge_runs({run.dir / "missing"}, run.dir / "merged"), InputError);
  EXPECT_THROW(merge_runs({}, run.dir / "merged"), UsageError);
}

TEST(Merge, RefusesAShardStillRunningAndShardsOverOtherData) {
  ShardedRun run;
  {
    const FileLock running = FileLock::acquire(run.dir / "shard2" / "okfbench.lock", FileLock::Wait::no);
    try {
      merge_runs({run.dir / "shard1", run.dir / "shard2"}, run.dir / "merged");
      FAIL() << "expected an InputError";
    } catch (const InputError& e) {
      EXPECT_THAT(e.what(), HasSubstr(fmt::format("shard2 is still being written by okfbench pid {}", ::getpid())));
    }
  }
  reports::RunManifest manifest = reports::read_manifest(run.dir / "shard2" / "manifest.json");
  bool edited = false;
  for (auto& input : manifest.inputs) {
    if (input.kind == "bundle") {
      input.sha256 = std::string(64, '0');
      edited = true;
    }
  }
  ASSERT_TRUE(edited);
  test::write_file(run.dir / "shard2" / "manifest.json", reports::manifest_to_json_text(manifest));
  try {
    merge_runs({run.dir / "shard1", run.dir / "shard2"}, run.dir / "merged");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("ran over another bundle gen-30"));
  }
  EXPECT_FALSE(fs::exists(run.dir / "merged"));
}

TEST(Merge, CommandLine) {
  ShardedRun run;
  test::CommandResult result = test::run_command(fmt::format("'{}' merge '{}' '{}' --out '{}'", test::okfbench_binary().string(),
                                                             (run.dir / "shard1").string(), (run.dir / "shard2").string(),
                                                             (run.dir / "cli").string()));
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("merged 12 trials from 2 folders"));
  EXPECT_THAT(result.out, HasSubstr("12 added, 0 already there; 12 trials in all"));
  test::CommandResult missing = test::run_command(fmt::format("'{}' merge '{}' --out '{}'", test::okfbench_binary().string(),
                                                              (run.dir / "nope").string(), (run.dir / "cli2").string()));
  EXPECT_EQ(missing.exit_code, 2);  // usage: the folder does not exist
}

}  // namespace
}  // namespace okfbench::engine
