// Bundle::remember: a new concept plus a root log.md entry.
//
// Everything happens relative to a descriptor of the bundle root: each
// directory on the way is made with mkdirat and opened with O_NOFOLLOW from
// the one before, so nothing is created or written outside the bundle,
// whatever links it holds. Each file is written to a hidden temporary file,
// synced and renamed into place, so readers see the old file or the new one.
// log.md is changed only from a copy that was read whole, under a lock on the
// root directory, so concurrent remembers do not lose each other's entries.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <tuple>

#include <fmt/format.h>

#include "retrieval/bundle_impl.hpp"
#include "retrieval/frontmatter.hpp"

namespace okfbench::retrieval {
namespace {

std::vector<std::string_view> split_parts(std::string_view id) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (start <= id.size()) {
    std::size_t end = std::min(id.find('/', start), id.size());
    parts.push_back(id.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

// Why `part` cannot be a file or directory name of a new concept, or "".
std::string part_problem(std::string_view part, bool last) {
  if (part.empty()) return "has an empty part (`//`, or a `/` at the end); write it as a/b/c";
  if (part == "." || part == "..") return "contains `.` or `..`; give the path from the bundle root without them";
  if (part.starts_with(".")) return "has a part starting with `.`, which loading skips as hidden";
  if (part.size() > Bundle::max_id_part_bytes)
    return fmt::format("has a part of {} bytes; each '/'-separated part is at most {} bytes", part.size(),
                       Bundle::max_id_part_bytes);
  if (part.find_first_of("\\:*?\"<>|%#") != std::string_view::npos)
    return "contains one of \\ : * ? \" < > | % #, which are not portable in file names or change what a link "
           "means; use letters, digits, '-' and '_'";
  if (last && (part == "index" || part == "log"))
    return fmt::format("would be {}.md, which OKF reserves; choose another name", part);
  return {};
}

// The id a request names (a leading '/' is the bundle root, as in OKF links;
// a trailing ".md" is the file), or nullopt with `error` set.
std::optional<std::string> new_concept_id(std::string_view requested, std::string& error) {
  std::string_view id = requested;
  if (id.starts_with("/")) id.remove_prefix(1);
  if (id.ends_with(".md")) id.remove_suffix(3);
  auto refuse = [&](std::string_view why) {
    error = fmt::format("concept_id `{}` {}", echoed(requested), why);
    return std::nullopt;
  };
  if (id.empty()) return refuse("is empty; give a path such as notes/slow-query-checklist");
  if (invalid_utf8_offset(id) != std::string_view::npos) return refuse("is not valid UTF-8");
  if (control_character_offset(id) != std::string_view::npos)
    return refuse("contains control characters (a newline?); give a plain path such as notes/x");
  if (id.size() > Bundle::max_id_bytes)
    return refuse(fmt::format("is {} bytes long; ids are at most {} bytes; choose a shorter one", id.size(),
                              Bundle::max_id_bytes));
  std::vector<std::string_view> parts = split_parts(id);
  for (std::size_t i = 0; i < parts.size(); ++i)
    if (std::string why = part_problem(parts[i], i + 1 == parts.size()); !why.empty()) return refuse(why);
  // What open() and links will look the id up as must be the id itself.
  if (normalize_reference(id) != id) return refuse("would be read back as another id; use a plain path");
  return std::string(id);
}

std::string check_text(std::string_view field, std::string_view text, std::size_t max_bytes) {
  if (std::size_t bad = invalid_utf8_offset(text); bad != std::string_view::npos)
    return fmt::format("{} is not valid UTF-8 (byte {}); send UTF-8 text", field, bad);
  if (max_bytes && text.size() > max_bytes)
    return fmt::format("{} is {} bytes; at most {} bytes are kept; shorten it", field, text.size(), max_bytes);
  // The frontmatter reader reports these (retrieval/frontmatter.cpp), so a
  // concept written with one would load with a diagnostic. The body is
  // markdown, not frontmatter: it may hold them.
  if (field != "body" && printable(text) != text)
    return fmt::format("{} holds a control character (only tab and line feed are allowed); remove it", field);
  return {};
}

// The first problem of a request's fields, or "".
std::string check_fields(const Bundle::RememberRequest& request) {
  if (request.title.empty()) return "title is empty; give the new concept a title";
  if (request.type.empty() || control_character_offset(request.type) != std::string::npos) return "type must be one line of text, e.g. Note";
  if (request.links.size() > Bundle::max_links)
    return fmt::format("{} links given; at most {}", request.links.size(), Bundle::max_links);
  for (auto [field, text, max] : {std::tuple{"title", &request.title, Bundle::max_title_bytes},
                                  std::tuple{"description", &request.description, Bundle::max_description_bytes},
                                  std::tuple{"type", &request.type, Bundle::max_title_bytes},
                                  std::tuple{"body", &request.body, std::size_t{0}}})
    if (std::string why = check_text(field, *text, max); !why.empty()) return why;
  return {};
}

bool is_valid_date(std::string_view date) { return date.size() == 10 && parse_timestamp(date).has_value(); }

std::string compose_concept(const Bundle::RememberRequest& request, const std::vector<std::string>& links) {
  YAML::Emitter yaml;
  yaml << YAML::BeginMap << YAML::Key << "type" << YAML::Value << request.type << YAML::Key << "title"
       << YAML::Value << request.title;
  if (!request.description.empty()) yaml << YAML::Key << "description" << YAML::Value << request.description;
  yaml << YAML::Key << "generated" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "by"
       << YAML::Value << "okfbench/remember" << YAML::Key << "at" << YAML::Value << now_utc() << YAML::EndMap;
  yaml << YAML::EndMap;
  std::string text = fmt::format("---\n{}\n---\n\n{}\n", yaml.c_str(), request.body);
  if (!links.empty()) {
    text += "\n# Related\n\n";
    for (const std::string& id : links)
      text += fmt::format("* [{}]({})\n", detail::markdown_line(id), detail::markdown_href(id));
  }
  return text;
}

std::string system_error(std::string_view what, int error) {
  return fmt::format("cannot {}: {}", what, std::strerror(error));
}

// The directories from the root down to a new concept's file, each made and
// opened relative to the one before with O_NOFOLLOW. Those made here are
// removed again (if still empty) unless the remember succeeded.
class Directories {
 public:
  explicit Directories(int root) : root_(root) {}
  Directories(const Directories&) = delete;
  Directories& operator=(const Directories&) = delete;
  ~Directories() {
    if (keep_) return;
    for (std::size_t depth = names_.size(); depth-- > first_made_;)
      ::unlinkat(containing(depth), names_[depth].c_str(), AT_REMOVEDIR);
  }

  // Makes and opens `dirs` ("a/b", or "" for the root); "" or an error.
  std::string open(std::string_view dirs) {
    if (dirs.empty()) return {};
    for (std::string_view part : split_parts(dirs)) {
      std::string name(part);
      std::string path = names_.empty() ? name : fmt::format("{}/{}", joined(), name);
      int at = parent();
      if (::mkdirat(at, name.c_str(), 0755) == 0) {
        first_made_ = std::min(first_made_, names_.size());
      } else if (errno != EEXIST) {
        return system_error(fmt::format("create the directory `{}` in the bundle", path), errno);
      }
      FileDescriptor fd(::openat(at, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (fd.get() < 0) {
        if (errno == ELOOP || errno == ENOTDIR)
          return fmt::format("`{}` in the bundle is a symbolic link or a file; remember writes only into real "
                             "directories inside the bundle; choose another concept_id",
                             path);
        return system_error(fmt::format("open the directory `{}` in the bundle", path), errno);
      }
      names_.push_back(std::move(name));
      fds_.push_back(std::move(fd));
    }
    return {};
  }
  int parent() const { return fds_.empty() ? root_ : fds_.back().get(); }
  void keep() { keep_ = true; }

 private:
  int containing(std::size_t depth) const { return depth == 0 ? root_ : fds_[depth - 1].get(); }
  std::string joined() const {
    std::string out;
    for (const std::string& name : names_) out += (out.empty() ? "" : "/") + name;
    return out;
  }

  int root_;
  std::vector<std::string> names_;
  std::vector<FileDescriptor> fds_;  // fds_[i] is names_[0..i]
  std::size_t first_made_ = SIZE_MAX;
  bool keep_ = false;
};

// Writes `text` to a new hidden file beside `name` in `dir`, synced; with
// permissions `exact_mode` when given (a log keeps its own), else 0644 less
// the umask. Its name, or "" with `error` set.
std::string write_temporary(int dir, std::string_view name, const std::string& text,
                            std::optional<mode_t> exact_mode, std::string& error) {
  static std::atomic<unsigned> counter{0};
  std::string temporary = fmt::format(".{}.tmp-{}-{}", name, ::getpid(), counter++);
  FileDescriptor fd(::openat(dir, temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                             exact_mode.value_or(0644)));
  if (fd.get() < 0) {
    error = system_error(fmt::format("create a temporary file for {}", name), errno);
    return {};
  }
  std::size_t done = 0;
  int failure = 0;
  while (done < text.size() && failure == 0) {
    ssize_t wrote = ::write(fd.get(), text.data() + done, text.size() - done);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote < 0) failure = errno;
    if (wrote == 0) failure = ENOSPC;  // nothing taken: the disk is full
    if (wrote > 0) done += static_cast<std::size_t>(wrote);
  }
  // The mode again after creation: the umask must not change a log's permissions.
  if (failure == 0 && ((exact_mode && ::fchmod(fd.get(), *exact_mode) != 0) || ::fsync(fd.get()) != 0 ||
                       ::close(fd.release()) != 0))
    failure = errno;
  if (failure != 0) {
    error = system_error(fmt::format("write {}", name), failure);
    ::unlinkat(dir, temporary.c_str(), 0);
    return {};
  }
  return temporary;
}

// Renames `temporary` to `name` in `dir` unless `name` exists. Where the file
// system cannot rename that way, a hard link does the same.
int place_new(int dir, const std::string& temporary, const std::string& name) {
  if (::renameat2(dir, temporary.c_str(), dir, name.c_str(), RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS) return -1;
  if (::linkat(dir, temporary.c_str(), dir, name.c_str(), 0) != 0) return -1;
  ::unlinkat(dir, temporary.c_str(), 0);
  return 0;
}

struct LogFile {
  std::string text;
  std::optional<mode_t> mode;  // set when log.md exists
};

constexpr std::string_view never_rewritten =
    "remember writes nothing until log.md can be read whole, so that it is never rewritten from scratch";

// Reads the root log.md whole, or says why not. A missing log is fine.
std::string read_log(int root, std::size_t max_bytes, LogFile& log) {
  struct stat info {};
  if (::fstatat(root, "log.md", &info, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return {};
    return fmt::format("cannot read log.md ({}); {}", std::strerror(errno), never_rewritten);
  }
  if (S_ISLNK(info.st_mode))
    return fmt::format("log.md is a symbolic link; remember does not write through links; replace it with the file "
                       "it points to");
  if (!S_ISREG(info.st_mode)) return fmt::format("log.md is not a regular file; {}", never_rewritten);
  FileContent content = read_whole_file({root, "log.md"}, max_bytes);
  if (!content.error.empty()) return fmt::format("cannot read log.md: {}; {}", content.error, never_rewritten);
  if (std::size_t bad = invalid_utf8_offset(content.bytes); bad != std::string::npos)
    return fmt::format("log.md is not valid UTF-8 at byte {}; re-encode it as UTF-8; {}", bad, never_rewritten);
  if (content.bytes.find("\r\n") != std::string::npos)
    return "log.md has CRLF line endings; convert it to LF (e.g. dos2unix log.md), then remember again";
  log = {std::move(content.bytes), info.st_mode & 07777};
  return {};
}

// Holds an exclusive lock on the bundle directory while it lives. flock
// locks belong to an open file description, so two Bundles in one process
// exclude each other as two processes do.
std::string lock_directory(int fd) {
  while (::flock(fd, LOCK_EX) != 0)
    if (errno != EINTR) return system_error("lock the bundle directory", errno);
  return {};
}

// Puts a new file `name` with `text` into the directory `dir`, never
// replacing one that is there.
std::string write_concept(int dir, const std::string& name, std::string_view id, const std::string& text) {
  std::string error;
  std::string temporary = write_temporary(dir, name, text, std::nullopt, error);
  if (temporary.empty()) return error;
  if (place_new(dir, temporary, name) == 0) return {};
  int saved = errno;
  ::unlinkat(dir, temporary.c_str(), 0);
  if (saved == EEXIST) return fmt::format("`{}.md` already exists on disk; choose another concept_id", id);
  return system_error(fmt::format("write {}.md", id), saved);
}

// Replaces the root log.md with `text` in one rename.
std::string replace_log(int root, const std::string& text, std::optional<mode_t> mode) {
  std::string error;
  std::string temporary = write_temporary(root, "log.md", text, mode, error);
  if (temporary.empty()) return error;
  if (::renameat(root, temporary.c_str(), root, "log.md") == 0) return {};
  error = system_error("replace log.md", errno);
  ::unlinkat(root, temporary.c_str(), 0);
  return error;
}

// log.md as it will read with the entry for a new concept (in `log`), or
// why it cannot be changed.
std::string next_log(int root, const LoadOptions& options, std::string_view title, std::string_view id,
                     std::string_view date, LogFile& log) {
  if (std::string error = read_log(root, options.max_file_bytes, log); !error.empty()) return error;
  std::string entry =
      fmt::format("* **Remembered**: [{}]({})", detail::markdown_line(title), detail::markdown_href(id));
  log.text = detail::insert_log_entry(std::move(log.text), date, entry);
  if (log.text.size() > options.max_file_bytes)
    return fmt::format("log.md would grow past {} bytes (max_file_bytes) and no longer load; archive old entries",
                       options.max_file_bytes);
  return {};
}

// A new concept as remember() will write it.
struct NewConcept {
  std::string id;
  std::vector<std::string> links;  // ids
  std::string date;                // of the log entry
  std::string text;                // the file
  detail::ParsedFile parsed;       // the file as loading will read it
};

// Checks what a request asks for on its own (the bundle aside) and fills in
// the id, links and date; "" or the first problem.
std::string check_request(const Bundle::RememberRequest& request, NewConcept& made) {
  std::string error;
  std::optional<std::string> id = new_concept_id(request.concept_id, error);
  if (!id) return error;
  made.id = std::move(*id);
  if (std::string problem = check_fields(request); !problem.empty()) return problem;
  for (const std::string& link : request.links) {
    std::optional<std::string> target = normalize_reference(link);
    if (!target || control_character_offset(*target) != std::string::npos ||
        invalid_utf8_offset(*target) != std::string::npos)
      return fmt::format("link `{}` does not name a concept inside the bundle", echoed(link));
    made.links.push_back(std::move(*target));
  }
  made.date = request.date.empty() ? now_utc().substr(0, 10) : request.date;
  if (!is_valid_date(made.date)) return fmt::format("date `{}` is not YYYY-MM-DD", echoed(request.date));
  return {};
}

// Composes the file and parses it in memory, before anything is written:
// what goes to disk is known to load back as this concept.
std::string compose_checked(const Bundle::RememberRequest& request, const LoadOptions& options, NewConcept& made) {
  made.text = compose_concept(request, made.links);
  if (made.text.size() > options.max_file_bytes)
    return fmt::format("the concept would be {} bytes, over max_file_bytes ({}); shorten the body", made.text.size(),
                       options.max_file_bytes);
  made.parsed = detail::parse_file({made.id + ".md", {}, detail::FileKind::concept_file}, options, {made.text, {}});
  if (made.parsed.loaded) return {};
  return fmt::format("the concept would not load: {}", made.parsed.diagnostics.empty()
                                                           ? std::string("unknown problem")
                                                           : made.parsed.diagnostics[0].message);
}

// The disk side of remember(): the concept file and the new log.md (whose
// text ends in `log_text`), or neither and the error.
std::string write_files(const std::filesystem::path& root, const LoadOptions& options, const std::string& id,
                        std::string_view title, const std::string& concept_text, std::string_view date,
                        std::string& log_text) {
  FileDescriptor root_fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (root_fd.get() < 0) return system_error(fmt::format("open the bundle directory {}", root.string()), errno);
  if (std::string error = lock_directory(root_fd.get()); !error.empty()) return error;
  LogFile log;
  if (std::string error = next_log(root_fd.get(), options, title, id, date, log); !error.empty()) return error;
  std::size_t slash = id.rfind('/');
  std::string_view dirs = slash == std::string::npos ? std::string_view() : std::string_view(id).substr(0, slash);
  std::string name = id.substr(slash == std::string::npos ? 0 : slash + 1) + ".md";
  Directories directories(root_fd.get());
  if (std::string error = directories.open(dirs); !error.empty()) return error;
  if (std::string error = write_concept(directories.parent(), name, id, concept_text); !error.empty()) return error;
  if (std::string error = replace_log(root_fd.get(), log.text, log.mode); !error.empty()) {
    ::unlinkat(directories.parent(), name.c_str(), 0);
    return error;
  }
  // For durability across a crash. Both renames are done and visible by
  // now, so a failure here is not one of remember's.
  ::fsync(directories.parent());
  ::fsync(root_fd.get());
  directories.keep();
  log_text = std::move(log.text);
  return {};
}

}  // namespace

Bundle::Remembered Bundle::remember(const RememberRequest& request) {
  Remembered out;
  try {
    Impl& impl = *impl_;
    NewConcept made;
    out.error = check_request(request, made);
    if (out.error.empty() && find(made.id))
      out.error = fmt::format("concept `{}` already exists; choose another concept_id", made.id);
    if (out.error.empty()) out.error = impl.directory_clash(made.id);
    if (out.error.empty()) out.error = compose_checked(request, impl.options, made);
    std::string log_text;
    if (out.error.empty())
      out.error = write_files(impl.root, impl.options, made.id, made.parsed.parsed.item.title, made.text, made.date,
                              log_text);
    if (!out.error.empty()) return out;
    detail::ParsedFile log = detail::parse_file({"log.md", {}, detail::FileKind::log}, impl.options, {log_text, {}});
    impl.add_remembered(std::move(made.parsed.parsed), std::move(log.entries));
    out.id = std::move(made.id);
    out.links = std::move(made.links);
  } catch (const std::exception& e) {  // bad_alloc, yaml-cpp: still a value, never an escape
    out.id.clear();
    out.links.clear();
    out.error = fmt::format("remember failed: {}", e.what());
  }
  return out;
}

// An id that is also a directory, or below a concept, is what loading warns
// about (readers confuse `x` and `x/`): remember does not make one.
std::string Bundle::Impl::directory_clash(std::string_view id) const {
  if (directories.contains(id))
    return fmt::format("`{0}` is a directory of the bundle; a concept `{0}` beside `{0}/` confuses readers; choose "
                       "another concept_id",
                       id);
  for (std::string_view dir = parent_dir(id); !dir.empty(); dir = parent_dir(dir))
    if (position(dir))
      return fmt::format("`{0}` is a concept; a directory `{0}/` beside it confuses readers; choose another "
                         "concept_id",
                         dir);
  return {};
}

void Bundle::Impl::add_remembered(detail::ParsedConcept parsed, std::vector<detail::StoredLogEntry> root_log) {
  const std::string& id = parsed.item.id;
  std::size_t at = static_cast<std::size_t>(
      std::lower_bound(concepts.begin(), concepts.end(), id,
                       [](const Concept& item, const std::string& key) { return item.id < key; }) -
      concepts.begin());
  total_bytes += parsed.item.bytes;
  for (std::string_view dir = parent_dir(id); directories.insert(std::string(dir)).second && !dir.empty();)
    dir = parent_dir(dir);
  concepts.insert(concepts.begin() + static_cast<std::ptrdiff_t>(at), std::move(parsed.item));
  raw_links.insert(raw_links.begin() + static_cast<std::ptrdiff_t>(at), detail::PackedRawLinks(parsed.raw_links));
  auto root = std::find_if(logs.begin(), logs.end(), [](const auto& log) { return log.first.empty(); });
  if (root != logs.end())
    root->second = std::move(root_log);
  else
    logs.insert(logs.begin(), {std::string(), std::move(root_log)});
  finalize();
}

}  // namespace okfbench::retrieval
