#include "engine/run_files.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include "agents/provider_models.hpp"
#include "engine/build_info.hpp"
#include "engine/run_common.hpp"
#include "engine/trial.hpp"
#include "reports/report_files.hpp"
#include "reports/summary.hpp"
#include "reports/verdict.hpp"
#include "core/files.hpp"
#include "core/digest.hpp"
#include "core/error.hpp"
#include "retrieval/tokens.hpp"

#ifndef OKFBENCH_BUILD_TYPE
#define OKFBENCH_BUILD_TYPE "unknown"
#endif

namespace okfbench::engine {
namespace {

namespace fs = std::filesystem;

// ---------------------------------------------------------------- inputs
std::string file_sha256(const fs::path& path) {
  return sha256_hex(read_file(path, fmt::format("cannot read {} to hash it", path.string())));
}

// The content hash of a bundle folder: SHA-256 over "path\0sha256\n" of every
// file the loader reads (hidden names skipped, symlinks not followed), in
// path order.
std::string folder_sha256(const fs::path& dir) {
  std::vector<std::pair<std::string, fs::path>> files;
  auto it = fs::recursive_directory_iterator(dir);
  for (auto end = fs::recursive_directory_iterator(); it != end; ++it) {
    const std::string name = it->path().filename().string();
    if (name.starts_with(".")) {
      if (it->is_directory()) it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file() && !it->is_symlink()) files.emplace_back(fs::relative(it->path(), dir).generic_string(), it->path());
  }
  std::sort(files.begin(), files.end());
  std::string listing;
  for (const auto& [relative, path] : files) listing += relative + '\0' + file_sha256(path) + '\n';
  return sha256_hex(listing);
}

// Inputs whose content differs from what the run started with. The pricing
// table is not one of them: prices are compared model by model.
std::vector<std::string> changed_inputs(const std::vector<reports::InputHash>& before, const std::vector<reports::InputHash>& now) {
  std::vector<std::string> out;
  for (const auto& old : before) {
    if (old.kind == "pricing") continue;
    for (const auto& fresh : now) {
      if (fresh.kind == old.kind && fresh.name == old.name && fresh.sha256 != old.sha256) {
        out.push_back(fmt::format("{} {} (sha256 {}... then, {}... now)", old.kind, old.name, old.sha256.substr(0, 12),
                                  fresh.sha256.substr(0, 12)));
      }
    }
  }
  return out;
}


}  // namespace

std::vector<reports::InputHash> input_hashes(const std::vector<LoadedBundle>& bundles, const fs::path& pricing_file) {
  std::vector<reports::InputHash> out;
  for (const auto& b : bundles) {
    for (std::size_t i = 0; i < b.part_dirs.size(); ++i)  // a combined entry: each of its bundles
      out.push_back({"bundle", b.source.name + "/" + b.source.parts[i].name, folder_sha256(b.part_dirs[i])});
    if (!b.combined()) out.push_back({"bundle", b.source.name, folder_sha256(b.dir)});
    out.push_back({"questions", b.source.name, file_sha256(b.questions_file)});
  }
  for (const auto& encoding : retrieval::encoding_specs()) {
    if (encoding.name == kCounter) out.push_back({"tokenizer", encoding.name, encoding.sha256});
  }
  out.push_back({"pricing", pricing_file.string(), file_sha256(pricing_file)});
  return out;
}

// ---------------------------------------------------------------- manifest
reports::RunManifest make_manifest(const ExperimentSpec& spec, const reports::PricingTable& pricing,
                                   std::vector<reports::InputHash> inputs) {
  reports::RunManifest m;
  m.date = utc_now("%Y-%m-%dT%H:%M:%SZ");
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  m.host = host;
  m.git_sha = build_git_sha();
  m.build_type = OKFBENCH_BUILD_TYPE;
  m.okfbench_version = build_version();
  m.spec_path = spec.file.string();
  m.spec_hash = spec.hash;
  m.baseline = spec.baseline;
  for (const auto& model : spec.models) {
    std::string endpoint;
    if (!model.replay.empty()) {
      endpoint = "replay:" + model.replay.string();
    } else if (model.calls_provider()) {
      endpoint = agents::recorded_base_url(provider_of(model), model.base_url);
    }
    m.models.push_back({model.label, endpoint});
    if (const reports::ModelPrice* price = pricing.find(model.label)) m.prices.push_back({model.label, *price});
  }
  if (spec.judge) {
    const bool listed = std::any_of(m.prices.begin(), m.prices.end(), [&](const auto& p) { return p.model == spec.judge->model; });
    const reports::ModelPrice* price = pricing.find(spec.judge->model);
    if (price && !listed) m.prices.push_back({spec.judge->model, *price});
  }
  m.cache_models = spec.cache_models;
  m.seeds.push_back(spec.seed);
  for (const auto& b : spec.bundles) {
    if (b.kind == BundleKind::generated && std::find(m.seeds.begin(), m.seeds.end(), b.seed) == m.seeds.end()) m.seeds.push_back(b.seed);
  }
  m.inputs = std::move(inputs);
  return m;
}


reports::RunManifest open_manifest(const reports::RunManifest& fresh, const fs::path& dir,
                                   const reports::PricingTable& pricing) {
  const fs::path path = dir / "manifest.json";
  if (!fs::exists(path)) {
    write_atomically(path, reports::manifest_to_json_text(fresh));
    return fresh;
  }
  reports::RunManifest existing = reports::read_manifest(path);
  if (existing.schema_version != reports::kSchemaVersion) {
    // Trial keys include the schema version: resuming would run every trial again beside the old records.
    throw InputError(fmt::format("{} holds a run written with record schema {} (this okfbench writes {}): "
                                 "`okfbench report` still reads it; pass a new --out folder to run again",
                                 dir.string(), existing.schema_version, reports::kSchemaVersion));
  }
  if (existing.spec_hash != fresh.spec_hash) {
    throw InputError(fmt::format("{} holds a run of another spec (hash {}, this one is {}): resume it with the same spec "
                                 "and --set values, or pass a new --out folder",
                                 dir.string(), existing.spec_hash, fresh.spec_hash));
  }
  const auto changed = changed_inputs(existing.inputs, fresh.inputs);
  if (!changed.empty()) {
    throw InputError(fmt::format("{} holds trials computed on other data: {} changed since the run started; pass a new "
                                 "--out folder (or restore the data) so old and new results do not mix",
                                 dir.string(), fmt::join(changed, ", ")));
  }
  if (existing.baseline != fresh.baseline) {
    // Not part of the spec hash (no trial depends on it): the reports follow the spec of this session.
    existing.baseline = fresh.baseline;
    write_atomically(path, reports::manifest_to_json_text(existing));
  }
  const auto repriced = reports::repriced_models(pricing, existing.prices);
  if (!repriced.empty()) {
    log_line(fmt::format("warning: the pricing table or the spec now prices {} differently; this run keeps the prices "
                         "recorded in {} when it started",
                         fmt::join(repriced, ", "), path.string()));
  }
  return existing;
}

fs::path default_out_dir(const std::string& name) {
  return user_cache_dir("runs", "the run folder", "--out DIR") / (name.empty() ? utc_now("%Y%m%dT%H%M%SZ") : name);
}

std::string write_run_reports(const reports::RunManifest& manifest, const std::vector<reports::TrialRecord>& records,
                              const reports::PricingTable& pricing, const fs::path& dir) {
  const std::array formats = {reports::ReportFormat::markdown, reports::ReportFormat::html, reports::ReportFormat::json};
  const std::optional<reports::TranscriptSet> transcripts = reports::read_run_transcripts(dir);
  reports::write_report_files(manifest, records, transcripts ? &*transcripts : nullptr, pricing, formats, dir);
  return reports::headline_with_verdict(records, reports::summarize(records, pricing, manifest.baseline), pricing);
}

}  // namespace okfbench::engine
