// The tools over several bundles, on the fixture bundles tests/data/kb/sales and support.
#include "agents/multi_bundle_tools.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "agents/agent.hpp"
#include "agents/sim_model.hpp"
#include "core/error.hpp"
#include "retrieval/tokens.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::agents {
namespace {
using ::testing::HasSubstr;
using nlohmann::json;

struct Kb {
  explicit Kb(Surface surface)
      : sales(retrieval::Bundle::load(test::source_dir() / "tests/data/kb/sales")),
        support(retrieval::Bundle::load(test::source_dir() / "tests/data/kb/support")) {
    ToolsOptions options;
    options.surface = surface;
    options.now = "2026-11-29T00:00:00Z";
    tools = std::make_unique<MultiBundleTools>(std::vector<ToolBundle>{{"sales", &sales}, {"support", &support}},
                                               options);
  }
  ToolResult call(std::string_view name, const json& args) { return tools->call(name, args.dump()); }
  KnowledgeAccess access(std::string_view name, const json& args) {
    const std::string text = args.dump();
    return *tools->access(name, text, tools->call(name, text));
  }
  retrieval::Bundle sales, support;
  std::unique_ptr<MultiBundleTools> tools;
};

std::vector<std::string> named_hits(const std::string& content, const char* key) {
  std::vector<std::string> out;
  for (const json& hit : json::parse(content)) out.push_back(hit["bundle"].get<std::string>() + ":" + hit[key].get<std::string>());
  return out;
}

TEST(MultiBundleTools, SchemasTakeABundleRequiredExceptForSearch) {
  Kb kb(Surface::harnessx);
  for (const ToolSpec& spec : kb.tools->specs()) {
    const json schema = json::parse(spec.parameters);
    EXPECT_EQ(schema["properties"]["bundle"]["enum"], json::array({"sales", "support"})) << spec.name;
    const bool required = std::find(schema["required"].begin(), schema["required"].end(), "bundle") != schema["required"].end();
    EXPECT_EQ(required, spec.name != "search_concepts") << spec.name;
  }
}

TEST(MultiBundleTools, SearchWithoutBundleCoversAllAndNamesEachHitsBundle) {
  Kb kb(Surface::harnessx);
  const ToolResult all = kb.call("search_concepts", {{"query", "refund revenue"}, {"limit", 10}});
  ASSERT_EQ(all.error, "");
  EXPECT_EQ(named_hits(all.content, "path"),
            (std::vector<std::string>{"support:/runbooks/refunds.md", "support:/runbooks/escalation.md",
                                      "sales:/metrics/revenue.md", "sales:/computations/revenue-year.md",
                                      "sales:/metrics/gross-margin.md"}));
  const ToolResult one = kb.call("search_concepts", {{"query", "refund revenue"}, {"limit", 10}, {"bundle", "support"}});
  ASSERT_EQ(one.error, "");
  EXPECT_EQ(named_hits(one.content, "path"),
            (std::vector<std::string>{"support:/runbooks/refunds.md", "support:/runbooks/escalation.md"}));
  // Scoped to one bundle the score comes from that bundle's own statistics.
  EXPECT_NE(json::parse(all.content)[0]["score"], json::parse(one.content)[0]["score"]);
}

TEST(MultiBundleTools, ReadsNeedABundleAndNameIt) {
  Kb kb(Surface::harnessx);
  EXPECT_EQ(kb.call("read_concept", {{"path", "metrics/revenue"}}).error,
            "read_concept: 'bundle' is required when several bundles are loaded; one of: sales, support");
  EXPECT_EQ(kb.call("read_concept", {{"path", "metrics/revenue"}, {"bundle", "hr"}}).error,
            "Unknown bundle 'hr'; loaded bundles: sales, support");
  EXPECT_EQ(kb.call("read_concept", {{"path", "metrics/revenue"}, {"bundle", "support"}}).error,
            "Concept not found: metrics/revenue");
  const ToolResult read = kb.call("read_concept", {{"path", "metrics/revenue"}, {"bundle", "sales"}});
  ASSERT_EQ(read.error, "");
  EXPECT_THAT(read.content, ::testing::StartsWith("# Revenue\nbundle: sales\npath: /metrics/revenue.md\n"));
  const json neighbours = json::parse(kb.call("get_neighbors", {{"path", "runbooks/refunds"}, {"bundle", "support"}}).content);
  EXPECT_EQ(neighbours["bundle"], "support");
  EXPECT_FALSE(neighbours["outbound"][0].contains("bundle"));  // named once, on the answer
}

TEST(MultiBundleTools, GrafitoOpenAndFollowNameTheirBundle) {
  Kb kb(Surface::grafito);
  const json opened = json::parse(kb.call("open", {{"concept_id", "runbooks/refunds"}, {"bundle", "support"}}).content);
  EXPECT_EQ(opened["bundle"], "support");
  EXPECT_EQ(opened["id"], "runbooks/refunds");
  EXPECT_EQ(named_hits(kb.call("follow", {{"concept_id", "metrics/revenue"}, {"bundle", "sales"}}).content, "id"),
            (std::vector<std::string>{"sales:computations/revenue-year", "sales:metrics/gross-margin"}));
  EXPECT_EQ(kb.call("browse", json::object()).error, "browse: 'bundle' is required when several bundles are loaded; one of: sales, support");
}

TEST(MultiBundleTools, AccessEventsNameTheBundleOrStarForAllAndRecordMisses) {
  Kb kb(Surface::harnessx);
  EXPECT_EQ(kb.access("search_concepts", {{"query", "revenue"}}),
            (KnowledgeAccess{"search_concepts", "*", true, "revenue", "", 4, std::nullopt}));
  EXPECT_EQ(kb.access("search_concepts", {{"query", "revenue"}, {"bundle", "sales"}}),
            (KnowledgeAccess{"search_concepts", "sales", true, "revenue", "", 3, std::nullopt}));
  EXPECT_EQ(kb.access("read_concept", {{"path", "x"}, {"bundle", "hr"}}),
            (KnowledgeAccess{"read_concept", "hr", false, "", "x", std::nullopt, 0}));
  const std::string& body = kb.support.find("runbooks/escalation")->body;
  EXPECT_EQ(kb.access("read_concept", {{"path", "runbooks/escalation"}, {"bundle", "support"}}),
            (KnowledgeAccess{"read_concept", "support", true, "", "runbooks/escalation", std::nullopt,
                             static_cast<std::int64_t>(body.size())}));
}

TEST(MultiBundleTools, ThePromptNamesTheBundlesAndTheArgument) {
  Kb harnessx(Surface::harnessx);
  const std::string prompt = harnessx.tools->default_system_prompt();
  EXPECT_THAT(prompt, HasSubstr("Several bundles are loaded: sales, support. Every tool takes a `bundle` argument naming "
                                "one of them; search_concepts without it searches them all"));
  EXPECT_THAT(prompt, HasSubstr("<bundle name=\"sales\">\n# Sales knowledge"));
  EXPECT_THAT(prompt, HasSubstr("<bundle name=\"support\">\n# Support knowledge"));
  Kb grafito(Surface::grafito);
  EXPECT_THAT(grafito.tools->default_system_prompt(),
              HasSubstr("Layers (concepts per layer, by bundle): {\"sales\":{\"computations\":1,\"metrics\":2},"
                        "\"support\":{\"runbooks\":2}}"));
}

TEST(MultiBundleTools, TwoBundlesWithOneNameOrOnlyOneAreRefused) {
  retrieval::Bundle sales = retrieval::Bundle::load(test::source_dir() / "tests/data/kb/sales");
  EXPECT_THROW(MultiBundleTools({{"sales", &sales}, {"sales", &sales}}, {}), UsageError);
  EXPECT_THROW(MultiBundleTools({{"sales", &sales}}, {}), UsageError);
}

// sim reads the bundle each hit names and passes it on to what it opens.
TEST(MultiBundleTools, SimOpensWhatItFoundInTheBundleTheHitNamed) {
  for (Surface surface : {Surface::harnessx, Surface::grafito}) {
    Kb kb(surface);
    auto counter = retrieval::make_counter("heuristic");
    SimModel model({}, *counter);
    AgentOptions options;
    options.counter = counter.get();
    const AgentRun run = run_agent(model, *kb.tools, "How is a disputed refund escalated?", options);
    ASSERT_EQ(run.stop, AgentStop::answered) << run.error;
    // search over both, then open and follow the top hit in the bundle it named
    ASSERT_EQ(run.tool_calls.size(), 3u);
    for (const AgentToolCall& call : run.tool_calls) {
      EXPECT_EQ(call.error, "") << call.name << " " << call.arguments;
      const json args = json::parse(call.arguments);
      if (tool_role(call.name) == ToolRole::search)
        EXPECT_FALSE(args.contains("bundle")) << call.arguments;
      else
        EXPECT_EQ(args["bundle"], "support") << call.arguments;
    }
    EXPECT_EQ(tool_role(run.tool_calls[1].name), ToolRole::open);
    EXPECT_EQ(tool_role(run.tool_calls[2].name), ToolRole::follow);
    EXPECT_EQ(kb.tools->opened(run), (std::vector<std::pair<std::string, std::string>>{{"support", "runbooks/refunds"}}));
  }
}

// remember writes into the bundle it names, and the combined index knows the
// new concept at once.
TEST(MultiBundleTools, RememberWritesIntoTheNamedBundleAndSearchFindsIt) {
  const std::filesystem::path root = test::fresh_dir("multi-remember");
  for (const char* name : {"sales", "support"})
    std::filesystem::copy(test::source_dir() / "tests/data/kb" / name, root / name, std::filesystem::copy_options::recursive);
  retrieval::Bundle sales = retrieval::Bundle::load(root / "sales");
  retrieval::Bundle support = retrieval::Bundle::load(root / "support");
  MultiBundleTools tools({{"sales", &sales}, {"support", &support}}, {});
  const ToolResult saved = tools.call(
      "remember", json{{"bundle", "support"}, {"concept_id", "notes/chargebacks"}, {"title", "Chargebacks"},
                       {"body", "A chargeback is a disputed card payment."}}.dump());
  ASSERT_EQ(saved.error, "");
  EXPECT_EQ(json::parse(saved.content)["bundle"], "support");
  EXPECT_TRUE(std::filesystem::exists(root / "support/notes/chargebacks.md"));
  EXPECT_FALSE(std::filesystem::exists(root / "sales/notes/chargebacks.md"));
  const ToolResult found = tools.call("search", json{{"query", "chargeback"}}.dump());
  ASSERT_EQ(found.error, "");
  EXPECT_EQ(named_hits(found.content, "id"), (std::vector<std::string>{"support:notes/chargebacks"}));
}

}  // namespace
}  // namespace okfbench::agents
