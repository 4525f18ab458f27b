// Reading one bundle file: bytes, encoding checks, frontmatter, body.
#include <yaml-cpp/yaml.h>

#include <fmt/format.h>

#include "retrieval/bundle_impl.hpp"
#include "retrieval/frontmatter.hpp"
#include "retrieval/markdown.hpp"
#include "retrieval/utf8.hpp"
#include "core/yaml_keys.hpp"

namespace okfbench::retrieval::detail {

namespace {

constexpr std::size_t max_repo_description = 300;

int line_of_offset(std::string_view text, std::size_t offset) {
  int line = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i)
    if (text[i] == '\n') ++line;
  return line;
}

// Removes a UTF-8 BOM and CR before LF, reporting each as a warning.
void normalize_encoding(std::string& content, const std::string& path, std::vector<Diagnostic>& diagnostics) {
  if (content.starts_with("\xEF\xBB\xBF")) {
    content.erase(0, 3);
    diagnostics.push_back({Severity::warning, path, 1,
                           "file starts with a UTF-8 byte order mark; it was ignored, but save the file "
                           "as UTF-8 without BOM so other tools see the frontmatter fence"});
  }
  std::size_t first_cr = content.find("\r\n");
  if (first_cr == std::string::npos) return;
  diagnostics.push_back({Severity::warning, path, line_of_offset(content, first_cr),
                         "file uses CRLF line endings; they were read as LF, but convert the file to LF "
                         "(e.g. dos2unix) so line-based tools agree"});
  std::size_t out = 0;
  for (std::size_t i = 0; i < content.size(); ++i) {
    if (content[i] == '\r' && i + 1 < content.size() && content[i + 1] == '\n') continue;
    content[out++] = content[i];
  }
  content.resize(out);
}

std::string file_stem(std::string_view path) {
  std::string_view name = path.substr(path.rfind('/') == std::string_view::npos ? 0 : path.rfind('/') + 1);
  if (name.ends_with(".md")) name.remove_suffix(3);
  return std::string(name);
}

std::string id_of(std::string_view path) { return std::string(path.substr(0, path.size() - 3)); }

std::string layer_of(std::string_view path) {
  std::size_t slash = path.find('/');
  return slash == std::string_view::npos ? std::string() : std::string(path.substr(0, slash));
}

bool read_concept_frontmatter(const SplitDocument& split, const LoadOptions& options, ParsedFile& file) {
  Concept& item = file.parsed.item;
  Profile profile = options.profile;
  if (split.fence == Fence::none) {
    if (profile == Profile::repo) return true;
    file.diagnostics.push_back({Severity::error, file.path, 1,
                                "no YAML frontmatter; start the file with a `---` line, `type: <Type>`, "
                                "and a closing `---` line; the file was skipped"});
    return false;
  }
  if (split.fence == Fence::unterminated) {
    Severity severity = is_strict(profile) ? Severity::error : Severity::warning;
    file.diagnostics.push_back(
        {severity, file.path, 1,
         fmt::format("frontmatter opened with `---` on line 1 is never closed; add a `---` line after "
                     "the YAML{}",
                     is_strict(profile) ? "; the file was skipped" : "; the file was loaded as plain markdown")});
    return profile == Profile::repo;
  }
  FrontmatterOutcome outcome =
      read_frontmatter(split.yaml, split.yaml_line, profile, item, file.parsed.raw_links, file.diagnostics);
  return outcome == FrontmatterOutcome::loaded || profile == Profile::repo;
}

void parse_concept(std::string_view content, const LoadOptions& options, ParsedFile& file) {
  std::string_view text = content;
  Concept& item = file.parsed.item;
  item.path = file.path;
  item.id = id_of(file.path);
  item.layer = layer_of(file.path);
  SplitDocument split = split_frontmatter(text);
  if (!read_concept_frontmatter(split, options, file)) return;
  if (split.fence != Fence::closed) split.body = text, split.body_line = 1;
  MarkdownScan scan = scan_markdown(split.body, split.body_line,
                                    options.profile == Profile::repo ? Wikilinks::on : Wikilinks::off);
  if (item.type.empty()) item.type = "Document";  // repo profile only
  if (item.title.empty()) item.title = !scan.first_h1.empty() ? scan.first_h1 : file_stem(file.path);
  if (item.description.empty() && options.profile == Profile::repo) {
    item.description = std::move(scan.first_text);
    item.description.resize(utf8_prefix(item.description, max_repo_description).size());
  }
  for (const Source& source : item.sources)
    item.citations.push_back({source.id, source.title.empty() ? source.resource : source.title});
  for (Citation& footnote : scan.footnotes) item.citations.push_back(std::move(footnote));
  for (Citation& entry : scan.citation_items) item.citations.push_back(std::move(entry));
  for (RawLink& link : scan.links) file.parsed.raw_links.push_back(std::move(link));
  std::size_t body_offset = static_cast<std::size_t>(split.body.data() - text.data());
  if (split.body.empty()) body_offset = content.size();
  // A copy of the body alone: kept in the file's buffer, the frontmatter's
  // bytes would stay allocated beside frontmatter_yaml for the bundle's life.
  item.body.assign(content, body_offset);
  file.loaded = true;
}

void parse_index(std::string_view text, ParsedFile& file) {
  SplitDocument split = split_frontmatter(text);
  bool root = file.path == "index.md";
  if (split.fence == Fence::closed) {
    if (!root) {
      file.diagnostics.push_back({Severity::warning, file.path, 1,
                                  "index.md carries frontmatter; only the bundle-root index.md may (for "
                                  "okf_version); remove the block"});
    } else {
      file.frontmatter = Bundle::IndexFrontmatter{std::string(split.yaml), split.yaml_line};
      try {
        YAML::Node node = YAML::Load(std::string(split.yaml));
        if (!node.IsMap() && !node.IsNull())
          file.diagnostics.push_back({Severity::warning, file.path, split.yaml_line,
                                      "root index.md frontmatter is not a mapping; write `okf_version: \"0.2\"`"});
        for (const DuplicateKey& d : find_duplicate_keys(node)) {
          file.diagnostics.push_back({Severity::warning, file.path, split.yaml_line + d.line - 1,
                                      fmt::format("duplicate key `{}` in root index.md frontmatter (first at line {}): "
                                                  "YAML keys must be unique, keep one",
                                                  d.path.empty() ? d.key : d.path + "." + d.key,
                                                  split.yaml_line + d.first_line - 1)});
        }
      } catch (const YAML::Exception& e) {
        file.diagnostics.push_back({Severity::warning, file.path, split.yaml_line + std::max(0, e.mark.line),
                                    fmt::format("invalid YAML in root index.md frontmatter: {}; the body is "
                                                "still readable",
                                                e.msg)});
      }
    }
  }
  file.text = std::string(split.fence == Fence::closed ? split.body : text);
  file.loaded = true;
}

}  // namespace

namespace {

ParsedFile parse_checked(const FileTask& task, const LoadOptions& options, FileContent read) {
  ParsedFile file;
  file.kind = task.kind;
  file.path = task.path;
  if (!read.error.empty()) {
    file.diagnostics.push_back({Severity::error, file.path, 0, std::move(read.error)});
    return file;
  }
  std::string& content = read.bytes;
  file.parsed.item.bytes = content.size();
  if (content.empty() && task.kind == FileKind::concept_file) {
    Severity severity = is_strict(options.profile) ? Severity::error : Severity::warning;
    file.diagnostics.push_back({severity, file.path, 0,
                                "file is empty; add frontmatter with a `type` and a body, or delete it; "
                                "the file was skipped"});
    return file;
  }
  normalize_encoding(content, file.path, file.diagnostics);
  if (std::size_t bad = invalid_utf8_offset(content); bad != std::string::npos) {
    file.diagnostics.push_back(
        {Severity::error, file.path, line_of_offset(content, bad),
         fmt::format("invalid UTF-8 at byte {}; re-encode the file as UTF-8 (e.g. iconv -f latin1 -t "
                     "utf-8); the file was skipped",
                     bad)});
    return file;
  }
  switch (task.kind) {
    case FileKind::concept_file: parse_concept(content, options, file); break;
    case FileKind::index: parse_index(content, file); break;
    case FileKind::log: {
      SplitDocument split = split_frontmatter(content);  // a log may carry frontmatter (acme_retail)
      if (split.fence != Fence::closed) split.body = content, split.body_line = 1;
      file.entries = parse_log(split.body, split.body_line, file.path, file.diagnostics);
      file.loaded = true;
      break;
    }
  }
  return file;
}

}  // namespace

ParsedFile parse_file(const FileTask& task, const LoadOptions& options, FileContent content) {
  try {
    return parse_checked(task, options, std::move(content));
  } catch (const std::exception& e) {  // last line of defence: loading never throws for content
    ParsedFile file;
    file.kind = task.kind;
    file.path = task.path;
    file.diagnostics.push_back(
        {Severity::error, task.path, 0, fmt::format("cannot load the file: {}; the file was skipped", e.what())});
    return file;
  }
}

}  // namespace okfbench::retrieval::detail
