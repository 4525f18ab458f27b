#pragma once
// Shared helpers for the test and benchmark programs.
#include <filesystem>
#include <map>
#include <string>

namespace okfbench::test {

// Root of the reference data: $OKFBENCH_DATA, else ../shared/data beside the source tree.
std::filesystem::path data_root();

// True when data_root() exists; tests that need it call GTEST_SKIP otherwise.
bool have_data();

// A fresh, empty directory under the build tree, unique per call.
std::filesystem::path fresh_dir(const std::string& name);

// The project's source tree (for datasets/ and golden files).
std::filesystem::path source_dir();

// The built okfbench program, for end-to-end tests of the CLI.
std::filesystem::path okfbench_binary();

// node_modules of reports/web installed in the build tree (playwright-core,
// the chart libraries), for the browser tests of the HTML report.
std::filesystem::path web_node_modules();

// A fresh_dir(name) holding `files` (relative path -> text); its path.
std::filesystem::path make_bundle(const std::string& name, const std::map<std::string, std::string>& files);

// A concept file's text: `frontmatter` (YAML lines, each ending in a newline)
// between the --- fences, a blank line, then `body`.
std::string concept_md(const std::string& frontmatter, const std::string& body);

std::string read_file(const std::filesystem::path& path);
void write_file(const std::filesystem::path& path, const std::string& text);

struct CommandResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs a shell command line, capturing stdout and stderr.
CommandResult run_command(const std::string& command_line);

}  // namespace okfbench::test
