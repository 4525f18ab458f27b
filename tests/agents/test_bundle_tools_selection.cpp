// The agent tools under a selection policy (ToolsOptions::selection), on the
// lessons fixture tests/data/lessons/payments as of 2026-12-02: four lessons
// are excluded (api/old-page-size deprecated, api/retry-forever rejected,
// build/cache-warmup a candidate, build/freeze-window expired).
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "agents/bundle_tools.hpp"
#include "agents/multi_bundle_tools.hpp"
#include "core/error.hpp"
#include "retrieval/expertise.hpp"
#include "retrieval/lessons.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::agents {
namespace {
using nlohmann::json;
using Ids = std::vector<std::string>;

retrieval::Bundle payments() {
  retrieval::LoadOptions load;
  load.profile = retrieval::Profile::lessons;
  return retrieval::Bundle::load(test::source_dir() / "tests/data/lessons/payments", load);
}

std::shared_ptr<const retrieval::Selection> lessons(const retrieval::Bundle& bundle, std::string scope = "") {
  retrieval::LessonPolicy policy;
  policy.now = "2026-12-02";
  policy.preferred_scope = std::move(scope);
  return std::make_shared<const retrieval::Selection>(retrieval::select_lessons(bundle, policy));
}

struct Lessons {
  explicit Lessons(Surface surface, std::string scope = "") : bundle(payments()) {
    ToolsOptions options;
    options.surface = surface;
    options.selection = lessons(bundle, std::move(scope));
    tools.emplace(bundle, options);
  }
  ToolResult call(std::string_view name, const json& args) { return tools->call(name, args.dump()); }
  json result(std::string_view name, const json& args) {
    ToolResult r = call(name, args);
    EXPECT_EQ(r.error, "") << name << " " << args.dump();
    return json::parse(r.content, nullptr, false);
  }
  retrieval::Bundle bundle;
  std::optional<BundleTools> tools;
};

Ids field(const json& items, const char* key) {
  Ids out;
  for (const json& item : items) out.push_back(item.at(key).get<std::string>());
  return out;
}

constexpr const char* kRejected =
    "Concept api/retry-forever is excluded: status:rejected (the selection policy keeps it out of this task)";

TEST(ToolsSelection, SearchNeverReturnsAnExcludedConceptAndStillFillsK) {
  Lessons grafito(Surface::grafito);
  EXPECT_EQ(field(grafito.result("search", {{"query", "retry payment calls"}, {"k", 3}}), "id"),
            (Ids{"api/retry-idempotency", "api/pagination-limits", "build/retry-flaky-tests"}));
  Lessons harnessx(Surface::harnessx);
  EXPECT_EQ(field(harnessx.result("search_concepts", {{"query", "retry payment calls"}, {"limit", 3}}), "path"),
            (Ids{"/api/retry-idempotency.md", "/api/pagination-limits.md", "/build/retry-flaky-tests.md"}));
}

TEST(ToolsSelection, PreferredScopeRanksFirstAmongHits) {
  Lessons plain(Surface::grafito);
  EXPECT_EQ(field(plain.result("search", {{"query", "refunds page retry"}, {"k", 3}}), "id"),
            (Ids{"api/pagination-limits", "api/retry-idempotency", "build/retry-flaky-tests"}));
  Lessons project(Surface::grafito, "project");
  EXPECT_EQ(field(project.result("search", {{"query", "refunds page retry"}, {"k", 3}}), "id"),
            (Ids{"api/retry-idempotency", "api/pagination-limits", "build/retry-flaky-tests"}));
}

TEST(ToolsSelection, OpeningAnExcludedConceptIsAnErrorSayingWhy) {
  Lessons grafito(Surface::grafito);
  ToolResult open = grafito.call("open", {{"concept_id", "api/retry-forever"}});
  EXPECT_EQ(open.error, kRejected);
  EXPECT_EQ(json::parse(open.content), json({{"error", kRejected}}));
  EXPECT_EQ(grafito.call("open", {{"concept_id", "/build/freeze-window.md"}}).error,
            "Concept build/freeze-window is excluded: expired (the selection policy keeps it out of this task)");
  EXPECT_EQ(grafito.call("follow", {{"concept_id", "api/retry-forever"}}).error, kRejected);
  EXPECT_EQ(grafito.call("history", {{"concept_id", "api/retry-forever"}}).error, kRejected);
  EXPECT_EQ(grafito.result("open", {{"concept_id", "api/retry-idempotency"}})["id"], "api/retry-idempotency");
  Lessons harnessx(Surface::harnessx);
  EXPECT_EQ(harnessx.call("read_concept", {{"path", "/api/retry-forever.md"}}).error, kRejected);
  EXPECT_EQ(harnessx.call("get_neighbors", {{"path", "api/retry-forever"}}).error, kRejected);
  EXPECT_EQ(harnessx.call("read_concept", {{"path", "api/nothing-here"}}).error, "Concept not found: api/nothing-here");
}

TEST(ToolsSelection, ListingsLeaveExcludedConceptsOut) {
  Lessons grafito(Surface::grafito);
  // pagination-limits links to retry-idempotency and old-page-size (deprecated).
  EXPECT_EQ(field(grafito.result("follow", {{"concept_id", "api/pagination-limits"}}), "id"),
            Ids{"api/retry-idempotency"});
  EXPECT_EQ(field(grafito.result("browse", {{"layer", "api"}})["concepts"], "id"),
            (Ids{"api/pagination-limits", "api/retry-idempotency"}));
  EXPECT_EQ(field(grafito.result("browse", {{"layer", "build"}})["concepts"], "id"), Ids{"build/retry-flaky-tests"});
  Lessons harnessx(Surface::harnessx);
  json neighbours = harnessx.result("get_neighbors", {{"path", "api/pagination-limits"}});
  EXPECT_EQ(field(neighbours["outbound"], "path"), Ids{"/api/retry-idempotency.md"});
  EXPECT_EQ(field(neighbours["backlinks"], "path"), Ids{"/api/retry-idempotency.md"});
  // build/ has no index.md: its synthesized listing is written without them.
  ToolResult listing = harnessx.call("read_concept", {{"path", "build/"}});
  EXPECT_EQ(listing.error, "");
  EXPECT_NE(listing.content.find("retry-flaky-tests"), std::string::npos) << listing.content;
  EXPECT_EQ(listing.content.find("cache-warmup"), std::string::npos) << listing.content;
  EXPECT_EQ(listing.content.find("freeze-window"), std::string::npos) << listing.content;
}

TEST(ToolsSelection, WithoutAPolicyEverythingIsThere) {
  retrieval::Bundle bundle = payments();
  BundleTools tools(bundle);
  json follow = json::parse(tools.call("follow", R"({"concept_id": "api/pagination-limits"})").content);
  EXPECT_EQ(field(follow, "id"), (Ids{"api/retry-idempotency", "api/old-page-size"}));
  EXPECT_EQ(tools.call("open", R"({"concept_id": "api/retry-forever"})").error, "");
}

TEST(ToolsSelection, ExpertiseExclusionsReachTheTools) {
  retrieval::LoadOptions load;
  load.profile = retrieval::Profile::expertise;
  retrieval::Bundle pack = retrieval::Bundle::load(test::source_dir() / "tests/data/expertise/python-pack", load);
  ToolsOptions options;
  options.selection = std::make_shared<const retrieval::Selection>(
      retrieval::select_expertise(pack, {{"python-library"}, "2026-06-01"}));
  BundleTools tools(pack, options);
  EXPECT_EQ(tools.call("open", R"({"concept_id": "constraints/api-handlers"})").error,
            "Concept constraints/api-handlers is excluded: inapplicable (the selection policy keeps it out of this "
            "task)");
  // Of the four test commands, nose expired and tox was rejected.
  json hits = json::parse(tools.call("search", R"({"query": "tests repository root", "k": 10})").content);
  Ids ids = field(hits, "id");
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (Ids{"verification/test-command", "verification/test-command-copy"}));
}

TEST(ToolsSelection, SeveralBundlesRefuseAPolicy) {
  retrieval::Bundle a = payments(), b = payments();
  ToolsOptions options;
  options.selection = lessons(a);
  EXPECT_THROW(MultiBundleTools({{"a", &a}, {"b", &b}}, options), UsageError);
}

}  // namespace
}  // namespace okfbench::agents
