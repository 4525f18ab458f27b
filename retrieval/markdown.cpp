#include "retrieval/markdown.hpp"

#include <cmark-gfm.h>

#include <cstdint>
#include <cstdlib>
#include <memory>

#include "retrieval/arena.hpp"

namespace okfbench::retrieval {
namespace {

struct IterDeleter {
  void operator()(cmark_iter* iter) const { cmark_iter_free(iter); }
};

// cmark-gfm's allocator hooks take no context, so the arena is per thread.
thread_local Arena parse_arena;

void* arena_calloc(std::size_t count, std::size_t size) {
  if (size != 0 && count > SIZE_MAX / size) std::abort();  // as cmark's own calloc would fail
  return parse_arena.allocate_zeroed(count * size);
}
void* arena_realloc(void* block, std::size_t size) { return parse_arena.resize(block, size); }
void arena_free(void*) {}  // everything goes at once when the document is done

cmark_mem arena_memory{arena_calloc, arena_realloc, arena_free};

// Clears the thread's arena when a document's parse and scan are over; the
// parser and its tree live in it, so neither is freed node by node.
struct ArenaScope {
  ArenaScope() = default;
  ArenaScope(const ArenaScope&) = delete;
  ArenaScope& operator=(const ArenaScope&) = delete;
  ~ArenaScope() { parse_arena.clear(); }
};

// Deeply nested input ("> > > ..." thousands of times) must not exhaust the
// stack; text below this depth is left out of titles and snippets.
constexpr int max_text_depth = 64;

void append_plain_text(cmark_node* node, std::string& out, int depth = 0) {
  if (depth > max_text_depth) return;
  switch (cmark_node_get_type(node)) {
    case CMARK_NODE_TEXT:
    case CMARK_NODE_CODE:
      if (const char* literal = cmark_node_get_literal(node)) out += literal;
      return;
    case CMARK_NODE_SOFTBREAK:
    case CMARK_NODE_LINEBREAK:
      out.push_back(' ');
      return;
    case CMARK_NODE_IMAGE:
    case CMARK_NODE_FOOTNOTE_REFERENCE:
      return;
    default:
      break;
  }
  for (cmark_node* child = cmark_node_first_child(node); child; child = cmark_node_next(child)) {
    bool block = child != cmark_node_first_child(node) &&
                 (cmark_node_get_type(child) & CMARK_NODE_TYPE_MASK) == CMARK_NODE_TYPE_BLOCK;
    if (block) out.push_back(' ');
    append_plain_text(child, out, depth + 1);
  }
}

std::string plain_text(cmark_node* node) {
  std::string out;
  append_plain_text(node, out);
  return out;
}

std::string_view line_at(std::string_view text, int line) {
  std::size_t pos = 0;
  for (int i = 1; i < line; ++i) {
    pos = text.find('\n', pos);
    if (pos == std::string_view::npos) return {};
    ++pos;
  }
  std::size_t end = text.find('\n', pos);
  return text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
}

// cmark-gfm has no accessor for a footnote definition's label, so read it back
// from the source line: the "[^label]:" that ends just before the content.
std::string footnote_label(std::string_view body, cmark_node* definition) {
  std::string_view line = line_at(body, cmark_node_get_start_line(definition));
  auto column = static_cast<std::size_t>(std::max(1, cmark_node_get_start_column(definition)));
  std::string_view before = line.substr(0, std::min(line.size(), column - 1));
  std::size_t open = before.rfind("[^");
  std::size_t close = before.rfind("]:");
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return {};
  return std::string(before.substr(open + 2, close - open - 2));
}

std::string_view trim(std::string_view text) {
  std::size_t start = text.find_first_not_of(" \t");
  if (start == std::string_view::npos) return {};
  return text.substr(start, text.find_last_not_of(" \t") - start + 1);
}

// "Note#Heading|label" -> target, heading and label.
Wikilink parse_wikilink(std::string_view inner, bool embed) {
  Wikilink link;
  link.embed = embed;
  std::size_t pipe = inner.find('|');
  std::string_view destination = inner.substr(0, pipe);
  std::size_t hash = destination.find('#');
  link.target = trim(destination.substr(0, hash));
  if (hash != std::string_view::npos) link.heading = trim(destination.substr(hash + 1));
  if (pipe != std::string_view::npos) link.label = trim(inner.substr(pipe + 1));
  if (link.label.empty()) link.label = trim(destination);
  return link;
}

bool is_citations_heading(std::string_view text) {
  return text == "Citations" || text == "citations" || text == "CITATIONS";
}

class Scanner {
 public:
  Scanner(std::string_view body, int first_line, Wikilinks wikilinks)
      : body_(body), line_offset_(first_line - 1), wikilinks_(wikilinks == Wikilinks::on) {}

  MarkdownScan run(cmark_node* document) {
    std::unique_ptr<cmark_iter, IterDeleter> iter{cmark_iter_new(document)};
    cmark_event_type event;
    while ((event = cmark_iter_next(iter.get())) != CMARK_EVENT_DONE) {
      cmark_node* node = cmark_iter_get_node(iter.get());
      if (event == CMARK_EVENT_ENTER)
        enter(iter.get(), node);
      else
        exit(node);
    }
    return std::move(scan_);
  }

 private:
  void enter(cmark_iter* iter, cmark_node* node) {
    switch (cmark_node_get_type(node)) {
      case CMARK_NODE_HEADING: heading(iter, node); break;
      case CMARK_NODE_LINK:
        link(node);
        ++link_depth_;
        break;
      case CMARK_NODE_TEXT:
        if (link_depth_ == 0) text_wikilinks(node);
        break;
      case CMARK_NODE_IMAGE:  // no edge; skip the alt text too
        cmark_iter_reset(iter, node, CMARK_EVENT_EXIT);
        break;
      case CMARK_NODE_FOOTNOTE_DEFINITION:
        in_footnote_ = true;
        scan_.footnotes.push_back({footnote_label(body_, node), plain_text(node)});
        break;
      case CMARK_NODE_PARAGRAPH:
      case CMARK_NODE_BLOCK_QUOTE:
        if (scan_.first_text.empty() && !in_footnote_) scan_.first_text = plain_text(node);
        break;
      case CMARK_NODE_ITEM:
        if (in_citations_ && cmark_node_parent(cmark_node_parent(node)) == cmark_node_parent(citations_heading_))
          scan_.citation_items.push_back({"", plain_text(node)});
        break;
      default: break;
    }
  }

  void exit(cmark_node* node) {
    if (cmark_node_get_type(node) == CMARK_NODE_FOOTNOTE_DEFINITION) in_footnote_ = false;
    if (cmark_node_get_type(node) == CMARK_NODE_LINK) --link_depth_;
  }

  // Text nodes are consolidated first, so one node holds a whole line of a
  // paragraph up to the next inline element; a wikilink never spans lines.
  void text_wikilinks(cmark_node* node) {
    if (!wikilinks_) return;
    const char* literal = cmark_node_get_literal(node);
    if (!literal) return;
    for (Wikilink& found : find_wikilinks(literal)) {
      if (found.target.empty()) continue;  // "[[#Heading]]": a place on the same page
      RawLink raw;
      raw.href = std::move(found.target);
      raw.text = std::move(found.label);
      raw.relation = in_footnote_ ? std::string("CITES") : relation_;
      raw.line = cmark_node_get_start_line(node) + line_offset_;
      raw.form = found.embed ? LinkForm::embed : LinkForm::wikilink;
      raw.written = std::move(found.written);
      scan_.links.push_back(std::move(raw));
    }
  }

  void heading(cmark_iter* iter, cmark_node* node) {
    std::string text = plain_text(node);
    int level = cmark_node_get_heading_level(node);
    if (level == 1 && scan_.first_h1.empty()) scan_.first_h1 = text;
    if (in_citations_ && level <= citations_level_) in_citations_ = false;
    if (is_citations_heading(text)) {
      in_citations_ = true;
      citations_level_ = level;
      citations_heading_ = node;
    }
    // Links inside the heading itself keep the relation of the section above.
    for (cmark_node* child = cmark_node_first_child(node); child; child = cmark_node_next(child)) {
      if (cmark_node_get_type(child) == CMARK_NODE_LINK) link(child);
      if (cmark_node_get_type(child) == CMARK_NODE_TEXT) text_wikilinks(child);
    }
    cmark_iter_reset(iter, node, CMARK_EVENT_EXIT);
    relation_ = relation_from_heading(text);
  }

  void link(cmark_node* node) {
    const char* url = cmark_node_get_url(node);
    RawLink raw;
    raw.href = url ? url : "";
    raw.text = plain_text(node);
    raw.relation = in_footnote_ ? std::string("CITES") : relation_;
    raw.line = cmark_node_get_start_line(node) + line_offset_;
    scan_.links.push_back(std::move(raw));
  }

  std::string_view body_;
  int line_offset_;
  bool wikilinks_;
  int link_depth_ = 0;
  MarkdownScan scan_;
  std::string relation_ = "LINKS_TO";
  bool in_footnote_ = false;
  bool in_citations_ = false;
  int citations_level_ = 0;
  cmark_node* citations_heading_ = nullptr;
};

}  // namespace

std::vector<Wikilink> find_wikilinks(std::string_view text) {
  std::vector<Wikilink> found;
  std::size_t from = 0;
  while (true) {
    std::size_t open = text.find("[[", from);
    if (open == std::string_view::npos) break;
    std::size_t close = text.find("]]", open + 2);
    if (close == std::string_view::npos) break;
    std::string_view inner = text.substr(open + 2, close - open - 2);
    if (std::size_t nested = inner.rfind("[["); nested != std::string_view::npos) {
      from = open + 2 + nested;  // "[[a [[b]]": the innermost pair is the link
      continue;
    }
    from = close + 2;
    if (inner.find_first_of("[]\n") != std::string_view::npos || trim(inner).empty()) continue;
    bool embed = open > 0 && text[open - 1] == '!';
    Wikilink link = parse_wikilink(inner, embed);
    link.written = std::string(text.substr(open - (embed ? 1 : 0), close + 2 - open + (embed ? 1 : 0)));
    found.push_back(std::move(link));
  }
  return found;
}

MarkdownScan scan_markdown(std::string_view body, int first_line, Wikilinks wikilinks) {
  ArenaScope scope;
  cmark_parser* parser = cmark_parser_new_with_mem(CMARK_OPT_FOOTNOTES, &arena_memory);
  cmark_parser_feed(parser, body.data(), body.size());
  cmark_node* document = cmark_parser_finish(parser);
  // cmark splits text at every '[' and '!' it considered as a link opener.
  if (wikilinks == Wikilinks::on) cmark_consolidate_text_nodes(document);
  return Scanner(body, first_line, wikilinks).run(document);
}

}  // namespace okfbench::retrieval
