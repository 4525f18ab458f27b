#include "retrieval/selection.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "retrieval/bundle.hpp"
#include "core/error.hpp"
#include "retrieval/frontmatter.hpp"

namespace okfbench::retrieval {

const Exclusion* Selection::find(std::string_view id) const {
  auto it = std::lower_bound(excluded.begin(), excluded.end(), id,
                             [](const Exclusion& e, std::string_view wanted) { return e.id < wanted; });
  return it != excluded.end() && it->id == id ? &*it : nullptr;
}

std::string policy_clock(const std::string& now, std::string_view what) {
  if (now.empty()) return now_utc();
  if (!parse_timestamp(now))
    throw InputError(fmt::format("the {} clock `{}` is not a timestamp; write YYYY-MM-DD or 2026-06-30T14:00:00Z",
                                 what, now));
  return now;
}

}  // namespace okfbench::retrieval
