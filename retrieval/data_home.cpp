#include "retrieval/data_home.hpp"

#include <cstdlib>
#include <string>
#include <system_error>
#include <vector>

#include "core/error.hpp"

namespace okfbench::retrieval {
namespace fs = std::filesystem;

namespace {

// A staged or installed data folder always holds the tokenizers' facts file;
// checking for it keeps an unrelated share/okfbench from being taken.
bool holds_data(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "tokenizers" / "encodings.json", ec);
}

// The build tree's deepest programs (tests/bench/bench_*) sit two folders
// below the one bin/ would be.
constexpr int kExtraLevels = 2;

}  // namespace

fs::path data_home_for(const fs::path& program, const std::string& home) {
  if (!home.empty()) {
    std::error_code ec;
    if (!fs::is_directory(home, ec)) {
      throw InputError("OKFBENCH_HOME=" + home +
                       " is not a folder: point it at an installed share/okfbench (or unset it to use the one beside "
                       "the program)");
    }
    return fs::path(home);
  }
  std::vector<fs::path> tried;
  fs::path dir = program.parent_path();
  for (int level = 0; level <= kExtraLevels && !dir.empty(); ++level) {
    const fs::path candidate = (dir / ".." / "share" / "okfbench").lexically_normal();
    if (holds_data(candidate)) return candidate;
    tried.push_back(candidate);
    dir = dir.parent_path();
  }
  std::string list;
  for (const auto& t : tried) list += (list.empty() ? "" : ", ") + t.string();
  throw InputError("okfbench's data (tokenizers, pricing, experiments) is not beside the program " + program.string() +
                   " (looked in " + list +
                   "): install it with `cmake --install BUILD --prefix P` and run P/bin/okfbench, or set OKFBENCH_HOME "
                   "to a share/okfbench folder");
}

fs::path data_home() {
  std::error_code ec;
  fs::path program = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw InputError("cannot find the running program (/proc/self/exe: " + ec.message() + "); set OKFBENCH_HOME");
  const char* env = std::getenv("OKFBENCH_HOME");
  return data_home_for(program, env ? env : "");
}

}  // namespace okfbench::retrieval
