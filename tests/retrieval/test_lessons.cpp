// The lessons profile and select_lessons, on the fixture bundles
// tests/data/lessons/payments (7 lessons, one of each status plus an expiry)
// and tests/data/lessons/malformed (bad values).
#include "retrieval/lessons.hpp"

#include <gtest/gtest.h>

#include "retrieval/context.hpp"
#include "core/error.hpp"
#include "retrieval/search.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::retrieval {
namespace {

using Ids = std::vector<std::string>;
using Exclusions = std::vector<Exclusion>;

Bundle load_lessons(const std::string& name) {
  LoadOptions options;
  options.profile = Profile::lessons;
  return Bundle::load(okfbench::test::source_dir() / "tests/data/lessons" / name, options);
}

LessonPolicy as_of(std::string now) {
  LessonPolicy policy;
  policy.now = std::move(now);
  return policy;
}

Ids pack_ids(const ContextPack& pack) {
  Ids out;
  for (const PackEntry& e : pack.concepts) out.push_back(e.id);
  return out;
}

const Exclusions kDefaultExclusions{{"api/old-page-size", "status:deprecated"},
                                    {"api/retry-forever", "status:rejected"},
                                    {"build/cache-warmup", "status:candidate"},
                                    {"build/freeze-window", "expired"}};

TEST(LessonsProfile, ReadsStatusScopeAndExpiry) {
  Bundle bundle = load_lessons("payments");
  EXPECT_TRUE(bundle.diagnostics().empty());
  const Concept* freeze = bundle.find("build/freeze-window");
  ASSERT_NE(freeze, nullptr);
  EXPECT_EQ(freeze->lifecycle->status, LessonStatus::active);
  EXPECT_EQ(freeze->lifecycle->scope, "project");
  EXPECT_EQ(freeze->lifecycle->expires_at, "2026-12-01");
  EXPECT_TRUE(freeze->lifecycle->expires_valid);
  EXPECT_EQ(freeze->status, Status::stable);  // `status` is the lesson's, not OKF's
  EXPECT_EQ(freeze->extra.at("scope"), "project");  // unknown to OKF, so kept as written too
  EXPECT_EQ(bundle.find("build/retry-flaky-tests")->lifecycle->scope, "");
  EXPECT_EQ(bundle.find("api/retry-forever")->lifecycle->status, LessonStatus::rejected);
}

TEST(LessonsProfile, BadValuesAreDiagnosticsNamingFileLineAndKey) {
  Bundle bundle = load_lessons("malformed");
  ASSERT_EQ(bundle.diagnostics().size(), 3u);
  const auto& d = bundle.diagnostics();
  EXPECT_EQ(d[0].path, "approved.md");
  EXPECT_EQ(d[0].line, 4);
  EXPECT_EQ(d[0].severity, Severity::error);
  EXPECT_EQ(d[0].message,
            "`status: approved` is not a lesson status; write candidate, reviewed, active, deprecated or rejected. "
            "It is excluded from selection until fixed");
  EXPECT_EQ(d[1].path, "bad-expiry.md");
  EXPECT_EQ(d[1].line, 5);
  EXPECT_EQ(d[1].severity, Severity::error);
  EXPECT_NE(d[1].message.find("`expires_at: 2026-13-01` is not a date"), std::string::npos);
  EXPECT_EQ(d[2].path, "no-status.md");
  EXPECT_EQ(d[2].severity, Severity::warning);
  EXPECT_NE(d[2].message.find("no `status`; it is treated as a candidate"), std::string::npos);
  // All three stay concepts, and the policy says why each is out.
  EXPECT_EQ(select_lessons(bundle, as_of("2026-12-02")).excluded,
            (Exclusions{{"approved", "status:invalid"}, {"bad-expiry", "expires_at:invalid"},
                        {"no-status", "status:candidate"}}));
}

TEST(LessonsProfile, OtherProfilesReadNoLifecycle) {
  Bundle okf = Bundle::load(okfbench::test::source_dir() / "tests/data/lessons/payments");
  EXPECT_FALSE(okf.find("api/retry-forever")->lifecycle.has_value());
  EXPECT_EQ(*okf.find("api/retry-forever")->lifecycle, Lifecycle{});
  // The okf profile reads `status` as OKF's and warns about the lesson words.
  EXPECT_FALSE(okf.diagnostics().empty());
}

TEST(SelectLessons, DefaultPolicyExcludesEachWithItsReason) {
  Bundle bundle = load_lessons("payments");
  Selection s = select_lessons(bundle, as_of("2026-12-02"));
  EXPECT_EQ(s.excluded, kDefaultExclusions);
  EXPECT_TRUE(s.preferred.empty());
  EXPECT_EQ(s.policy, "lessons as of 2026-12-02: rejected and deprecated excluded, candidates excluded");
}

TEST(SelectLessons, ExpiresAtMidnightUtcOfItsDate) {
  Bundle bundle = load_lessons("payments");
  EXPECT_FALSE(select_lessons(bundle, as_of("2026-11-30T23:59:59Z")).excludes("build/freeze-window"));
  EXPECT_EQ(select_lessons(bundle, as_of("2026-12-01T00:00:00Z")).find("build/freeze-window")->reason, "expired");
  EXPECT_FALSE(select_lessons(bundle, as_of("2026-12-01T00:30:00+01:00")).excludes("build/freeze-window"));
}

TEST(SelectLessons, CandidatesOnlyWhenAskedAndStatusBeforeExpiry) {
  Bundle bundle = load_lessons("payments");
  LessonPolicy policy = as_of("2026-12-02");
  policy.include_candidates = true;
  Selection s = select_lessons(bundle, policy);
  EXPECT_EQ(s.excluded, (Exclusions{{"api/old-page-size", "status:deprecated"},
                                    {"api/retry-forever", "status:rejected"},
                                    {"build/freeze-window", "expired"}}));
}

TEST(SelectLessons, PreferredScopeMarksEligibleLessonsOnly) {
  Bundle bundle = load_lessons("payments");
  LessonPolicy policy = as_of("2026-11-15");
  policy.preferred_scope = "project";
  Selection s = select_lessons(bundle, policy);
  // retry-forever and cache-warmup are project lessons too, but excluded.
  EXPECT_EQ(s.preferred, (std::set<std::string, std::less<>>{"api/retry-idempotency", "build/freeze-window"}));
}

TEST(SelectLessons, ABadClockIsAnInputError) {
  Bundle bundle = load_lessons("payments");
  EXPECT_THROW(select_lessons(bundle, as_of("tomorrow")), InputError);
}

TEST(SelectLessons, SearchReturnsOnlyEligibleLessonsAndStillFillsK) {
  Bundle bundle = load_lessons("payments");
  SearchIndex index = SearchIndex::build(bundle);
  SearchOptions o;
  o.limit = 3;
  Ids all, eligible;
  for (const Hit& h : index.search("retry payment calls", o)) all.emplace_back(h.id);
  o.selection = std::make_shared<const Selection>(select_lessons(bundle, as_of("2026-12-02")));
  for (const Hit& h : index.search("retry payment calls", o)) eligible.emplace_back(h.id);
  EXPECT_EQ(all, (Ids{"api/retry-forever", "api/retry-idempotency", "build/freeze-window"}));
  EXPECT_EQ(eligible, (Ids{"api/retry-idempotency", "api/pagination-limits", "build/retry-flaky-tests"}));
  EXPECT_EQ(index.candidates(o).size(), 3u);  // what hybrid search ranks: the eligible ones
}

TEST(SelectLessons, ContextSkipsExcludedSeedsAndNeighboursAndReportsThem) {
  Bundle bundle = load_lessons("payments");
  SearchIndex index = SearchIndex::build(bundle);
  ContextOptions options;
  options.k = 2;
  options.filters.selection = std::make_shared<const Selection>(select_lessons(bundle, as_of("2026-12-02")));
  ContextPack pack = pack_context(bundle, index, "page size refunds", options);
  // pagination-limits links to old-page-size (deprecated): not expanded.
  EXPECT_EQ(pack_ids(pack), (Ids{"api/pagination-limits", "api/retry-idempotency"}));
  EXPECT_EQ(pack.concepts[1].reason, PackReason::via);
  EXPECT_EQ(pack.excluded, kDefaultExclusions);
  EXPECT_EQ(pack.policy, "lessons as of 2026-12-02: rejected and deprecated excluded, candidates excluded");
  options.filters.selection.reset();
  EXPECT_EQ(pack_ids(pack_context(bundle, index, "page size refunds", options)),
            (Ids{"api/pagination-limits", "api/old-page-size", "api/retry-idempotency"}));
}

TEST(SelectLessons, PreferredScopeSeedsComeFirstInBothStrategies) {
  Bundle bundle = load_lessons("payments");
  SearchIndex index = SearchIndex::build(bundle);
  LessonPolicy policy = as_of("2026-12-02");
  ContextOptions options;
  options.k = 3;
  options.expand_hops = 0;
  options.filters.selection = std::make_shared<const Selection>(select_lessons(bundle, policy));
  EXPECT_EQ(pack_ids(pack_context(bundle, index, "refunds page retry", options)),
            (Ids{"api/pagination-limits", "api/retry-idempotency", "build/retry-flaky-tests"}));
  policy.preferred_scope = "project";
  options.filters.selection = std::make_shared<const Selection>(select_lessons(bundle, policy));
  EXPECT_EQ(pack_ids(pack_context(bundle, index, "refunds page retry", options)),
            (Ids{"api/retry-idempotency", "api/pagination-limits", "build/retry-flaky-tests"}));
  options.strategy = PackStrategy::weaver;
  options.k = 0;
  EXPECT_EQ(pack_ids(pack_context(bundle, index, "refunds page retry", options)),
            (Ids{"api/retry-idempotency", "api/pagination-limits", "build/retry-flaky-tests"}));
}

}  // namespace
}  // namespace okfbench::retrieval
