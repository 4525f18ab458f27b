#include "engine/forecast.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <map>

#include "engine/run_pricing.hpp"
#include "engine/spec.hpp"
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
  const auto bad = test::run_command(fmt::format("'{}' run '{}' --json", test::okfbench_binary().string(), spec.string()));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("--json goes with --dry-run"));
}

}  // namespace
}  // namespace okfbench::engine
