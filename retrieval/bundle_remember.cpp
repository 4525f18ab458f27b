// Bundle::remember: a new concept plus a log entry, written atomically
// (temporary file + rename) and only inside the bundle root.
#include <fcntl.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <atomic>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "retrieval/bundle_impl.hpp"
#include "retrieval/frontmatter.hpp"

namespace okfbench::retrieval {
namespace fs = std::filesystem;
namespace {

bool is_within(const fs::path& path, const fs::path& root) {
  auto [root_end, path_it] = std::mismatch(root.begin(), root.end(), path.begin(), path.end());
  return root_end == root.end();
}

// An id agents may create: relative, no "..", no hidden or reserved names.
std::optional<std::string> check_new_id(std::string_view requested, std::string& error) {
  std::string_view text = requested;
  if (text.ends_with(".md")) text.remove_suffix(3);
  if (text.starts_with("/")) text.remove_prefix(1);
  if (text.empty()) {
    error = "concept_id is empty; give a path such as notes/slow-query-checklist";
    return std::nullopt;
  }
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = std::min(text.find('/', start), text.size());
    std::string_view segment = text.substr(start, end - start);
    if (segment.empty() || segment.starts_with(".") || segment == "index" || segment == "log" ||
        segment.find_first_of("\\:*?\"<>|") != std::string_view::npos ||
        std::any_of(segment.begin(), segment.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; })) {
      error = fmt::format("concept_id `{}` is not allowed: use '/'-separated names without '.', '..', "
                          "empty parts, reserved names (index, log) or special characters",
                          requested);
      return std::nullopt;
    }
    start = end + 1;
  }
  return std::string(text);
}

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
    for (const std::string& id : links) text += fmt::format("* [{0}](/{0}.md)\n", id);
  }
  return text;
}

// Writes `text` to a hidden temporary file beside `target`, then renames it
// over `target`, so readers see the old file or the new one, never half.
std::optional<std::string> write_atomically(const fs::path& target, const std::string& text) {
  static std::atomic<unsigned> counter{0};
  fs::path temporary = target.parent_path() / fmt::format(".{}.tmp-{}-{}", target.filename().string(),
                                                          ::getpid(), counter++);
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return fmt::format("cannot create {}: {}", temporary.string(), std::strerror(errno));
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t wrote = ::write(fd, text.data() + done, text.size() - done);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) break;
    done += static_cast<std::size_t>(wrote);
  }
  bool ok = done == text.size() && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok || std::rename(temporary.c_str(), target.c_str()) != 0) {
    std::string reason = std::strerror(errno);
    ::unlink(temporary.c_str());
    return fmt::format("cannot write {}: {}", target.string(), reason);
  }
  return std::nullopt;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Inserts the entry under `## date`, keeping the log newest first.
std::string add_log_entry(std::string log, const std::string& date, const std::string& entry) {
  if (log.empty()) log = "# Bundle log\n";
  std::string heading = "## " + date;
  std::size_t first_date = log.starts_with("## ") ? 0 : log.find("\n## ");
  if (first_date != std::string::npos && first_date != 0) ++first_date;
  if (first_date != std::string::npos && log.compare(first_date, heading.size(), heading) == 0) {
    std::size_t line_end = log.find('\n', first_date);
    std::size_t insert_at = line_end == std::string::npos ? log.size() : line_end + 1;
    if (line_end == std::string::npos) log += '\n';
    if (insert_at < log.size() && log[insert_at] == '\n') ++insert_at;
    log.insert(insert_at, entry + "\n");
    return log;
  }
  std::string block = heading + "\n\n" + entry + "\n\n";
  if (first_date == std::string::npos) {
    if (!log.ends_with("\n")) log += '\n';
    return log + "\n" + block;
  }
  log.insert(first_date, block);
  return log;
}

bool is_valid_date(const std::string& date) { return date.size() == 10 && parse_timestamp(date).has_value(); }

}  // namespace

std::optional<std::string> Bundle::remember(const RememberRequest& request) {
  Impl& impl = *impl_;
  std::string error;
  std::optional<std::string> id = check_new_id(request.concept_id, error);
  if (!id) return error;
  if (request.title.empty()) return std::string("title is empty; give the new concept a title");
  if (find(*id)) return fmt::format("concept `{}` already exists; choose another concept_id", *id);
  std::vector<std::string> links;
  for (const std::string& link : request.links) {
    std::optional<std::string> target = normalize_reference(link);
    if (!target) return fmt::format("link `{}` does not name a concept inside the bundle", link);
    links.push_back(*target);
  }
  std::string date = request.date.empty() ? now_utc().substr(0, 10) : request.date;
  if (!is_valid_date(date)) return fmt::format("date `{}` is not YYYY-MM-DD", request.date);

  fs::path target = impl.root / (*id + ".md");
  std::error_code ec;
  fs::create_directories(target.parent_path(), ec);
  fs::path parent = fs::canonical(target.parent_path(), ec);
  if (ec || !is_within(parent, impl.root))
    return fmt::format("cannot create `{}` inside the bundle (a directory on the way is missing, not "
                       "writable, or a link out of the bundle)",
                       *id);
  target = parent / target.filename();
  if (fs::exists(fs::symlink_status(target)))
    return fmt::format("`{}.md` already exists on disk; choose another concept_id", *id);
  if (auto failed = write_atomically(target, compose_concept(request, links))) return failed;

  fs::path log_path = impl.root / "log.md";
  std::string entry = fmt::format("* **Remembered**: [{}](/{}.md)", request.title, *id);
  if (auto failed = write_atomically(log_path, add_log_entry(read_text(log_path), date, entry))) {
    fs::remove(target, ec);
    return failed;
  }

  detail::ParsedFile file = detail::read_and_parse({*id + ".md", {-1, {}, target}, detail::FileKind::concept_file}, impl.options);
  detail::ParsedFile log = detail::read_and_parse({"log.md", {-1, {}, log_path}, detail::FileKind::log}, impl.options);
  if (!file.loaded) return fmt::format("wrote `{}.md` but could not read it back", *id);
  std::size_t at = static_cast<std::size_t>(
      std::lower_bound(impl.concepts.begin(), impl.concepts.end(), *id,
                       [](const Concept& item, const std::string& key) { return item.id < key; }) -
      impl.concepts.begin());
  impl.total_bytes += file.parsed.item.bytes;
  impl.concepts.insert(impl.concepts.begin() + static_cast<std::ptrdiff_t>(at), std::move(file.parsed.item));
  impl.raw_links.insert(impl.raw_links.begin() + static_cast<std::ptrdiff_t>(at), std::move(file.parsed.raw_links));
  for (std::string_view dir = parent_dir(*id); impl.directories.insert(std::string(dir)).second && !dir.empty();)
    dir = parent_dir(dir);
  auto root_log = std::find_if(impl.logs.begin(), impl.logs.end(), [](const auto& l) { return l.first.empty(); });
  if (root_log != impl.logs.end())
    root_log->second = std::move(log.entries);
  else
    impl.logs.insert(impl.logs.begin(), {std::string(), std::move(log.entries)});
  impl.finalize();
  return std::nullopt;
}

}  // namespace okfbench::retrieval
