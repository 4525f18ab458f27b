#include "reports/trial_metrics.hpp"

#include <gtest/gtest.h>

#include <set>

#include "tests/reports/fixtures.hpp"

namespace okfbench::reports {
namespace {

using fixtures::turn;

TrialRecord agent_with_inputs(std::vector<std::optional<std::int64_t>> inputs) {
  TrialRecord r = fixtures::base("q1", PathKind::agent);
  for (auto input : inputs) r.turns.push_back(turn(input, 0, 10));
  return r;
}

TEST(TrialMetrics, TheSeedsRunResendsEveryCallsInputButTheLast) {
  // The seed's worked example: inputs [1121, 1582, 2187, 3071].
  const TrialRecord r = agent_with_inputs({1121, 1582, 2187, 3071});
  const std::vector<std::int64_t> fresh = {1121, 461, 605, 884};
  for (std::size_t i = 0; i < fresh.size(); ++i) {
    EXPECT_EQ(turn_new_input(r, i), fresh[i]) << i;
    EXPECT_EQ(*turn_resent_input(r, i) + fresh[i], *r.turns[i].input_tokens) << i;
  }
  EXPECT_EQ(turn_new_input(r, 4), std::nullopt);
  EXPECT_DOUBLE_EQ(*resent_tokens(r), 4890);
  EXPECT_DOUBLE_EQ(*input_tokens(r), 7961);
  EXPECT_DOUBLE_EQ(*trial_metric(r, "new_input_tokens", fixtures::pricing()), 3071);
  EXPECT_DOUBLE_EQ(*trial_metric(r, "resent_tokens", fixtures::pricing()), 4890);
}

TEST(TrialMetrics, AStoredNewInputWinsAndStaysWithinTheTurnsInput) {
  TrialRecord r = agent_with_inputs({1000, 1500, 1200});
  r.turns[1].new_input_tokens = 100;   // what the attribution said, not the growth of 500
  r.turns[2].new_input_tokens = 5000;  // more than the input: cut to it
  EXPECT_EQ(turn_new_input(r, 1), 100);
  EXPECT_EQ(turn_resent_input(r, 1), 1400);
  EXPECT_EQ(turn_new_input(r, 2), 1200);
  EXPECT_EQ(turn_resent_input(r, 2), 0);
  // An input that shrank adds nothing new: all of it was sent before.
  const TrialRecord shrank = agent_with_inputs({1000, 600});
  EXPECT_EQ(turn_new_input(shrank, 1), 0);
  EXPECT_DOUBLE_EQ(*resent_tokens(shrank), 600);
}

TEST(TrialMetrics, AnUnknownInputMakesItsTurnAndTheNextOnesSplitUnknown) {
  const TrialRecord r = agent_with_inputs({100, std::nullopt, 300});
  EXPECT_EQ(turn_new_input(r, 0), 100);
  EXPECT_EQ(turn_new_input(r, 1), std::nullopt);
  EXPECT_EQ(turn_new_input(r, 2), std::nullopt);  // growth over an unknown turn is unknown
  EXPECT_EQ(resent_tokens(r), std::nullopt);
  EXPECT_EQ(trial_metric(r, "new_input_tokens", fixtures::pricing()), std::nullopt);
}

TEST(TrialMetrics, ReachedConceptsArePackedOnTheContextPathAndOpenedOnTheAgentPath) {
  TrialRecord context = fixtures::base("q1", PathKind::context);
  context.packed = {{"a", 10, "seed"}, {"b", 20, "via LINKS_TO from a"}};
  context.opened_ids = {"ignored"};
  context.retrieved_ids = {"a", "c"};
  EXPECT_EQ(reached_ids(context), (std::vector<std::string>{"a", "b"}));
  TrialRecord agent = fixtures::base("q1", PathKind::agent);
  agent.packed = {{"ignored", 1, "seed"}};
  agent.retrieved_ids = {"a", "b", "c"};  // seen in search results, never read
  agent.opened_ids = {"b"};
  EXPECT_EQ(reached_ids(agent), (std::vector<std::string>{"b"}));
  const Judgments relevant{{"a", 1}, {"b", 2}, {"z", 0}};
  EXPECT_DOUBLE_EQ(*trial_evidence_recall(context, relevant), 1.0);
  EXPECT_DOUBLE_EQ(*trial_evidence_recall(agent, relevant), 0.5);
  EXPECT_EQ(trial_evidence_recall(agent, Judgments{{"z", 0}}), std::nullopt);
}

TEST(TrialMetrics, EmptyReadShareCountsReadsThatFoundNothing) {
  TrialRecord r = agent_with_inputs({100, 200});
  auto call = [](const char* tool, bool found, std::optional<std::int64_t> body_chars) {
    ToolCallRecord c{tool, "{}", 10, found ? "" : "Concept not found", false, std::nullopt};
    c.access = KnowledgeAccess{tool, "demo", found, "", "x", body_chars ? std::nullopt : std::optional<std::int64_t>(2),
                                     body_chars};
    return c;
  };
  EXPECT_EQ(trial_metric(r, "empty_read_share", fixtures::pricing()), std::nullopt);  // no reads
  r.turns[0].tool_calls = {call("search_concepts", true, std::nullopt), call("read_concept", false, 0)};
  r.turns[1].tool_calls = {call("read_concept", true, 812), call("open", true, 40), call("get_neighbors", false, std::nullopt)};
  // Three reads (the search and the neighbours are not reads), one found nothing.
  EXPECT_DOUBLE_EQ(*trial_metric(r, "empty_read_share", fixtures::pricing()), 1.0 / 3.0);
}

TEST(TrialMetrics, EveryMetricHasOneEntryWithHelpAndFailedTrialsHaveNoValues) {
  std::set<std::string> names;
  for (const auto& m : trial_metrics()) {
    EXPECT_TRUE(names.insert(m.info.name).second) << m.info.name;
    EXPECT_GT(m.info.help.size(), 10u) << m.info.name;
    EXPECT_EQ(metric_info(m.info.name).help, m.info.help);
  }
  EXPECT_EQ(builtin_metrics().size(), trial_metrics().size());
  EXPECT_EQ(metric_info("new_input_tokens").direction, Direction::lower_is_better);
  TrialRecord failed = agent_with_inputs({100});
  failed.error = "model error: boom";
  for (const auto& m : trial_metrics()) EXPECT_EQ(trial_metric(failed, m.info.name, fixtures::pricing()), std::nullopt);
}

}  // namespace
}  // namespace okfbench::reports
