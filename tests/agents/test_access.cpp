// Knowledge-access events of the bundle tools, on the fixture bundle tests/data/kb/sales.
#include "agents/access.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "agents/agent.hpp"
#include "agents/bundle_tools.hpp"
#include "agents/sim_model.hpp"
#include "retrieval/tokens.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::agents {
namespace {

struct Sales {
  explicit Sales(Surface surface) : bundle(retrieval::Bundle::load(test::source_dir() / "tests/data/kb/sales")) {
    ToolsOptions options;
    options.surface = surface;
    options.bundle_name = "sales";
    options.now = "2026-11-29T00:00:00Z";
    tools = std::make_unique<BundleTools>(bundle, options);
  }
  KnowledgeAccess call(std::string_view name, const nlohmann::json& args) {
    const std::string text = args.dump();
    return *tools->access(name, text, tools->call(name, text));
  }
  retrieval::Bundle bundle;
  std::unique_ptr<BundleTools> tools;
};

TEST(KnowledgeAccess, HarnessxToolsRecordWhatReachedTheModel) {
  Sales s(Surface::harnessx);
  EXPECT_EQ(s.call("search_concepts", {{"query", "revenue"}}),
            (KnowledgeAccess{"search_concepts", "sales", true, "revenue", "", 3, std::nullopt}));
  EXPECT_EQ(s.call("search_concepts", {{"query", "zebra"}}),
            (KnowledgeAccess{"search_concepts", "sales", true, "zebra", "", 0, std::nullopt}));
  const std::string& body = s.bundle.find("metrics/revenue")->body;
  EXPECT_EQ(s.call("read_concept", {{"path", "/metrics/revenue.md"}}),
            (KnowledgeAccess{"read_concept", "sales", true, "", "/metrics/revenue.md", std::nullopt,
                             static_cast<std::int64_t>(body.size())}));
  const std::string cut = cut_text(body, 10, "call read_concept with a larger max_chars (now 10) to read more");
  EXPECT_EQ(s.call("read_concept", {{"path", "metrics/revenue"}, {"max_chars", 10}}).body_chars,
            static_cast<std::int64_t>(cut.size()));
  // Outbound (computations/revenue-year, metrics/gross-margin) plus backlinks (metrics/gross-margin).
  EXPECT_EQ(s.call("get_neighbors", {{"path", "metrics/revenue"}}),
            (KnowledgeAccess{"get_neighbors", "sales", true, "", "metrics/revenue", 3, std::nullopt}));
  // A miss still records, with found=false.
  EXPECT_EQ(s.call("read_concept", {{"path", "/../etc/passwd"}}),
            (KnowledgeAccess{"read_concept", "sales", false, "", "/../etc/passwd", std::nullopt, 0}));
  EXPECT_EQ(s.call("get_neighbors", {{"path", "nope"}}),
            (KnowledgeAccess{"get_neighbors", "sales", false, "", "nope", 0, std::nullopt}));
  EXPECT_EQ(s.call("search_concepts", {}), (KnowledgeAccess{"search_concepts", "sales", false, "", "", 0, std::nullopt}));
}

TEST(KnowledgeAccess, GrafitoToolsRecordTheSameFields) {
  Sales s(Surface::grafito);
  EXPECT_EQ(s.call("search", {{"query", "margin"}, {"k", 1}}),
            (KnowledgeAccess{"search", "sales", true, "margin", "", 1, std::nullopt}));
  const std::string& body = s.bundle.find("metrics/gross-margin")->body;
  EXPECT_EQ(s.call("open", {{"concept_id", "metrics/gross-margin"}}),
            (KnowledgeAccess{"open", "sales", true, "", "metrics/gross-margin", std::nullopt,
                             static_cast<std::int64_t>(body.size())}));
  EXPECT_EQ(s.call("follow", {{"concept_id", "metrics/revenue"}, {"direction", "in"}}),
            (KnowledgeAccess{"follow", "sales", true, "", "metrics/revenue", 1, std::nullopt}));
  EXPECT_EQ(s.call("browse", {{"layer", "metrics"}}),
            (KnowledgeAccess{"browse", "sales", true, "", "metrics", 2, std::nullopt}));
  EXPECT_EQ(s.call("open", {{"concept_id", "missing"}}),
            (KnowledgeAccess{"open", "sales", false, "", "missing", std::nullopt, 0}));
}

TEST(KnowledgeAccess, EveryToolCallOfARunCarriesItsEvent) {
  Sales s(Surface::harnessx);
  auto counter = retrieval::make_counter("heuristic");
  SimModel model({}, *counter);
  AgentOptions options;
  options.counter = counter.get();
  const AgentRun run = run_agent(model, *s.tools, "How is revenue recognized?", options);
  ASSERT_FALSE(run.tool_calls.empty());
  for (const AgentToolCall& call : run.tool_calls) {
    ASSERT_TRUE(call.access.has_value()) << call.name;
    EXPECT_EQ(call.access->tool, call.name);
    EXPECT_EQ(call.access->bundle, "sales");
    EXPECT_EQ(call.access->found, call.error.empty());
  }
  EXPECT_EQ(run.tool_calls[0].access->query, "How is revenue recognized?");
}

}  // namespace
}  // namespace okfbench::agents
