#include "engine/forecast.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <map>
#include <sstream>

#include "engine/run_pricing.hpp"
#include "engine/spec.hpp"
#include "reports/format.hpp"
#include "reports/pricing.hpp"
#include "reports/record.hpp"
#include "core/error.hpp"
#include "tests/engine/run_fixture.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::engine {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;

// Input tokens per configuration label of a finished run.
std::map<std::string, double> input_by_config(const fs::path& run_dir) {
  std::map<std::string, double> out;
  for (const auto& r : reports::read_run_dir(run_dir).records)
    for (const auto& t : r.turns) out[r.config.label()] += static_cast<double>(t.input_tokens.value_or(0));
  return out;
}

TEST(Forecast, ForSimItIsExactlyWhatTheRunSpends) {
  const fs::path dir = test::fresh_dir("forecast-sim");
  const ExperimentSpec spec = load_spec(write_spec(dir, 30, 3));
  const Forecast f = forecast_run(spec, quiet(dir / "unused"));
  EXPECT_FALSE(fs::exists(dir / "unused"));  // a forecast writes no run folder
  const RunResult run = run_experiment(spec, quiet(dir / "out"));
  const auto actual = input_by_config(dir / "out");
  ASSERT_EQ(f.rows.size(), actual.size());
  double total = 0;
  for (const ForecastRow& r : f.rows) {
    EXPECT_EQ(r.basis, "exact (sim)");
    EXPECT_EQ(r.input_tokens.value, actual.at(r.config)) << r.config;
    EXPECT_EQ(r.input_tokens.low, r.input_tokens.value);
    EXPECT_EQ(r.input_tokens.high, r.input_tokens.value);
    total += r.input_tokens.value;
  }
  EXPECT_EQ(f.total.input_tokens.value, total);
  EXPECT_EQ(f.total.trials, run.planned);
  ASSERT_TRUE(f.total.usd);
  EXPECT_NEAR(f.total.usd->value, run.spent_usd, 1e-9);
}

TEST(Forecast, AProviderModelIsForecastFromItsProfileWithAnInterval) {
  const fs::path dir = test::fresh_dir("forecast-profile");
  test::write_file(dir / "p.yaml", "searches: {1: 1, 3: 1}\nopens_per_search: {1: 1, 2: 1}\nparallel_opens: 0\n");
  const std::string model = "{name: openai:gpt-4o-mini, base_url: 'http://127.0.0.1:9/v1', price: {input_per_mtok: 1, output_per_mtok: 2}}";
  const ExperimentSpec spec = load_spec(write_spec(dir, 30, 6, "forecast: {openai:gpt-4o-mini: p.yaml}\n"),
                                        {"models=[" + model + "]", "paths.agent.max_turns=30"});
  const Forecast f = forecast_run(spec, quiet(dir / "unused"));
  // The same plan with sim:p.yaml spends what the forecast says, configuration by configuration.
  const ExperimentSpec sim = load_spec(write_spec(dir, 30, 6), {"models=[sim:p.yaml]", "paths.agent.max_turns=30"});
  run_experiment(sim, quiet(dir / "sim"));
  std::map<std::string, double> expected;
  for (const auto& [label, input] : input_by_config(dir / "sim")) {
    std::string l = label;
    l.replace(l.find("model=sim:p.yaml cache=openai"), 29, "model=openai:gpt-4o-mini cache=provider");  // as the run labels it
    expected[l] = input;
  }
  ASSERT_EQ(f.rows.size(), expected.size());
  bool some_spread = false;
  for (const ForecastRow& r : f.rows) {
    EXPECT_THAT(r.basis, HasSubstr("profile ")) << r.config;
    EXPECT_THAT(r.basis, HasSubstr("p.yaml"));
    EXPECT_EQ(r.input_tokens.value, expected.at(r.config)) << r.config;
    EXPECT_LE(r.input_tokens.low, r.input_tokens.value);
    EXPECT_GE(r.input_tokens.high, r.input_tokens.value);
    some_spread = some_spread || r.input_tokens.high > r.input_tokens.low;
    ASSERT_TRUE(r.usd);  // priced by the spec's own price for the model
    EXPECT_NEAR(r.usd->value, (r.input_tokens.value * 1 + r.output_tokens.value * 2) / 1e6, 1e-9);
  }
  EXPECT_TRUE(some_spread) << "questions differ, so resampling them moves the total";
  EXPECT_LT(f.total.input_tokens.low, f.total.input_tokens.value);
  EXPECT_GT(f.total.input_tokens.high, f.total.input_tokens.value);
  // Without a forecast: entry the default profile answers, and the row says so.
  const ExperimentSpec plain = load_spec(write_spec(dir, 30, 6), {"models=[" + model + "]"});
  EXPECT_EQ(forecast_run(plain, quiet(dir / "unused")).rows.front().basis, "default profile (no forecast: entry)");
}

TEST(Forecast, TheSpecKeyNamesAModelOfTheSpecAndAProfileFile) {
  const fs::path dir = test::fresh_dir("forecast-spec");
  test::write_file(dir / "p.yaml", "");
  try {
    load_spec(write_spec(dir, 10, 1, "forecast: {openai:other: p.yaml}\n"));
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("forecast.openai:other: no model of models: is named or labelled \"openai:other\""));
  }
  try {
    load_spec(write_spec(dir, 10, 1, "forecast: {sim: missing.yaml}\n"));
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("is not a file; fit one with okfbench calibrate"));
  }
  // The forecast does not change what a trial computes, so not the spec hash either.
  EXPECT_EQ(load_spec(write_spec(dir, 10, 1, "forecast: {sim: p.yaml}\n")).hash, load_spec(write_spec(dir, 10, 1)).hash);
}

TEST(Forecast, DryRunJsonHasATotalWithIntervals) {
  const fs::path dir = test::fresh_dir("forecast-cli");
  const fs::path spec = write_spec(dir, 20, 2);
  const auto r = test::run_command(fmt::format("'{}' run '{}' --dry-run --json", test::okfbench_binary().string(), spec.string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  for (const char* key : {"input_tokens", "output_tokens", "calls", "usd"}) {
    ASSERT_TRUE(j["total"][key].is_object()) << key;
    EXPECT_LE(j["total"][key]["low"].get<double>(), j["total"][key]["value"].get<double>());
    EXPECT_GE(j["total"][key]["high"].get<double>(), j["total"][key]["value"].get<double>());
  }
  EXPECT_GT(j["total"]["calls"]["value"].get<double>(), 0);
  EXPECT_EQ(j["total"]["trials"], 8);  // 2 questions x 4 configurations
  EXPECT_EQ(j["configurations"].size(), 4u);
  const auto text = test::run_command(fmt::format("'{}' run '{}' --dry-run", test::okfbench_binary().string(), spec.string()));
  EXPECT_THAT(text.out, HasSubstr("forecast, each with its 80% interval"));
  const auto listed = test::run_command(fmt::format("'{}' run '{}' --dry-run --no-forecast", test::okfbench_binary().string(), spec.string()));
  EXPECT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_THAT(listed.out, HasSubstr("8 trials (no forecast: --no-forecast)"));
  EXPECT_EQ(listed.out.find("forecast, each"), std::string::npos);
  const auto both = test::run_command(fmt::format("'{}' run '{}' --dry-run --json --no-forecast", test::okfbench_binary().string(), spec.string()));
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_THAT(both.err, HasSubstr("--json prints the forecast; drop --no-forecast"));
  const auto bad = test::run_command(fmt::format("'{}' run '{}' --json", test::okfbench_binary().string(), spec.string()));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("--json goes with --dry-run"));
}

// A forecast whose labels differ in length and whose dollars are a sum that
// does not print short as a double.
PlanForecast sample_forecast() {
  PlanForecast f;
  ForecastRow a{"gen-10", "context budget=2000", "exact (sim)", 8, {1867, 1867, 1867}, {300, 300, 300}, {8, 8, 8},
                ForecastInterval{0.23971999999999996, 0.23971999999999996, 0.23971999999999996}};
  ForecastRow b{"a-much-longer-bundle-name", "agent surface=grafito tools=search+open max_turns=12 model=sim cache=openai",
                "default profile (no forecast: entry)", 120, {408920, 400101, 417774.00000000006}, {25, 20, 30}, {3, 3, 3},
                ForecastInterval{0.001, 0.0009, 0.0011}};
  f.forecast.rows = {a, b};
  f.forecast.total = {"", "total", "", 128, {410787, 401968, 419641}, {325, 320, 330}, {11, 11, 11},
                      ForecastInterval{0.24072, 0.24062, 0.24082}};
  return f;
}

TEST(Forecast, DryRunTableColumnsLineUpAndDollarsAreDollars) {
  const PlanForecast f = sample_forecast();
  ExperimentSpec spec;
  const std::string text = dry_run_text({}, &f, spec);
  std::istringstream in(text.substr(text.find("\nbundle") + 1));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line) && !line.empty();) lines.push_back(line);
  ASSERT_EQ(lines.size(), 4u) << text;  // the header, two rows and the total
  // Every row's basis starts under "from", and the right-aligned dollars end where "dollars" ends.
  const std::size_t from = lines[0].find("from");
  const std::size_t dollars_end = lines[0].find("dollars") + std::string("dollars").size();
  const std::vector<std::string> basis = {"exact (sim)", "default profile (no forecast: entry)", ""};
  for (std::size_t i = 1; i < lines.size(); ++i) {
    if (!basis[i - 1].empty()) {
      EXPECT_EQ(lines[i].find(basis[i - 1]), from) << lines[i];
    }
    EXPECT_EQ(lines[i].substr(0, dollars_end).find_last_not_of(' '), dollars_end - 1) << lines[i];
  }
  EXPECT_THAT(lines[1], HasSubstr("$0.239720"));
  EXPECT_THAT(lines[2], HasSubstr("408,920 [400,101..417,774]"));
  EXPECT_THAT(lines[2], HasSubstr("$0.001000 [$0.000900..$0.001100]"));
  EXPECT_THAT(text, HasSubstr("410,787 input tokens forecast in all"));
}

TEST(Forecast, JsonNumbersAreRoundedToWhatTheyMean) {
  const PlanForecast f = sample_forecast();
  ExperimentSpec spec;
  spec.cost_cap_usd = 0.1 + 0.2;  // 0.30000000000000004 as a double
  const std::string text = dry_run_json(f.forecast, spec).dump();
  EXPECT_THAT(text, HasSubstr("\"value\":0.23972"));
  EXPECT_EQ(text.find("0.23971999"), std::string::npos) << text;
  EXPECT_THAT(text, HasSubstr("\"high\":417774,"));  // a count, not 417774.00000000006
  EXPECT_THAT(text, HasSubstr("\"cost_cap_usd\":0.3,"));
  EXPECT_THAT(text, HasSubstr("\"over_cost_cap\":false"));
  // The manifest writes the same figures the same way, and reads them back.
  const nlohmann::json manifest = f.forecast;
  EXPECT_EQ(manifest["total"]["input_tokens"]["value"], 410787);
  EXPECT_TRUE(manifest["total"]["input_tokens"]["value"].is_number_integer());
  EXPECT_EQ(manifest.get<Forecast>().rows.at(0).usd->value, 0.23972);
}

TEST(Forecast, AboveTheCapIsRefusedWithTheFiguresAndTheFlag) {
  const PlanForecast f = sample_forecast();
  ExperimentSpec spec;
  spec.cost_cap_usd = 0.05;
  EXPECT_TRUE(above_cost_cap(f.forecast, spec));
  try {
    check_forecast_cap(f.forecast, spec, false);
    ADD_FAILURE() << "no error";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("$0.240720"));
    EXPECT_THAT(e.what(), HasSubstr("cost cap $0.050000"));
    EXPECT_THAT(e.what(), HasSubstr("--allow-over-forecast"));
  }
  EXPECT_NO_THROW(check_forecast_cap(f.forecast, spec, true));
  EXPECT_THAT(dry_run_text({}, &f, spec), HasSubstr("is above it; run refuses to start unless --allow-over-forecast"));
  spec.cost_cap_usd = 1;
  EXPECT_FALSE(above_cost_cap(f.forecast, spec));
  EXPECT_NO_THROW(check_forecast_cap(f.forecast, spec, false));
}

// The trial list and the table come from the one sim run: the per-trial
// figures sum to the total (the old list's estimate did not, and ignored k).
TEST(Forecast, TheTrialListAgreesWithTheForecastTotal) {
  const fs::path dir = test::fresh_dir("forecast-list");
  for (const char* k : {"paths.context.k=1", "paths.context.k=5"}) {
    const ExperimentSpec spec = load_spec(write_spec(dir, 30, 3), {k});
    RunOptions dry = quiet(dir / "out");
    dry.mode = Mode::dry_run;
    const RunResult planned = run_experiment(spec, dry);
    const PlanForecast f = forecast_plan(spec, dry);
    double listed = 0;
    for (const auto& t : planned.trials) {
      ASSERT_TRUE(f.trials.count(t.key)) << t.key;
      listed += f.trials.at(t.key).input_tokens;
    }
    EXPECT_EQ(listed, f.forecast.total.input_tokens.value) << k;
    const std::string text = dry_run_text(planned.trials, &f, spec);
    EXPECT_THAT(text, HasSubstr(fmt::format("{} trials, {} input tokens forecast in all", planned.trials.size(),
                                            reports::format_count(listed))));
    EXPECT_EQ(text.find("about"), std::string::npos);
  }
}

}  // namespace
}  // namespace okfbench::engine
