#pragma once
// The selection policy flags of the bundle profiles that have one
// (retrieval/selection.hpp), shared by validate, context and agent:
//   --as-of DATE            the clock for expires_at (default: the current time)
//   --include-candidates    lessons: candidate lessons may be selected
//   --prefer-scope SCOPE    lessons: lessons of this scope rank first
#include <memory>
#include <string>

#include "retrieval/bundle.hpp"
#include "retrieval/selection.hpp"

namespace CLI {
class App;
}

namespace okfbench::cli {

struct SelectionFlags {
  std::string as_of;  // "" = the current time
  bool include_candidates = false;
  std::string prefer_scope;
};

void add_selection_flags(CLI::App& cmd, SelectionFlags& flags);

// The profile named by --profile; UsageError naming the profiles otherwise.
retrieval::Profile profile_option(const std::string& name);

// The policy's verdict over `bundle` for its profile: lessons ->
// select_lessons; okf and repo have no policy (nullptr). UsageError for an
// --as-of that is not a timestamp.
std::shared_ptr<const retrieval::Selection> make_selection(const retrieval::Bundle& bundle,
                                                           const SelectionFlags& flags);

}  // namespace okfbench::cli
