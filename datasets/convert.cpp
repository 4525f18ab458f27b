#include "datasets/convert.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/hash.hpp"
#include "datasets/questions.hpp"

namespace okfbench::datasets {
namespace fs = std::filesystem;
namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

std::string read_text(const fs::path& path) {
  std::string text = read_file(path, path.string() + ": cannot read the file; is SRC the right directory?");
  text.erase(std::remove(text.begin(), text.end(), '\r'), text.end());
  return text;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string trim(std::string_view s) {
  std::size_t b = s.find_first_not_of(" \t\n");
  if (b == std::string_view::npos) return {};
  return std::string(s.substr(b, s.find_last_not_of(" \t\n") - b + 1));
}

// Joins wrapped lines into one line (for titles and descriptions).
std::string one_line(std::string_view text) {
  std::string out;
  std::istringstream in{std::string(text)};
  for (std::string word; in >> word;) out += (out.empty() ? "" : " ") + word;
  return out;
}

bool is_safe_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == '-';
}

fs::path prepare_out(const fs::path& out) {
  fs::path bundle = out / "bundle";
  if (fs::exists(bundle)) {
    throw InputError(bundle.string() + " already exists: choose another --out or remove it first");
  }
  fs::create_directories(bundle);
  return bundle;
}

void write_file(const fs::path& path, const std::string& text) {
  write_atomically(path, text);
}

void write_concept(const fs::path& bundle, const std::string& id, const Fields& fields, std::string_view body) {
  YAML::Emitter yaml;
  yaml << YAML::BeginMap;
  for (const auto& [key, value] : fields) {
    if (value.empty()) continue;
    yaml << YAML::Key << key << YAML::Value << YAML::DoubleQuoted << value;
  }
  yaml << YAML::EndMap;
  fs::path path = bundle / (id + ".md");
  fs::create_directories(path.parent_path());
  std::string text = "---\n" + std::string(yaml.c_str()) + "\n---\n\n" + std::string(body);
  if (!text.ends_with('\n')) text += '\n';
  write_file(path, text);
}

// Writes one collection document; returns whether its id was rewritten.
bool write_document(const fs::path& bundle, std::string_view source_id, std::string_view title,
                    std::string_view body, Fields extra = {}) {
  std::string id = safe_concept_id(source_id);
  Fields fields = {{"type", "Document"}, {"title", one_line(title)}};
  if (id != source_id) fields.emplace_back("source_id", std::string(source_id));
  fields.insert(fields.end(), extra.begin(), extra.end());
  write_concept(bundle, id, fields, body);
  return id != source_id;
}

// Judgments name source document ids; concepts may have been renamed.
void rename_judged_ids(QuestionSet& set) {
  for (Question& q : set.questions) {
    std::map<std::string, int> relevant;
    for (const auto& [doc, grade] : q.relevant) relevant[safe_concept_id(doc)] = grade;
    q.relevant = std::move(relevant);
    q.relevant_line.clear();
  }
}

ConvertResult finish(ConvertResult result, QuestionSet set, const fs::path& out) {
  rename_judged_ids(set);
  result.questions = out / "questions.yaml";
  result.question_count = set.questions.size();
  save_questions(set, result.questions);
  return result;
}

// --- Cranfield -------------------------------------------------------------

struct CranRecord {
  std::string id;
  std::map<char, std::string> fields;  // 'T', 'A', 'B', 'W'
  int line = 0;
};

// Records of the SMART format: ".I n" then ".X" field lines.
std::vector<CranRecord> read_smart(const fs::path& path) {
  std::vector<CranRecord> records;
  char field = 0;
  int number = 0;
  for (const std::string& line : lines_of(read_text(path))) {
    ++number;
    if (line.starts_with(".I")) {
      records.push_back({trim(line.substr(2)), {}, number});
      field = 0;
    } else if (line.size() == 2 && line[0] == '.' && !records.empty()) {
      field = line[1];
    } else if (records.empty() || field == 0) {
      if (!trim(line).empty()) {
        throw InputError(path.string() + ":" + std::to_string(number) + ": text outside a .I record field");
      }
    } else {
      records.back().fields[field] += line + "\n";
    }
  }
  return records;
}

int cranfield_grade(int code) { return code >= 1 && code <= 4 ? 5 - code : 0; }

QuestionSet cranfield_questions(const fs::path& src) {
  std::map<std::string, std::string> texts;
  auto queries = read_smart(src / "cran.qry");
  for (std::size_t i = 0; i < queries.size(); ++i) texts[std::to_string(i + 1)] = one_line(queries[i].fields['W']);
  QuestionSet set;
  set.name = "cranfield";
  QrelsTable qrels;
  fs::path qrels_path = src / "cranqrel";
  int number = 0;
  for (const std::string& line : lines_of(read_text(qrels_path))) {
    ++number;
    std::istringstream in(line);
    std::string qid, doc, code;
    if (!(in >> qid)) continue;
    if (!(in >> doc >> code)) {
      throw InputError(qrels_path.string() + ":" + std::to_string(number) + ": expected 'query doc code'");
    }
    const Parsed<int> value = parse_integer(code, kGrades);
    if (!value.value) throw InputError(qrels_path.string() + ":" + std::to_string(number) + ": code: " + value.problem);
    qrels[qid][doc] = {cranfield_grade(*value.value), number};
  }
  for (const auto& [qid, judgments] : qrels) {
    if (texts.count(qid) == 0) {
      throw InputError(qrels_path.string() + ": query " + qid + " is judged but cran.qry has only " +
                       std::to_string(texts.size()) + " queries");
    }
  }
  for (const auto& [qid, text] : texts) {
    auto judged = qrels.find(qid);
    if (judged == qrels.end()) continue;
    Question q;
    q.id = qid;
    q.text = text;
    for (const auto& [doc, j] : judged->second) q.relevant[doc] = j.grade;
    set.questions.push_back(std::move(q));
  }
  // The ids are the numbers 1..N in plain decimal: a shorter one is smaller.
  std::sort(set.questions.begin(), set.questions.end(), [](const Question& a, const Question& b) {
    return a.id.size() != b.id.size() ? a.id.size() < b.id.size() : a.id < b.id;
  });
  return set;
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

std::string safe_concept_id(std::string_view id) {
  bool safe = !id.empty() && id.size() <= 120 && std::all_of(id.begin(), id.end(), is_safe_char) &&
              id.front() != '.' && id.front() != '_' && id.front() != '-' && id != "index" && id != "log";
  if (safe) return std::string(id);
  std::string out;
  for (char c : id.substr(0, 100)) out.push_back(is_safe_char(c) ? c : '_');
  char hash[9];
  std::snprintf(hash, sizeof hash, "%08x", fnv1a_32(id));
  // A leading '.' would make a hidden file, which bundles skip.
  if (out.empty() || !std::isalnum(static_cast<unsigned char>(out.front()))) out.insert(0, "doc");
  return out + "-" + hash;
}

ConvertResult convert_cranfield(const fs::path& src, const fs::path& out) {
  auto docs = read_smart(src / "cran.all.1400");
  QuestionSet questions = cranfield_questions(src);
  ConvertResult result;
  result.bundle = prepare_out(out);
  for (const CranRecord& doc : docs) {
    auto field = [&](char f) {
      auto it = doc.fields.find(f);
      return it == doc.fields.end() ? std::string() : it->second;
    };
    Fields extra = {{"author", one_line(field('A'))}, {"bibliography", one_line(field('B'))}};
    result.renamed += write_document(result.bundle, doc.id, field('T'), field('W'), extra) ? 1 : 0;
    ++result.documents;
  }
  return finish(result, std::move(questions), out);
}

ConvertResult convert_beir(const fs::path& src, const fs::path& out, std::string_view split) {
  fs::path corpus_path = src / "corpus.jsonl";
  std::string corpus = read_text(corpus_path);
  QuestionSet questions = read_beir(src, split);
  ConvertResult result;
  result.bundle = prepare_out(out);
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
    result.renamed += write_document(result.bundle, id, title, doc["text"].get<std::string>()) ? 1 : 0;
    ++result.documents;
  }
  return finish(result, std::move(questions), out);
}

ConvertResult convert_markdown(const fs::path& src, const fs::path& out) {
  std::vector<Page> pages = find_pages(src);
  ConvertResult result;
  result.bundle = prepare_out(out);
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
    Fields fields = {{"type", "Page"}, {"title", title}, {"description", parsed.description}};
    write_concept(result.bundle, page.id, fields, body);
    result.renamed += page.id != fs::relative(page.path, src).replace_extension().generic_string() ? 1 : 0;
    ++result.documents;
  }
  return result;
}

}  // namespace okfbench::datasets
