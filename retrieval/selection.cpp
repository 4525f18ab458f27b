#include "retrieval/selection.hpp"

#include <algorithm>

namespace okfbench::retrieval {

const Exclusion* Selection::find(std::string_view id) const {
  auto it = std::lower_bound(excluded.begin(), excluded.end(), id,
                             [](const Exclusion& e, std::string_view wanted) { return e.id < wanted; });
  return it != excluded.end() && it->id == id ? &*it : nullptr;
}

}  // namespace okfbench::retrieval
