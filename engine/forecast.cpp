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
#include "core/json_text.hpp"
#include "engine/run_common.hpp"
#include "reports/format.hpp"

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


// An aligned text table: each column as wide as its widest cell (in code
// points), the columns `right` names right-aligned, the last one unpadded.
std::string aligned(const std::vector<std::vector<std::string>>& rows, const std::vector<bool>& right) {
  const auto width = [](const std::string& text) {
    return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) { return (c & 0xC0) != 0x80; }));
  };
  std::vector<std::size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()), 0);
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], width(row[i]));
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      const std::string pad(widths[i] - width(row[i]), ' ');
      const bool last = i + 1 == row.size();
      if (i > 0) line += "  ";
      line += i < right.size() && right[i] ? pad + row[i] : row[i] + (last ? "" : pad);
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + "\n";
  }
  return out;
}

std::string dollars(double usd) { return fmt::format("${:.6f}", json_dollars(usd)); }
std::string count(double n) { return reports::format_count(n); }

// "408,920" for an exact figure, "408,920 [400,101..417,774]" for an interval.
std::string span(const ForecastInterval& i, std::string (*format)(double)) {
  if (i.low == i.value && i.high == i.value) return format(i.value);
  return format(i.value) + " [" + format(i.low) + ".." + format(i.high) + "]";
}

std::vector<std::string> row_cells(const ForecastRow& r) {
  return {r.bundle,
          r.config,
          count(static_cast<double>(r.trials)),
          span(r.input_tokens, count),
          span(r.output_tokens, count),
          span(r.calls, count),
          r.usd ? span(*r.usd, dollars) : "n/a (no price)",
          r.basis};
}

std::string cap_sentence(const Forecast& f, const ExperimentSpec& spec) {
  if (!spec.cost_cap_usd) return {};
  if (!f.total.usd) return fmt::format("cost cap {}: the forecast has no price, so it is not checked against it\n", dollars(*spec.cost_cap_usd));
  if (!above_cost_cap(f, spec)) {
    return fmt::format("cost cap {}: the forecast {} is within it\n", dollars(*spec.cost_cap_usd), dollars(f.total.usd->value));
  }
  return fmt::format("cost cap {}: the forecast {} is above it; run refuses to start unless --allow-over-forecast (it "
                     "then runs until the cap stops it)\n",
                     dollars(*spec.cost_cap_usd), dollars(f.total.usd->value));
}

}  // namespace

PlanForecast forecast_plan(const ExperimentSpec& spec, const RunOptions& options) {
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
  PlanForecast out;
  for (const reports::TrialRecord& r : reports::read_run_dir(o.out_dir).records) {
    Group& g = groups[{r.bundle, r.config.label()}];
    g.row.bundle = r.bundle;
    g.row.config = r.config.label();
    g.row.basis = basis[r.config.model];
    g.exact = g.row.basis == "exact (sim)";
    g.trials.push_back(reports::trial_spend(r, pricing));
    out.trials[r.trial_key] = g.trials.back();
  }
  if (options.shard.count > 1) out.forecast.shard = fmt::format("{}/{}", options.shard.index, options.shard.count);
  std::vector<const Group*> all;
  for (auto& [key, g] : groups) {
    fill(g.row, {&g}, spec.seed);
    out.forecast.rows.push_back(g.row);
    all.push_back(&g);
  }
  out.forecast.total.config = "total";
  fill(out.forecast.total, all, spec.seed);
  return out;
}

Forecast forecast_run(const ExperimentSpec& spec, const RunOptions& options) { return forecast_plan(spec, options).forecast; }

bool above_cost_cap(const Forecast& forecast, const ExperimentSpec& spec) {
  return spec.cost_cap_usd && forecast.total.usd && forecast.total.usd->value > *spec.cost_cap_usd;
}

void check_forecast_cap(const Forecast& forecast, const ExperimentSpec& spec, bool allow_over_forecast) {
  if (!above_cost_cap(forecast, spec)) return;
  const std::string message = fmt::format(
      "the forecast spend {} (80% interval {}..{}) is above the cost cap {} (cost_cap_usd), so the run would stop "
      "part-way",
      dollars(forecast.total.usd->value), dollars(forecast.total.usd->low), dollars(forecast.total.usd->high),
      dollars(*spec.cost_cap_usd));
  if (allow_over_forecast) {
    log_line(message + "; --allow-over-forecast: running until the cap stops it");
    return;
  }
  throw UsageError(message + "; raise the cap (--set cost_cap_usd=N), run fewer trials (--set max_questions=N), or pass "
                             "--allow-over-forecast to run until the cap stops it (okfbench run --dry-run shows the forecast)");
}

std::string dry_run_text(const std::vector<PlannedTrial>& trials, const PlanForecast* forecast, const ExperimentSpec& spec) {
  std::vector<std::vector<std::string>> list{{"trial key", "bundle", "question", "input tokens", "configuration"}};
  for (const auto& t : trials) {
    std::string tokens = "-";
    if (forecast) {
      const auto it = forecast->trials.find(t.key);
      if (it != forecast->trials.end()) tokens = count(it->second.input_tokens);
    }
    list.push_back({t.key, t.bundle_name, t.question_id, tokens, t.config.label()});
  }
  std::string out = aligned(list, {false, false, false, true, false});
  if (!forecast) return out + fmt::format("{} trials (no forecast: --no-forecast)\n", trials.size());
  const Forecast& f = forecast->forecast;
  out += fmt::format("{} trials, {} input tokens forecast in all (the total row below)\n", trials.size(),
                     count(f.total.input_tokens.value));
  out += "\nforecast, each with its 80% interval (engine/README.md, \"Forecast\"):\n";
  std::vector<std::vector<std::string>> table{
      {"bundle", "configuration", "trials", "input tokens", "output tokens", "model calls", "dollars", "from"}};
  for (const auto& r : f.rows) table.push_back(row_cells(r));
  table.push_back(row_cells(f.total));
  out += aligned(table, {false, false, true, true, true, true, true, false});
  return out + cap_sentence(f, spec);
}

nlohmann::json dry_run_json(const Forecast& forecast, const ExperimentSpec& spec) {
  nlohmann::json out = forecast;
  if (spec.cost_cap_usd) {
    out["cost_cap_usd"] = json_dollars(*spec.cost_cap_usd);
    out["over_cost_cap"] = above_cost_cap(forecast, spec);
  }
  return out;
}

}  // namespace okfbench::engine
