#pragma once
// okf:// resource URIs: okf://BUNDLE/CONCEPT_ID, the id percent-encoded
// except for its '/' separators and unreserved characters.
#include <optional>
#include <string>
#include <string_view>

namespace okfbench::mcp {

struct ConceptUri {
  std::string bundle;
  std::string concept_id;
  bool operator==(const ConceptUri&) const = default;
};

std::string concept_uri(std::string_view bundle, std::string_view concept_id);
// nullopt when `uri` is not okf://NAME/ID (other scheme, no id, bad
// percent-escape). The id is not checked against any bundle here: the
// server looks it up in memory, so "okf://b/../x" finds nothing.
std::optional<ConceptUri> parse_concept_uri(std::string_view uri);

}  // namespace okfbench::mcp
