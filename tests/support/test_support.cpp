#include "tests/support/test_support.hpp"

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

namespace okfbench::test {
namespace fs = std::filesystem;

fs::path data_root() {
  if (const char* env = std::getenv("OKFBENCH_DATA"); env && *env) return fs::path(env);
  return fs::path(OKFBENCH_DEFAULT_DATA);
}

bool have_data() { return fs::is_directory(data_root()); }

fs::path fresh_dir(const std::string& name) {
  static std::atomic<int> counter{0};
  fs::path dir = fs::path(OKFBENCH_TEST_TMP) /
                 (name + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

fs::path source_dir() { return fs::path(OKFBENCH_SOURCE_DIR); }

fs::path web_node_modules() { return fs::path(OKFBENCH_WEB_MODULES); }

fs::path okfbench_binary() { return fs::path(OKFBENCH_BINARY); }

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void write_file(const fs::path& path, const std::string& text) {
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

CommandResult run_command(const std::string& command_line) {
  fs::path dir = fresh_dir("cmd");
  std::string full = command_line + " >" + (dir / "out").string() + " 2>" + (dir / "err").string();
  int status = std::system(full.c_str());
  CommandResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = read_file(dir / "out");
  result.err = read_file(dir / "err");
  fs::remove_all(dir);
  return result;
}

std::filesystem::path make_bundle(const std::string& name, const std::map<std::string, std::string>& files) {
  std::filesystem::path root = fresh_dir(name);
  for (const auto& [path, text] : files) write_file(root / path, text);
  return root;
}

std::string concept_md(const std::string& frontmatter, const std::string& body) {
  return "---\n" + frontmatter + "---\n\n" + body;
}

}  // namespace okfbench::test
