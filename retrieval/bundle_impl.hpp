#pragma once
// Private to retrieval/bundle*.cpp: the state behind Bundle and the steps of
// loading it. Not part of the contract.
#include <dirent.h>

#include <sys/stat.h>

#include <array>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "retrieval/bundle.hpp"
#include "retrieval/file_reader.hpp"
#include "retrieval/links.hpp"
#include "retrieval/packed_links.hpp"
#include "retrieval/utf8.hpp"

namespace okfbench::retrieval::detail {

enum class FileKind { concept_file, index, log };

// What a load saw of one directory or file, to tell later whether it
// changed (retrieval/index_cache.hpp has the rule).
struct Stamp {
  std::string path;  // bundle-relative, as the walk reached it ("" = the root)
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;  // the inode's change time: set by every write, chmod or utime, never by hand
  std::uint64_t inode = 0;
  std::array<unsigned char, 16> digest{};  // files: the first bytes of the SHA-256 of the bytes read
};

// Every directory the walk listed and every file it handed to the parser,
// in walk order; each stamped before it was read.
struct Manifest {
  std::vector<Stamp> directories;
  std::vector<Stamp> files;
};

// The stamp of what `fd` is open on.
Stamp stamp_of(std::string path, const struct stat& info);
// The first 16 bytes of SHA-256.
std::array<unsigned char, 16> content_digest(std::string_view bytes);

// One markdown file found by the walk, read and parsed later in parallel.
struct FileTask {
  std::string path;  // bundle-relative
  FileLocation location;
  FileKind kind = FileKind::concept_file;
};

struct StoredLogEntry {
  LogEntry entry;
  std::vector<std::string> targets;  // concept ids the entry links to
};

struct ParsedConcept {
  Concept item;
  std::vector<RawLink> raw_links;
};

// The result of reading one file: a concept, an index text or log entries.
struct ParsedFile {
  FileKind kind = FileKind::concept_file;
  std::string path;
  bool loaded = false;
  ParsedConcept parsed;                 // kind == concept
  std::string text;                     // kind == index: the body
  std::optional<Bundle::IndexFrontmatter> frontmatter;  // kind == index: the root index.md's block
  std::vector<StoredLogEntry> entries;  // kind == log
  std::vector<Diagnostic> diagnostics;
  std::array<unsigned char, 16> digest{};  // of the bytes read, when the pipeline was asked for digests
};

// Parses one file from its bytes (or reports the read error in `content`).
ParsedFile parse_file(const FileTask& task, const LoadOptions& options, FileContent content);

// Reads and parses the files of a load on worker threads while the walk is
// still finding more (bundle_parse.cpp). Files go in in walk order and come
// out in walk order, whatever the scheduling; batches of 32 are read with
// one BatchReader call.
class ParsePipeline {
 public:
  // `digests`: each result carries content_digest of the bytes read.
  explicit ParsePipeline(const LoadOptions& options, bool digests = false);
  ~ParsePipeline();
  ParsePipeline(const ParsePipeline&) = delete;
  ParsePipeline& operator=(const ParsePipeline&) = delete;

  void add(FileTask task);
  std::size_t size() const { return added_; }  // files added so far
  // Hands `take` one result per file added, in walk order, as each batch is
  // parsed (on the calling thread too while batches wait), and frees each
  // batch once taken: the results and what `take` builds from them are never
  // all held at once.
  void finish(const std::function<void(ParsedFile&)>& take);

 private:
  struct Batch {
    std::vector<FileTask> tasks;
    std::vector<ParsedFile> results;
    bool parsed = false;  // guarded by mutex_
  };
  struct Reading {  // one thread's reader, kept across its batches
    std::optional<BatchReader> reader;
    std::vector<const FileLocation*> locations;
  };
  static constexpr std::size_t batch_size = 32;
  void hand_over();
  void end_walk();  // no more batches: waiting threads stop once the queue is empty
  Batch* take();  // waits for a batch; nullptr when the walk is done and all are taken
  void parse(Batch& batch, Reading& reading);
  void work();

  const LoadOptions& options_;
  bool digests_;
  unsigned threads_;
  std::size_t added_ = 0;
  std::vector<FileTask> pending_;  // the walk's batch being filled
  std::mutex mutex_;
  std::condition_variable ready_;   // a batch was added, or the walk ended
  std::condition_variable parsed_;  // a batch was parsed
  std::deque<Batch> batches_;  // handed over and not yet released by finish(); guarded by mutex_
  std::size_t released_ = 0;   // batches finish() has handed out and dropped; guarded by mutex_
  std::size_t next_ = 0;       // number of the first batch no thread has taken; guarded by mutex_
  bool walk_done_ = false;     // guarded by mutex_
  std::vector<std::jthread> workers_;
};

// Directories the walk opened. They stay open for the whole load, so files
// are opened relative to them. At most `max_open` stay open, far below the
// usual limit of 1,024 descriptors; files in directories past that are opened
// by their path from the nearest retained one.
class DirectoryHandles {
 public:
  static constexpr std::size_t max_open = 256;

  DirectoryHandles() = default;
  DirectoryHandles(const DirectoryHandles&) = delete;
  DirectoryHandles& operator=(const DirectoryHandles&) = delete;
  ~DirectoryHandles();
  // The descriptor to open the directory's files with, or -1; `dir` is
  // closed either way (it has been listed).
  int retain(DIR* dir);

 private:
  std::vector<int> fds_;
};

// Walks the bundle at `root` (a canonical path) and hands every markdown file
// to `files` in sorted walk order, located relative to `handles`
// (bundle_walk.cpp). Problems go to `diagnostics`. With a manifest, every
// directory listed and file handed over is stamped into it.
void walk_bundle(const std::filesystem::path& root, const LoadOptions& options, DirectoryHandles& handles,
                 std::vector<Diagnostic>& diagnostics, ParsePipeline& files, Manifest* manifest = nullptr);

// Reads the entries of a log.md body; `first_line` is its first file line.
std::vector<StoredLogEntry> parse_log(std::string_view body, int first_line, const std::string& path,
                                      std::vector<Diagnostic>& diagnostics);

// What remember() writes into markdown (bundle_log.cpp).
// `text` as one line of inline markdown: control characters and line
// separators become single spaces, and every character that could end a
// link text, start a link, code span, emphasis, heading, HTML tag or entity
// (or a list item, at the start) is backslash-escaped.
std::string markdown_line(std::string_view text);
// The root-relative link destination of a concept id, "/<id>.md", with the
// bytes that would end or change an inline link percent-encoded.
std::string markdown_href(std::string_view id);
// `log` with `line` added as the first entry under "## <date>": below that
// heading when the log has it, else under a new heading placed before the
// first older date (logs are newest first), else at the end. No existing
// line changes or moves relative to the headings above it. An empty `log`
// becomes a new one.
std::string insert_log_entry(std::string log, std::string_view date, std::string_view line);

}  // namespace okfbench::retrieval::detail

namespace okfbench::retrieval {

struct Bundle::Impl {
  std::filesystem::path root;
  LoadOptions options;
  std::vector<Concept> concepts;                  // sorted by id
  std::vector<detail::PackedRawLinks> raw_links;  // parallel to concepts, as written (for remember())
  std::vector<Diagnostic> load_diagnostics;       // walk and per-file problems
  std::vector<Diagnostic> diagnostics;            // load_diagnostics + link problems, sorted
  std::set<std::string, std::less<>> directories;           // every directory with markdown below it ("" = root)
  std::map<std::string, std::string> index_texts;  // directory -> index.md body
  std::optional<Bundle::IndexFrontmatter> root_index_frontmatter;
  std::vector<std::pair<std::string, std::vector<detail::StoredLogEntry>>> logs;  // scope -> entries
  std::vector<std::vector<std::pair<std::size_t, std::size_t>>> backlinks;  // target -> (source, link)
  // Case-folded file name without ".md" -> positions of the concepts with
  // that name, for wikilinks; built by finalize() when any concept has one.
  std::unordered_map<std::string, std::vector<std::size_t>> names;
  std::size_t link_count = 0;
  std::size_t broken_link_count = 0;
  std::size_t total_bytes = 0;

  // What a load has read so far against max_total_bytes.
  struct Budget {
    std::size_t limit = 0;
    std::size_t read = 0;
    bool exceeded = false;
  };
  // Adds one parsed file, in walk order, to what the load keeps (concepts in
  // walk order until sorted) and its diagnostics to load_diagnostics.
  void take(detail::ParsedFile& file, Budget& budget);
  // Resolves raw links into Concept::links, builds backlinks and counts, and
  // merges diagnostics. Called after loading and after remember().
  void finalize();
  // Why a new concept `id` would sit beside a directory of the same name or
  // below a concept, which loading warns about; "" when neither.
  std::string directory_clash(std::string_view id) const;
  // Adds a concept remember() wrote and the root log as it now reads.
  void add_remembered(detail::ParsedConcept parsed, std::vector<detail::StoredLogEntry> root_log);
  std::optional<std::size_t> position(std::string_view id) const;
  // What a link path names: a concept id, "<dir>/index", "<dir>/log", or "".
  std::string resolve_path(const ResolvedHref& href, bool& is_edge) const;
  // The concept a wikilink target names (rules in retrieval/docs/wikilinks.md,
  // "Wikilinks"), or "". `is_edge` is false for an attachment ("photo.png").
  std::string resolve_wikilink(std::string_view target, bool& is_edge) const;
  void index_names();
};

}  // namespace okfbench::retrieval
