#include "engine/forecast.hpp"

#include <fmt/format.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <utility>

#include "engine/run_pricing.hpp"
#include "reports/forecast.hpp"
#include "reports/pricing.hpp"
#include "reports/record.hpp"
#include "core/error.hpp"

namespace okfbench::engine {
namespace {
namespace fs = std::filesystem;

constexpr int kResamples = 1000;
constexpr double kLow = 0.1, kHigh = 0.9;  // the 80% interval

// The spec with every model answered by sim; `basis` gets each label's.
ExperimentSpec offline_spec(const ExperimentSpec& spec, std::map<std::string, std::string>& basis) {
  ExperimentSpec s = spec;
  s.requests_per_minute = 0;
  s.tokens_per_minute = 0;
  s.cost_cap_usd.reset();
  s.judge.reset();  // the judge's spend is not the path's
  std::erase(s.graders, "judge");
  for (ModelSpec& m : s.models) {
    if (m.is_sim()) {
      basis[m.label] = "exact (sim)";
      continue;
    }
    auto profile = spec.forecast_profiles.find(m.label);
    if (profile == spec.forecast_profiles.end()) profile = spec.forecast_profiles.find(m.name);
    ModelSpec f = ModelSpec::named("sim");
    f.label = m.label;
    f.price = m.price;
    // OpenAI caches long prefixes without being asked; other providers are forecast uncached.
    f.stand_in_cache = m.name.starts_with("openai:") ? "openai" : "none";
    if (profile != spec.forecast_profiles.end()) {
      f.name = "sim:" + profile->second.string();
      f.sim_profile = profile->second;
      basis[m.label] = "profile " + profile->second.string();
    } else {
      basis[m.label] = "default profile (no forecast: entry)";
    }
    m = std::move(f);
  }
  return s;
}

struct Group {
  ForecastRow row;
  std::vector<reports::Spend> trials;
  bool exact = false;
};

// One bootstrap draw of a group's total (every field at once).
reports::Spend resample(const Group& g, std::mt19937_64& rng) {
  reports::Spend sum;
  std::uniform_int_distribution<std::size_t> pick(0, g.trials.size() - 1);
  for (std::size_t i = 0; i < g.trials.size(); ++i) {
    const reports::Spend& t = g.exact ? g.trials[i] : g.trials[pick(rng)];
    sum.add(t);
  }
  return sum;
}

ForecastInterval interval(double value, std::vector<double> draws) {
  if (draws.empty()) return {value, value, value};
  std::sort(draws.begin(), draws.end());
  const auto at = [&](double q) { return draws[static_cast<std::size_t>(std::lround(q * static_cast<double>(draws.size() - 1)))]; };
  return {value, std::min(value, at(kLow)), std::max(value, at(kHigh))};
}

// Fills `row`'s intervals from resamples of `groups` (the total: all of them).
void fill(ForecastRow& row, const std::vector<const Group*>& groups, std::uint64_t seed) {
  reports::Spend point;
  for (const Group* g : groups) {
    for (const reports::Spend& t : g->trials) {
      point.add(t);
    }
    row.trials += g->trials.size();
  }
  std::mt19937_64 rng(seed);
  std::vector<double> input, output, calls, usd;
  for (int i = 0; i < kResamples; ++i) {
    reports::Spend draw;
    for (const Group* g : groups) {
      const reports::Spend s = resample(*g, rng);
      draw.add(s);
    }
    input.push_back(draw.input_tokens), output.push_back(draw.output_tokens), calls.push_back(draw.calls);
    if (draw.usd) usd.push_back(*draw.usd);
  }
  row.input_tokens = interval(point.input_tokens, input);
  row.output_tokens = interval(point.output_tokens, output);
  row.calls = interval(point.calls, calls);
  if (point.usd) row.usd = interval(*point.usd, usd);
}

// A temporary folder removed when it goes out of scope.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "okfbench-forecast-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw InputError(fmt::format("cannot create a temporary folder {} for the forecast", pattern));
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

}  // namespace

Forecast forecast_run(const ExperimentSpec& spec, const RunOptions& options) {
  std::map<std::string, std::string> basis;
  const ExperimentSpec offline = offline_spec(spec, basis);
  const TempDir dir;
  RunOptions o;
  o.out_dir = dir.path() / "run";
  o.shard = options.shard;
  o.git = options.git;
  o.index_cache = options.index_cache;
  o.forecast = false;
  o.progress = Progress::quiet;
  o.transcripts = TranscriptMode::none;
  run_experiment(offline, o);
  const reports::PricingTable pricing = run_pricing(spec);
  std::map<std::pair<std::string, std::string>, Group> groups;
  for (const reports::TrialRecord& r : reports::read_run_dir(o.out_dir).records) {
    Group& g = groups[{r.bundle, r.config.label()}];
    g.row.bundle = r.bundle;
    g.row.config = r.config.label();
    g.row.basis = basis[r.config.model];
    g.exact = g.row.basis == "exact (sim)";
    g.trials.push_back(reports::trial_spend(r, pricing));
  }
  Forecast out;
  if (options.shard.count > 1) out.shard = fmt::format("{}/{}", options.shard.index, options.shard.count);
  std::vector<const Group*> all;
  for (auto& [key, g] : groups) {
    fill(g.row, {&g}, spec.seed);
    out.rows.push_back(g.row);
    all.push_back(&g);
  }
  out.total.config = "total";
  fill(out.total, all, spec.seed);
  return out;
}

}  // namespace okfbench::engine
