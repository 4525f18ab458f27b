#pragma once
// The markdown body, parsed once with cmark-gfm (footnotes enabled).
//
// Edges come only from real link nodes: inline and reference-style links and
// links inside footnote definitions. Code spans and blocks, HTML (including
// comments) and images never produce edges, because cmark-gfm does not make
// link nodes there (images are skipped with their alt text).
#include <string>
#include <string_view>
#include <vector>

#include "retrieval/bundle.hpp"
#include "retrieval/links.hpp"

namespace okfbench::retrieval {

struct MarkdownScan {
  std::vector<RawLink> links;  // in document order; relation from the nearest heading above
  std::vector<Citation> footnotes;       // label and plain text of each referenced footnote
  std::vector<Citation> citation_items;  // list items under a "Citations" heading (OKF v0.1)
  std::string first_h1;                  // plain text of the first level-1 heading
  std::string first_text;                // plain text of the first paragraph or block quote
};

// Whether `[[Note]]` wikilinks (Obsidian, Foam, Logseq) are links too.
enum class Wikilinks { off, on };

// `first_line` is the file line on which `body` starts, so link lines are
// file lines. Links inside a footnote definition get the relation "CITES".
// With Wikilinks::on, text outside code also yields `[[Target]]`,
// `[[Target|label]]`, `[[Target#Heading]]` and `![[Target]]` (an embed) as
// RawLinks whose href is the target without heading or label.
MarkdownScan scan_markdown(std::string_view body, int first_line, Wikilinks wikilinks = Wikilinks::off);

// The wikilinks in one line of text, in order (exposed for tests).
struct Wikilink {
  std::string target;   // before any '#' or '|', trimmed; "" for "[[#Heading]]"
  std::string heading;  // after '#', "" when absent
  std::string label;    // after '|', else the target as written
  std::string written;  // "[[...]]" or "![[...]]" as in the text
  bool embed = false;
  bool operator==(const Wikilink&) const = default;
};
std::vector<Wikilink> find_wikilinks(std::string_view text);

}  // namespace okfbench::retrieval
