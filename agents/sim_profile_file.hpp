#pragma once
// Behaviour profiles as YAML files (the format is in agents/sim_profile.hpp).
#include <filesystem>
#include <string>
#include <string_view>

#include "agents/sim_model.hpp"
#include "core/numbers.hpp"

namespace okfbench::agents {

// The allowed range of each profile number; the same bounds as the matching
// `agent --sim-*` flags where there is one.
inline constexpr IntegerRange<int> kProfileCount{0, 50};
inline constexpr IntegerRange<int> kProfileSearchK{1, 50};
inline constexpr IntegerRange<int> kProfileMaxTurns{0, 1000};
inline constexpr IntegerRange<int> kProfileAnswerTokens{1, 100000};
inline constexpr IntegerRange<int> kProfileAnswerSpread{0, 100000};
inline constexpr IntegerRange<int> kProfileOverhead{0, 10000};
inline constexpr RealRange kProfileRate{0, 1};
inline constexpr RealRange kProfileWeight{0, 1e9};
inline constexpr RealRange kProfileContentRatio{0.1, 10};

// `base` with the keys of the profile text applied. `file_name` names it in
// messages. Throws InputError naming the file, the line and the key: an
// unknown key, a value out of range, weights that sum to 0, YAML that does
// not parse.
SimOptions parse_sim_profile(std::string_view yaml, std::string_view file_name, SimOptions base = {});
// The same for a file; InputError when it cannot be read.
SimOptions load_sim_profile(const std::filesystem::path& file, SimOptions base = {});

// Every profile key of `options` as YAML that parse_sim_profile reads back to
// the same options; `comment` (lines without '#') goes on top as comments.
std::string sim_profile_yaml(const SimOptions& options, std::string_view comment = {});

}  // namespace okfbench::agents
