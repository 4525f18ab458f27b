#pragma once
// The OKF bundle model: concepts, links, the graph, layers, logs.
//
// Bundle::load walks a directory in sorted order and never throws for content:
// every problem becomes a Diagnostic. The same bundle always yields the same
// concepts, links and diagnostics in the same order. It reads nothing outside
// the root, even while the tree changes under it (every open is relative to a
// held directory and follows no symbolic link), and every id, path and
// message it hands out is valid UTF-8 (names that are not are diagnostics).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace okfbench::retrieval {

namespace detail {
class Reader;
class Writer;
struct Manifest;
}  // namespace detail

enum class Severity { warning, error };

// Errors make a bundle non-conformant (OKF v0.2 section 11) and mean the file
// was skipped; warnings describe content that was loaded with a fix-up.
struct Diagnostic {
  Severity severity = Severity::warning;
  std::string path;  // bundle-relative, '/'-separated
  int line = 0;      // 1-based; 0 when the problem concerns the whole file
  std::string message;  // what is wrong and what to do about it
  bool operator==(const Diagnostic&) const = default;
};

// okf: OKF v0.2 conformance (frontmatter with a non-empty `type` required).
// repo: plain markdown documentation trees; frontmatter optional, type
// defaults to "Document", title from the first H1 or the file name.
// lessons: okf plus a lesson lifecycle on every concept (`status`, `scope`,
// `expires_at`; retrieval/lessons.hpp).
// expertise: okf plus an expertise pack's `key`, `applies_to` and
// `expires_at` on every node and a `version` in the root index.md
// (retrieval/expertise.hpp).
enum class Profile { okf, repo, lessons, expertise };

// Profiles other than repo refuse what OKF refuses (a file without
// frontmatter or `type` is skipped with an error).
constexpr bool is_strict(Profile profile) { return profile != Profile::repo; }
constexpr bool is_okf_or_repo(Profile profile) { return profile == Profile::okf || profile == Profile::repo; }

struct LoadOptions {
  Profile profile = Profile::okf;
  std::size_t max_file_bytes = 4 * 1024 * 1024;  // larger files are skipped with a diagnostic
  std::size_t max_files = 1'000'000;              // repo guardrail
  std::size_t max_total_bytes = 4ULL * 1024 * 1024 * 1024;  // repo guardrail
  unsigned threads = 0;                           // 0 = hardware concurrency
  bool io_uring = true;  // batch file reads through io_uring when the kernel allows it
};

enum class Status { stable, draft, deprecated };
enum class TrustTier { unverified, machine_confirmed, human_reviewed };

struct Source {
  std::string id;
  std::string resource;
  std::string title;
  // Credibility signals (OKF v0.2 section 5.1), as written; "" when absent.
  std::string author;
  std::string usage_count;
  std::string last_modified;
  bool operator==(const Source&) const = default;
};

struct Verification {
  std::string by;
  std::string at;
  bool operator==(const Verification&) const = default;
};

// How a link was written: a markdown link `[text](href)`, a wikilink
// `[[Note]]` or an embed `![[Note]]` (the last two only in the repo profile).
enum class LinkForm { markdown, wikilink, embed };

struct Link {
  // Resolved concept id, or for a link to a directory index the index's id
  // without ".md" (e.g. "tables/index"); "" when unresolved.
  std::string target;
  std::string raw;       // the href as written; a wikilink whole ("[[Note#Part|label]]")
  std::string relation;  // "LINKS_TO" or the upper-snake heading/frontmatter relation
  std::string text;      // link text
  int line = 0;          // 1-based line in the file; frontmatter links use the entry's line
  bool resolved = false;
  bool from_frontmatter = false;
  LinkForm form = LinkForm::markdown;
  bool operator==(const Link&) const = default;
};

struct Citation {
  std::string label;  // footnote label, source id, or citation-section line
  std::string text;
  bool operator==(const Citation&) const = default;
};

// A lesson's lifecycle status (contextweaver's lessons): candidate lessons
// await review, reviewed and active ones are in use, deprecated and rejected
// ones are kept for the record only.
enum class LessonStatus { candidate, reviewed, active, deprecated, rejected };

// The fields the lessons and expertise profiles read, as the loader checked
// them (every bad value is a diagnostic naming the file, line and key).
struct Lifecycle {
  // lessons: nullopt when the value written is not a lesson status (an error
  // diagnostic); a lesson without `status` is a candidate (a warning).
  // expertise: rejected for `status: rejected` (OKF has no such status),
  // otherwise candidate and unused; OKF's deprecated is Concept::status.
  std::optional<LessonStatus> status = LessonStatus::candidate;
  std::string status_text;   // as written, "" when absent
  std::string scope;         // lessons: e.g. "project"; "" = no scope
  std::string expires_at;    // as written, "" when absent
  bool expires_valid = true; // false when expires_at is not a timestamp (an error diagnostic)
  std::string key;           // expertise: the constraint group, "" when absent (an error diagnostic)
  std::vector<std::string> applies_to;  // expertise: task tags; empty = every task
  bool operator==(const Lifecycle&) const = default;
};

// Concept::lifecycle: a Lifecycle held apart from the concept, made only by
// the profiles that read one. Concepts of the okf and repo profiles have
// none and read as a default Lifecycle; inline, its 168 bytes were a fifth
// of every Concept. Copies copy the Lifecycle.
class LifecycleBox {
 public:
  LifecycleBox() = default;
  LifecycleBox(const LifecycleBox& other) : value_(other.value_ ? std::make_unique<Lifecycle>(*other.value_) : nullptr) {}
  LifecycleBox& operator=(const LifecycleBox& other) {
    if (this != &other) value_ = other.value_ ? std::make_unique<Lifecycle>(*other.value_) : nullptr;
    return *this;
  }
  LifecycleBox(LifecycleBox&&) noexcept = default;
  LifecycleBox& operator=(LifecycleBox&&) noexcept = default;

  const Lifecycle& operator*() const { return value_ ? *value_ : none(); }
  const Lifecycle* operator->() const { return &**this; }
  bool has_value() const { return value_ != nullptr; }
  // The Lifecycle to fill in, made on first use.
  Lifecycle& make() {
    if (!value_) value_ = std::make_unique<Lifecycle>();
    return *value_;
  }
  bool operator==(const LifecycleBox& other) const { return **this == *other; }

 private:
  static const Lifecycle& none() {
    static const Lifecycle empty;
    return empty;
  }
  std::unique_ptr<Lifecycle> value_;
};

struct Concept {
  std::string id;     // bundle-relative path without ".md", e.g. "metrics/active-users"
  std::string path;   // bundle-relative file path, e.g. "metrics/active-users.md"
  std::string layer;  // first path component, "" for concepts at the root
  std::string type;
  std::string title;
  std::string description;
  std::string resource;
  std::vector<std::string> tags;
  Status status = Status::stable;
  std::string stale_after;  // timestamp string as written, "" when absent
  std::vector<Verification> verified;
  TrustTier trust = TrustTier::unverified;
  bool generated = false;    // a `generated` block names a non-human actor
  std::string generated_by;  // actor as written ("" when absent)
  std::string generated_at;  // timestamp as written; legacy `timestamp` as fallback
  std::vector<Source> sources;
  std::string body;  // markdown after the frontmatter
  std::vector<Link> links;
  std::vector<Citation> citations;
  std::string frontmatter_yaml;  // raw frontmatter text, unknown keys included
  std::map<std::string, std::string> extra;  // unknown top-level keys, as YAML text
  std::size_t bytes = 0;
  LifecycleBox lifecycle;  // lessons and expertise profiles only (`item.lifecycle->scope`)

  // Stale on or after stale_after (OKF v0.2 section 5.5); `now` is an
  // ISO-8601 timestamp. False when stale_after is absent or invalid.
  bool is_stale(const std::string& now) const;
};

// A concept's citations as every view shows them, each once, in order: a
// footnote that marks a source carries the source's id as its label
// ("[^dashboard]" beside `sources: [{id: dashboard}]`), so the concept lists
// both, but they are one citation (the first, the source); a labelled
// citation once per label, an unlabelled one (a "# Citations" line) once per
// text. `okfbench open`, the agent's open tool and MCP read this.
std::vector<Citation> distinct_citations(const Concept& item);

std::string_view to_string(Severity severity);
std::string_view to_string(Status status);
std::string_view to_string(TrustTier tier);  // "unverified", "machine-confirmed", "human-reviewed"
std::string_view to_string(Profile profile);
std::optional<Profile> parse_profile(std::string_view name);
// "okf, repo, lessons or expertise", for messages that list the profiles.
std::string_view profile_names();
std::string_view to_string(LessonStatus status);
std::optional<LessonStatus> parse_lesson_status(std::string_view name);

// The current time as "YYYY-MM-DDTHH:MM:SSZ", for is_stale().
std::string now_utc();

struct LogEntry {
  std::string date;   // YYYY-MM-DD
  std::string kind;   // e.g. "Added"
  std::string text;
  std::string scope;  // directory of the log.md ("" for the root log)
  bool operator==(const LogEntry&) const = default;
};

struct IndexEntry {
  std::string id;
  std::string title;
  std::string description;
  std::string type;
};

struct LayerIndex {
  std::string layer;
  std::vector<std::string> subdirs;  // child directory names
  std::vector<IndexEntry> concepts;  // concepts directly in the directory
  std::string text;                  // the index.md body, or a synthesized listing
  bool synthesized = false;
};

// The listing Bundle::index() writes for a directory without an index.md,
// from `index`'s concepts and subdirs (so a caller that drops concepts from
// a listing can write it again without them).
std::string synthesized_index_text(const LayerIndex& index);

enum class Direction { out, in, both };

struct Neighbor {
  std::string id;
  std::string relation;
  std::string from;  // the concept the edge was reached from
  int hops = 1;
};

class Bundle {
 public:
  static Bundle load(const std::filesystem::path& root, const LoadOptions& options = {});
  // load() that also stamps every directory it listed and every file it read
  // into `manifest`, for the index cache (retrieval/index_cache.hpp).
  static Bundle load(const std::filesystem::path& root, const LoadOptions& options, detail::Manifest& manifest);

  const std::filesystem::path& root() const;
  const std::vector<Concept>& concepts() const;  // sorted by id
  const std::vector<Diagnostic>& diagnostics() const;
  const Concept* find(std::string_view id) const;  // nullptr when absent; never touches disk
  // Like find(), but also accepts the forms agents write: "/metrics/x.md",
  // "metrics/x.md", "./metrics/x". Never touches disk; "../x" finds nothing.
  const Concept* lookup(std::string_view reference) const;
  // Index of a concept in concepts(), for dense per-concept arrays.
  std::optional<std::size_t> position(std::string_view id) const;

  // Graph.
  std::vector<Neighbor> neighbors(std::string_view id, Direction direction,
                                  std::string_view relation = {}, int hops = 1) const;
  std::vector<const Link*> unresolved(std::string_view id) const;
  std::size_t link_count() const;
  std::size_t broken_link_count() const;
  std::size_t total_bytes() const;  // bytes of the concept files that were loaded
  const LoadOptions& options() const;
  // The YAML frontmatter of the root index.md as written and the file line
  // of its first YAML line; nullopt when there is no root index.md or it has
  // no frontmatter block (okf, lessons and expertise profiles).
  struct IndexFrontmatter {
    std::string yaml;
    int line = 0;
  };
  const std::optional<IndexFrontmatter>& root_index_frontmatter() const;

  // Layers, indexes and logs.
  // Top-level directory -> number of concepts below it (at any depth).
  // Concepts at the bundle root belong to no layer and are not counted here.
  std::map<std::string, std::size_t> layers() const;
  // `layer` is any directory path ("", "tables", "references/joins"; a
  // trailing "/" or "/index.md" is accepted). nullopt when the bundle has no
  // such directory (including any path that would leave the root).
  std::optional<LayerIndex> index(std::string_view layer = {}) const;
  // Entries of every log.md, newest date first (root log before deeper logs
  // on the same date, file order within a log). With a concept id: only
  // entries that link to the concept or name its file ("metrics/x.md").
  std::vector<LogEntry> history(std::string_view concept_id = {}) const;

  // Writes a new concept and a root log.md entry into the bundle and adds
  // the concept to this Bundle (rules in retrieval/docs/bundle-rules.md, "remember()").
  // Never throws: every refusal and every system error is
  // Remembered::error, and then nothing stays written. Not safe to call
  // concurrently with other calls on the same Bundle; Bundles in other
  // threads or processes may remember into the same directory at once (a
  // lock on the bundle directory serialises the log.md updates).
  struct RememberRequest {
    std::string concept_id;  // "notes/x"; a leading "/" (bundle-root-relative) and a trailing ".md" are dropped
    std::string title;
    std::string body;
    std::string description;
    std::vector<std::string> links;  // concept references, written as a "# Related" section
    std::string type = "Note";
    std::string date;  // YYYY-MM-DD for the log entry; today (UTC) when empty
  };
  struct Remembered {
    std::string id;                  // the id written, as find() knows it from now on
    std::vector<std::string> links;  // the link targets written, as ids
    std::string error;               // "" when written; otherwise what was wrong and what to do
  };
  Remembered remember(const RememberRequest& request);
  // Limits remember() enforces, so every file name it makes fits the file
  // system's 255 bytes with room for the temporary name beside it.
  static constexpr std::size_t max_id_bytes = 240;       // the whole id
  static constexpr std::size_t max_id_part_bytes = 100;  // each '/'-separated part
  static constexpr std::size_t max_title_bytes = 300;
  static constexpr std::size_t max_description_bytes = 2000;
  static constexpr std::size_t max_links = 50;

  // The loaded state in the index cache's byte format, and back
  // (retrieval/index_cache.hpp; not for other callers). restore() throws
  // detail::CorruptCache for bytes save() did not write.
  void save(detail::Writer& out) const;
  static Bundle restore(detail::Reader& in, const std::filesystem::path& root, const LoadOptions& options);

  Bundle(Bundle&&) noexcept;
  Bundle& operator=(Bundle&&) noexcept;
  ~Bundle();

 private:
  Bundle();
  static Bundle load(const std::filesystem::path& root, const LoadOptions& options, detail::Manifest* manifest);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace okfbench::retrieval
