#include "tests/support/git_fixture.hpp"

#include <stdexcept>

#include "tests/support/test_support.hpp"

namespace okfbench::test {
namespace fs = std::filesystem;
namespace {

std::string git(const fs::path& repo, const std::string& args) {
  CommandResult r = run_command("git -C '" + repo.string() + "' -c user.name=okfbench -c user.email=tests@okfbench " + args);
  if (r.exit_code != 0) throw std::runtime_error("git " + args + " failed: " + r.err);
  return r.out;
}

std::string head(const fs::path& repo) {
  std::string sha = git(repo, "rev-parse HEAD");
  while (!sha.empty() && sha.back() == '\n') sha.pop_back();
  return sha;
}

}  // namespace

GitFixture make_git_fixture(const fs::path& dir) {
  GitFixture f;
  f.origin = dir / "origin";
  f.url = "file://" + f.origin.string();
  fs::create_directories(f.origin / "bundles");
  git(f.origin, "init -q -b main");
  fs::copy(source_dir() / "tests/data/kb/sales", f.origin / "bundles/sales", fs::copy_options::recursive);
  fs::copy(source_dir() / "tests/data/kb/support", f.origin / "bundles/support", fs::copy_options::recursive);
  fs::create_directory_symlink("/", f.origin / "escape");
  write_file(f.origin / "README.md", "Fixture repository.\n");
  git(f.origin, "add -A");
  git(f.origin, "commit -q -m one");
  git(f.origin, "tag v1");
  f.v1_commit = head(f.origin);
  git(f.origin, "checkout -q -b next");
  write_file(f.origin / "bundles/sales/metrics/churn.md", "---\ntype: Metric\ntitle: Churn\n---\nCustomers lost.\n");
  git(f.origin, "add -A");
  git(f.origin, "commit -q -m churn");
  f.next_commit = head(f.origin);
  git(f.origin, "checkout -q main");
  return f;
}

std::string commit_on_main(const GitFixture& f, const std::string& path, const std::string& text) {
  write_file(f.origin / path, text);
  git(f.origin, "add -A");
  git(f.origin, "commit -q -m more");
  return head(f.origin);
}

}  // namespace okfbench::test
