#include "retrieval/frontmatter.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <sstream>
#include <fmt/format.h>

#include "core/yaml_keys.hpp"

namespace okfbench::retrieval {
namespace {

bool is_blank(std::string_view text) {
  return text.find_first_not_of(" \t") == std::string_view::npos;
}

bool is_fence_line(std::string_view line, std::string_view fence) {
  return line.starts_with(fence) && is_blank(line.substr(fence.size()));
}

// Parses exactly `count` digits at `pos`; -1 when they are not all digits.
int digits(std::string_view text, std::size_t pos, std::size_t count) {
  if (pos + count > text.size()) return -1;
  int value = 0;
  for (std::size_t i = pos; i < pos + count; ++i) {
    if (text[i] < '0' || text[i] > '9') return -1;
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

std::optional<int> parse_offset_seconds(std::string_view zone) {
  if (zone == "Z" || zone == "z") return 0;
  if (zone.size() != 6 && zone.size() != 5 && zone.size() != 3) return std::nullopt;
  if (zone[0] != '+' && zone[0] != '-') return std::nullopt;
  int hours = digits(zone, 1, 2);
  int minutes = 0;
  if (zone.size() == 6) {
    if (zone[3] != ':') return std::nullopt;
    minutes = digits(zone, 4, 2);
  } else if (zone.size() == 5) {
    minutes = digits(zone, 3, 2);
  }
  if (hours < 0 || hours > 23 || minutes < 0 || minutes > 59) return std::nullopt;
  int seconds = hours * 3600 + minutes * 60;
  return zone[0] == '-' ? -seconds : seconds;
}

bool is_plain_non_string(const YAML::Node& node) {
  if (node.Tag() != "?") return false;  // quoted scalars are strings
  const std::string& text = node.Scalar();
  if (text.empty() || text == "~" || text == "null" || text == "Null" || text == "NULL") return true;
  if (text == "true" || text == "false" || text == "True" || text == "False" || text == "TRUE" ||
      text == "FALSE")
    return true;
  std::size_t start = (text[0] == '-' || text[0] == '+') ? 1 : 0;
  if (start == text.size()) return false;
  for (std::size_t i = start; i < text.size(); ++i) {
    char c = text[i];
    if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '_')) return false;
  }
  return true;
}

std::string_view kind_name(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Null: return "empty";
    default: return "a scalar";
  }
}

// Everything read_frontmatter needs to report problems at the right line.
class Reader {
 public:
  Reader(int yaml_line, Concept& item, std::vector<Diagnostic>& diagnostics)
      : yaml_line_(yaml_line), concept_(item), diagnostics_(diagnostics) {}

  // The file line of a 1-based line of the YAML block.
  int file_line(int yaml_block_line) const { return yaml_line_ + std::max(0, yaml_block_line - 1); }

  int line_of(const YAML::Node& node) const {
    if (!node) return yaml_line_;  // a missing key has no position
    int mark = node.Mark().line;
    return mark >= 0 ? yaml_line_ + mark : yaml_line_;
  }

  void report(Severity severity, int line, std::string message) {
    diagnostics_.push_back({severity, concept_.path, line, std::move(message)});
  }
  void warn(const YAML::Node& node, std::string message) {
    report(Severity::warning, line_of(node), std::move(message));
  }

  // A scalar field as a string; warns and returns "" for lists and mappings.
  std::string text(const YAML::Node& node, std::string_view key) {
    if (!node || node.IsNull()) return {};
    if (node.IsScalar()) return node.Scalar();
    warn(node, fmt::format("`{}` is {}; write it as a plain string. The field was ignored", key,
                           kind_name(node)));
    return {};
  }

  std::string timestamp(const YAML::Node& node, std::string_view key) {
    std::string value = text(node, key);
    if (!value.empty() && !parse_timestamp(value))
      warn(node, fmt::format("`{}: {}` is not an ISO 8601 timestamp with a UTC offset; write it "
                             "like 2026-06-30T14:00:00Z",
                             key, value));
    return value;
  }

  // `parent[field]` as an actor; warnings point at the entry when the key is missing.
  std::optional<std::string> actor(const YAML::Node& parent, const char* field, std::string_view key) {
    const YAML::Node node = parent[field];
    std::string value = text(node, key);
    if (value.empty()) {
      warn(node ? node : parent, fmt::format("`{}` has no actor; add `by: human:<id>`, `by: process:<id>` or "
                             "`by: <producer>/<version>`. The entry was ignored",
                             key));
      return std::nullopt;
    }
    if (!classify_actor(value)) {
      warn(node, fmt::format("`{}: {}` is not an actor; use human:<id>, process:<id> or "
                             "<producer>/<version> (no spaces). The entry was ignored",
                             key, value));
      return std::nullopt;
    }
    return value;
  }

 private:
  int yaml_line_;
  Concept& concept_;
  std::vector<Diagnostic>& diagnostics_;
};

void read_tags(Reader& reader, const YAML::Node& node, Concept& item) {
  if (!node || node.IsNull()) return;
  if (node.IsScalar()) {
    item.tags.push_back(node.Scalar());
    return;
  }
  if (!node.IsSequence()) {
    reader.warn(node, "`tags` is a mapping; write a list such as [sales, orders]. Tags were ignored");
    return;
  }
  for (const YAML::Node& tag : node) {
    if (tag.IsScalar() && !tag.Scalar().empty())
      item.tags.push_back(tag.Scalar());
    else
      reader.warn(tag, "a `tags` entry is not a plain string; it was ignored");
  }
}

void read_status(Reader& reader, const YAML::Node& node, Concept& item) {
  std::string value = reader.text(node, "status");
  if (value.empty() || value == "stable") return;
  if (value == "draft") {
    item.status = Status::draft;
  } else if (value == "deprecated") {
    item.status = Status::deprecated;
  } else {
    reader.warn(node, fmt::format("`status: {}` is not draft, stable or deprecated; treated as "
                                  "stable",
                                  value));
  }
}

void read_generated(Reader& reader, const YAML::Node& node, Concept& item) {
  if (!node || node.IsNull()) return;
  if (node.IsScalar()) {  // `generated: true` from producers that only flag it
    item.generated = node.Scalar() == "true";
    return;
  }
  if (!node.IsMap()) {
    reader.warn(node, "`generated` is a list; write `generated: { by: <actor>, at: <timestamp> }`");
    return;
  }
  item.generated_at = reader.timestamp(node["at"], "generated.at");
  if (auto by = reader.actor(node, "by", "generated.by")) {
    item.generated_by = *by;
    item.generated = classify_actor(*by) != ActorKind::human;
  }
}

void read_verification(Reader& reader, const YAML::Node& entry, Concept& item) {
  if (!entry.IsMap()) {
    reader.warn(entry, "a `verified` entry is not a mapping; write `{ by: <actor>, at: "
                       "<timestamp> }`. The entry was ignored");
    return;
  }
  std::optional<std::string> by = reader.actor(entry, "by", "verified.by");
  if (!by) return;
  item.verified.push_back({*by, reader.timestamp(entry["at"], "verified.at")});
}

void read_verified(Reader& reader, const YAML::Node& node, Concept& item) {
  if (!node || node.IsNull()) return;
  if (node.IsSequence()) {
    for (const YAML::Node& entry : node) read_verification(reader, entry, item);
  } else {
    read_verification(reader, node, item);  // a bare mapping is a one-element list (5.2)
  }
  item.trust = trust_tier(item.verified);
}

void read_sources(Reader& reader, const YAML::Node& node, Concept& item) {
  if (!node || node.IsNull()) return;
  if (!node.IsSequence()) {
    reader.warn(node, "`sources` is not a list; write `sources: [{ id, resource, title }]`");
    return;
  }
  for (const YAML::Node& entry : node) {
    if (entry.IsScalar()) {
      Source bare;
      bare.resource = entry.Scalar();
      item.sources.push_back(std::move(bare));
      continue;
    }
    if (!entry.IsMap()) {
      reader.warn(entry, "a `sources` entry is a list; write `{ id, resource, title }`");
      continue;
    }
    Source source;
    source.id = reader.text(entry["id"], "sources.id");
    source.resource = reader.text(entry["resource"], "sources.resource");
    source.title = reader.text(entry["title"], "sources.title");
    if (source.resource.empty())
      reader.warn(entry, "a `sources` entry has no `resource`; add the URL, bundle path or scope "
                         "it derives from");
    source.author = reader.text(entry["author"], "sources.author");
    source.usage_count = reader.text(entry["usage_count"], "sources.usage_count");
    source.last_modified = reader.timestamp(entry["last_modified"], "sources.last_modified");
    item.sources.push_back(std::move(source));
  }
}

void read_links(Reader& reader, const YAML::Node& node, std::vector<RawLink>& links) {
  if (!node || node.IsNull()) return;
  if (!node.IsSequence()) {
    reader.warn(node, "`links` is not a list; write `links: [{ target: /x.md, rel: depends_on }]`");
    return;
  }
  for (const YAML::Node& entry : node) {
    RawLink link;
    link.line = reader.line_of(entry);
    link.from_frontmatter = true;
    if (entry.IsScalar()) {
      link.href = entry.Scalar();
    } else if (entry.IsMap()) {
      link.href = reader.text(entry["target"], "links.target");
      link.relation = reader.text(entry["rel"], "links.rel");
      link.text = reader.text(entry["title"], "links.title");
    }
    if (link.href.empty()) {
      reader.warn(entry, "a `links` entry has no `target`; write `{ target: /x.md, rel: ... }`");
      continue;
    }
    link.relation = relation_from_heading(link.relation);
    links.push_back(std::move(link));
  }
}

// The one required field (OKF v0.2 section 4.1). Returns an error message or "".
std::string check_type(const YAML::Node& node) {
  if (!node) return "frontmatter has no `type`; add a line such as `type: Playbook`";
  if (!node.IsScalar() || is_plain_non_string(node)) {
    if (node.IsNull() || (node.IsScalar() && node.Scalar().empty()))
      return "`type` is empty; give the concept a type such as `type: Playbook`";
    return fmt::format("`type` must be a string, not {}; write e.g. `type: Playbook`",
                       node.IsScalar() ? std::string_view("a number, boolean or null") : kind_name(node));
  }
  if (is_blank(node.Scalar())) return "`type` is empty; give the concept a type such as `type: Playbook`";
  return {};
}

const std::vector<std::string_view>& known_keys() {
  static const std::vector<std::string_view> keys{
      "type", "title", "description", "resource", "tags", "status", "stale_after",
      "generated", "verified", "sources", "links", "timestamp"};
  return keys;
}

// Keys that are checked and also kept in `extra` as written: usage_window
// (OKF), and the fields of the lessons and expertise profiles.
const std::vector<std::string_view>& checked_extra_keys() {
  static const std::vector<std::string_view> keys{"usage_window", "scope", "expires_at", "key", "applies_to"};
  return keys;
}

// YAML aliases can make a small file describe an exponentially large tree
// ("billion laughs"); count nodes with a budget before dumping a value.
bool within_node_budget(const YAML::Node& node, int& budget) {
  if (--budget < 0) return false;
  if (node.IsMap())
    for (const auto& entry : node)
      if (!within_node_budget(entry.first, budget) || !within_node_budget(entry.second, budget)) return false;
  if (node.IsSequence())
    for (const YAML::Node& child : node)
      if (!within_node_budget(child, budget)) return false;
  return true;
}

}  // namespace

SplitDocument split_frontmatter(std::string_view text) {
  SplitDocument split;
  split.body = text;
  std::size_t first_end = text.find('\n');
  std::string_view first = text.substr(0, first_end);
  if (!is_fence_line(first, "---")) return split;
  if (first_end == std::string_view::npos) {
    split.fence = Fence::unterminated;
    return split;
  }
  std::size_t pos = first_end + 1;
  int line = 2;
  while (pos <= text.size()) {
    std::size_t end = text.find('\n', pos);
    std::string_view current = text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    if (is_fence_line(current, "---") || is_fence_line(current, "...")) {
      split.fence = Fence::closed;
      split.yaml = text.substr(first_end + 1, pos - first_end - 1);
      split.yaml_line = 2;
      split.body = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
      split.body_line = line + 1;
      return split;
    }
    if (end == std::string_view::npos) break;
    pos = end + 1;
    ++line;
  }
  split.fence = Fence::unterminated;
  return split;
}

namespace {

// The top-level keys, found in one pass over the mapping. Each lookup by
// name through yaml-cpp compares every key again, and the fields are many.
// Unknown keys are kept in `extra` as YAML text on the way.
class KnownFields {
 public:
  KnownFields(Reader& reader, const YAML::Node& root, Concept& item) {
    constexpr int max_extra_nodes = 10'000;
    for (const auto& entry : root) {
      if (!entry.first.IsScalar()) {
        reader.warn(entry.first, "a frontmatter key is not a plain string; it was ignored");
        continue;
      }
      const std::string& key = entry.first.Scalar();
      if (std::size_t slot = slot_of(key); slot < values_.size()) {
        // The first value of a repeated key counts, as YAML 1.2 (3.2.1.1) lets a
        // processor recover; not `=`: assigning a YAML::Node writes through to its node.
        if (!values_[slot]) values_[slot].emplace(entry.second);
        if (slot < known_keys().size()) continue;  // the others are checked, and also kept as written
      }
      if (item.extra.count(key)) continue;  // a repeated key: reported, the first value kept
      int budget = max_extra_nodes;
      if (within_node_budget(entry.second, budget))
        item.extra[key] = YAML::Dump(entry.second);
      else
        reader.warn(entry.second, fmt::format("`{}` expands to more than {} YAML nodes (aliases?); it was not "
                                              "kept",
                                              key, max_extra_nodes));
    }
  }

  // The value of a known or checked key; an undefined node (false)
  // when it is absent.
  const YAML::Node& get(std::string_view key) const {
    const std::optional<YAML::Node>& value = values_.at(slot_of(key));
    return value ? *value : absent_;
  }

 private:
  static std::size_t slot_of(std::string_view key) {
    const auto& known = known_keys();
    if (auto it = std::find(known.begin(), known.end(), key); it != known.end())
      return static_cast<std::size_t>(it - known.begin());
    const auto& checked = checked_extra_keys();
    auto it = std::find(checked.begin(), checked.end(), key);
    return it == checked.end() ? std::string_view::npos
                               : known.size() + static_cast<std::size_t>(it - checked.begin());
  }

  std::vector<std::optional<YAML::Node>> values_ =
      std::vector<std::optional<YAML::Node>>(known_keys().size() + checked_extra_keys().size());
  YAML::Node absent_{YAML::NodeType::Undefined};
};

// A repeated key makes the block invalid YAML (YAML 1.2, 3.2.1.1: keys are
// unique), so not conformant (OKF section 11 asks for parseable YAML): an
// error that skips the file in the okf profile; in the repo profile a warning,
// and the first value counts. Returns whether the file is still read.
bool report_duplicate_keys(Reader& reader, const YAML::Node& root, Profile profile) {
  const std::vector<DuplicateKey> repeated = find_duplicate_keys(root);
  const bool okf = is_strict(profile);
  for (const DuplicateKey& d : repeated) {
    reader.report(okf ? Severity::error : Severity::warning, reader.file_line(d.line),
                  fmt::format("duplicate key `{}` (first at line {}): YAML keys must be unique, keep one{}",
                              d.path.empty() ? d.key : d.path + "." + d.key, reader.file_line(d.first_line),
                              okf ? "; the file was skipped" : "; the first value is used"));
  }
  return repeated.empty() || !okf;
}

// Control characters (C0 but tab and line feed, and DEL) in a scalar are
// not text: a NUL cut `search` and `browse` lines short and forged a hit
// line. Each is reported (an error in the strict profiles, so such a file is
// not conformant) and replaced by U+FFFD in place, so nothing read from the
// frontmatter afterwards holds one.
bool is_forbidden_control(unsigned char c) { return (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f; }

void clean_scalar(Reader& reader, YAML::Node node, std::string_view where, Severity severity) {
  const std::string& text = node.Scalar();
  auto bad = std::find_if(text.begin(), text.end(), [](char c) { return is_forbidden_control(static_cast<unsigned char>(c)); });
  if (bad == text.end()) return;
  reader.report(severity, reader.line_of(node),
                fmt::format("`{}` holds the control character U+{:04X}; remove it (control characters other than tab "
                            "and line feed are not allowed in frontmatter). It is read as U+FFFD",
                            where, static_cast<unsigned char>(*bad)));
  std::string cleaned;
  for (char c : text) cleaned += is_forbidden_control(static_cast<unsigned char>(c)) ? std::string("\xEF\xBF\xBD") : std::string(1, c);
  node = cleaned;
}

void clean_controls(Reader& reader, YAML::Node node, const std::string& where, Severity severity, int depth = 0) {
  if (depth > 64) return;  // yaml-cpp's own nesting limit stops deeper documents before this
  if (node.IsScalar()) {
    clean_scalar(reader, node, where.empty() ? std::string("frontmatter") : where, severity);
  } else if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size(); ++i) clean_controls(reader, node[i], where + "[" + std::to_string(i) + "]", severity, depth + 1);
  } else if (node.IsMap()) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      YAML::Node key = it->first;
      if (key.IsScalar()) clean_scalar(reader, key, "a key", severity);
      const std::string name = key.IsScalar() ? key.Scalar() : std::string("?");  // cleaned above
      clean_controls(reader, it->second, where.empty() ? name : where + "." + name, severity, depth + 1);
    }
  }
}

// `expires_at` of a lesson or an expertise node: an invalid one is an error,
// since a lesson whose expiry cannot be read must not stay in use forever.
void read_expiry(Reader& reader, const YAML::Node& node, Lifecycle& life) {
  life.expires_at = reader.text(node, "expires_at");
  if (life.expires_at.empty() || parse_timestamp(life.expires_at)) return;
  life.expires_valid = false;
  reader.report(Severity::error, reader.line_of(node),
                fmt::format("`expires_at: {}` is not a date; write YYYY-MM-DD or a timestamp like "
                            "2026-06-30T14:00:00Z. It is excluded from selection until fixed",
                            life.expires_at));
}

void read_lesson(Reader& reader, const KnownFields& fields, Lifecycle& life) {
  const YAML::Node& status = fields.get("status");
  life.status_text = reader.text(status, "status");
  if (life.status_text.empty()) {
    reader.report(Severity::warning, reader.line_of(status),
                  "the lesson has no `status`; it is treated as a candidate (selected only when candidates are "
                  "asked for); write `status: candidate|reviewed|active|deprecated|rejected`");
  } else if (!(life.status = parse_lesson_status(life.status_text))) {
    reader.report(Severity::error, reader.line_of(status),
                  fmt::format("`status: {}` is not a lesson status; write candidate, reviewed, active, deprecated "
                              "or rejected. It is excluded from selection until fixed",
                              life.status_text));
  }
  life.scope = reader.text(fields.get("scope"), "scope");
  read_expiry(reader, fields.get("expires_at"), life);
}

// An expertise node may also be `status: rejected` (LessonWeaver exports
// keep rejected constraints for the record); the other values are OKF's.
bool read_rejected(Reader& reader, const YAML::Node& status, Lifecycle& life) {
  if (!status || !status.IsScalar() || status.Scalar() != "rejected") return false;
  life.status = LessonStatus::rejected;
  life.status_text = reader.text(status, "status");
  return true;
}

void read_expertise(Reader& reader, const KnownFields& fields, Lifecycle& life) {
  const YAML::Node& key = fields.get("key");
  life.key = reader.text(key, "key");
  if (life.key.empty())
    reader.report(Severity::error, reader.line_of(key),
                  "the expertise node has no `key`; add one that names the constraint it belongs to, such as "
                  "`key: api-style` (nodes with one key are checked for conflicts)");
  const YAML::Node& applies = fields.get("applies_to");
  if (applies && applies.IsScalar() && !applies.Scalar().empty()) {
    life.applies_to.push_back(applies.Scalar());
  } else if (applies && applies.IsSequence()) {
    for (const YAML::Node& tag : applies) {
      if (tag.IsScalar() && !tag.Scalar().empty()) life.applies_to.push_back(tag.Scalar());
      else reader.warn(tag, "an `applies_to` entry is not a plain string; it was ignored");
    }
  } else if (applies && !applies.IsNull()) {
    reader.warn(applies, "`applies_to` is a mapping; write a task tag or a list such as [python-library]. "
                         "It was ignored, so the node applies to every task");
  }
  read_expiry(reader, fields.get("expires_at"), life);
}

// One stream per thread: constructing a stringstream (and its locale) per file
// cost more than parsing a two-key frontmatter.
YAML::Node load_yaml(std::string_view yaml) {
  thread_local std::istringstream stream;
  stream.clear();
  stream.str(std::string(yaml));
  return YAML::Load(stream);
}

FrontmatterOutcome read_fields(std::string_view yaml, int yaml_line, Profile profile, Concept& item,
                               std::vector<RawLink>& links, std::vector<Diagnostic>& diagnostics) {
  Reader reader(yaml_line, item, diagnostics);
  Severity fatal = is_strict(profile) ? Severity::error : Severity::warning;
  std::string_view consequence =
      is_strict(profile) ? "; the file was skipped" : "; the file was loaded as plain markdown";
  YAML::Node loaded;
  try {
    loaded = load_yaml(yaml);
  } catch (const YAML::Exception& e) {
    reader.report(fatal, yaml_line + std::max(0, e.mark.line),
                  fmt::format("invalid YAML in frontmatter: {}{}", e.msg, consequence));
    return FrontmatterOutcome::skip;
  }
  // Looked up through a const reference: yaml-cpp's non-const operator[]
  // inserts a node for every missing key, which made lookups the main cost.
  const YAML::Node& root = loaded;
  if (!root.IsMap()) {
    if (root.IsNull() && profile == Profile::repo) return FrontmatterOutcome::loaded;
    reader.report(fatal, yaml_line,
                  fmt::format("frontmatter is {}, not a mapping of keys to values; write `key: "
                              "value` lines{}",
                              kind_name(root), consequence));
    return FrontmatterOutcome::skip;
  }
  if (!report_duplicate_keys(reader, root, profile)) return FrontmatterOutcome::skip;
  clean_controls(reader, loaded, "", fatal);
  item.frontmatter_yaml = std::string(yaml);
  KnownFields fields(reader, root, item);
  const YAML::Node& type = fields.get("type");
  if (std::string problem = check_type(type); !problem.empty()) {
    if (is_strict(profile)) {
      reader.report(Severity::error, type ? reader.line_of(type) : yaml_line, problem + "; the file was skipped");
      return FrontmatterOutcome::skip;
    }
  } else {
    item.type = type.Scalar();
  }
  item.title = reader.text(fields.get("title"), "title");
  item.description = reader.text(fields.get("description"), "description");
  item.resource = reader.text(fields.get("resource"), "resource");
  read_tags(reader, fields.get("tags"), item);
  if (profile == Profile::lessons) read_lesson(reader, fields, item.lifecycle.make());
  else if (!(profile == Profile::expertise && read_rejected(reader, fields.get("status"), item.lifecycle.make())))
    read_status(reader, fields.get("status"), item);
  if (profile == Profile::expertise) read_expertise(reader, fields, item.lifecycle.make());
  item.stale_after = reader.timestamp(fields.get("stale_after"), "stale_after");
  read_generated(reader, fields.get("generated"), item);
  if (item.generated_at.empty()) item.generated_at = reader.timestamp(fields.get("timestamp"), "timestamp");
  read_verified(reader, fields.get("verified"), item);
  read_sources(reader, fields.get("sources"), item);
  if (const YAML::Node& window = fields.get("usage_window"); window && window.IsMap()) {
    reader.timestamp(window["from"], "usage_window.from");
    reader.timestamp(window["to"], "usage_window.to");
  }
  read_links(reader, fields.get("links"), links);
  return FrontmatterOutcome::loaded;
}

}  // namespace

FrontmatterOutcome read_frontmatter(std::string_view yaml, int yaml_line, Profile profile, Concept& item,
                                    std::vector<RawLink>& links, std::vector<Diagnostic>& diagnostics) {
  try {
    return read_fields(yaml, yaml_line, profile, item, links, diagnostics);
  } catch (const YAML::Exception& e) {  // a shape the field readers did not expect: report, never crash
    diagnostics.push_back({is_strict(profile) ? Severity::error : Severity::warning, item.path,
                           yaml_line + std::max(0, e.mark.line),
                           fmt::format("cannot read the frontmatter: {}; check the YAML structure", e.msg)});
    return FrontmatterOutcome::skip;
  }
}

std::optional<std::int64_t> parse_timestamp(std::string_view text) {
  int year = digits(text, 0, 4);
  int month = digits(text, 5, 2);
  int day = digits(text, 8, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1 || text[4] != '-' || text[7] != '-')
    return std::nullopt;
  std::chrono::year_month_day date{std::chrono::year{year}, std::chrono::month{static_cast<unsigned>(month)},
                                   std::chrono::day{static_cast<unsigned>(day)}};
  if (!date.ok()) return std::nullopt;
  std::int64_t seconds = std::chrono::sys_days{date}.time_since_epoch().count() * 86400LL;
  if (text.size() == 10) return seconds;
  if (text[10] != 'T' && text[10] != 't' && text[10] != ' ') return std::nullopt;
  int hour = digits(text, 11, 2);
  int minute = digits(text, 14, 2);
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || text.size() < 17 || text[13] != ':')
    return std::nullopt;
  std::size_t pos = 16;
  int second = 0;
  if (pos < text.size() && text[pos] == ':') {
    second = digits(text, pos + 1, 2);
    if (second < 0 || second > 60) return std::nullopt;  // 60: leap second
    pos += 3;
    if (pos < text.size() && text[pos] == '.') {
      std::size_t end = pos + 1;
      while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
      if (end == pos + 1) return std::nullopt;
      pos = end;
    }
  }
  std::optional<int> offset = parse_offset_seconds(text.substr(pos));
  if (!offset) return std::nullopt;
  return seconds + hour * 3600 + minute * 60 + second - *offset;
}

std::optional<ActorKind> classify_actor(std::string_view actor) {
  if (actor.empty() || actor.find_first_of(" \t\r\n") != std::string_view::npos) return std::nullopt;
  if (actor.starts_with("human:"))
    return actor.size() > 6 ? std::optional(ActorKind::human) : std::nullopt;
  if (actor.starts_with("process:"))
    return actor.size() > 8 ? std::optional(ActorKind::process) : std::nullopt;
  std::size_t slash = actor.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == actor.size()) return std::nullopt;
  return ActorKind::agent;
}

TrustTier trust_tier(const std::vector<Verification>& verified) {
  TrustTier tier = TrustTier::unverified;
  for (const Verification& entry : verified) {
    std::optional<ActorKind> kind = classify_actor(entry.by);
    if (kind == ActorKind::human) return TrustTier::human_reviewed;
    if (kind) tier = TrustTier::machine_confirmed;
  }
  return tier;
}

}  // namespace okfbench::retrieval
