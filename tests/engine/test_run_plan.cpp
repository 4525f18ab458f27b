// Planning: which path configurations a spec expands into.
#include "engine/run_plan.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <sstream>

#include <fmt/format.h>

#include "engine/runner.hpp"
#include "engine/spec.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::engine {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;

TEST(RunPlan, ToolListsAreMappedToEverySurfaceOnceEach) {
  const ExperimentSpec spec = parse_spec(
      "bundles:\n  - generate: {concepts: 10}\npaths:\n  agent:\n    surface: [grafito, harnessx]\n"
      "    tools: [[search, open], [search_concepts, read_concept], [get_neighbors]]\n",
      "spec.yaml", "/specs");
  std::vector<std::string> labels;
  for (const reports::PathConfig& c : path_configs(spec)) labels.push_back(c.surface + ":" + fmt::format("{}", fmt::join(c.tools, "+")));
  // [search, open] and [search_concepts, read_concept] are one list on each surface.
  EXPECT_THAT(labels, ElementsAre("grafito:search+open", "grafito:follow", "harnessx:search_concepts+read_concept",
                                  "harnessx:get_neighbors"));
}

TEST(RunPlan, ToolBudgetsAreSweptAndNamedInTheLabel) {
  const ExperimentSpec spec = parse_spec(
      "bundles:\n  - generate: {concepts: 10}\npaths:\n  agent:\n    surface: harnessx\n"
      "    tools: [search_concepts, read_concept]\n    max_body_chars: [500, 8000]\n    index_char_budget: 100\n",
      "spec.yaml", "/specs");
  std::vector<std::string> labels;
  for (const reports::PathConfig& c : path_configs(spec)) labels.push_back(c.label());
  EXPECT_THAT(labels, ElementsAre("agent surface=harnessx tools=search_concepts+read_concept max_turns=12 "
                                  "max_body_chars=500 index_char_budget=100 model=sim cache=none",
                                  "agent surface=harnessx tools=search_concepts+read_concept max_turns=12 "
                                  "max_body_chars=8000 index_char_budget=100 model=sim cache=none"));
  // Unswept budgets stay out of the label (and the tools use their defaults).
  const ExperimentSpec plain = parse_spec(
      "bundles:\n  - generate: {concepts: 10}\npaths:\n  agent: {tools: [search, open]}\n", "spec.yaml", "/specs");
  EXPECT_EQ(path_configs(plain).at(0).label(), "agent surface=grafito tools=search+open max_turns=12 model=sim cache=none");
}

// Round-robin over (bundle, configuration): the first round holds one trial
// of every row, each row's trials keep question order, and the plan is the
// same every time (a resume and each shard plan the same order).
TEST(RunPlan, TrialsAreInterleavedAcrossBundlesAndConfigurations) {
  const fs::path dir = test::fresh_dir("run-plan-interleave");
  test::write_file(dir / "spec.yaml", fmt::format("cache_dir: {}\nrepeats: 2\nbundles:\n  - generate: {{concepts: 10, questions: 3}}\n"
                                                  "  - generate: {{concepts: 30, questions: 5}}\npaths:\n"
                                                  "  context: {{budget_tokens: [300, 1000]}}\n  agent: {{tools: [search, open]}}\n",
                                                  (dir / "cache").string()));
  const ExperimentSpec spec = load_spec(dir / "spec.yaml");
  RunOptions dry;
  dry.mode = Mode::dry_run;
  dry.progress = Progress::quiet;
  const std::vector<PlannedTrial> trials = run_experiment(spec, dry).trials;
  const std::size_t configs = path_configs(spec).size();
  ASSERT_EQ(configs, 3u);
  std::set<std::pair<std::string, std::string>> rows, first_round;
  for (const auto& t : trials) rows.insert({t.bundle_name, t.config.label()});
  for (std::size_t i = 0; i < 2 * configs; ++i) first_round.insert({trials[i].bundle_name, trials[i].config.label()});
  EXPECT_EQ(rows.size(), 6u);
  EXPECT_EQ(first_round, rows);
  EXPECT_EQ(trials.size(), (3u + 5u) * 2u * configs);
  // Within a row: the questions in order, then again for the second repeat.
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> order;
  for (const auto& t : trials) order[{t.bundle_name, t.config.label()}].push_back(t.question_id + "#" + std::to_string(t.config.repeat));
  const auto& small = order.begin()->second;
  ASSERT_EQ(small.size(), 6u);
  EXPECT_EQ(small[0].substr(small[0].size() - 2), "#0");
  EXPECT_EQ(small[3], small[0].substr(0, small[0].size() - 2) + "#1");
  std::vector<std::string> again;
  for (const auto& t : run_experiment(spec, dry).trials) again.push_back(t.key);
  std::vector<std::string> keys;
  for (const auto& t : trials) keys.push_back(t.key);
  EXPECT_EQ(again, keys);
}

// A run over the fixture bundle with two body budgets: the smaller one returns
// shorter read_concept results for the same calls.
TEST(RunPlan, TheBodyBudgetReachesTheTools) {
  const fs::path dir = test::fresh_dir("run-plan-budgets");
  test::write_file(dir / "spec.yaml",
                   "bundles:\n  - path: " + (test::source_dir() / "tests/data/kb/sales").string() + "\n"
                   "paths:\n  agent:\n    surface: harnessx\n    tools: [search_concepts, read_concept]\n"
                   "    max_body_chars: [20, 8000]\n");
  const test::CommandResult run = test::run_command(test::okfbench_binary().string() + " run " + (dir / "spec.yaml").string() +
                                                    " --out " + (dir / "out").string() + " --progress quiet");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::map<std::string, std::int64_t> read_bytes;  // by budget and question
  std::istringstream lines(test::read_file(dir / "out" / "results.jsonl"));
  for (std::string line; std::getline(lines, line);) {
    const nlohmann::json r = nlohmann::json::parse(line);
    const std::string key = std::to_string(r["config"]["max_body_chars"].get<int>()) + "/" + r["question_id"].get<std::string>();
    for (const auto& turn : r["turns"])
      for (const auto& call : turn["tool_calls"])
        if (call["name"] == "read_concept") read_bytes[key] += call["result_bytes"].get<std::int64_t>();
  }
  ASSERT_EQ(read_bytes.size(), 4u);
  for (const char* q : {"revenue", "margin"}) {
    EXPECT_GT(read_bytes["20/" + std::string(q)], 0);
    EXPECT_LT(read_bytes["20/" + std::string(q)], read_bytes["8000/" + std::string(q)]) << q;
  }
}

}  // namespace
}  // namespace okfbench::engine
