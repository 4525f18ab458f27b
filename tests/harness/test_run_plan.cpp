// Planning: which path configurations a spec expands into.
#include "harness/run_plan.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "harness/spec.hpp"

namespace okfbench::harness {
namespace {

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

}  // namespace
}  // namespace okfbench::harness
