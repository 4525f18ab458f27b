#include "harness/merge.hpp"

#include <fmt/format.h>

#include "harness/runner.hpp"
#include "harness/store.hpp"
#include "reports/pricing.hpp"
#include "reports/record.hpp"
#include "reports/report_files.hpp"
#include "retrieval/error.hpp"

namespace okfbench::harness {
namespace fs = std::filesystem;

namespace {

// All folders hold one spec; checked before anything is written.
void check_same_spec(const std::vector<fs::path>& folders, const std::vector<reports::StoredRun>& runs) {
  for (std::size_t i = 1; i < runs.size(); ++i) {
    if (runs[i].manifest.spec_hash == runs[0].manifest.spec_hash) continue;
    throw InputError(fmt::format("{} holds a run of spec {} but {} holds spec {}; merge only the shards of one "
                                 "spec (same spec file and --set values)",
                                 folders[i].string(), runs[i].manifest.spec_hash, folders[0].string(),
                                 runs[0].manifest.spec_hash));
  }
}

}  // namespace

MergeResult merge_runs(const std::vector<fs::path>& shards, const fs::path& out) {
  if (shards.empty()) throw UsageError("merge needs at least one run folder to read");
  std::vector<fs::path> folders = shards;
  std::vector<reports::StoredRun> runs;
  for (const fs::path& folder : shards) runs.push_back(reports::read_run_dir(folder));
  if (fs::exists(out / "manifest.json")) {
    folders.push_back(out);
    runs.push_back(reports::StoredRun{reports::read_manifest(out / "manifest.json"), {}});
  }
  check_same_spec(folders, runs);

  MergeResult result;
  result.folders = shards.size();
  ResultStore store = ResultStore::open(out);
  if (!fs::exists(out / "manifest.json"))
    reports::write_text_atomically(out / "manifest.json", reports::manifest_to_json_text(runs[0].manifest));
  for (std::size_t i = 0; i < shards.size(); ++i) {
    for (const reports::TrialRecord& record : runs[i].records) {
      ++result.read;
      if (store.add(record))
        ++result.added;
      else
        ++result.already_stored;
    }
  }
  const std::vector<reports::TrialRecord> records = store.records();
  result.total = records.size();
  result.headline = write_run_reports(runs[0].manifest, records, reports::PricingTable::load_default(), out);
  return result;
}

}  // namespace okfbench::harness
