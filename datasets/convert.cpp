#include "datasets/convert.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "datasets/convert_common.hpp"
#include "datasets/questions.hpp"

namespace okfbench::datasets {
namespace fs = std::filesystem;
using namespace detail;
namespace {

// Writes one collection document; returns whether its id was rewritten.
bool write_document(const fs::path& bundle, std::string_view source_id, std::string_view title,
                    std::string_view body) {
  std::string id = safe_concept_id(source_id);
  Frontmatter fields;
  fields.text("type", "Document");
  fields.text("title", one_line(title));
  if (id != source_id) fields.text("source_id", source_id);
  write_concept(bundle, id, fields, body);
  return id != source_id;
}

// --- markdown trees --------------------------------------------------------

struct Page {
  std::string id;
  std::string dir;   // directory part of the id ("" at the root)
  std::string name;  // file name without .md, as in the source tree
  fs::path path;
};

std::string page_id(const fs::path& relative) {
  std::string id;
  for (auto it = relative.begin(); it != relative.end(); ++it) {
    std::string part = it->string();
    if (std::next(it) == relative.end()) part = part.substr(0, part.size() - 3);
    if (!id.empty()) id += '/';
    id += safe_concept_id(part);
  }
  return id;
}

std::vector<Page> find_pages(const fs::path& src) {
  if (!fs::is_directory(src)) throw InputError(src.string() + " is not a directory of markdown pages");
  std::vector<Page> pages;
  for (auto it = fs::recursive_directory_iterator(src); it != fs::recursive_directory_iterator(); ++it) {
    const fs::path& path = it->path();
    bool hidden = path.filename().string().starts_with(".");
    if (hidden && it->is_directory()) it.disable_recursion_pending();
    if (hidden || it->is_symlink() || !it->is_regular_file() || path.extension() != ".md") continue;
    fs::path relative = fs::relative(path, src);
    std::string id = page_id(relative);
    std::size_t slash = id.rfind('/');
    pages.push_back({id, slash == std::string::npos ? "" : id.substr(0, slash), path.stem().string(), path});
  }
  std::sort(pages.begin(), pages.end(), [](const Page& a, const Page& b) { return a.id < b.id; });
  return pages;
}

// "`a`, `b` and `c d`." -> {"a", "b", "c d"}
std::vector<std::string> backticked(std::string_view text) {
  std::vector<std::string> names;
  std::size_t pos = 0;
  while ((pos = text.find('`', pos)) != std::string_view::npos) {
    std::size_t end = text.find('`', pos + 1);
    if (end == std::string_view::npos) break;
    names.emplace_back(text.substr(pos + 1, end - pos - 1));
    pos = end + 1;
  }
  return names;
}

class PageLinker {
 public:
  explicit PageLinker(const std::vector<Page>& pages) {
    for (const Page& p : pages) by_name_[p.name].push_back(&p);
  }

  // The id of the page a "See also" name refers to, "" when none.
  std::string resolve(std::string name, const Page& from) const {
    std::replace(name.begin(), name.end(), ' ', '-');
    auto it = by_name_.find(name);
    if (it == by_name_.end()) return {};
    for (const Page* p : it->second) {
      if (p->dir == from.dir) return p->id;
    }
    return it->second.front()->id;
  }

 private:
  std::map<std::string, std::vector<const Page*>> by_name_;
};

struct ParsedPage {
  std::string title;
  std::string description;
  std::vector<std::string> see_also;
  std::string body;
};

ParsedPage parse_page(const std::string& text) {
  ParsedPage page;
  auto lines = lines_of(text);
  std::size_t i = 0;
  while (i < lines.size() && trim(lines[i]).empty()) ++i;
  if (i < lines.size() && lines[i].starts_with("# ")) page.title = trim(lines[i++].substr(2));
  while (i < lines.size() && trim(lines[i]).empty()) ++i;
  for (; i < lines.size() && lines[i].starts_with(">"); ++i) {
    std::string quote = trim(std::string_view(lines[i]).substr(1));
    if (quote.starts_with("See also:")) {
      auto names = backticked(quote);
      page.see_also.insert(page.see_also.end(), names.begin(), names.end());
    } else if (quote.starts_with("More information:")) {
      page.body += quote + "\n\n";
    } else {
      page.description += (page.description.empty() ? "" : " ") + quote;
    }
  }
  for (; i < lines.size(); ++i) page.body += lines[i] + "\n";
  return page;
}

}  // namespace

ConvertResult convert_beir(const fs::path& src, const fs::path& out, const ConvertOptions& options) {
  fs::path corpus_path = src / "corpus.jsonl";
  std::string corpus = read_text(corpus_path);
  ConvertResult result = start(src, out, options);
  QuestionSet questions = read_beir(src, options.split);
  create_bundle_folder(result.bundle);
  std::istringstream in(corpus);
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (trim(line).empty()) continue;
    nlohmann::json doc = nlohmann::json::parse(line, nullptr, false);
    if (doc.is_discarded() || !doc.is_object() || !doc.contains("_id") || !doc.value("text", nlohmann::json()).is_string()) {
      throw InputError(corpus_path.string() + ":" + std::to_string(number) +
                       ": expected a JSON object with \"_id\", \"title\" and \"text\"");
    }
    std::string id = doc["_id"].is_string() ? doc["_id"].get<std::string>() : doc["_id"].dump();
    std::string title = doc.contains("title") && doc["title"].is_string() ? doc["title"].get<std::string>() : "";
    const std::string text = doc["text"].get<std::string>();
    result.renamed += write_document(result.bundle, id, title, text) ? 1 : 0;
    ++result.documents;
  }
  return finish(std::move(result), std::move(questions), out);
}

ConvertResult convert_markdown(const fs::path& src, const fs::path& out, const ConvertOptions& options) {
  std::vector<Page> pages = find_pages(src);
  ConvertResult result = start(src, out, options);
  create_bundle_folder(result.bundle);
  PageLinker linker(pages);
  for (const Page& page : pages) {
    ParsedPage parsed = parse_page(read_text(page.path));
    std::string links;
    for (const std::string& name : parsed.see_also) {
      std::string target = linker.resolve(name, page);
      if (target.empty() || target == page.id) continue;
      links += "- [" + name + "](/" + target + ".md)\n";
      ++result.links;
    }
    std::string body = parsed.body;
    if (!links.empty()) body += "\n## See also\n\n" + links;
    std::string title = parsed.title.empty() ? page.name : parsed.title;
    Frontmatter fields;
    fields.text("type", "Page");
    fields.text("title", title);
    fields.text("description", parsed.description);
    write_concept(result.bundle, page.id, fields, body);
    result.renamed += page.id != fs::relative(page.path, src).replace_extension().generic_string() ? 1 : 0;
    ++result.documents;
  }
  return result;
}

}  // namespace okfbench::datasets
