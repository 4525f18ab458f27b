#pragma once
// `okfbench run --shard auto`: the shard a cluster scheduler gave this process.
//
//   Slurm job array (sbatch --array=0-3): SLURM_ARRAY_TASK_ID with
//     SLURM_ARRAY_TASK_COUNT, SLURM_ARRAY_TASK_MIN and SLURM_ARRAY_TASK_STEP
//     (1 when unset); shard K is the task's position in the array,
//     (ID - MIN) / STEP + 1, of N = COUNT. --shards N, when given, must equal COUNT.
//   Kubernetes Indexed Job (completionMode: Indexed): JOB_COMPLETION_INDEX,
//     0-based, with N from --shards N (the Job's completions).
//
// Slurm is looked at first. scripts/slurm/okfbench-array.sbatch and
// scripts/k8s/okfbench-indexed-job.yaml use it.
#include <cstddef>
#include <functional>
#include <optional>

#include "engine/runner.hpp"

namespace okfbench::engine {

// Looks a variable up: nullptr when unset (std::getenv in the program).
using EnvLookup = std::function<const char*(const char* name)>;

// The shard, from the scheduler's variables and `shards` (--shards N). Throws
// UsageError naming the variable and what to do when none is set, a value is
// not a number in range, or the array is not contiguous.
Shard shard_from_environment(const EnvLookup& env, std::optional<std::size_t> shards);

}  // namespace okfbench::engine
