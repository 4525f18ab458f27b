// A whole small bundle through Bundle::load (retrieval/bundle.hpp), then
// every graph, index and history query on it, and remember().
//
// The input is a little archive of sections, each starting with a line
//   === NAME            a file NAME with the lines up to the next section
//   === NAME -> TARGET  a symbolic link NAME pointing at TARGET
//   === remember ID     remember(ID) with the first line as title, the rest as body
//                       (ID as written, as long as it cannot name a path
//                       outside the scratch folder even if remember() were
//                       to take it literally)
// NAMEs are kept to [A-Za-z0-9._-/] with at most 4 parts, none "." or "..",
// so the archive cannot write outside its folder. Link TARGETs may climb out
// of the bundle, e.g. to ../outside/secret.md, a file beside it, but never
// out of the fuzzer's scratch folder: a bug that follows a link must not
// let the fuzzer write anywhere else on the machine.
//
// Invariants: loading and every query never throw; diagnostics name files
// inside the bundle; no concept carries the outside file's text; remember()
// creates nothing outside the bundle.
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "retrieval/bundle.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

namespace fs = std::filesystem;
using namespace okfbench::retrieval;
using okfbench::fuzz::check;

constexpr std::string_view kSecret = "OUTSIDE-THE-BUNDLE-7f3a";
constexpr std::size_t kMaxSections = 16;

bool safe_name(std::string_view name) {
  if (name.empty() || name.size() > 80 || name.front() == '/') return false;
  int parts = 0;
  std::size_t start = 0;
  while (start <= name.size()) {
    std::size_t end = name.find('/', start);
    if (end == std::string_view::npos) end = name.size();
    std::string_view part = name.substr(start, end - start);
    if (part.empty() || part == "." || part == ".." || ++parts > 4) return false;
    start = end + 1;
  }
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-' && c != '/') return false;
  return true;
}

// Whether `path`, taken literally (no link followed), is in the scratch folder.
bool inside_scratch(const fs::path& path) {
  const std::string scratch = okfbench::fuzz::scratch_dir().string() + "/";
  return (path.lexically_normal().string() + "/").starts_with(scratch);
}

// TARGET is relative, "../" only in front, and lands inside the scratch
// folder from the link's real (symlink-free) folder; every link is checked
// this way, so following any chain of them stays inside too.
bool safe_target(const fs::path& link, std::string_view target) {
  std::string_view rest = target;
  bool climbs = false;
  while (rest == ".." || rest.starts_with("../")) {
    rest.remove_prefix(std::min<std::size_t>(3, rest.size()));
    climbs = true;
  }
  if (rest.empty() ? !climbs : !safe_name(rest)) return false;
  std::error_code error;
  const fs::path from = fs::weakly_canonical(link.parent_path(), error);
  if (error) return false;
  return inside_scratch(from / std::string(target));
}

struct Section {
  std::string_view header;
  std::string_view text;
};

std::vector<Section> sections(std::string_view input) {
  std::vector<Section> out;
  std::size_t pos = 0;
  while (pos < input.size() && out.size() < kMaxSections) {
    if (!input.substr(pos).starts_with("=== ")) {
      std::size_t next = input.find("\n=== ", pos);
      if (next == std::string_view::npos) break;
      pos = next + 1;
      continue;
    }
    std::size_t eol = input.find('\n', pos);
    if (eol == std::string_view::npos) eol = input.size();
    std::size_t next = input.find("\n=== ", eol);
    std::size_t end = next == std::string_view::npos ? input.size() : next + 1;
    std::size_t body = std::min(eol + 1, input.size());
    out.push_back({input.substr(pos + 4, eol - pos - 4), input.substr(body, end - body)});
    pos = end;
  }
  return out;
}

std::size_t entries_below(const fs::path& dir) {
  std::size_t count = 0;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) ++count;
  return count;
}

void write_file(const fs::path& path, std::string_view text) {
  std::error_code ignored;
  fs::create_directories(path.parent_path(), ignored);
  std::ofstream(path, std::ios::binary).write(text.data(), static_cast<std::streamsize>(text.size()));
}

// Whether a diagnostic's path names a file inside the bundle: relative, and
// no part of it climbs ("a..b.md" is a fine file name).
bool names_inside(std::string_view path) {
  if (path.starts_with('/')) return false;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = std::min(path.find('/', start), path.size());
    if (path.substr(start, end - start) == "..") return false;
    start = end + 1;
  }
  return true;
}

// Every query a tool can make, on every concept, directory and href.
void query_everything(const Bundle& bundle) {
  for (const Diagnostic& d : bundle.diagnostics()) check(names_inside(d.path), "a diagnostic names a file outside");
  for (const Concept& c : bundle.concepts()) {
    check(c.body.find(kSecret) == std::string::npos && c.title.find(kSecret) == std::string::npos,
          "a concept carries the text of a file outside the bundle");
    check(bundle.find(c.id) == &c, "find() does not find a loaded concept");
    (void)bundle.neighbors(c.id, Direction::both, {}, 2);
    (void)bundle.unresolved(c.id);
    (void)bundle.history(c.id);
    for (const Link& link : c.links) {
      (void)bundle.lookup(link.raw);
      (void)bundle.index(link.raw);
    }
  }
  for (const auto& [layer, count] : bundle.layers()) (void)bundle.index(layer);
  (void)bundle.index();
  for (const LogEntry& entry : bundle.history()) check(!entry.date.empty(), "a log entry without a date");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fs::path& scratch = okfbench::fuzz::scratch_dir();
  const fs::path root = scratch / "bundle";
  fs::remove_all(root);
  fs::create_directories(root);
  write_file(scratch / "outside" / "secret.md", "---\ntype: Secret\n---\n" + std::string(kSecret) + "\n");
  std::vector<Bundle::RememberRequest> remembers;
  for (const Section& s : sections(okfbench::fuzz::as_text(data, size))) {
    if (s.header.starts_with("remember ")) {
      if (!inside_scratch(root / std::string(s.header.substr(9)))) continue;
      std::string_view title = s.text.substr(0, s.text.find('\n'));
      std::string_view body = s.text.substr(std::min(title.size() + 1, s.text.size()));
      remembers.push_back({std::string(s.header.substr(9)), std::string(title), std::string(body), {}, {}, "Note",
                           "2024-01-01"});
      continue;
    }
    const std::size_t arrow = s.header.find(" -> ");
    const std::string_view name = s.header.substr(0, arrow);
    if (!safe_name(name)) continue;
    std::error_code ignored;
    if (arrow == std::string_view::npos) {
      write_file(root / name, s.text);
    } else {
      const std::string_view target = s.header.substr(arrow + 4);
      fs::create_directories((root / name).parent_path(), ignored);
      if (safe_target(root / name, target)) fs::create_symlink(std::string(target), root / name, ignored);
    }
  }
  const std::string secret = okfbench::fuzz::read_file(scratch / "outside" / "secret.md");
  const std::size_t outside = entries_below(scratch) - entries_below(root);
  Bundle okf = Bundle::load(root, {.profile = Profile::okf, .threads = 1});
  query_everything(okf);
  Bundle repo = Bundle::load(root, {.profile = Profile::repo, .threads = 1, .io_uring = false});
  query_everything(repo);
  for (const Bundle::RememberRequest& request : remembers) {
    (void)okf.remember(request);
    check(entries_below(scratch) - entries_below(root) == outside, "remember() created a file outside the bundle");
    check(okfbench::fuzz::read_file(scratch / "outside" / "secret.md") == secret,
          "remember() wrote to a file outside the bundle");
  }
  query_everything(okf);
  return 0;
}
