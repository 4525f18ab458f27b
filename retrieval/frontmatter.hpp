#pragma once
// Frontmatter: finding the YAML block, reading the OKF v0.2 fields from it,
// and the two value checks the spec defines (timestamps, actors).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "retrieval/bundle.hpp"
#include "retrieval/links.hpp"

namespace okfbench::retrieval {

enum class Fence { none, closed, unterminated };

// A document split at its frontmatter fences. `text` must already have LF
// line endings and no BOM.
struct SplitDocument {
  Fence fence = Fence::none;
  std::string_view yaml;  // between the fences
  std::string_view body;  // after the closing fence (the whole text when there is none)
  int yaml_line = 0;      // 1-based file line of the first YAML line
  int body_line = 1;      // 1-based file line where the body starts
};
SplitDocument split_frontmatter(std::string_view text);

enum class FrontmatterOutcome { loaded, skip };

// Reads the YAML block into `concept` (type, title, description, resource,
// tags, status, stale_after, generated, verified -> trust, sources, unknown
// keys into `extra`) and frontmatter `links:` into `links`. Problems are
// appended to `diagnostics` with concept.path and file lines. Returns skip
// when the file cannot be a concept (invalid YAML, not a mapping, no usable
// `type` or a repeated key in the okf profile). A repeated key, at any depth,
// is an error in the okf profile and a warning in the repo profile, where
// its first value is used.
FrontmatterOutcome read_frontmatter(std::string_view yaml, int yaml_line, Profile profile,
                                    Concept& item, std::vector<RawLink>& links,
                                    std::vector<Diagnostic>& diagnostics);

// ISO 8601 as OKF writes it: "YYYY-MM-DD" (midnight UTC) or
// "YYYY-MM-DDTHH:MM[:SS[.fff]]" followed by "Z" or "+HH:MM"/"-HH:MM".
// Returns seconds since 1970-01-01T00:00:00Z; nullopt when invalid.
std::optional<std::int64_t> parse_timestamp(std::string_view text);

// OKF v0.2 section 7: "human:<id>", "process:<id>", "<producer>/<version>";
// ids non-empty without whitespace. nullopt for anything else.
enum class ActorKind { human, process, agent };
std::optional<ActorKind> classify_actor(std::string_view actor);

// Section 5.3: any human actor -> human_reviewed, other valid actors ->
// machine_confirmed, none -> unverified.
TrustTier trust_tier(const std::vector<Verification>& verified);

}  // namespace okfbench::retrieval
