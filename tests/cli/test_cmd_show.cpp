// `okfbench show` end to end (the built program) over a small sim run:
// golden text and JSON for one trial, selection by key prefix or by
// question and configuration, and errors that say what to do.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <vector>

#include "engine/runner.hpp"
#include "engine/spec.hpp"
#include "reports/record.hpp"
#include "reports/transcript.hpp"
#include "tests/engine/run_fixture.hpp"
#include "tests/reports/fixtures.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::engine {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// One sim run shared by the tests: 2 questions x 4 configurations.
const fs::path& run_dir() {
  static const fs::path dir = [] {
    const fs::path d = test::fresh_dir("show-run");
    run_experiment(load_spec(write_spec(d, 30, 2)), quiet(d / "out"));
    return d / "out";
  }();
  return dir;
}

// The run's records by key: results.jsonl is in the order trials finished,
// which two workers do not fix.
std::vector<reports::TrialRecord> sorted_records() {
  auto records = reports::read_run_dir(run_dir()).records;
  std::sort(records.begin(), records.end(), [](const auto& a, const auto& b) { return a.trial_key < b.trial_key; });
  return records;
}

test::CommandResult show(const std::string& args) {
  return test::run_command(fmt::format("COLUMNS=100 '{}' show '{}' {}", test::okfbench_binary().string(), run_dir().string(), args));
}

// The JSON without what depends on the clock.
void drop_times(nlohmann::json& j) {
  if (j.is_object()) {
    j.erase("ms");
    j.erase("timings");
    for (auto& [key, value] : j.items()) drop_times(value);
  } else if (j.is_array()) {
    for (auto& value : j) drop_times(value);
  }
}

TEST(ShowCommand, AnAgentTrialIsGolden) {
  const test::CommandResult r = show("--question q001 --config 'tools=search+open '");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  reports::fixtures::expect_golden("show.txt", r.out);
  EXPECT_THAT(r.out, HasSubstr("turn 2:"));
  EXPECT_THAT(r.out, HasSubstr("new:tool:search"));
  EXPECT_THAT(r.out, HasSubstr("-> open("));
}

TEST(ShowCommand, JsonIsGoldenAndFullPrintsResultsWhole) {
  const auto records = sorted_records();
  const reports::TrialRecord* context = nullptr;
  for (const auto& rec : records) {
    if (rec.config.kind == reports::PathKind::context && !context) context = &rec;
  }
  ASSERT_NE(context, nullptr);
  const test::CommandResult r = show(context->trial_key.substr(0, 10) + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["record"]["trial_key"], context->trial_key);
  ASSERT_EQ(j["turns"].size(), 1u);
  std::int64_t parts = 0;
  for (const auto& p : j["turns"][0]["attribution"]) parts += p["tokens"].get<std::int64_t>();
  EXPECT_EQ(parts, j["turns"][0]["input_tokens"].get<std::int64_t>());
  drop_times(j);
  reports::fixtures::expect_golden("show.json", j.dump(2) + "\n");

  const auto agent = std::find_if(records.begin(), records.end(), [](const auto& rec) { return rec.turns.size() > 2; });
  ASSERT_NE(agent, records.end());
  const test::CommandResult cut = show(agent->trial_key);
  const test::CommandResult full = show(agent->trial_key + " --full");
  ASSERT_EQ(full.exit_code, 0) << full.err;
  EXPECT_THAT(cut.out, HasSubstr(" bytes]"));
  EXPECT_GT(full.out.size(), cut.out.size() + 1000);
  const auto transcripts = reports::read_transcripts(run_dir() / reports::kTranscriptsFile);
  const std::string& result = transcripts.find(agent->trial_key)->turns[1].added[0].content;
  EXPECT_THAT(full.out, HasSubstr(result.substr(0, 60)));
}

TEST(ShowCommand, AmbiguousOrUnknownSelectionsSayWhatToDo) {
  const auto records = sorted_records();
  const test::CommandResult several = show("--question " + records.front().question_id);
  EXPECT_EQ(several.exit_code, 2);
  EXPECT_THAT(several.err, HasSubstr("names 4 trials"));
  EXPECT_THAT(several.err, HasSubstr(records.front().trial_key));
  const test::CommandResult none = show("--question no-such-question");
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_THAT(none.err, HasSubstr("no trial with question no-such-question"));
  EXPECT_EQ(show("").exit_code, 2);
  EXPECT_EQ(show(records.front().trial_key + " --question x").exit_code, 2);
  const test::CommandResult missing =
      test::run_command(fmt::format("'{}' show /nonexistent/run abc", test::okfbench_binary().string()));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.err, HasSubstr("/nonexistent/run"));
}

}  // namespace
}  // namespace okfbench::engine
