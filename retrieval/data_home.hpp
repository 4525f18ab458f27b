#pragma once
// Where okfbench finds the data it ships: tokenizers/, pricing.yaml,
// experiments/ (default.yaml and its question sets), bundles/demo and
// regressions/, laid out as datasets/ is in the repository.
//
// The folder is $OKFBENCH_HOME when that is set; otherwise share/okfbench
// beside the running program: <program dir>/../share/okfbench. An install
// prefix has that layout (bin/okfbench, share/okfbench), and so does the build
// tree, which stages the same files in <build>/share/okfbench; programs one or
// two folders deeper in the build tree (tests/, tests/bench/) look one or two
// levels further up. The source tree is never consulted, so an installed or
// moved okfbench works anywhere.
#include <filesystem>
#include <string>

namespace okfbench::retrieval {

// The data folder. Throws InputError when $OKFBENCH_HOME names no folder, or
// when no candidate holds the data (the message lists every place looked at).
std::filesystem::path data_home();

// The data folder for a program at `program` (a path to an executable), with
// $OKFBENCH_HOME given as `home` (empty when unset). data_home() is this for
// the running program; separate so the search can be tested.
std::filesystem::path data_home_for(const std::filesystem::path& program, const std::string& home);

}  // namespace okfbench::retrieval
