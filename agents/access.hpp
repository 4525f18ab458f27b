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
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace okfbench::agents {

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

// `error` is the call's error ("" when it succeeded); `content` what went back to the model.
KnowledgeAccess knowledge_access(std::string_view tool, std::string_view arguments, std::string_view content,
                                 std::string_view error, std::string_view bundle);

}  // namespace okfbench::agents
