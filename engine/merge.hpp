#pragma once
// Merging the folders of a sharded run into one.
//
//   okfbench merge SHARD_DIR... --out DIR
//
// `okfbench run --shard K/N --out DIR_K` on N machines leaves N folders with
// a part of the trials each. merge_runs() adds every stored trial of every
// folder to DIR's result store (a trial key already there is skipped, so
// merging again, or merging into one of the shards, is safe), keeps the
// first folder's manifest, and writes report.md and report.json, after which
// DIR is a run folder like any other for `report`, `compare` and `tune`.
//
// Every folder must hold the same spec (same spec hash in manifest.json),
// DIR included when it already holds a run; otherwise InputError names the
// folders that differ and nothing is written.
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace okfbench::engine {

struct MergeResult {
  std::size_t folders = 0;         // shard folders read
  std::size_t read = 0;            // trials found in them
  std::size_t added = 0;           // trials new to DIR
  std::size_t already_stored = 0;  // trials DIR held already (same key)
  std::size_t total = 0;           // trials in DIR afterwards
  std::string headline;            // the headline table (Markdown)
};

MergeResult merge_runs(const std::vector<std::filesystem::path>& shards, const std::filesystem::path& out);

}  // namespace okfbench::engine
