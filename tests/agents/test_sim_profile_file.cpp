#include "agents/sim_profile_file.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "agents/models.hpp"
#include "core/error.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::agents {
namespace {

std::string error_of(const std::string& yaml) {
  try {
    parse_sim_profile(yaml, "p.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(SimProfileFile, ReadsEveryKey) {
  const SimOptions o = parse_sim_profile(
      "searches: {1: 0.25, 2: 0.75}\ndrop_terms: 1\nadd_terms: {0: 1, 2: 1}\nsearch_k: 8\nopens_per_search: {1: 1, 3: 3}\n"
      "open_ratio: 0.5\nmax_open: 4\nparallel_opens: 0.25\nfollow_rate: 0.5\nrepeats: 2\nbrowse_rate: 0.1\n"
      "max_tool_turns: 6\nanswer_tokens: 120\nanswer_tokens_spread: 30\nseed_variation: false\n"
      "context_answer_tokens: 45\ncontext_answer_tokens_spread: 12\ncontext_overheads: {content_ratio: 1.5, per_message: 6}\n"
      "follow_when_covered: true\nfollow_concepts: {1: 1, 2: 3}\nneighbour_opens: 2\nrereads: {0: 1, 1: 1}\n"
      "overheads: {per_message: 4, per_tool_call: 2, reply_priming: 0, per_tool: 9, tools_end: 20, content_ratio: 1.25}\n",
      "p.yaml");
  const SimProfile& p = o.profile;
  EXPECT_EQ(p.searches, (CountDistribution{{{1, 0.25}, {2, 0.75}}}));
  EXPECT_EQ(p.drop_terms, CountDistribution::always(1));
  EXPECT_EQ(p.add_terms, (CountDistribution{{{0, 1}, {2, 1}}}));
  EXPECT_EQ(o.search_k, 8u);
  ASSERT_TRUE(p.opens_per_search);
  EXPECT_DOUBLE_EQ(p.opens_per_search->mean(), 2.5);
  EXPECT_DOUBLE_EQ(o.open_ratio, 0.5);
  EXPECT_EQ(o.max_open, 4u);
  EXPECT_DOUBLE_EQ(p.parallel_opens, 0.25);
  EXPECT_DOUBLE_EQ(p.follow_rate, 0.5);
  EXPECT_EQ(p.repeats, CountDistribution::always(2));
  EXPECT_DOUBLE_EQ(p.browse_rate, 0.1);
  EXPECT_EQ(p.max_tool_turns, 6);
  EXPECT_EQ(o.answer_tokens, 120u);
  EXPECT_EQ(o.answer_tokens_spread, 30u);
  EXPECT_EQ(p.context_answer, (AnswerLength{45, 12}));
  EXPECT_FALSE(p.seed_variation);
  EXPECT_TRUE(p.follow_when_covered);
  EXPECT_EQ(p.follow_concepts, (CountDistribution{{{1, 1}, {2, 3}}}));
  EXPECT_EQ(p.neighbour_opens, CountDistribution::always(2));
  EXPECT_EQ(p.rereads, (CountDistribution{{{0, 1}, {1, 1}}}));
  EXPECT_EQ(p.overheads, (TokenOverheads{4, 2, 0, 9, 20, 1.25}));
  EXPECT_EQ(p.context_overheads, (TokenOverheads{6, 2, 0, 9, 20, 1.5}));  // the keys it leaves out are overheads' own
  // Written and read back: the same options.
  const SimOptions back = parse_sim_profile(sim_profile_yaml(o, "fitted by a test\n\nsecond line"), "back.yaml");
  EXPECT_EQ(back.profile, o.profile);
  EXPECT_EQ(back.search_k, o.search_k);
  EXPECT_EQ(back.answer_tokens_spread, o.answer_tokens_spread);
  EXPECT_TRUE(sim_profile_yaml(o, "fitted by a test").starts_with("# fitted by a test\nsearches: {1: 0.25, 2: 0.75}\n"));
}

TEST(NumbersAndWrites, AnEmptyProfileFileIsAnErrorAndBracesAreTheDefault) {
  for (const char* empty : {"", "\n", "# only a comment\n"})
    EXPECT_THROW(
        try { parse_sim_profile(empty, "empty.yaml"); } catch (const InputError& e) {
          EXPECT_NE(std::string(e.what()).find("empty.yaml: the sim profile is empty"), std::string::npos) << e.what();
          throw;
        },
        InputError);
  const SimOptions o = parse_sim_profile("{}\n", "default.yaml");
  EXPECT_EQ(o.profile, SimProfile{});
  EXPECT_EQ(o.search_k, SimOptions{}.search_k);
}

TEST(SimProfileFile, ProblemsNameTheFileTheLineAndTheKey) {
  EXPECT_EQ(error_of("searches: 1\nsearchs: 2\n"),
            "p.yaml:2: searchs: unknown key; the keys are add_terms, answer_tokens, answer_tokens_spread, browse_rate, "
            "context_answer_tokens, context_answer_tokens_spread, context_overheads, drop_terms, follow_concepts, follow_rate, "
            "follow_when_covered, max_open, max_tool_turns, neighbour_opens, open_ratio, opens_per_search, overheads, parallel_opens, repeats, rereads, search_k, searches, seed_variation");
  EXPECT_EQ(error_of("follow_rate: 1.5\n"), "p.yaml:1: follow_rate: expected a number from 0 to 1, got \"1.5\"");
  EXPECT_EQ(error_of("searches: 51\n"), "p.yaml:1: searches: expected an integer from 0 to 50, got \"51\"");
  EXPECT_EQ(error_of("searches: {1: 0, 2: 0}\n"),
            "p.yaml:1: searches: the weights sum to 0; give at least one count a weight above 0");
  EXPECT_EQ(error_of("searches: {1: -1}\n"), "p.yaml:1: searches.1: expected a number from 0 to 1000000000, got \"-1\"");
  EXPECT_EQ(error_of("searches: [1, 2]\n"),
            "p.yaml:1: searches: expected a count (0 to 50) or a mapping {count: weight, ...}, e.g. {1: 0.7, 2: 0.3}");
  EXPECT_EQ(error_of("overheads: {per_token: 1}\n"),
            "p.yaml:1: overheads.per_token: unknown key; the keys are content_ratio, per_message, per_tool, per_tool_call, "
            "reply_priming, tools_end");
  EXPECT_EQ(error_of("overheads: {content_ratio: 0}\n"),
            "p.yaml:1: overheads.content_ratio: expected a number from 0.1 to 10, got \"0\"");
  EXPECT_EQ(error_of("overheads: {per_tool: 99999}\n"),
            "p.yaml:1: overheads.per_tool: expected an integer from 0 to 10000, got \"99999\"");
  EXPECT_EQ(error_of("answer_tokens: 9\ncontext_answer_tokens_spread: 5\n"),
            "p.yaml:2: context_answer_tokens_spread: needs context_answer_tokens (the mean) beside it");
  EXPECT_EQ(error_of("context_answer_tokens: 0\n"),
            "p.yaml:1: context_answer_tokens: expected an integer from 1 to 100000, got \"0\"");
  EXPECT_EQ(parse_sim_profile("context_answer_tokens: 7\n", "p.yaml").profile.context_answer, (AnswerLength{7, 0}));
  EXPECT_EQ(error_of("context_overheads: {content_ratio: 11}\n"),
            "p.yaml:1: context_overheads.content_ratio: expected a number from 0.1 to 10, got \"11\"");
  EXPECT_EQ(error_of("context_overheads: 3\n"),
            "p.yaml:1: context_overheads: expected a mapping, e.g. {per_message: 3, per_tool: 7}");
  EXPECT_EQ(error_of("seed_variation: maybe\n"), "p.yaml:1: seed_variation: expected true or false, got \"maybe\"");
  EXPECT_EQ(error_of("- 1\n"), "p.yaml:1: profile: expected a mapping of profile keys (agents/README.md, \"Behaviour profiles\")");
  EXPECT_TRUE(error_of("searches: {1: 2\n").starts_with("p.yaml:")) << error_of("searches: {1: 2\n");
}

TEST(SimProfileFile, MakeModelReadsSimColonProfile) {
  const auto dir = test::fresh_dir("sim-profile");
  const auto file = dir / "p.yaml";
  std::ofstream(file) << "searches: 2\n";
  EXPECT_EQ(make_model("sim:" + file.string())->name(), "sim");
  EXPECT_THROW(make_model("sim:" + (dir / "missing.yaml").string()), InputError);
  EXPECT_THROW(make_model("sim:"), UsageError);
}

}  // namespace
}  // namespace okfbench::agents
