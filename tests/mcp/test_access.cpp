#include "mcp/access.hpp"

#include <gtest/gtest.h>

#include "agents/bundle_tools.hpp"
#include "tests/mcp/mcp_fixture.hpp"

namespace okfbench::mcp {
namespace {
using namespace test_fixture;

struct Tools {
  explicit Tools(agents::Surface surface) : bundle(retrieval::Bundle::load(demo())), tools(bundle, options(surface)) {}
  static agents::ToolsOptions options(agents::Surface surface) {
    agents::ToolsOptions o;
    o.surface = surface;
    return o;
  }
  reports::SessionAccess access(const std::string& tool, const json& args) {
    agents::ToolResult r = tools.call(tool, args.dump());
    return tool_access(tool, args.dump(), r, bundle, "demo");
  }
  retrieval::Bundle bundle;
  agents::BundleTools tools;
};

TEST(ToolAccess, ReadsAreTheConceptsWhoseBodiesWereReturned) {
  Tools g(agents::Surface::grafito);
  reports::SessionAccess open = g.access("open", {{"concept_id", "/runbooks/slow-queries.md"}});
  EXPECT_EQ(open.kind, "read");
  EXPECT_EQ(open.bundle, "demo");
  EXPECT_EQ(open.concepts, std::vector<std::string>{"runbooks/slow-queries"});  // canonical id
  Tools h(agents::Surface::harnessx);
  EXPECT_EQ(h.access("read_concept", {{"path", "/runbooks/slow-queries.md"}}).concepts,
            std::vector<std::string>{"runbooks/slow-queries"});
  EXPECT_TRUE(h.access("read_concept", {{"path", "runbooks"}}).concepts.empty());  // a directory's index
}

TEST(ToolAccess, ListingsNameEveryConceptTheyShowed) {
  Tools g(agents::Surface::grafito);
  reports::SessionAccess search = g.access("search", {{"query", "slow query"}, {"k", 4}});
  EXPECT_EQ(search.kind, "list");
  EXPECT_EQ(search.concepts.size(), 4u);
  EXPECT_EQ(g.access("browse", {{"layer", "runbooks"}}).concepts.size(), 8u);
  EXPECT_FALSE(g.access("follow", {{"concept_id", "runbooks/slow-queries"}}).concepts.empty());
  Tools h(agents::Surface::harnessx);
  EXPECT_EQ(h.access("search_concepts", {{"query", "slow query"}, {"limit", 2}}).concepts.size(), 2u);
  reports::SessionAccess neighbors = h.access("get_neighbors", {{"path", "runbooks/slow-queries"}});
  EXPECT_EQ(neighbors.kind, "list");
  EXPECT_FALSE(neighbors.concepts.empty());
  EXPECT_EQ(g.access("history", {{"concept_id", "runbooks/slow-queries"}}).kind, "history");
}

TEST(ToolAccess, AFailedCallTouchedNothing) {
  Tools g(agents::Surface::grafito);
  reports::SessionAccess miss = g.access("open", {{"concept_id", "../../etc/passwd"}});
  EXPECT_EQ(miss.kind, "");
  EXPECT_TRUE(miss.concepts.empty());
}

}  // namespace
}  // namespace okfbench::mcp
