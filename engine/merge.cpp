#include "engine/merge.hpp"

#include <fmt/format.h>

#include <set>
#include <string>
#include <vector>

#include "core/file_lock.hpp"
#include "engine/data_files.hpp"
#include "engine/runner.hpp"
#include "engine/store.hpp"
#include "reports/forecast.hpp"
#include "reports/transcript.hpp"
#include "reports/pricing.hpp"
#include "reports/record.hpp"
#include "reports/report_files.hpp"
#include "core/files.hpp"
#include "core/error.hpp"

namespace okfbench::engine {
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

// Shards that ran over different content are not one run, whatever their spec says.
void check_same_inputs(const std::vector<fs::path>& folders, const std::vector<reports::StoredRun>& runs) {
  for (std::size_t i = 1; i < runs.size(); ++i) {
    for (const auto& mine : runs[i].manifest.inputs) {
      for (const auto& first : runs[0].manifest.inputs) {
        if (mine.kind == "pricing" || mine.kind != first.kind || mine.name != first.name || mine.sha256 == first.sha256) continue;
        throw InputError(fmt::format("{} ran over another {} {} than {} (sha256 {}... and {}...); merge only shards that "
                                     "read the same data",
                                     folders[i].string(), mine.kind, mine.name, folders[0].string(), mine.sha256.substr(0, 12),
                                     first.sha256.substr(0, 12)));
      }
    }
  }
}

}  // namespace

bool same_folder(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  return fs::equivalent(a, b, ec);
}

// The prompts a transcript's turns name.
std::vector<reports::TranscriptPrompt> prompts_of(const reports::Transcript& t, const reports::TranscriptSet& set) {
  std::vector<reports::TranscriptPrompt> out;
  for (const auto& turn : t.turns) {
    if (const reports::TranscriptPrompt* p = set.prompt(turn.prompt_hash)) out.push_back(*p);
  }
  return out;
}

MergeResult merge_runs(const std::vector<fs::path>& shards, const fs::path& out) {
  if (shards.empty()) throw UsageError("merge needs at least one run folder to read");
  std::vector<fs::path> folders = shards;
  std::vector<reports::StoredRun> runs;
  for (const fs::path& folder : shards) {
    if (const auto holder = FileLock::held_by(folder / "okfbench.lock")) {
      throw InputError(fmt::format("{} is still being written by okfbench {}; merge it when its run has finished",
                                   folder.string(), *holder));
    }
    runs.push_back(reports::read_run_dir(folder));
  }
  check_same_spec(folders, runs);
  check_same_inputs(folders, runs);
  // Only now is anything written: the folder and its lock.
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) throw InputError(fmt::format("cannot create {}: {}", out.string(), ec.message()));
  const FileLock lock = FileLock::acquire(out / "okfbench.lock", FileLock::Wait::no,
                                          "a run or merge is writing this folder; wait for it to finish");
  if (fs::exists(out / "manifest.json")) {
    folders.push_back(out);
    runs.push_back(reports::StoredRun{reports::read_manifest(out / "manifest.json"), {}});
  }
  check_same_spec(folders, runs);
  check_same_inputs(folders, runs);

  MergeResult result;
  result.folders = shards.size();
  ResultStore store = ResultStore::open(out);
  if (!fs::exists(out / "manifest.json")) {
    reports::RunManifest first = runs[0].manifest;
    std::vector<std::optional<reports::RunForecast>> forecasts;
    for (const auto& run : runs) forecasts.push_back(run.manifest.forecast);
    first.forecast = reports::merged_forecast(forecasts);
    write_atomically(out / "manifest.json", reports::manifest_to_json_text(first));
  }
  std::set<std::string> stored;
  for (const auto& r : store.records()) stored.insert(r.trial_key);
  const auto transcripts = reports::TranscriptWriter::open(out, stored);
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const fs::path file = shards[i] / reports::kTranscriptsFile;
    const reports::TranscriptSet shard_transcripts =
        fs::exists(file) && !same_folder(shards[i], out) ? reports::read_transcripts(file) : reports::TranscriptSet{};
    for (const reports::TrialRecord& record : runs[i].records) {
      ++result.read;
      // A record the merge adds brings its transcript, written first as the runner does.
      const bool is_new = !stored.count(record.trial_key);
      const reports::Transcript* t = is_new ? shard_transcripts.find(record.trial_key) : nullptr;
      if (t) transcripts->add(*t, prompts_of(*t, shard_transcripts));
      if (store.add(record))
        ++result.added;
      else
        ++result.already_stored;
      stored.insert(record.trial_key);
    }
  }
  const std::vector<reports::TrialRecord> records = store.records();
  result.total = records.size();
  const reports::RunManifest manifest = reports::read_manifest(out / "manifest.json");
  const auto pricing = reports::with_recorded_prices(engine::load_default_pricing(), manifest.prices);
  result.headline = write_run_reports(manifest, records, pricing, out);
  return result;
}

}  // namespace okfbench::engine
