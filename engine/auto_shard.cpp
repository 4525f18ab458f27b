#include "engine/auto_shard.hpp"

#include <fmt/format.h>

#include <string>

#include "engine/limits.hpp"
#include "core/error.hpp"
#include "core/numbers.hpp"

namespace okfbench::engine {
namespace {

constexpr IntegerRange<std::size_t> kTaskIds{0, 4'000'000'000};  // Slurm's task ids are 32-bit
constexpr IntegerRange<std::size_t> kShardCount{1, limits::planned_trials};

std::size_t number(const char* name, const char* text, IntegerRange<std::size_t> range) {
  return integer_or_throw<UsageError>(text, range, fmt::format("--shard auto: {}={}", name, text));
}

std::optional<Shard> from_slurm(const EnvLookup& env, std::optional<std::size_t> shards) {
  const char* id_text = env("SLURM_ARRAY_TASK_ID");
  if (!id_text) return std::nullopt;
  const char* count_text = env("SLURM_ARRAY_TASK_COUNT");
  const char* min_text = env("SLURM_ARRAY_TASK_MIN");
  if (!count_text || !min_text) {
    throw UsageError(
        "--shard auto: SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT or SLURM_ARRAY_TASK_MIN is not; run "
        "inside an sbatch --array job (scripts/slurm/okfbench-array.sbatch), or give --shard K/N");
  }
  const std::size_t id = number("SLURM_ARRAY_TASK_ID", id_text, kTaskIds);
  const std::size_t count = number("SLURM_ARRAY_TASK_COUNT", count_text, kShardCount);
  const std::size_t min = number("SLURM_ARRAY_TASK_MIN", min_text, kTaskIds);
  const char* step_text = env("SLURM_ARRAY_TASK_STEP");
  const std::size_t step = step_text ? number("SLURM_ARRAY_TASK_STEP", step_text, {1, kTaskIds.max}) : 1;
  if (id < min || (id - min) % step != 0 || (id - min) / step >= count) {
    throw UsageError(fmt::format(
        "--shard auto: task {} is not in the array of {} tasks from {} by {}; submit a contiguous array such as "
        "--array=0-{}",
        id, count, min, step, count - 1));
  }
  if (shards && *shards != count) {
    throw UsageError(fmt::format("--shard auto --shards {}: the Slurm array has {} tasks (SLURM_ARRAY_TASK_COUNT); "
                                 "drop --shards or submit --array=0-{}",
                                 *shards, count, *shards - 1));
  }
  return Shard{(id - min) / step + 1, count};
}

std::optional<Shard> from_kubernetes(const EnvLookup& env, std::optional<std::size_t> shards) {
  const char* index_text = env("JOB_COMPLETION_INDEX");
  if (!index_text) return std::nullopt;
  if (!shards) {
    throw UsageError(
        "--shard auto: JOB_COMPLETION_INDEX is set (a Kubernetes Indexed Job) but --shards N is not; pass the "
        "Job's completions as --shards N");
  }
  const std::size_t index = number("JOB_COMPLETION_INDEX", index_text, {0, *shards - 1});
  return Shard{index + 1, *shards};
}

}  // namespace

Shard shard_from_environment(const EnvLookup& env, std::optional<std::size_t> shards) {
  if (shards && (*shards < kShardCount.min || *shards > kShardCount.max)) {
    throw UsageError(fmt::format("--shards {}: expected {}", *shards, describe(kShardCount)));
  }
  if (auto shard = from_slurm(env, shards)) return *shard;
  if (auto shard = from_kubernetes(env, shards)) return *shard;
  throw UsageError(
      "--shard auto: neither SLURM_ARRAY_TASK_ID (a Slurm job array) nor JOB_COMPLETION_INDEX (a Kubernetes Indexed "
      "Job) is set; run under one of them, or give --shard K/N");
}

}  // namespace okfbench::engine
