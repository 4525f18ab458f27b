#pragma once
// The selection policy flags of the bundle profiles that have one
// (retrieval/selection.hpp), shared by validate, context and agent:
//   --as-of DATE            the clock for expires_at (default: the current time)
//   --include-candidates    lessons: candidate lessons may be selected
//   --prefer-scope SCOPE    lessons: lessons of this scope rank first
//   --task-tag T            expertise: the task's tags (repeatable); nodes
//                           whose applies_to names none of them are excluded
#include <memory>
#include <string>
#include <vector>

#include "retrieval/bundle.hpp"
#include "retrieval/expertise.hpp"
#include "retrieval/selection.hpp"

namespace CLI {
class App;
}

namespace okfbench::cli {

struct SelectionFlags {
  std::string as_of;  // "" = the current time
  bool include_candidates = false;
  std::string prefer_scope;
  std::vector<std::string> task_tags;
};

void add_selection_flags(CLI::App& cmd, SelectionFlags& flags);

// The profile named by --profile; UsageError naming the profiles otherwise.
retrieval::Profile profile_option(const std::string& name);

// The policy's verdict over `bundle` for its profile: lessons ->
// select_lessons, expertise -> select_expertise; okf and repo have no policy
// (nullptr). UsageError for an --as-of that is not a timestamp or a flag of
// another profile's policy.
std::shared_ptr<const retrieval::Selection> make_selection(const retrieval::Bundle& bundle,
                                                           const SelectionFlags& flags);

// The flags as an expertise policy (--as-of, --task-tag).
retrieval::ExpertisePolicy expertise_policy(const SelectionFlags& flags);

}  // namespace okfbench::cli
