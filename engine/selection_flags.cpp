#include "engine/selection_flags.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "core/error.hpp"
#include "retrieval/frontmatter.hpp"
#include "retrieval/lessons.hpp"

namespace okfbench::cli {

void add_selection_flags(CLI::App& cmd, SelectionFlags& flags) {
  cmd.add_option("--as-of", flags.as_of,
                 "Clock for expires_at in the lessons and expertise profiles: YYYY-MM-DD or an ISO 8601 instant (default: now)");
  cmd.add_flag("--include-candidates", flags.include_candidates,
               "Lessons profile: candidate (unreviewed) lessons may be selected");
  cmd.add_option("--prefer-scope", flags.prefer_scope, "Lessons profile: lessons of this scope rank first");
  cmd.add_option("--task-tag", flags.task_tags,
                 "Expertise profile: a tag of the task (repeatable); nodes whose applies_to names none are excluded");
}

retrieval::Profile profile_option(const std::string& name) {
  std::optional<retrieval::Profile> profile = retrieval::parse_profile(name);
  if (!profile) throw UsageError(fmt::format("unknown --profile \"{}\": use {}", name, retrieval::profile_names()));
  return *profile;
}

std::shared_ptr<const retrieval::Selection> make_selection(const retrieval::Bundle& bundle,
                                                           const SelectionFlags& flags) {
  if (!flags.as_of.empty() && !retrieval::parse_timestamp(flags.as_of))
    throw UsageError(fmt::format("--as-of {}: not a date; write YYYY-MM-DD or 2026-06-30T14:00:00Z", flags.as_of));
  const retrieval::Profile profile = bundle.options().profile;
  if (profile != retrieval::Profile::lessons && (flags.include_candidates || !flags.prefer_scope.empty()))
    throw UsageError("--include-candidates and --prefer-scope apply to --profile lessons only");
  if (profile != retrieval::Profile::expertise && !flags.task_tags.empty())
    throw UsageError("--task-tag applies to --profile expertise only");
  if (profile == retrieval::Profile::expertise)
    return std::make_shared<const retrieval::Selection>(retrieval::select_expertise(bundle, expertise_policy(flags)));
  if (profile != retrieval::Profile::lessons) return nullptr;
  retrieval::LessonPolicy policy;
  policy.include_candidates = flags.include_candidates;
  policy.preferred_scope = flags.prefer_scope;
  policy.now = flags.as_of;
  return std::make_shared<const retrieval::Selection>(retrieval::select_lessons(bundle, policy));
}

retrieval::ExpertisePolicy expertise_policy(const SelectionFlags& flags) { return {flags.task_tags, flags.as_of}; }

}  // namespace okfbench::cli
