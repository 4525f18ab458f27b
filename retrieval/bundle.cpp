// Bundle::load: walk, parallel parse, deterministic merge; and the queries.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <deque>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <unordered_map>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "retrieval/bundle_impl.hpp"
#include "retrieval/error.hpp"
#include "retrieval/frontmatter.hpp"

namespace okfbench::retrieval {
namespace fs = std::filesystem;
using detail::FileKind;
using detail::FileTask;
using detail::ParsedFile;

namespace {

bool is_within(const fs::path& path, const fs::path& root) {
  auto [root_end, path_it] = std::mismatch(root.begin(), root.end(), path.begin(), path.end());
  return root_end == root.end();
}

// Directories the walk opened. They stay open for the whole load, so files
// are opened relative to them (openat) and the kernel does not resolve the
// full path again for every file.
// At most `max_open` stay open, far below the usual limit of 1,024
// descriptors; files in directories past that are opened by full path.
class DirectoryHandles {
 public:
  static constexpr std::size_t max_open = 256;

  DirectoryHandles() = default;
  DirectoryHandles(const DirectoryHandles&) = delete;
  DirectoryHandles& operator=(const DirectoryHandles&) = delete;
  ~DirectoryHandles() {
    for (DIR* dir : dirs_) ::closedir(dir);
  }
  // The descriptor to open the directory's files with, or -1 (and `dir` closed).
  int retain(DIR* dir) {
    if (dirs_.size() >= max_open) {
      ::closedir(dir);
      return -1;
    }
    dirs_.push_back(dir);
    return ::dirfd(dir);
  }

 private:
  std::vector<DIR*> dirs_;
};

DIR* open_directory(const fs::path& directory) {
  int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR* dir = fd >= 0 ? ::fdopendir(fd) : nullptr;
  if (fd >= 0 && !dir) ::close(fd);
  return dir;
}

enum class EntryType { file, directory, symlink, other };

struct DirectoryEntry {
  std::string name;
  EntryType type;
};

EntryType entry_type(unsigned char d_type) {
  switch (d_type) {
    case DT_REG: return EntryType::file;
    case DT_DIR: return EntryType::directory;
    case DT_LNK: return EntryType::symlink;
    default: return EntryType::other;
  }
}

// The type of an entry whose file system gave none in readdir (DT_UNKNOWN).
EntryType stat_type(int directory_fd, const char* name) {
  struct stat info {};
  if (::fstatat(directory_fd, name, &info, AT_SYMLINK_NOFOLLOW) != 0) return EntryType::other;
  if (S_ISREG(info.st_mode)) return EntryType::file;
  if (S_ISDIR(info.st_mode)) return EntryType::directory;
  if (S_ISLNK(info.st_mode)) return EntryType::symlink;
  return EntryType::other;
}

// Collects the markdown files of a bundle in sorted order. Hidden entries are
// skipped; symlinks are followed only when they stay inside the root.
// readdir gives each entry's type, so plain files and directories cost no stat.
class Walker {
 public:
  Walker(const fs::path& root, const LoadOptions& options, DirectoryHandles& handles,
         std::vector<Diagnostic>& diagnostics, detail::ParsePipeline& files)
      : root_(root), options_(options), handles_(handles), diagnostics_(diagnostics), files_(files) {}  // root is canonical

  // Hands every markdown file to `files`, in sorted walk order.
  void run() {
    visited_.insert(root_.string());
    walk(root_, "");
  }

 private:
  void walk(const fs::path& directory, const std::string& relative) {
    errno = 0;
    DIR* dir = open_directory(directory);
    if (!dir) {
      diagnostics_.push_back({Severity::error, relative, 0,
                              fmt::format("cannot list the directory: {}; check its permissions", std::strerror(errno))});
      return;
    }
    std::vector<DirectoryEntry> entries;
    errno = 0;
    while (const dirent* entry = ::readdir(dir)) {
      if (entry->d_name[0] == '.') continue;  // hidden, "." and ".."
      EntryType type = entry->d_type == DT_UNKNOWN ? stat_type(::dirfd(dir), entry->d_name) : entry_type(entry->d_type);
      entries.push_back({entry->d_name, type});
    }
    if (errno != 0)
      diagnostics_.push_back({Severity::error, relative, 0,
                              fmt::format("cannot list the whole directory: {}; check the disk", std::strerror(errno))});
    int directory_fd = handles_.retain(dir);
    std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    for (const DirectoryEntry& entry : entries) visit(entry, directory, relative, directory_fd);
  }

  void visit(const DirectoryEntry& entry, const fs::path& directory, const std::string& parent, int directory_fd) {
    const std::string& name = entry.name;
    std::string relative = parent.empty() ? name : parent + "/" + name;
    if (entry.type == EntryType::symlink) {
      visit_link(name, directory / name, relative);
    } else if (entry.type == EntryType::directory) {
      fs::path target = directory / name;
      if (visited_.insert(target.string()).second) walk(target, relative);
    } else if (entry.type == EntryType::file && name.ends_with(".md")) {
      FileLocation location = directory_fd >= 0 ? FileLocation{directory_fd, name, {}} : FileLocation{-1, {}, directory / name};
      add_file(relative, FileTask{relative, std::move(location), FileKind::concept_file});
    }
  }

  void visit_link(const std::string& name, const fs::path& path, const std::string& relative) {
    std::error_code error;
    fs::path real = fs::canonical(path, error);
    if (error) {
      if (name.ends_with(".md"))
        diagnostics_.push_back({Severity::warning, relative, 0, "broken symbolic link; remove it or fix its target"});
      return;
    }
    if (!is_within(real, root_)) {
      diagnostics_.push_back({Severity::error, relative, 0,
                              "symbolic link points outside the bundle root; it was not followed (copy the "
                              "target into the bundle instead)"});
      return;
    }
    if (fs::is_directory(real, error)) {
      if (visited_.insert(real.string()).second) walk(real, relative);
      return;
    }
    if (name.ends_with(".md") && fs::is_regular_file(real, error))
      add_file(relative, FileTask{relative, FileLocation{-1, {}, real}, FileKind::concept_file});
  }

  // In the repo profile index.md and log.md are ordinary pages: a documentation
  // tree gives them no special meaning.
  void add_file(const std::string& relative, FileTask task) {
    std::string_view name = std::string_view(relative).substr(relative.rfind('/') + 1);
    if (options_.profile == Profile::okf && name == "index.md") task.kind = FileKind::index;
    if (options_.profile == Profile::okf && name == "log.md") task.kind = FileKind::log;
    if (task.kind == FileKind::concept_file && !within_max_files(relative)) return;
    files_.add(std::move(task));
  }

  bool within_max_files(const std::string& relative) {
    if (stopped_) return false;
    if (++file_count_ <= options_.max_files) return true;
    stopped_ = true;
    diagnostics_.push_back({Severity::error, relative, 0,
                            fmt::format("the bundle has more than {} markdown files (max_files); files from here "
                                        "on were not loaded; raise --max-files or point at a smaller directory",
                                        options_.max_files)});
    return false;
  }

  fs::path root_;
  const LoadOptions& options_;
  DirectoryHandles& handles_;
  std::vector<Diagnostic>& diagnostics_;
  detail::ParsePipeline& files_;
  std::set<std::string> visited_;
  std::size_t file_count_ = 0;
  bool stopped_ = false;
};

void add_ancestors(std::set<std::string, std::less<>>& directories, std::string_view path) {
  for (std::string_view dir = parent_dir(path); !directories.contains(dir); dir = parent_dir(dir)) {
    directories.emplace(dir);
    if (dir.empty()) break;
  }
}

void sort_diagnostics(std::vector<Diagnostic>& diagnostics) {
  std::stable_sort(diagnostics.begin(), diagnostics.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::tie(a.path, a.line) < std::tie(b.path, b.line);
  });
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

void check_clashes(const std::vector<Concept>& concepts, const std::set<std::string, std::less<>>& directories,
                   std::vector<Diagnostic>& diagnostics) {
  std::unordered_map<std::string, const Concept*> folded;
  for (const Concept& item : concepts) {
    if (directories.contains(item.id))
      diagnostics.push_back({Severity::warning, item.path, 0,
                             fmt::format("concept id `{0}` is also a directory ({0}/); `{0}` names the concept "
                                         "and `{0}/` its directory index, which readers confuse; rename one",
                                         item.id)});
    auto [it, inserted] = folded.emplace(lower(item.id), &item);
    if (!inserted)
      diagnostics.push_back({Severity::warning, item.path, 0,
                             fmt::format("concept id `{}` differs from `{}` only by letter case; they collide on "
                                         "case-insensitive file systems; rename one",
                                         item.id, it->second->id)});
  }
}

}  // namespace

std::string_view to_string(Severity severity) { return severity == Severity::error ? "error" : "warning"; }

std::string_view to_string(Status status) {
  switch (status) {
    case Status::draft: return "draft";
    case Status::deprecated: return "deprecated";
    default: return "stable";
  }
}

std::string_view to_string(TrustTier tier) {
  switch (tier) {
    case TrustTier::human_reviewed: return "human-reviewed";
    case TrustTier::machine_confirmed: return "machine-confirmed";
    default: return "unverified";
  }
}

std::string_view to_string(Profile profile) { return profile == Profile::repo ? "repo" : "okf"; }

std::optional<Profile> parse_profile(std::string_view name) {
  if (name == "okf") return Profile::okf;
  if (name == "repo") return Profile::repo;
  return std::nullopt;
}

std::string now_utc() {
  auto now = std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", now);
}

bool Concept::is_stale(const std::string& now) const {
  std::optional<std::int64_t> limit = parse_timestamp(stale_after);
  std::optional<std::int64_t> current = parse_timestamp(now);
  return limit && current && *current >= *limit;
}

Bundle::Bundle() : impl_(std::make_unique<Impl>()) {}
Bundle::Bundle(Bundle&&) noexcept = default;
Bundle& Bundle::operator=(Bundle&&) noexcept = default;
Bundle::~Bundle() = default;

Bundle Bundle::load(const fs::path& root, const LoadOptions& options) {
  std::error_code error;
  if (!fs::is_directory(root, error))
    throw InputError(fmt::format("{}: not a directory; pass the folder that holds the bundle's markdown files",
                                 root.string()));
  Bundle bundle;
  Impl& impl = *bundle.impl_;
  impl.root = fs::canonical(root, error);
  if (error)
    throw InputError(fmt::format("{}: cannot resolve the bundle path: {}", root.string(), error.message()));
  impl.options = options;
  DirectoryHandles handles;
  detail::ParsePipeline pipeline(options);
  Walker(impl.root, options, handles, impl.load_diagnostics, pipeline).run();
  std::vector<ParsedFile> files = pipeline.finish();
  impl.directories.insert("");
  std::vector<std::size_t> loaded;  // files that became concepts
  loaded.reserve(files.size());
  bool over_budget = false;
  std::size_t read_bytes = 0;
  for (ParsedFile& file : files) {
    if (over_budget && file.kind == FileKind::concept_file) continue;
    if (file.kind == FileKind::concept_file) read_bytes += file.parsed.item.bytes;
    if (file.kind == FileKind::concept_file && read_bytes > options.max_total_bytes) {
      // Checked in walk order after reading (sizes come from the read, saving a
      // stat per file); the cut-off file and everything after it are dropped.
      over_budget = true;
      impl.load_diagnostics.push_back(
          {Severity::error, file.path, 0,
           fmt::format("the markdown files exceed {} bytes in total (max_total_bytes); files from here on were not "
                       "loaded; raise --max-total-bytes",
                       options.max_total_bytes)});
      continue;
    }
    for (Diagnostic& diagnostic : file.diagnostics) impl.load_diagnostics.push_back(std::move(diagnostic));
    if (!file.loaded) continue;
    add_ancestors(impl.directories, file.path);
    if (file.kind == FileKind::concept_file) {
      impl.total_bytes += file.parsed.item.bytes;
      loaded.push_back(static_cast<std::size_t>(&file - files.data()));
    } else if (file.kind == FileKind::index) {
      impl.index_texts[std::string(parent_dir(file.path))] = std::move(file.text);
    } else {
      impl.logs.emplace_back(std::string(parent_dir(file.path)), std::move(file.entries));
    }
  }
  // Sort a permutation, then move each concept once: Concept is large.
  std::sort(loaded.begin(), loaded.end(),
            [&files](std::size_t a, std::size_t b) { return files[a].parsed.item.id < files[b].parsed.item.id; });
  std::sort(impl.logs.begin(), impl.logs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  impl.concepts.reserve(loaded.size());
  impl.raw_links.reserve(loaded.size());
  for (std::size_t i : loaded) {
    impl.concepts.push_back(std::move(files[i].parsed.item));
    impl.raw_links.push_back(std::move(files[i].parsed.raw_links));
  }
  impl.finalize();
  return bundle;
}

std::optional<std::size_t> Bundle::Impl::position(std::string_view id) const {
  auto it = std::lower_bound(concepts.begin(), concepts.end(), id,
                             [](const Concept& item, std::string_view key) { return item.id < key; });
  if (it == concepts.end() || it->id != id) return std::nullopt;
  return static_cast<std::size_t>(it - concepts.begin());
}

std::string Bundle::Impl::resolve_path(const ResolvedHref& href, bool& is_edge) const {
  is_edge = true;
  const std::string& path = href.path;
  auto directory_index = [this](const std::string& dir) {
    return directories.contains(dir) ? (dir.empty() ? std::string("index") : dir + "/index") : std::string();
  };
  if (href.directory || path.empty()) return directory_index(path);
  std::string_view name = std::string_view(path).substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  if (path.ends_with(".md")) {
    std::string id = path.substr(0, path.size() - 3);
    if (name == "index.md") return directory_index(std::string(parent_dir(path)));
    if (name == "log.md") {
      std::string_view scope = parent_dir(path);
      bool found = std::any_of(logs.begin(), logs.end(), [&](const auto& log) { return log.first == scope; });
      return found ? id : std::string();
    }
    return position(id) ? id : std::string();
  }
  if (position(path)) return path;  // extensionless link to a concept
  if (directories.contains(path)) return directory_index(path);
  if (name.find('.') != std::string_view::npos) is_edge = false;  // a link to an asset such as a .py file
  return {};
}

void Bundle::Impl::finalize() {
  std::vector<Diagnostic> link_diagnostics;
  link_count = 0;
  broken_link_count = 0;
  backlinks.assign(concepts.size(), {});
  for (std::size_t source = 0; source < concepts.size(); ++source) {
    Concept& item = concepts[source];
    item.links.clear();
    for (const RawLink& raw : raw_links[source]) {
      ResolvedHref href = resolve_href(item.path, raw.href);
      if (href.kind == HrefKind::external || href.kind == HrefKind::anchor) continue;
      Link link{"", raw.href, raw.relation, raw.text, raw.line, false, raw.from_frontmatter};
      if (href.kind == HrefKind::escapes_root) {
        link_diagnostics.push_back({Severity::warning, item.path, raw.line,
                                    fmt::format("link `{}` climbs above the bundle root with `..`; it was "
                                                "treated as broken; link inside the bundle (e.g. `/x.md`)",
                                                raw.href)});
      } else {
        bool is_edge = true;
        link.target = resolve_path(href, is_edge);
        if (!is_edge) continue;
        link.resolved = !link.target.empty();
      }
      if (link.resolved) {
        if (std::optional<std::size_t> target = position(link.target))
          backlinks[*target].emplace_back(source, item.links.size());
      } else {
        ++broken_link_count;
      }
      ++link_count;
      item.links.push_back(std::move(link));
    }
  }
  check_clashes(concepts, directories, link_diagnostics);
  diagnostics = load_diagnostics;
  diagnostics.insert(diagnostics.end(), link_diagnostics.begin(), link_diagnostics.end());
  sort_diagnostics(diagnostics);
}

const fs::path& Bundle::root() const { return impl_->root; }
const std::vector<Concept>& Bundle::concepts() const { return impl_->concepts; }
const std::vector<Diagnostic>& Bundle::diagnostics() const { return impl_->diagnostics; }
std::size_t Bundle::link_count() const { return impl_->link_count; }
std::size_t Bundle::broken_link_count() const { return impl_->broken_link_count; }
std::size_t Bundle::total_bytes() const { return impl_->total_bytes; }
const LoadOptions& Bundle::options() const { return impl_->options; }
std::optional<std::size_t> Bundle::position(std::string_view id) const { return impl_->position(id); }

const Concept* Bundle::find(std::string_view id) const {
  std::optional<std::size_t> at = impl_->position(id);
  return at ? &impl_->concepts[*at] : nullptr;
}

const Concept* Bundle::lookup(std::string_view reference) const {
  std::optional<std::string> id = normalize_reference(reference);
  return id ? find(*id) : nullptr;
}

std::vector<const Link*> Bundle::unresolved(std::string_view id) const {
  std::vector<const Link*> links;
  if (const Concept* item = lookup(id))
    for (const Link& link : item->links)
      if (!link.resolved) links.push_back(&link);
  return links;
}

std::vector<Neighbor> Bundle::neighbors(std::string_view id, Direction direction, std::string_view relation,
                                        int hops) const {
  std::vector<Neighbor> found;
  std::optional<std::string> start_id = normalize_reference(id);
  std::optional<std::size_t> start = start_id ? position(*start_id) : std::nullopt;
  if (!start || hops < 1) return found;
  std::string wanted = relation.empty() ? std::string() : relation_from_heading(relation);
  std::vector<bool> seen(impl_->concepts.size(), false);
  seen[*start] = true;
  std::deque<std::pair<std::size_t, int>> queue{{*start, 0}};
  auto reach = [&](std::size_t from, std::size_t to, const std::string& edge, int depth) {
    if (seen[to] || (!wanted.empty() && edge != wanted)) return;
    seen[to] = true;
    found.push_back({impl_->concepts[to].id, edge, impl_->concepts[from].id, depth});
    if (depth < hops) queue.emplace_back(to, depth);
  };
  while (!queue.empty()) {
    auto [current, depth] = queue.front();
    queue.pop_front();
    if (direction != Direction::in)
      for (const Link& link : impl_->concepts[current].links)
        if (std::optional<std::size_t> to = link.resolved ? position(link.target) : std::nullopt)
          reach(current, *to, link.relation, depth + 1);
    if (direction != Direction::out)
      for (auto [source, link_index] : impl_->backlinks[current])
        reach(current, source, impl_->concepts[source].links[link_index].relation, depth + 1);
  }
  return found;
}

std::map<std::string, std::size_t> Bundle::layers() const {
  std::map<std::string, std::size_t> counts;
  for (const Concept& item : impl_->concepts)
    if (!item.layer.empty()) ++counts[item.layer];
  return counts;
}

namespace {

std::optional<std::string> normalize_layer(std::string_view layer) {
  std::optional<std::string> dir = join_path({}, percent_decode(layer));
  if (!dir) return std::nullopt;
  if (*dir == "index.md" || *dir == "index") return std::string();
  for (std::string_view suffix : {"/index.md", "/index"})
    if (dir->ends_with(suffix)) return dir->substr(0, dir->size() - suffix.size());
  return dir;
}

std::string synthesize_index(const LayerIndex& index) {
  std::string text = fmt::format("# {}\n\n", index.layer.empty() ? "Bundle" : index.layer);
  for (const IndexEntry& entry : index.concepts) {
    std::string_view name = std::string_view(entry.id).substr(entry.id.rfind('/') + 1);
    text += fmt::format("* [{}]({}.md){}{}\n", entry.title, name, entry.description.empty() ? "" : " - ",
                        entry.description);
  }
  if (!index.subdirs.empty()) {
    text += "\n# Subdirectories\n\n";
    for (const std::string& subdir : index.subdirs) text += fmt::format("* [{0}]({0}/)\n", subdir);
  }
  return text;
}

}  // namespace

std::optional<LayerIndex> Bundle::index(std::string_view layer) const {
  std::optional<std::string> dir = normalize_layer(layer);
  if (!dir || !impl_->directories.contains(*dir)) return std::nullopt;
  LayerIndex index;
  index.layer = *dir;
  for (const std::string& other : impl_->directories)
    if (!other.empty() && other != *dir && parent_dir(other) == *dir)
      index.subdirs.push_back(other.substr(dir->empty() ? 0 : dir->size() + 1));
  for (const Concept& item : impl_->concepts)
    if (parent_dir(item.path) == *dir)
      index.concepts.push_back({item.id, item.title, item.description, item.type});
  if (auto it = impl_->index_texts.find(*dir); it != impl_->index_texts.end()) {
    index.text = it->second;
  } else {
    index.text = synthesize_index(index);
    index.synthesized = true;
  }
  return index;
}

}  // namespace okfbench::retrieval
