#pragma once
// A concept of one of several bundles, written BUNDLE:ID ("sales:metrics/revenue"):
// how question sets, trial records and `okfbench eval` name a concept when a
// trial set or an evaluation combines bundles into one index. A bundle that is
// combined with others has no ':' in its name (specs refuse one), so the
// first ':' splits the two; concept ids may hold any character after it.
#include <optional>
#include <string>
#include <string_view>

namespace okfbench::retrieval {

inline std::string qualified_id(std::string_view bundle, std::string_view id) {
  std::string out(bundle);
  out += ':';
  out += id;
  return out;
}

struct QualifiedId {
  std::string_view bundle;
  std::string_view id;
};

// nullopt when `text` has no ':' or an empty bundle or id part.
inline std::optional<QualifiedId> split_qualified_id(std::string_view text) {
  const auto colon = text.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size()) return std::nullopt;
  return QualifiedId{text.substr(0, colon), text.substr(colon + 1)};
}

}  // namespace okfbench::retrieval
