// The walk of Bundle::load: lists the bundle's directories in sorted order
// and hands its markdown files to the parse pipeline.
//
// Every directory and file is opened relative to a directory descriptor the
// walk holds, with no symbolic link followed on the way (open_beneath), so a
// file or directory swapped for a link between the listing and the open is
// refused, never followed out of the bundle. Links that the listing shows are
// followed only when their target is inside the root, and then by the
// target's own link-free path.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include <fmt/format.h>

#include "retrieval/bundle_impl.hpp"
#include "core/digest.hpp"
#include "core/error.hpp"

namespace okfbench::retrieval::detail {
namespace fs = std::filesystem;

DirectoryHandles::~DirectoryHandles() {
  for (int fd : fds_) ::close(fd);
}

int DirectoryHandles::retain(DIR* dir) {
  // A descriptor of its own, not the listed stream: each DIR holds a 32 KiB
  // buffer, up to 8 MiB for the 256 kept open through a load.
  const int fd = fds_.size() < max_open ? ::fcntl(::dirfd(dir), F_DUPFD_CLOEXEC, 0) : -1;
  ::closedir(dir);
  if (fd >= 0) fds_.push_back(fd);
  return fd;
}

namespace {

bool is_within(const fs::path& path, const fs::path& root) {
  auto [root_end, path_it] = std::mismatch(root.begin(), root.end(), path.begin(), path.end());
  return root_end == root.end();
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

std::string below(const std::string& path, const std::string& name) { return path.empty() ? name : path + "/" + name; }

// A directory or file as the walk opens it: `path` below the retained
// directory `base`; the bundle root itself when base < 0.
struct Place {
  int base = -1;
  std::string path;
};

// `name` as a diagnostic shows it: bytes that are not UTF-8 and control
// characters written as \xHH.
std::string shown_name(std::string_view name) {
  std::string valid = escape_invalid_utf8(name);
  std::string out;
  for (std::size_t i = 0; i < valid.size(); ++i) {
    std::size_t control = control_character_offset(std::string_view(valid).substr(i, 2));
    if (control != 0) {
      out += valid[i];
      continue;
    }
    std::size_t length = static_cast<unsigned char>(valid[i]) == 0xC2 ? 2 : 1;
    for (std::size_t j = 0; j < length; ++j) out += fmt::format("\\x{:02X}", static_cast<unsigned char>(valid[i + j]));
    i += length - 1;
  }
  return out;
}

std::string listing_error(int error) {
  if (error == ELOOP || error == ENOTDIR)
    return "cannot list the directory: it is a symbolic link or no directory now (the bundle changed while it was "
           "loading); it was not followed";
  return fmt::format("cannot list the directory: {}; check its permissions", std::strerror(error));
}

// Collects the markdown files of a bundle in sorted order. Hidden entries are
// skipped; names that are not valid UTF-8 are reported and skipped; symlinks
// are followed only when they stay inside the root. readdir gives each
// entry's type, so plain files and directories cost no stat.
class Walker {
 public:
  Walker(const fs::path& root, const LoadOptions& options, DirectoryHandles& handles,
         std::vector<Diagnostic>& diagnostics, ParsePipeline& files, Manifest* manifest)
      : root_(root),
        options_(options),
        handles_(handles),
        diagnostics_(diagnostics),
        files_(files),
        manifest_(manifest) {}  // root is canonical

  void run() { walk(Place{}, ""); }

 private:
  int open_place(const Place& place) const {
    if (place.base < 0) return ::open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    return open_beneath(place.base, place.path, O_RDONLY | O_DIRECTORY);
  }

  void walk(const Place& place, const std::string& relative) {
    int fd = open_place(place);
    if (fd < 0) {
      diagnostics_.push_back({Severity::error, relative, 0, listing_error(errno)});
      return;
    }
    struct stat info {};
    // Directories are told apart by device and inode, which cuts cycles
    // through links inside the root whatever path reached them.
    if (::fstat(fd, &info) != 0 || !visited_.emplace(info.st_dev, info.st_ino).second) {
      ::close(fd);
      return;
    }
    if (manifest_) manifest_->directories.push_back(stamp_of(relative, info));
    DIR* dir = ::fdopendir(fd);
    if (!dir) {
      diagnostics_.push_back({Severity::error, relative, 0, listing_error(errno)});
      ::close(fd);
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
    // Retained directories stay open for the whole load, so their files are
    // opened by name (openat) and the kernel does not resolve the full path
    // again for each. Below the others, files are opened by their path from
    // the nearest retained directory, just as safely.
    int own = handles_.retain(dir);
    if (place.base < 0) root_fd_ = own;  // the first retained: max_open > 0
    Place here = own >= 0 ? Place{own, ""} : place;
    std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    for (const DirectoryEntry& entry : entries) visit(entry, here, relative);
  }

  void visit(const DirectoryEntry& entry, const Place& here, const std::string& parent) {
    const std::string& name = entry.name;
    if (entry.type == EntryType::other || (entry.type == EntryType::file && !name.ends_with(".md"))) return;
    std::string relative = below(parent, name);
    if (std::size_t bad = invalid_utf8_offset(name); bad != std::string::npos) {
      report_bad_name(entry, parent, name, bad, "is not valid UTF-8",
                      "rename it to UTF-8 (e.g. convmv -f latin1 -t utf-8 --notest)");
      return;
    }
    if (std::size_t bad = control_character_offset(name); bad != std::string::npos) {
      report_bad_name(entry, parent, name, bad, "contains a control character", "rename it without one");
      return;
    }
    Place at{here.base, below(here.path, name)};
    if (entry.type == EntryType::symlink) {
      visit_link(name, relative);
    } else if (entry.type == EntryType::directory) {
      walk(at, relative);
    } else {
      add_file(relative, FileTask{relative, FileLocation{at.base, std::move(at.path)}, FileKind::concept_file});
    }
  }

  // A concept id is its path, and ids travel as JSON text and into text
  // reports line by line: a name that is not UTF-8, or holds a control
  // character (a newline would forge a line), cannot be one. The diagnostic
  // names it with those bytes escaped, so the report stays clean.
  void report_bad_name(const DirectoryEntry& entry, const std::string& parent, const std::string& name,
                       std::size_t bad, std::string_view problem, std::string_view fix) {
    bool directory = entry.type == EntryType::directory;
    diagnostics_.push_back(
        {Severity::error, below(parent, shown_name(name)), 0,
         fmt::format("the {} name {} (byte 0x{:02X} at offset {}); it was skipped{}; {}",
                     directory ? "directory" : entry.type == EntryType::symlink ? "link" : "file", problem,
                     static_cast<unsigned char>(name[bad]), bad, directory ? " with everything below it" : "", fix)});
  }

  void visit_link(const std::string& name, const std::string& relative) {
    // Where the link points, as the kernel sees it now. This only decides
    // whether to follow: the open that follows uses the target's own path
    // with no link allowed on it, so a target changed meanwhile is refused.
    std::error_code error;
    fs::path real = fs::canonical(root_ / relative, error);
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
    std::string inside = real.lexically_relative(root_).generic_string();
    if (inside == ".") return;  // the root itself: already walked
    if (fs::is_directory(real, error)) {
      walk(Place{root_fd_, inside}, relative);
      return;
    }
    if (name.ends_with(".md") && fs::is_regular_file(real, error))
      add_file(relative, FileTask{relative, FileLocation{root_fd_, inside}, FileKind::concept_file});
  }

  // In the repo profile index.md and log.md are ordinary pages: a documentation
  // tree gives them no special meaning.
  void add_file(const std::string& relative, FileTask task) {
    std::string_view name = std::string_view(relative).substr(relative.rfind('/') + 1);
    if (is_strict(options_.profile) && name == "index.md") task.kind = FileKind::index;
    if (is_strict(options_.profile) && name == "log.md") task.kind = FileKind::log;
    if (task.kind == FileKind::concept_file && !within_max_files(relative)) return;
    if (manifest_) stamp(task);
    files_.add(std::move(task));
  }

  // Before the read, so a change after the stamp shows as a new stamp or a
  // new digest; a file that cannot be stamped gets an empty one (it is read
  // and reported as usual, and any later stamp differs).
  void stamp(const FileTask& task) {
    struct stat info {};
    const int at = task.location.directory_fd;
    const char* name = task.location.name.c_str();
    if (at < 0 || ::fstatat(at, name, &info, 0) != 0) info = {};
    manifest_->files.push_back(stamp_of(task.path, info));
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
  ParsePipeline& files_;
  Manifest* manifest_;
  int root_fd_ = -1;
  std::set<std::pair<dev_t, ino_t>> visited_;
  std::size_t file_count_ = 0;
  bool stopped_ = false;
};

}  // namespace

void walk_bundle(const fs::path& root, const LoadOptions& options, DirectoryHandles& handles,
                 std::vector<Diagnostic>& diagnostics, ParsePipeline& files, Manifest* manifest) {
  Walker(root, options, handles, diagnostics, files, manifest).run();
}

Stamp stamp_of(std::string path, const struct stat& info) {
  auto ns = [](const timespec& t) { return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec; };
  return {std::move(path), static_cast<std::uint64_t>(info.st_size), ns(info.st_mtim), ns(info.st_ctim),
          static_cast<std::uint64_t>(info.st_ino), {}};
}

std::array<unsigned char, 16> content_digest(std::string_view bytes) {
  std::array<unsigned char, 16> out{};
  try {
    const Sha256Digest full = sha256(bytes);
    std::memcpy(out.data(), full.data(), out.size());
  } catch (const InputError&) {
    // Zeros, which no later read matches: the cache is rebuilt. (This runs
    // on the parse threads, which must not throw.)
  }
  return out;
}

}  // namespace okfbench::retrieval::detail
