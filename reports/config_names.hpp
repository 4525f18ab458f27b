#pragma once
// Short, readable names for the configurations of a run, for tables and
// charts where a full label ("agent surface=grafito tools=browse+search+open+
// follow+history+remember max_turns=12 model=sim cache=openai") is too long
// to read. A name is the path ("one-shot" for context, "agent") followed by
// only the settings that tell it apart from the other configurations of the
// same path in the run; the full label stays available beside it (legend,
// hover).
//
//   settings shown as   tools "search+open" (up to three), "6 tools" (more,
//                       when the count alone tells them apart); model by
//                       its name; the rest as key=value (budget=2000, k=5)
//   one configuration   of a path: just "one-shot" or "agent"
//   still equal         two names that would be the same (two tool sets of
//                       equal count) show the tools in full; a name still
//                       shared gets " #2", " #3" in label order
#include <map>
#include <string>
#include <vector>

#include "reports/record.hpp"

namespace okfbench::reports {

// Names by label (PathConfig::label()) for every distinct label of `configs`.
std::map<std::string, std::string> short_config_names(const std::vector<PathConfig>& configs);

}  // namespace okfbench::reports
