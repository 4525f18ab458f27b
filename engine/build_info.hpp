#pragma once
// What was built: fixed when the program is built, never read from a checkout
// at run time. Defined in a small generated file (build_info.cmake writes it
// on every build and rewrites it only when the commit changes), so no other
// object depends on the commit and a compiler cache shares them across
// checkouts.
#include <string_view>

namespace okfbench::engine {

// The project version (CMakeLists.txt's project(VERSION)), e.g. "0.1.0".
std::string_view build_version();

// The commit built, 40 hex digits, with "-dirty" appended when tracked files
// differed from it; "unknown" when the source was not a git checkout.
std::string_view build_git_sha();

}  // namespace okfbench::engine
