// log.md files (OKF v0.2 section 9): "## YYYY-MM-DD" headings, newest first,
// each followed by "* **Kind**: text" entries. Reading them for history(),
// and the one kind of change remember() makes to them.
#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "retrieval/bundle_impl.hpp"
#include "retrieval/frontmatter.hpp"
#include "retrieval/markdown.hpp"

namespace okfbench::retrieval::detail {
namespace {

std::string_view trim(std::string_view text) {
  std::size_t start = text.find_first_not_of(" \t");
  if (start == std::string_view::npos) return {};
  std::size_t end = text.find_last_not_of(" \t");
  return text.substr(start, end - start + 1);
}

bool is_bullet(std::string_view line) {
  return line.size() >= 2 && (line[0] == '*' || line[0] == '-' || line[0] == '+') && line[1] == ' ';
}

bool is_date(std::string_view text) { return text.size() == 10 && parse_timestamp(text).has_value(); }

// The date of a "## YYYY-MM-DD" line, as LogParser reads it; "" for any other line.
std::string_view date_heading_of(std::string_view line) {
  if (!line.starts_with("## ")) return {};
  std::string_view text = trim(line.substr(3));
  return is_date(text) ? text : std::string_view();
}

// A character that breaks a log line: C0 and C1 controls, DEL, and the
// Unicode line and paragraph separators. Returns its length in bytes, or 0.
std::size_t line_breaker(std::string_view text) {
  auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  if (byte(0) < 0x20 || byte(0) == 0x7F) return 1;
  if (text.size() >= 2 && byte(0) == 0xC2 && byte(1) >= 0x80 && byte(1) <= 0x9F) return 2;  // U+0080..U+009F
  if (text.size() >= 3 && byte(0) == 0xE2 && byte(1) == 0x80 && (byte(2) == 0xA8 || byte(2) == 0xA9)) return 3;
  return 0;
}

// "**Kind**: text", "**Kind** text" or plain "text".
void split_kind(std::string_view item, LogEntry& entry) {
  item = trim(item);
  if (item.starts_with("**")) {
    std::size_t close = item.find("**", 2);
    if (close != std::string_view::npos) {
      std::string_view kind = trim(item.substr(2, close - 2));
      if (kind.ends_with(':')) kind.remove_suffix(1);
      std::string_view rest = trim(item.substr(close + 2));
      if (rest.starts_with(':')) rest = trim(rest.substr(1));
      entry.kind = std::string(kind);
      entry.text = std::string(rest);
      return;
    }
  }
  entry.text = std::string(item);
}

class LogParser {
 public:
  LogParser(const std::string& path, std::vector<Diagnostic>& diagnostics)
      : path_(path), scope_(parent_dir(path)), diagnostics_(diagnostics) {}

  void line(std::string_view text, int number) {
    if (text.starts_with("## ")) return date_heading(trim(text.substr(3)), number);  // as date_heading_of
    if (text.starts_with("#")) return;  // the log's title or a deeper heading
    if (is_bullet(text)) return bullet(text.substr(2), number);
    if (!trim(text).empty() && (text[0] == ' ' || text[0] == '\t') && open_) {
      entries_.back().entry.text += ' ';
      entries_.back().entry.text += trim(text);
      return;
    }
    open_ = false;
  }

  std::vector<StoredLogEntry> finish() {
    for (StoredLogEntry& stored : entries_) {
      for (const RawLink& link : scan_markdown(stored.entry.text, 1).links) {
        ResolvedHref href = resolve_href(path_, link.href);
        if (href.kind == HrefKind::path && href.path.ends_with(".md"))
          stored.targets.push_back(href.path.substr(0, href.path.size() - 3));
      }
    }
    return std::move(entries_);
  }

 private:
  void date_heading(std::string_view text, int number) {
    open_ = false;
    if (is_date(text)) {
      ignoring_ = false;
      date_ = std::string(text);
      return;
    }
    date_.clear();
    ignoring_ = true;
    diagnostics_.push_back({Severity::warning, path_, number,
                            fmt::format("log heading `## {}` is not a YYYY-MM-DD date; entries under it "
                                        "were ignored",
                                        text)});
  }

  void bullet(std::string_view item, int number) {
    open_ = false;
    if (date_.empty()) {
      if (!warned_undated_ && !ignoring_)
        diagnostics_.push_back({Severity::warning, path_, number,
                                "log entry is not under a `## YYYY-MM-DD` heading; put each entry under "
                                "the date it happened; it was ignored"});
      warned_undated_ = true;
      return;
    }
    StoredLogEntry stored;
    stored.entry.date = date_;
    stored.entry.scope = std::string(scope_);
    split_kind(item, stored.entry);
    entries_.push_back(std::move(stored));
    open_ = true;
  }

  const std::string& path_;
  std::string_view scope_;
  std::vector<Diagnostic>& diagnostics_;
  std::vector<StoredLogEntry> entries_;
  std::string date_;
  bool open_ = false;
  bool warned_undated_ = false;
  bool ignoring_ = false;  // under a heading that is not a date
};

}  // namespace

std::vector<StoredLogEntry> parse_log(std::string_view body, int first_line, const std::string& path,
                                      std::vector<Diagnostic>& diagnostics) {
  LogParser parser(path, diagnostics);
  int number = first_line;
  std::size_t pos = 0;
  while (pos < body.size()) {
    std::size_t end = body.find('\n', pos);
    if (end == std::string_view::npos) end = body.size();
    parser.line(body.substr(pos, end - pos), number++);
    pos = end + 1;
  }
  return parser.finish();
}

std::string markdown_line(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool space = false;
  for (std::size_t i = 0; i < text.size();) {
    if (std::size_t length = line_breaker(text.substr(i)); length > 0 || text[i] == ' ') {
      space = true;
      i += std::max<std::size_t>(length, 1);
      continue;
    }
    if (space && !out.empty()) out += ' ';
    space = false;
    char c = text[i++];
    // What could end the link text, start another link or code span, or
    // read as emphasis, a heading, an HTML tag or an entity; '-' and '+'
    // only where they could start a list item.
    bool leading = out.empty() && (c == '-' || c == '+');
    if (leading || std::string_view("\\`*_[]()#<>&!").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

std::string markdown_href(std::string_view id) {
  std::string out = "/";
  for (char c : id) {
    auto byte = static_cast<unsigned char>(c);
    // Bytes that would end or change an inline link destination; the loader
    // percent-decodes them back.
    if (byte <= 0x20 || byte == 0x7F || std::string_view("()<>[]`\\%#?\"'").find(c) != std::string_view::npos)
      out += fmt::format("%{:02X}", byte);
    else
      out += c;
  }
  return out + ".md";
}

std::string insert_log_entry(std::string log, std::string_view date, std::string_view line) {
  std::string entry = std::string(line) + "\n";
  if (log.empty()) return fmt::format("# Bundle log\n\n## {}\n\n{}", date, entry);
  std::size_t pos = log.starts_with("\xEF\xBB\xBF") ? 3 : 0;
  SplitDocument split = split_frontmatter(std::string_view(log).substr(pos));
  if (split.fence == Fence::closed)  // a heading-like YAML comment is no heading
    pos = split.body.empty() ? log.size() : static_cast<std::size_t>(split.body.data() - log.data());
  while (pos < log.size()) {
    std::size_t end = std::min(log.find('\n', pos), log.size());
    std::string_view heading = date_heading_of(std::string_view(log).substr(pos, end - pos));
    if (!heading.empty() && heading < date) {
      log.insert(pos, fmt::format("## {}\n\n{}\n", date, entry));
      return log;
    }
    if (heading == date) {  // first under the day's heading, after its blank line
      if (end == log.size()) log += '\n';
      std::size_t at = end + 1;
      if (at < log.size() && log[at] == '\n') ++at;
      log.insert(at, entry);
      return log;
    }
    pos = end + 1;
  }
  if (!log.ends_with('\n')) log += '\n';
  return log + fmt::format("\n## {}\n\n{}", date, entry);
}

}  // namespace okfbench::retrieval::detail

namespace okfbench::retrieval {
namespace {

bool names_file(std::string_view text, std::string_view file) {
  for (std::size_t at = text.find(file); at != std::string_view::npos; at = text.find(file, at + 1)) {
    char before = at == 0 ? ' ' : text[at - 1];
    bool boundary = !(std::isalnum(static_cast<unsigned char>(before)) || before == '-' || before == '_' ||
                      before == '.');
    if (boundary) return true;
  }
  return false;
}

bool mentions(const detail::StoredLogEntry& stored, std::string_view id) {
  if (std::find(stored.targets.begin(), stored.targets.end(), id) != stored.targets.end()) return true;
  std::string file = std::string(id) + ".md";
  if (names_file(stored.entry.text, file)) return true;
  const std::string& scope = stored.entry.scope;
  if (!scope.empty() && id.starts_with(scope + "/"))
    return names_file(stored.entry.text, std::string_view(file).substr(scope.size() + 1));
  return false;
}

}  // namespace

std::vector<LogEntry> Bundle::history(std::string_view concept_id) const {
  std::vector<LogEntry> entries;
  std::optional<std::string> id = concept_id.empty() ? std::string() : normalize_reference(concept_id);
  if (!id) return entries;
  for (const auto& [scope, log] : impl_->logs)
    for (const detail::StoredLogEntry& stored : log)
      if (id->empty() || mentions(stored, *id)) entries.push_back(stored.entry);
  std::stable_sort(entries.begin(), entries.end(),
                   [](const LogEntry& a, const LogEntry& b) { return a.date > b.date; });
  return entries;
}

}  // namespace okfbench::retrieval
