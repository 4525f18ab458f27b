#pragma once
// The knowledge-access event of one bundle tool call (harnessx's
// KNOWLEDGE_ACCESSED): every call records one, a miss included.
//
//   tool        the tool's name
//   bundle      the bundle's name ("" when the tools were given none)
//   found       false for an error: an unknown concept, a bad argument, a disabled tool
//   query, hits searches (search, search_concepts): the query and the number of hits
//   path        reads (open, read_concept), neighbours (follow, get_neighbors),
//               browse (the layer) and history (the concept, "" for all)
//   body_chars  reads: characters of the body returned (after the cut)
//   hits        neighbours: outbound plus backlinks (get_neighbors) or the
//               concepts listed (follow); browse: concepts listed; history: entries
//
// Read from the call's arguments and its result as the tools wrote them
// (agents/bundle_tools.hpp), so it describes exactly what reached the model.
//
// One type for the agent loop (agents/access.hpp makes it), the trial record
// (reports/record.hpp stores it as "access") and the MCP session log.
#include <cstdint>
#include <optional>
#include <string>

namespace okfbench {

struct KnowledgeAccess {
  std::string tool;
  std::string bundle;
  bool found = false;
  std::string query;
  std::string path;
  std::optional<std::int64_t> hits;
  std::optional<std::int64_t> body_chars;
  bool operator==(const KnowledgeAccess&) const = default;
};

}  // namespace okfbench
