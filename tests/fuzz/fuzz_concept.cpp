// One bundle file's bytes through the loader's per-file parser: encoding
// checks, frontmatter (yaml-cpp), the markdown body (cmark-gfm), and the
// resolution of every link it finds. The same bytes are read as a concept
// under both profiles, as an index.md and as a log.md.
//
// Invariants: parsing never throws and never needs its last-resort catch
// (that would mean a content problem surfaced as an exception instead of a
// diagnostic); diagnostics carry the file's path and a line inside the file;
// a resolved link path never leaves the bundle root.
#include <cstddef>
#include <cstdint>
#include <string>

#include "retrieval/bundle_impl.hpp"
#include "retrieval/links.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

using namespace okfbench::retrieval;
using okfbench::fuzz::check;

bool inside_root(const std::string& path) {
  if (path.starts_with('/')) return false;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (path.compare(start, end - start, "..") == 0) return false;
    start = end + 1;
  }
  return true;
}

void check_links(const std::string& from, const std::vector<RawLink>& links) {
  for (const RawLink& link : links) {
    const ResolvedHref href = resolve_href(from, link.href);
    if (href.kind == HrefKind::path)
      check(inside_root(href.path), "the link " + link.href + " resolved outside the bundle root: " + href.path);
    if (auto id = normalize_reference(link.href))
      check(inside_root(*id), "the reference " + link.href + " normalized outside the root: " + *id);
  }
}

void check_diagnostics(const detail::ParsedFile& file, int lines) {
  for (const Diagnostic& d : file.diagnostics) {
    check(d.path == file.path, "a diagnostic names another file");
    check(d.line >= 0 && d.line <= lines + 1, "a diagnostic names a line outside the file");
    check(!d.message.starts_with("cannot load the file:"), "an exception escaped the file parser");
  }
}

detail::ParsedFile parse(const std::string& path, detail::FileKind kind, Profile profile, std::string_view bytes) {
  LoadOptions options;
  options.profile = profile;
  return detail::parse_file({path, {}, kind}, options, {std::string(bytes), {}});
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes = okfbench::fuzz::as_text(data, size);
  int lines = 1;
  for (char c : bytes) lines += c == '\n';
  for (Profile profile : {Profile::okf, Profile::repo}) {
    detail::ParsedFile file = parse("layer/sub/page.md", detail::FileKind::concept_file, profile, bytes);
    check_diagnostics(file, lines);
    check_links(file.path, file.parsed.raw_links);
    if (file.loaded) check(file.parsed.item.id == "layer/sub/page", "the concept id is not its path");
  }
  check_diagnostics(parse("layer/index.md", detail::FileKind::index, Profile::okf, bytes), lines);
  check_diagnostics(parse("index.md", detail::FileKind::index, Profile::okf, bytes), lines);
  check_diagnostics(parse("layer/log.md", detail::FileKind::log, Profile::okf, bytes), lines);
  return 0;
}
