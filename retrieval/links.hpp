#pragma once
// Link targets: how an href written in a concept becomes a bundle path.
//
// Rules (OKF v0.2 section 6; retrieval/docs/bundle-rules.md): "/x.md" is relative to the
// bundle root, "x.md" and "./x.md" to the linking file's directory, "dir/"
// means "dir/index.md"; targets are percent-decoded and "#fragment" /
// "?query" suffixes dropped. Hrefs with a URL scheme ("https:", "mailto:")
// or a network path ("//host") are external and never edges. A ".." that
// would leave the root is reported, never turned into a path.
#include <optional>
#include <string>
#include <string_view>

#include "retrieval/bundle.hpp"

namespace okfbench::retrieval {

// A link as written, before resolution.
struct RawLink {
  std::string href;  // for a wikilink: the target name, without heading or label
  std::string text;
  std::string relation;  // upper-snake, "LINKS_TO" when no heading/rel applies
  int line = 0;
  bool from_frontmatter = false;
  LinkForm form = LinkForm::markdown;
  std::string written;  // a wikilink as written ("[[Note|label]]"); "" for markdown links
};

enum class HrefKind {
  path,          // a bundle path: see ResolvedHref::path
  external,      // has a URL scheme or starts with "//"
  anchor,        // empty or "#fragment" only: a link within the same page
  escapes_root,  // ".." climbs above the bundle root
};

struct ResolvedHref {
  HrefKind kind = HrefKind::anchor;
  std::string path;  // bundle-relative, '/'-separated, no leading '/'; "" for the root directory
  bool directory = false;  // the href ended with '/' (or was "/" or "."), so it names a directory
};

// `from_file` is the bundle-relative path of the linking file ("a/b.md").
ResolvedHref resolve_href(std::string_view from_file, std::string_view href);

// "%20" -> " "; malformed escapes are kept as written.
std::string percent_decode(std::string_view text);

// True for "https://...", "mailto:x", "//host/x" and other scheme-qualified hrefs.
bool is_external(std::string_view href);

// Joins `relative` onto the directory `base_dir` ("" for the root) and removes
// "." and ".." segments. nullopt when ".." would leave the root.
std::optional<std::string> join_path(std::string_view base_dir, std::string_view relative);

// "a/b/c.md" -> "a/b"; "c.md" -> "".
std::string_view parent_dir(std::string_view path);

// The relation a heading names: "Joins with" -> "JOINS_WITH" (ASCII letters
// upper-cased, runs of other ASCII characters become one '_', non-ASCII kept).
// "" -> "LINKS_TO".
std::string relation_from_heading(std::string_view heading);

// A concept reference as agents write it ("/a/b.md", "./a/b", "a/b.md#x")
// reduced to an id ("a/b"). nullopt for anything that leaves the root or is
// external.
std::optional<std::string> normalize_reference(std::string_view reference);

}  // namespace okfbench::retrieval
