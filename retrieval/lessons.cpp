#include "retrieval/lessons.hpp"

#include <fmt/format.h>

#include "retrieval/frontmatter.hpp"

namespace okfbench::retrieval {

std::string lesson_exclusion(const Concept& item, const LessonPolicy& policy, const std::string& now) {
  const Lifecycle& life = *item.lifecycle;
  if (!life.status) return "status:invalid";
  if (*life.status == LessonStatus::rejected || *life.status == LessonStatus::deprecated ||
      (*life.status == LessonStatus::candidate && !policy.include_candidates))
    return "status:" + std::string(to_string(*life.status));
  if (!life.expires_valid) return "expires_at:invalid";
  if (!life.expires_at.empty() && *parse_timestamp(life.expires_at) <= *parse_timestamp(now)) return "expired";
  return {};
}

Selection select_lessons(const Bundle& bundle, const LessonPolicy& policy) {
  const std::string now = policy_clock(policy.now, "lesson");
  Selection selection;
  selection.policy = fmt::format("lessons as of {}: rejected and deprecated excluded, candidates {}{}", now,
                                 policy.include_candidates ? "included" : "excluded",
                                 policy.preferred_scope.empty() ? "" : ", scope " + policy.preferred_scope + " first");
  for (const Concept& item : bundle.concepts()) {  // sorted by id, so `excluded` is too
    if (std::string reason = lesson_exclusion(item, policy, now); !reason.empty())
      selection.excluded.push_back({item.id, std::move(reason)});
    else if (!policy.preferred_scope.empty() && item.lifecycle->scope == policy.preferred_scope)
      selection.preferred.insert(item.id);
  }
  return selection;
}

}  // namespace okfbench::retrieval
