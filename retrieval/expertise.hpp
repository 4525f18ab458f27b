#pragma once
// Expertise packs (contextweaver's ExpertisePack): a folder of constraint,
// assumption, verification and failure-mode nodes, loaded with
// Profile::expertise. The root index.md declares the pack's `version` in its
// frontmatter; every node carries a `key` that groups the nodes stating one
// constraint, may name the tasks it is for in `applies_to` (a tag or a
// list), and may expire (`expires_at`). Bundle::load reports each structure
// problem as a Diagnostic naming file, line and key (check_pack_index below
// for the version, the frontmatter reader for the nodes).
//
// A node is live at `now` unless it is `status: rejected` or `status:
// deprecated`, its `expires_at` is invalid, or now >= expires_at. It applies
// to a task when the task has no tags, the node has no `applies_to`, or they
// share a tag (compared exactly). select_expertise() excludes every node
// that is not live or does not apply, with the first reason of:
//   status:rejected, status:deprecated, expires_at:invalid, expired, inapplicable
// A node without `key` is an error diagnostic but stays eligible: its text is
// still advice, it only cannot be checked for conflicts.
//
// detect_conflicts() is literal, as contextweaver's: among the live,
// applicable nodes, those sharing a key whose bodies differ (after trimming
// whitespace at both ends) conflict. No language inference.
#include <optional>
#include <string>
#include <vector>

#include "retrieval/bundle.hpp"
#include "retrieval/selection.hpp"

namespace okfbench::retrieval {

struct ExpertisePolicy {
  std::vector<std::string> task_tags;  // empty = every node applies
  std::string now;                     // ISO-8601 clock for expires_at; "" = now_utc() at selection
};

// One key whose live, applicable nodes disagree.
struct Conflict {
  std::string key;
  std::vector<std::string> ids;  // every live, applicable node with the key, sorted
  std::size_t texts = 0;         // distinct bodies among them (2 or more)
  bool operator==(const Conflict&) const = default;
};

// The pack's `version` as written in the root index.md; "" when missing.
std::string pack_version(const Bundle& pack);

// Problems of the root index.md of a pack: missing, without frontmatter,
// without `version`, or a `version` that is not a plain value. Bundle::load
// adds them to the diagnostics of the expertise profile.
std::vector<Diagnostic> check_pack_index(const std::optional<Bundle::IndexFrontmatter>& index);

// The reason `node` is excluded under `policy` at `now` (a valid
// timestamp), or "" when it is eligible.
std::string expertise_exclusion(const Concept& node, const ExpertisePolicy& policy, const std::string& now);

// Throws InputError when `policy.now` is set but is not a timestamp.
Selection select_expertise(const Bundle& pack, const ExpertisePolicy& policy);

// Sorted by key. Throws InputError as select_expertise.
std::vector<Conflict> detect_conflicts(const Bundle& pack, const ExpertisePolicy& policy);

}  // namespace okfbench::retrieval
