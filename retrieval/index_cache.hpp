#pragma once
// The persistent index: a loaded bundle and its search index in one cache
// file, read back instead of walking, reading and parsing the bundle again.
//
// File: <dir>/<32 hex digits>.okfidx, named after the bundle's canonical
// root and the load options that change what a load yields (profile and the
// three size limits). A 120-byte header (magic, format version, payload
// length, and the offset, length and checksum of each section) is followed
// by three sections, each starting 8-byte aligned and checked before it is
// read: the manifest of the load that wrote it; the search index with what
// `okfbench search` prints of each concept (title, description, type) and
// the number of files skipped with errors; the bundle. A section's checksum
// is XXH3-128 over the XXH3-128 of each 16 MiB block of it (the last
// shorter), which a reader checks on all cores: it detects damage, and
// reads at memory speed. The search index is read in
// place from the mapped file (no array copied); the bundle is copied out.
// load_cached_search() checks and reads the first two sections only, so a
// search never pays for the bundle's text.
//
// A file is written to a temporary file beside it and renamed into place,
// so a reader sees an old file or a new one, never half of one; processes
// that build at once each write a whole file and the last rename wins. A
// file whose header, length, checksum or contents do not read back is never
// trusted: the bundle is loaded from its files and the cache written again.
//
// When the cache is current (the rule): the manifest stamps every directory
// the load listed and every markdown file it read (size, mtime and ctime in
// ns, inode, and the SHA-256 of the bytes read), each stamped before it was
// read.
//   1. Every directory must have its stamped mtime, ctime and inode: adding,
//      removing or renaming an entry changes its directory's mtime, and a
//      chmod its ctime.
//   2. A file whose size, mtime, ctime and inode are as stamped is
//      unchanged. The ctime moves with every write, chmod and utime and
//      cannot be set back, so a file rewritten with its old mtime and size
//      restored (`touch -d`, `cp -p`, `rsync -t`) is still seen.
//   3. Otherwise (a `touch`, a copy of the same bytes over it) the file is
//      read and its SHA-256 compared with the stamped one: equal content
//      keeps the cache. (It is read again on every start until the cache is
//      next written.)
//   4. Racy stamps: a directory whose stamped mtime, or a file whose
//      stamped mtime or ctime, is not older than the moment the load began
//      could have changed again within the same clock tick; such a directory
//      makes the cache stale, such a file is always compared by content.
// Not seen: changes inside folders the load skips (hidden ones) and files
// it does not read (not markdown), as a load would not see them either.
//
// Cache files are readable by their owner only (they hold the bundle's
// text) and are never changed in place once renamed into place; a file cut
// short by another program while a process has it mapped is outside this
// contract (the kernel stops that reader with SIGBUS).
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "retrieval/bundle.hpp"
#include "retrieval/search.hpp"

namespace okfbench::retrieval {

// $XDG_CACHE_HOME/okfbench/index, else $HOME/.cache/okfbench/index; empty
// when neither variable is set (there is then no default cache).
std::filesystem::path default_index_cache_dir();

// Why a file or folder with this owner and mode must not be trusted as a
// cache (someone else could have written it), or "": as ssh does for its
// keys, it must belong to the current user and not be writable by group or
// others. The message names what to do (chown, chmod go-w, or remove it).
std::string untrusted_owner(unsigned owner, unsigned mode);

// The same for the folder at `dir` (symbolic links followed); "" when it
// does not exist yet, or cannot be looked at (the caller's own open fails).
std::string untrusted_folder(const std::filesystem::path& dir);

// The cache file for a bundle root (canonical) and load options.
std::filesystem::path index_cache_file(const std::filesystem::path& dir, const std::filesystem::path& root,
                                       const LoadOptions& options);

struct CachedBundle {
  Bundle bundle;
  SearchIndex index;  // for the config asked for (built from `bundle` when the cache holds another)
  bool from_cache = false;  // false: loaded from the files (and the cache written, unless `note` says why not)
  // Why the cache file was not used: "no cache file", "stale: <path> changed",
  // "corrupt: <what>", ...; "" when it was used.
  std::string reason;
  // A problem worth a one-line warning: a corrupt cache file was replaced,
  // or the cache could not be written (and why); "" when none.
  std::string note;
  bool written = false;  // this load wrote the cache file
  std::filesystem::path file;  // the cache file; empty when there is no cache folder
};

// Loads `root` through the cache in `dir` (no cache when `dir` is empty):
// from the cache file when it is current, else from the files, and then
// writes the cache with the index built for `config`. Throws what
// Bundle::load throws; a cache that cannot be read or written is only a
// `note`, never an error.
CachedBundle load_cached(const std::filesystem::path& root, const LoadOptions& options, const IndexConfig& config,
                         const std::filesystem::path& dir);
// load_cached() for a caller that reads no index (validate, browse, open,
// the parts of a combined bundle): without a cache folder nothing is
// indexed, and from a current cache file only the manifest and bundle
// sections are checked and read. A load from the files writes the cache as
// load_cached() does, with the default config's index, so the next search
// finds it current. `note` as CachedBundle::note; left as it was when none.
Bundle load_cached_unindexed(const std::filesystem::path& root, const LoadOptions& options,
                             const std::filesystem::path& dir, std::string& note);

// What `okfbench search` prints of a concept, read in place from the cache
// file; the views are valid while the CachedSearch lives.
struct ConceptCard {
  std::string_view title;
  std::string_view description;
  std::string_view type;
};

// A bundle's search index read from a current cache file without its bundle:
// hits carry no concept_ptr, and card() gives what a listing of hits shows.
class CachedSearch {
 public:
  const SearchIndex& index() const { return index_; }
  // nullopt for an id the bundle does not have.
  std::optional<ConceptCard> card(std::string_view id) const;
  std::size_t skipped_files() const { return skipped_files_; }  // files skipped with an error diagnostic
  const std::filesystem::path& file() const { return file_; }

  CachedSearch(CachedSearch&&) noexcept;
  ~CachedSearch();

 private:
  friend std::optional<CachedSearch> load_cached_search(const std::filesystem::path&, const LoadOptions&,
                                                        const IndexConfig&, const std::filesystem::path&,
                                                        std::string*);
  struct Cards;
  CachedSearch(SearchIndex index, std::unique_ptr<Cards> cards, std::size_t skipped, std::filesystem::path file);
  SearchIndex index_;
  std::unique_ptr<Cards> cards_;  // owns the mapping the views point into
  std::size_t skipped_files_ = 0;
  std::filesystem::path file_;
};

// The search index of `root` from its cache file in `dir`, when that file is
// current, whole and holds an index for `config`; the bundle section is
// neither checked nor read. Otherwise nullopt, with why in `reason` when
// given: the caller loads through load_cached(), which rebuilds and rewrites
// the cache (and warns about a corrupt one). Writes nothing.
std::optional<CachedSearch> load_cached_search(const std::filesystem::path& root, const LoadOptions& options,
                                               const IndexConfig& config, const std::filesystem::path& dir,
                                               std::string* reason = nullptr);

// A cache file removed by prune_index_cache(), and why.
struct PrunedFile {
  std::filesystem::path file;
  std::uintmax_t bytes = 0;
  std::string reason;  // "bundle /x is gone", "corrupt: ...", "left by writer 123, which is gone", ...
};

// Removes from `dir` the cache files no load will read again: those of a
// bundle root that is gone or no longer a folder, corrupt ones, and the
// temporary files of writers that are no longer running; with
// `other_formats`, also files another okfbench version wrote (their bundles
// may still be there; this okfbench would rewrite them when it loads one).
// A root that cannot be checked (permission) keeps its file; a bundle on a
// drive that is not mounted counts as gone (its file is rebuilt when it is
// loaded again). Other files are never touched: only regular files (never
// through a symbolic link) owned by the current user whose names are ours
// (HASH.okfidx, HASH.okfidx.tmp.PID.N) are removed, and an HASH.okfidx only
// when its header starts with our magic; a `dir` that is a symbolic link or
// untrusted_folder() is not pruned at all. Every write of a cache file
// runs it without `other_formats`; `okfbench index --prune` runs it with.
std::vector<PrunedFile> prune_index_cache(const std::filesystem::path& dir, bool other_formats);

}  // namespace okfbench::retrieval
