#pragma once
// A git repository for the tests of git sources, made with the real `git`
// program from the fixture bundles in tests/data/kb:
//
//   main (HEAD)  bundles/sales, bundles/support (tests/data/kb), escape -> /
//                (a symbolic link out of the repository), README.md
//   tag v1       the same commit as main when made
//   branch next  main plus bundles/sales/metrics/churn.md
#include <filesystem>
#include <string>

namespace okfbench::test {

struct GitFixture {
  std::filesystem::path origin;  // the repository folder
  std::string url;               // file://ORIGIN
  std::string v1_commit;         // 40 hex digits
  std::string next_commit;
};

// Makes the repository under `dir` (which must exist); throws std::runtime_error
// when a git command fails.
GitFixture make_git_fixture(const std::filesystem::path& dir);

// Commits one more file on main; returns the new commit.
std::string commit_on_main(const GitFixture& fixture, const std::string& path, const std::string& text);

}  // namespace okfbench::test
