#include "reports/config_names.hpp"

#include <gtest/gtest.h>

namespace okfbench::reports {
namespace {

PathConfig context(std::int64_t budget, int k) {
  PathConfig c;
  c.kind = PathKind::context;
  c.budget_tokens = budget;
  c.k = k;
  c.hops = 1;
  c.strategy = "grafito";
  c.model = "sim";
  c.cache_model = "openai";
  return c;
}

PathConfig agent(std::vector<std::string> tools, std::string model = "sim") {
  PathConfig c;
  c.kind = PathKind::agent;
  c.surface = "grafito";
  c.tools = std::move(tools);
  c.max_turns = 12;
  c.model = std::move(model);
  c.cache_model = "openai";
  return c;
}

const std::vector<std::string> kSixTools = {"browse", "search", "open", "follow", "history", "remember"};

TEST(ConfigNames, DefaultExperimentNamesOnlyWhatDiffers) {
  std::vector<PathConfig> configs = {context(2000, 5), agent(kSixTools), agent({"search", "open"})};
  auto names = short_config_names(configs);
  ASSERT_EQ(names.size(), 3u);
  EXPECT_EQ(names[configs[0].label()], "one-shot");
  EXPECT_EQ(names[configs[1].label()], "agent 6 tools");
  EXPECT_EQ(names[configs[2].label()], "agent search+open");
}

TEST(ConfigNames, SweptSettingsAppearAsKeyValue) {
  std::vector<PathConfig> configs = {context(2000, 3), context(4000, 3), context(2000, 5), agent({"search", "open"}, "sim"),
                                     agent({"search", "open"}, "gpt-4.1-mini")};
  auto names = short_config_names(configs);
  EXPECT_EQ(names[configs[0].label()], "one-shot budget=2000 k=3");
  EXPECT_EQ(names[configs[1].label()], "one-shot budget=4000 k=3");
  EXPECT_EQ(names[configs[2].label()], "one-shot budget=2000 k=5");
  EXPECT_EQ(names[configs[3].label()], "agent sim");
  EXPECT_EQ(names[configs[4].label()], "agent gpt-4.1-mini");
}

TEST(ConfigNames, ToolSetsOfEqualCountAreListedInFull) {
  std::vector<std::string> other = {"browse", "search", "open", "follow", "history", "neighbors"};
  std::vector<PathConfig> configs = {agent(kSixTools), agent(other)};
  auto names = short_config_names(configs);
  EXPECT_EQ(names[configs[0].label()], "agent browse+search+open+follow+history+remember");
  EXPECT_EQ(names[configs[1].label()], "agent browse+search+open+follow+history+neighbors");
}

TEST(ConfigNames, RepeatsShareOneName) {
  PathConfig again = context(2000, 5);
  again.repeat = 2;  // not part of the label
  auto names = short_config_names({context(2000, 5), again});
  ASSERT_EQ(names.size(), 1u);
  EXPECT_EQ(names.begin()->second, "one-shot");
}

}  // namespace
}  // namespace okfbench::reports
