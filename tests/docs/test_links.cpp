// The repository's documentation points only at files that exist in it:
//   - every relative link of every Markdown file (parsed with cmark-gfm, so
//     links inside code blocks, which are examples, do not count) names an
//     existing file or folder, and none leaves the repository;
//   - every repository path written as inline code (`engine/runner.hpp`)
//     exists;
//   - no source file, script or spec cites a design document or a docs/ page
//     that the repository does not hold.
// Skipped: the demo bundle and test fixtures (their links are OKF links,
// checked by the bundle validator), build folders and npm's node_modules.
#include <cmark-gfm.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/test_support.hpp"

namespace okfbench::test {
namespace {

namespace fs = std::filesystem;

bool skipped(const fs::path& relative) {
  const std::string first = relative.begin()->string();
  const std::string text = relative.generic_string();
  return first.rfind("build", 0) == 0 || first == ".git" || first == "okfbench-out" ||
         text.find("node_modules") != std::string::npos || text.rfind("datasets/bundles/", 0) == 0 ||
         text.rfind("tests/data/", 0) == 0 || text.rfind("tests/fuzz/corpus/", 0) == 0;
}

// Files under the source root with one of `extensions` (or named CMakeLists.txt), as paths relative to it.
std::vector<fs::path> repository_files(const std::set<std::string>& extensions) {
  const fs::path root = source_dir();
  std::vector<fs::path> out;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    const fs::path relative = fs::relative(it->path(), root);
    if (skipped(relative)) {
      if (it->is_directory()) it.disable_recursion_pending();
      continue;
    }
    const fs::path& p = it->path();
    if (it->is_regular_file() && (extensions.count(p.extension().string()) || p.filename() == "CMakeLists.txt"))
      out.push_back(relative);
  }
  return out;
}

// The repository's top-level folders: a code span starting with one is a path.
std::set<std::string> top_folders() {
  std::set<std::string> out;
  for (const auto& entry : fs::directory_iterator(source_dir())) {
    const fs::path relative = fs::relative(entry.path(), source_dir());
    if (entry.is_directory() && !skipped(relative)) out.insert(relative.string());
  }
  return out;
}

bool inside_repository(const fs::path& path) {
  const fs::path root = fs::weakly_canonical(source_dir());
  const fs::path resolved = fs::weakly_canonical(path);
  auto [r, p] = std::mismatch(root.begin(), root.end(), resolved.begin(), resolved.end());
  return r == root.end();
}

struct Reference {
  std::string target;  // as written
  bool link = false;   // a Markdown link (else an inline code path)
};

std::vector<Reference> references_in(const std::string& markdown, const std::set<std::string>& tops) {
  std::vector<Reference> out;
  cmark_node* doc = cmark_parse_document(markdown.data(), markdown.size(), CMARK_OPT_DEFAULT);
  cmark_iter* iter = cmark_iter_new(doc);
  static const std::regex path_like(R"(^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)+/?$)");
  for (auto ev = cmark_iter_next(iter); ev != CMARK_EVENT_DONE; ev = cmark_iter_next(iter)) {
    if (ev != CMARK_EVENT_ENTER) continue;
    cmark_node* node = cmark_iter_get_node(iter);
    const auto type = cmark_node_get_type(node);
    if (type == CMARK_NODE_LINK || type == CMARK_NODE_IMAGE) {
      std::string url = cmark_node_get_url(node);
      if (url.empty() || url[0] == '#' || std::regex_search(url, std::regex("^[a-z][a-z0-9+.-]*:"))) continue;
      out.push_back({url.substr(0, url.find('#')), true});
    } else if (type == CMARK_NODE_CODE) {
      const std::string code = cmark_node_get_literal(node);
      if (!std::regex_match(code, path_like)) continue;
      if (!tops.count(code.substr(0, code.find('/')))) continue;
      out.push_back({code, false});
    }
  }
  cmark_iter_free(iter);
  cmark_node_free(doc);
  return out;
}

TEST(DocsLinks, EveryRelativeLinkAndRepositoryPathInMarkdownExists) {
  const auto tops = top_folders();
  std::vector<std::string> problems;
  std::size_t checked = 0;
  for (const fs::path& file : repository_files({".md"})) {
    for (const Reference& ref : references_in(read_file(source_dir() / file), tops)) {
      ++checked;
      const fs::path base = ref.link ? (source_dir() / file).parent_path() : source_dir();
      const fs::path target = base / ref.target;
      if (ref.link && (ref.target[0] == '/' || !inside_repository(target))) {
        problems.push_back(file.string() + ": link " + ref.target + " leaves the repository");
      } else if (!fs::exists(target)) {
        problems.push_back(file.string() + ": " + (ref.link ? "link " : "path `") + ref.target +
                           (ref.link ? "" : "`") + " does not exist");
      }
    }
  }
  EXPECT_GT(checked, 100u);  // the READMEs name hundreds of files; far fewer means the parser saw nothing
  for (const auto& p : problems) ADD_FAILURE() << p;
}

TEST(DocsLinks, NoFileCitesADocumentOutsideTheRepository) {
  static const std::regex cited(R"((^|[^A-Za-z0-9_/.])((docs/[A-Za-z0-9_./-]+\.md)|DESIGN\.md))");
  std::vector<std::string> problems;
  for (const fs::path& file :
       repository_files({".cpp", ".hpp", ".h", ".sh", ".yaml", ".yml", ".cmake", ".js", ".json", ".md", ".sbatch"})) {
    std::istringstream lines(read_file(source_dir() / file));
    int number = 0;
    for (std::string line; std::getline(lines, line);) {
      ++number;
      std::smatch m;
      if (!std::regex_search(line, m, cited)) continue;
      if (!fs::exists(source_dir() / m[2].str()))
        problems.push_back(file.string() + ":" + std::to_string(number) + ": cites " + m[2].str() +
                           ", which is not in the repository");
    }
  }
  for (const auto& p : problems) ADD_FAILURE() << p;
}

// The checks themselves: a missing file and a link out of the repository are found.
TEST(DocsLinks, TheCheckerFindsWhatItLooksFor) {
  const auto refs = references_in(
      "See [runner](engine/runner.hpp#x), [site](https://example.org), `engine/missing.cpp`, "
      "`not a path`, `build/x.md`.\n\n```\n[in a block](nowhere.md)\n```\n",
      {"engine"});
  ASSERT_EQ(refs.size(), 2u);
  EXPECT_EQ(refs[0].target, "engine/runner.hpp");
  EXPECT_TRUE(refs[0].link);
  EXPECT_EQ(refs[1].target, "engine/missing.cpp");
  EXPECT_FALSE(refs[1].link);
  EXPECT_FALSE(inside_repository(source_dir() / ".." / "elsewhere.md"));
  EXPECT_TRUE(inside_repository(source_dir() / "engine" / "README.md"));
}

}  // namespace
}  // namespace okfbench::test
