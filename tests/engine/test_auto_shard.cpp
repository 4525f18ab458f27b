// --shard auto: the shard from Slurm's array variables or a Kubernetes
// Indexed Job's index, and a usage error naming the variable otherwise; then
// through the binary, that shards given this way cover the plan exactly once.
#include "engine/auto_shard.hpp"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::engine {
namespace {

using ::testing::HasSubstr;
using Vars = std::map<std::string, std::string>;

Shard shard_of(const Vars& vars, std::optional<std::size_t> shards = std::nullopt) {
  return shard_from_environment(
      [&vars](const char* name) {
        auto it = vars.find(name);
        return it == vars.end() ? nullptr : it->second.c_str();
      },
      shards);
}

std::string usage_error(const Vars& vars, std::optional<std::size_t> shards = std::nullopt) {
  try {
    shard_of(vars, shards);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

Vars slurm(const std::string& id, const std::string& count, const std::string& min) {
  return {{"SLURM_ARRAY_TASK_ID", id}, {"SLURM_ARRAY_TASK_COUNT", count}, {"SLURM_ARRAY_TASK_MIN", min}};
}

TEST(AutoShard, SlurmTaskIsItsPositionInTheArray) {
  for (std::size_t id = 0; id < 4; ++id) {
    const Shard s = shard_of(slurm(std::to_string(id), "4", "0"));
    EXPECT_EQ(s.index, id + 1);
    EXPECT_EQ(s.count, 4u);
  }
  const Shard one_based = shard_of(slurm("4", "4", "1"));  // --array=1-4
  EXPECT_EQ(one_based.index, 4u);
  Vars stepped = slurm("6", "4", "0");  // --array=0-6:2 -> 0, 2, 4, 6
  stepped["SLURM_ARRAY_TASK_STEP"] = "2";
  EXPECT_EQ(shard_of(stepped).index, 4u);
  EXPECT_EQ(shard_of(slurm("2", "3", "0"), 3).index, 3u);  // --shards N may repeat the count
}

TEST(AutoShard, SlurmArraysThatAreNotContiguousOrDisagreeAreUsageErrors) {
  EXPECT_THAT(usage_error(slurm("4", "4", "0")), HasSubstr("task 4 is not in the array of 4 tasks"));
  EXPECT_THAT(usage_error(slurm("0", "4", "1")), HasSubstr("--array=0-3"));
  Vars stepped = slurm("3", "4", "0");
  stepped["SLURM_ARRAY_TASK_STEP"] = "2";
  EXPECT_THAT(usage_error(stepped), HasSubstr("task 3 is not in the array"));
  EXPECT_THAT(usage_error(slurm("1", "4", "0"), 3), HasSubstr("the Slurm array has 4 tasks"));
  EXPECT_THAT(usage_error({{"SLURM_ARRAY_TASK_ID", "1"}}), HasSubstr("SLURM_ARRAY_TASK_COUNT or SLURM_ARRAY_TASK_MIN is not"));
}

TEST(AutoShard, SlurmValuesAreRangeCheckedBeforeUse) {
  EXPECT_THAT(usage_error(slurm("-1", "4", "0")), HasSubstr("SLURM_ARRAY_TASK_ID=-1"));
  EXPECT_THAT(usage_error(slurm("1", "0", "0")), HasSubstr("SLURM_ARRAY_TASK_COUNT=0"));
  EXPECT_THAT(usage_error(slurm("1", "18446744073709551617", "0")), HasSubstr("SLURM_ARRAY_TASK_COUNT=18446744073709551617"));
  EXPECT_THAT(usage_error(slurm("x", "4", "0")), HasSubstr("SLURM_ARRAY_TASK_ID=x"));
  Vars zero_step = slurm("1", "4", "0");
  zero_step["SLURM_ARRAY_TASK_STEP"] = "0";
  EXPECT_THAT(usage_error(zero_step), HasSubstr("SLURM_ARRAY_TASK_STEP=0"));
}

TEST(AutoShard, KubernetesIndexIsZeroBasedAndNeedsShards) {
  const Shard s = shard_of({{"JOB_COMPLETION_INDEX", "0"}}, 3);
  EXPECT_EQ(s.index, 1u);
  EXPECT_EQ(s.count, 3u);
  EXPECT_EQ(shard_of({{"JOB_COMPLETION_INDEX", "2"}}, 3).index, 3u);
  EXPECT_THAT(usage_error({{"JOB_COMPLETION_INDEX", "0"}}), HasSubstr("--shards N is not"));
  EXPECT_THAT(usage_error({{"JOB_COMPLETION_INDEX", "3"}}, 3), HasSubstr("JOB_COMPLETION_INDEX=3: expected an integer from 0 to 2"));
  EXPECT_THAT(usage_error({{"JOB_COMPLETION_INDEX", "0"}}, 0), HasSubstr("--shards 0"));
}

TEST(AutoShard, SlurmComesFirstAndNothingSetIsAUsageError) {
  Vars both = slurm("1", "2", "0");
  both["JOB_COMPLETION_INDEX"] = "0";
  EXPECT_EQ(shard_of(both, 2).index, 2u);
  EXPECT_THAT(usage_error({}), HasSubstr("neither SLURM_ARRAY_TASK_ID (a Slurm job array) nor JOB_COMPLETION_INDEX"));
}

// Through the binary: the dry-run plans of --shard auto under each Slurm task
// are disjoint and together are the unsharded plan; an unset environment and
// a stray --shards are usage errors (exit 2).
// The demo bundle and its questions under both paths with sim: 24 trials.
std::filesystem::path demo_spec() {
  const auto dir = test::fresh_dir("auto_shard");
  const auto datasets = test::source_dir() / "datasets";
  test::write_file(dir / "spec.yaml", fmt::format(R"(name: auto-shard
cache_dir: {}
bundles:
  - path: {}
    questions: {}
paths:
  context: {{budget_tokens: 500}}
  agent: {{tools: [[search, open]]}}
models: [sim]
)",
                                                  (dir / "cache").string(), (datasets / "bundles" / "demo").string(),
                                                  (datasets / "experiments" / "questions" / "demo.yaml").string()));
  return dir / "spec.yaml";
}

std::set<std::string> dry_run_keys(const std::string& env, const std::string& shard_flags = "--shard auto") {
  static const std::filesystem::path spec = demo_spec();
  const auto r = test::run_command(fmt::format("env -u SLURM_ARRAY_TASK_ID -u JOB_COMPLETION_INDEX {} {} run {} --dry-run {}",
                                               env, test::okfbench_binary().string(), spec.string(),
                                               env.empty() ? "" : shard_flags));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::set<std::string> keys;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("forecast")) break;  // the forecast table follows the trials
    if (line.size() > 16 && line.find("trial key") == std::string::npos && line.find(" trials, ") == std::string::npos)
      keys.insert(line.substr(0, 16));
  }
  return keys;
}

TEST(AutoShard, SlurmShardsThroughTheBinaryCoverThePlanOnce) {
  const std::set<std::string> all = dry_run_keys("");
  ASSERT_GT(all.size(), 3u);
  std::set<std::string> seen;
  std::size_t total = 0;
  for (int id = 0; id < 3; ++id) {
    const auto keys = dry_run_keys(
        fmt::format("SLURM_ARRAY_TASK_ID={} SLURM_ARRAY_TASK_COUNT=3 SLURM_ARRAY_TASK_MIN=0", id));
    EXPECT_FALSE(keys.empty());
    total += keys.size();
    seen.insert(keys.begin(), keys.end());
  }
  EXPECT_EQ(total, all.size());
  EXPECT_EQ(seen, all);
}

// scripts/k8s/okfbench-indexed-job.yaml: the shard Job is Indexed and its
// completions, parallelism, `--shards N` and the merge Job's SHARDS agree (the
// recipe says to change them together; this catches one changed alone), both
// Jobs mount the same claim, and N pods given JOB_COMPLETION_INDEX 0..N-1
// with the recipe's flags cover the plan exactly once.
TEST(AutoShard, KubernetesRecipeAgreesOnItsShardCountAndCoversThePlanOnce) {
  const auto recipe = test::source_dir() / "scripts" / "k8s" / "okfbench-indexed-job.yaml";
  const std::vector<YAML::Node> jobs = YAML::LoadAllFromFile(recipe.string());
  ASSERT_EQ(jobs.size(), 2u) << recipe;
  const YAML::Node shards = jobs[0], merge = jobs[1];
  EXPECT_EQ(shards["kind"].as<std::string>(), "Job");
  EXPECT_EQ(merge["kind"].as<std::string>(), "Job");
  EXPECT_EQ(shards["spec"]["completionMode"].as<std::string>(), "Indexed");
  const int completions = shards["spec"]["completions"].as<int>();
  EXPECT_EQ(shards["spec"]["parallelism"].as<int>(), completions);

  const YAML::Node pod = shards["spec"]["template"]["spec"];
  const std::string command = pod["containers"][0]["args"][0].as<std::string>();
  const std::string flags = fmt::format("--shard auto --shards {}", completions);
  EXPECT_THAT(command, HasSubstr("okfbench run " + flags));
  EXPECT_THAT(command, HasSubstr("shard-$JOB_COMPLETION_INDEX"));
  std::string merge_shards;
  for (const auto& var : merge["spec"]["template"]["spec"]["containers"][0]["env"])
    if (var["name"].as<std::string>() == "SHARDS") merge_shards = var["value"].as<std::string>();
  EXPECT_EQ(merge_shards, std::to_string(completions));
  EXPECT_THAT(merge["spec"]["template"]["spec"]["containers"][0]["args"][0].as<std::string>(), HasSubstr("okfbench merge"));
  const auto claim = [](const YAML::Node& job) {
    return job["spec"]["template"]["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"].as<std::string>();
  };
  EXPECT_EQ(claim(shards), claim(merge));

  const std::set<std::string> all = dry_run_keys("");
  std::set<std::string> seen;
  std::size_t total = 0;
  for (int index = 0; index < completions; ++index) {
    const auto keys = dry_run_keys(fmt::format("JOB_COMPLETION_INDEX={}", index), flags);
    total += keys.size();
    seen.insert(keys.begin(), keys.end());
  }
  EXPECT_EQ(total, all.size());
  EXPECT_EQ(seen, all);
}

TEST(AutoShard, BinaryRefusesAutoWithoutASchedulerAndStrayShards) {
  const auto bin = test::okfbench_binary().string();
  auto r = test::run_command(fmt::format("env -u SLURM_ARRAY_TASK_ID -u JOB_COMPLETION_INDEX {} run --dry-run --shard auto", bin));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("neither SLURM_ARRAY_TASK_ID"));
  r = test::run_command(fmt::format("{} run --dry-run --shard 1/2 --shards 2", bin));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--shards N goes with --shard auto"));
}

}  // namespace
}  // namespace okfbench::engine
