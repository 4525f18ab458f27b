#pragma once
// A selection policy's verdict over a bundle (lessons, retrieval/lessons.hpp;
// expertise packs, retrieval/expertise.hpp): which concepts may not enter
// context or tool results, each with the reason, and which rank first.
//
// Search (SearchOptions::selection) never returns an excluded concept, so a
// top-k is k eligible ones; context() skips them as seeds and as neighbours
// and reports every exclusion in ContextPack::excluded; the agent tools
// refuse to open them and leave them out of listings.
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace okfbench::retrieval {

struct Exclusion {
  std::string id;
  std::string reason;  // "status:rejected", "expired", ... (the policy's README section lists them)
  bool operator==(const Exclusion&) const = default;
};

struct Selection {
  std::string policy;                      // one line that says what was applied, for reports
  std::vector<Exclusion> excluded;         // sorted by id, one per concept
  std::set<std::string, std::less<>> preferred;  // eligible ids that rank before the others

  // nullptr when `id` is eligible.
  const Exclusion* find(std::string_view id) const;
  bool excludes(std::string_view id) const { return find(id) != nullptr; }
  bool prefers(std::string_view id) const { return preferred.find(id) != preferred.end(); }
};

// The clock a policy judges `expires_at` against: `now`, or now_utc() when
// it is "". Throws InputError naming `what` ("lesson", "expertise") when
// `now` is not a timestamp.
std::string policy_clock(const std::string& now, std::string_view what);

}  // namespace okfbench::retrieval
