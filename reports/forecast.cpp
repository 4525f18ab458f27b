#include "reports/forecast.hpp"

#include <fmt/format.h>

#include <map>
#include <set>
#include <utility>

#include "reports/format.hpp"

namespace okfbench::reports {

namespace {

using Key = std::pair<std::string, std::string>;  // bundle, configuration label

std::optional<double> error_of(double forecast, double actual, const ForecastCheck& c) {
  if (c.actual.trials != c.forecast.trials || actual <= 0) return std::nullopt;
  return forecast / actual - 1;
}

std::string span(const ForecastInterval& i, bool dollars) {
  const auto f = [dollars](double x) { return dollars ? format_dollars(x) : format_count(x); };
  return fmt::format("{} [{}..{}]", f(i.value), f(i.low), f(i.high));
}

std::string signed_share(std::optional<double> share) {
  return share ? fmt::format("{:+.1f}%", 100 * *share) : "n/a";
}

void add_interval(ForecastInterval& sum, const ForecastInterval& x) {
  sum.value += x.value, sum.low += x.low, sum.high += x.high;
}

void add_row(ForecastRow& sum, const ForecastRow& x) {
  sum.trials += x.trials;
  add_interval(sum.input_tokens, x.input_tokens);
  add_interval(sum.output_tokens, x.output_tokens);
  add_interval(sum.calls, x.calls);
  if (sum.usd && x.usd) {
    add_interval(*sum.usd, *x.usd);
  } else {
    sum.usd.reset();
  }
}

}  // namespace

void Spend::add(const Spend& other) {
  input_tokens += other.input_tokens;
  output_tokens += other.output_tokens;
  calls += other.calls;
  usd = usd && other.usd ? std::optional(*usd + *other.usd) : std::nullopt;
  trials += other.trials;
}

Spend trial_spend(const TrialRecord& record, const PricingTable& pricing) {
  Spend s;
  for (const auto& turn : record.turns) {
    s.input_tokens += static_cast<double>(turn.input_tokens.value_or(0));
    s.output_tokens += static_cast<double>(turn.output_tokens.value_or(0));
  }
  s.calls = static_cast<double>(record.turns.size());
  s.usd = trial_cost(record, pricing).dollars;
  s.trials = 1;
  return s;
}

std::optional<double> ForecastCheck::input_error() const {
  return error_of(forecast.input_tokens.value, actual.input_tokens, *this);
}

std::optional<double> ForecastCheck::usd_error() const {
  if (!forecast.usd || !actual.usd) return std::nullopt;
  return error_of(forecast.usd->value, *actual.usd, *this);
}

bool ForecastCheck::input_within_interval() const {
  return forecast.input_tokens.low <= actual.input_tokens && actual.input_tokens <= forecast.input_tokens.high;
}

std::vector<ForecastCheck> check_forecast(const RunManifest& manifest, const std::vector<TrialRecord>& records,
                                          const PricingTable& pricing) {
  if (!manifest.forecast) return {};
  std::map<Key, Spend> actual;
  Spend total;
  for (const auto& r : records) {
    const Spend s = trial_spend(r, pricing);
    actual[{r.bundle, r.config.label()}].add(s);
    total.add(s);
  }
  std::vector<ForecastCheck> out;
  for (const ForecastRow& row : manifest.forecast->rows) {
    const auto it = actual.find({row.bundle, row.config});
    out.push_back({row, it == actual.end() ? Spend{} : it->second});
  }
  out.push_back({manifest.forecast->total, total});
  return out;
}

const std::vector<std::string>& forecast_columns() {
  static const std::vector<std::string> columns = {
      "bundle",        "configuration", "forecast from",    "trials stored / forecast", "input tokens forecast [80%]",
      "input actual",  "input error",   "in interval",      "output tokens forecast",  "output actual",
      "calls forecast", "calls actual", "dollars forecast", "dollars actual",          "dollars error"};
  return columns;
}

std::vector<std::string> forecast_cells(const ForecastCheck& c) {
  const ForecastRow& f = c.forecast;
  return {f.bundle,
          f.config,
          f.basis,
          fmt::format("{} / {}", c.actual.trials, f.trials),
          span(f.input_tokens, false),
          format_count(c.actual.input_tokens),
          signed_share(c.input_error()),
          c.input_within_interval() ? "yes" : "no",
          format_count(f.output_tokens.value),
          format_count(c.actual.output_tokens),
          format_count(f.calls.value),
          format_count(c.actual.calls),
          f.usd ? span(*f.usd, true) : "n/a (no price)",
          c.actual.usd ? format_dollars(*c.actual.usd) : "n/a (no price)",
          signed_share(c.usd_error())};
}

std::string forecast_markdown(const std::vector<ForecastCheck>& checks) {
  if (checks.empty()) return "";
  std::string out =
      "## Forecast against actual\n\n"
      "The forecast made when the run started (the plan run offline with sim: exact for sim, from a profile for "
      "other models) against what the stored trials spent; error = forecast / actual - 1, shown when every "
      "forecast trial is stored.\n\n|";
  for (const auto& c : forecast_columns()) out += " " + c + " |";
  out += "\n|";
  for (std::size_t i = 0; i < forecast_columns().size(); ++i) out += i < 3 ? "---|" : "--:|";
  out += "\n";
  for (const auto& c : checks) {
    out += "|";
    {
      std::vector<std::string> cells = forecast_cells(c);
      for (std::size_t i = 0; i < cells.size(); ++i) out += fmt::format(" {} |", i < 3 ? markdown_text(cells[i]) : cells[i]);  // names, then numbers
    }
    out += "\n";
  }
  return out + "\n";
}

std::string forecast_compare_line(const std::vector<ForecastCheck>& base, const std::vector<ForecastCheck>& candidate) {
  const auto side = [](const char* name, const std::vector<ForecastCheck>& checks) -> std::string {
    if (checks.empty()) return "";
    const ForecastCheck& total = checks.back();
    return fmt::format("{} input {} forecast, {} actual ({}), dollars {}", name, format_count(total.forecast.input_tokens.value),
                       format_count(total.actual.input_tokens), signed_share(total.input_error()),
                       signed_share(total.usd_error()));
  };
  std::vector<std::string> parts;
  for (auto part : {side("base", base), side("candidate", candidate)})
    if (!part.empty()) parts.push_back(part);
  if (parts.empty()) return "";
  return "Forecast against actual (total; error = forecast / actual - 1): " + parts.front() +
         (parts.size() > 1 ? "; " + parts.back() : "") + "\n\n";
}

std::optional<RunForecast> merged_forecast(const std::vector<std::optional<RunForecast>>& shards) {
  RunForecast out;
  out.total.config = "total";
  out.total.usd = ForecastInterval{};
  std::map<Key, ForecastRow> rows;
  std::set<std::string> seen;
  for (const auto& f : shards) {
    if (!f) return std::nullopt;
    if (!seen.insert(f->shard).second) continue;  // the same shard twice counts once
    for (const ForecastRow& r : f->rows) {
      auto [it, fresh] = rows.try_emplace({r.bundle, r.config}, r);
      if (!fresh) add_row(it->second, r);
    }
    add_row(out.total, f->total);
  }
  if (seen.empty()) return std::nullopt;
  for (auto& [key, row] : rows) out.rows.push_back(std::move(row));
  return out;
}

}  // namespace okfbench::reports
