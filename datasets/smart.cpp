// SMART collections (Cranfield, CACM, CISI, MED, ...): ".I n" records of
// ".X" fields, a query file in the same format and a qrels file.
#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "core/numbers.hpp"
#include "datasets/convert.hpp"
#include "datasets/convert_common.hpp"

namespace okfbench::datasets {
namespace fs = std::filesystem;
using namespace detail;

namespace {

constexpr std::string_view kFields = "ITABWKCNX";

struct FieldLine {
  int line = 0;
  std::string text;
};

struct SmartRecord {
  std::string id;
  int line = 0;
  std::map<char, std::vector<FieldLine>> fields;

  std::string text(char field) const {
    auto it = fields.find(field);
    if (it == fields.end()) return {};
    std::string out;
    for (const FieldLine& l : it->second) out += l.text + "\n";
    return out;
  }
};

std::string where(const fs::path& path, int line) { return path.string() + ":" + std::to_string(line); }

std::string rstrip(std::string_view s) {
  std::size_t end = s.find_last_not_of(" \t\v\f");
  return end == std::string_view::npos ? std::string() : std::string(s.substr(0, end + 1));
}

// Ids compare as numbers when they are digits: qrels write "01" for query 1.
std::string canonical(std::string_view id) {
  if (id.empty() || !std::all_of(id.begin(), id.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::string(id);
  std::size_t nonzero = id.find_first_not_of('0');
  return nonzero == std::string_view::npos ? "0" : std::string(id.substr(nonzero));
}

std::vector<std::string> words(std::string_view line) {
  std::vector<std::string> out;
  std::istringstream in{std::string(line)};
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

bool is_marker(std::string_view s) {
  return s.size() == 2 && s[0] == '.' && std::isupper(static_cast<unsigned char>(s[1]));
}

std::vector<SmartRecord> read_smart(const fs::path& path) {
  std::vector<SmartRecord> records;
  std::map<std::string, int> seen;  // canonical id -> line
  char field = 0;
  int number = 0;
  for (const std::string& line : lines_of(read_text(path))) {
    ++number;
    const std::string content = rstrip(line);
    if (content.starts_with(".I") && (content.size() == 2 || content[2] == ' ' || content[2] == '\t')) {
      std::string id = trim(content.substr(2));
      if (id.empty() || id.find_first_of(" \t") != std::string::npos) {
        throw InputError(where(path, number) + ": \"" + escape_visible(line) +
                         "\": a record starts with \".I <id>\" (one id, e.g. \".I 12\")");
      }
      if (auto [it, fresh] = seen.emplace(canonical(id), number); !fresh) {
        throw InputError(where(path, number) + ": record " + id + " again (first at line " +
                         std::to_string(it->second) + "); give each record its own .I id");
      }
      records.push_back({id, number, {}});
      field = 0;
    } else if (is_marker(content) && !records.empty()) {
      if (kFields.find(content[1]) == std::string_view::npos) {
        throw InputError(where(path, number) + ": \"" + escape_visible(line) +
                         "\" is not a SMART field; the fields are .I .T .A .B .W .K .C .N .X");
      }
      field = content[1];
      records.back().fields[field];  // a field present but empty is still present
    } else if (records.empty() || field == 0) {
      if (!trim(line).empty()) {
        throw InputError(where(path, number) + ": \"" + escape_visible(line) + "\" is text outside a field: " +
                         "each record is \".I <id>\" then field lines such as \".T\" and \".W\", each marker "
                         "alone on its line");
      }
    } else {
      records.back().fields[field].push_back({number, line});
    }
  }
  return records;
}

// "a, b; c" -> {"a", "b", "c"}, each once, in order.
std::vector<std::string> split_list(std::string_view text, std::string_view separators) {
  std::vector<std::string> out;
  std::string item;
  auto flush = [&] {
    std::string t = one_line(item);
    if (!t.empty() && std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
    item.clear();
  };
  for (char c : text) {
    if (separators.find(c) != std::string_view::npos) flush();
    else item.push_back(c);
  }
  flush();
  return out;
}

std::vector<std::string> lines_list(const SmartRecord& record, char field) {
  std::string joined;
  auto it = record.fields.find(field);
  if (it == record.fields.end()) return {};
  for (const FieldLine& l : it->second) joined += l.text + "\n";
  return split_list(joined, "\n");
}

// --- the collection's files ------------------------------------------------

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool is_docs_name(const std::string& n) { return n == "cran.all.1400" || n.ends_with(".all") || n.find(".all.") != std::string::npos; }
bool is_queries_name(const std::string& n) {
  return n.ends_with(".qry") || n.ends_with(".que") || n == "query.text" || n.ends_with(".queries");
}
bool is_qrels_name(const std::string& n) {
  return n == "cranqrel" || n == "qrels.text" || n.ends_with(".rel") || n.ends_with(".qrels");
}

fs::path pick(const fs::path& src, const fs::path& given, bool (*matches)(const std::string&), std::string_view role,
              std::string_view flag, std::string_view patterns) {
  if (!given.empty()) {
    if (!fs::is_regular_file(given)) throw InputError(given.string() + ": no such file (" + std::string(flag) + ")");
    return given;
  }
  std::vector<fs::path> found;
  if (fs::is_directory(src)) {
    for (const auto& entry : fs::directory_iterator(src)) {
      if (entry.is_regular_file() && matches(lower(entry.path().filename().string()))) found.push_back(entry.path());
    }
  }
  std::sort(found.begin(), found.end());
  if (found.size() == 1) return found.front();
  std::string message = src.string() + ": ";
  if (!fs::is_directory(src)) message += "not a directory; ";
  if (found.empty()) {
    message += "no " + std::string(role) + " file (" + std::string(patterns) + ")";
  } else {
    message += std::to_string(found.size()) + " files could be the " + std::string(role) + ":";
    for (const fs::path& p : found) message.append(" ").append(p.filename().string());
  }
  throw InputError(message + "; give it with " + std::string(flag) + " FILE");
}

// --- documents -------------------------------------------------------------

struct Collection {
  std::map<std::string, std::string> ids;  // canonical id -> id as written
};

std::vector<std::pair<std::string, std::string>> citations(const SmartRecord& doc, const Collection& collection,
                                                           const fs::path& path, Warnings& warnings) {
  std::vector<std::pair<std::string, std::string>> links;
  std::set<std::string> seen;
  auto it = doc.fields.find('X');
  if (it == doc.fields.end()) return links;
  const std::string self = canonical(doc.id);
  for (const FieldLine& l : it->second) {
    std::vector<std::string> cols = words(l.text);
    if (cols.empty()) continue;
    if (cols.size() > 3) {
      throw InputError(where(path, l.line) + ": \"" + escape_visible(l.text) +
                       "\": a .X line is \"doc\" or \"doc type doc\" (CACM, CISI)");
    }
    // "a type b": one end is this document, the other the one it is linked with.
    std::string other = canonical(cols.size() == 3 && canonical(cols[0]) == self ? cols[2] : cols[0]);
    if (other == self) continue;
    auto target = collection.ids.find(other);
    if (target == collection.ids.end()) {
      warnings.add("a .X citation names a document that is not in the collection; it was dropped",
                   where(path, l.line));
      continue;
    }
    if (!seen.insert(other).second) continue;
    std::string href = "/";
    href.append(safe_concept_id(target->second)).append(".md");
    links.emplace_back(std::move(href), "CITES");
  }
  return links;
}

Frontmatter document_fields(const SmartRecord& doc, const Collection& collection, const fs::path& path,
                            Warnings& warnings, std::size_t& links) {
  const std::string id = safe_concept_id(doc.id);
  const std::string title = one_line(doc.text('T'));
  const std::string body = doc.text('W');
  std::vector<std::string> authors = lines_list(doc, 'A');
  std::vector<std::string> tags = split_list(doc.text('K'), ",;\n");
  for (const std::string& a : authors)
    if (std::find(tags.begin(), tags.end(), a) == tags.end()) tags.push_back(a);
  auto cited = citations(doc, collection, path, warnings);
  links += cited.size();
  Frontmatter fields;
  fields.text("type", "Document");
  fields.text("title", title);
  fields.text("description", trim(body).empty() ? title : first_sentence(body));
  if (id != doc.id) fields.text("source_id", doc.id);
  fields.list("authors", authors);
  fields.list("tags", tags);
  fields.list("categories", split_list(doc.text('C'), ",; \t\n"));
  fields.text("bibliography", one_line(doc.text('B')));
  fields.text("note", one_line(doc.text('N')));
  fields.links(cited);
  return fields;
}

// --- queries and judgments -------------------------------------------------

int cranfield_grade(int code) { return code >= 1 && code <= 4 ? 5 - code : 0; }

struct Qrel {
  std::string query, doc;  // as written
  int grade = 1;
  int line = 0;
};

int grade_of(const std::string& text, const fs::path& path, int line) {
  const Parsed<int> value = parse_integer(text, kGrades);
  if (!value.value) throw InputError(where(path, line) + ": grade \"" + escape_visible(text) + "\": " + value.problem);
  return *value.value;
}

bool trec_layout(const std::vector<std::vector<std::string>>& rows) {
  return std::all_of(rows.begin(), rows.end(), [](const auto& r) { return r[1] == "0" || r[1] == "Q0"; });
}

std::vector<Qrel> read_qrels(const fs::path& path, SmartGrades grades) {
  std::vector<std::vector<std::string>> rows;
  std::vector<int> row_lines;
  int number = 0;
  for (const std::string& line : lines_of(read_text(path))) {
    ++number;
    std::vector<std::string> cols = words(line);
    if (cols.empty()) continue;
    if (cols.size() < 2 || cols.size() > 4) {
      throw InputError(where(path, number) + ": \"" + escape_visible(line) + "\" has " + std::to_string(cols.size()) +
                       " columns; qrels lines are \"query doc\", \"query doc grade\" or \"query iteration doc grade\"");
    }
    if (!rows.empty() && cols.size() != rows.front().size()) {
      throw InputError(where(path, number) + ": " + std::to_string(cols.size()) + " columns, but line " +
                       std::to_string(row_lines.front()) + " has " + std::to_string(rows.front().size()) +
                       "; every line of a qrels file has the same columns");
    }
    rows.push_back(std::move(cols));
    row_lines.push_back(number);
  }
  if (grades == SmartGrades::automatic)
    grades = lower(path.filename().string()) == "cranqrel" ? SmartGrades::cranfield : SmartGrades::as_written;
  const bool trec = !rows.empty() && rows.front().size() == 4 && trec_layout(rows);
  std::vector<Qrel> qrels;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    Qrel q{r[0], r[1], 1, row_lines[i]};
    if (r.size() == 3) {
      int value = grade_of(r[2], path, q.line);
      q.grade = grades == SmartGrades::cranfield ? cranfield_grade(value) : value;
    } else if (trec) {
      q.doc = r[2];
      q.grade = grade_of(r[3], path, q.line);
    }  // 2 columns, or CACM/CISI's "query doc 0 0": judged relevant
    qrels.push_back(std::move(q));
  }
  return qrels;
}

struct QueryText {
  std::string id;  // the question id
  std::string text;
};

QuestionSet smart_questions(const SmartFiles& files, const ConvertOptions& options, const Collection& collection,
                            Warnings& warnings, bool& by_position) {
  std::vector<SmartRecord> records = read_smart(files.queries);
  std::vector<Qrel> qrels = read_qrels(files.qrels, options.grades);
  std::map<std::string, std::size_t> by_id;  // canonical .I -> position
  for (std::size_t i = 0; i < records.size(); ++i) by_id[canonical(records[i].id)] = i;
  auto position_of = [&](const std::string& qid) -> std::optional<std::size_t> {
    const Parsed<std::size_t> n = parse_integer(qid, IntegerRange<std::size_t>{1, records.size()});
    return n.value ? std::optional(*n.value - 1) : std::nullopt;
  };
  const bool ids_match = std::all_of(qrels.begin(), qrels.end(), [&](const Qrel& q) { return by_id.count(canonical(q.query)); });
  by_position = !ids_match;
  std::map<std::size_t, std::map<std::string, int>> judged;  // query position -> doc -> grade
  std::map<std::pair<std::size_t, std::string>, const Qrel*> first;
  for (const Qrel& q : qrels) {
    std::optional<std::size_t> at = ids_match ? std::optional(by_id[canonical(q.query)]) : position_of(q.query);
    if (!at) {
      throw InputError(where(files.qrels, q.line) + ": query " + q.query + " is neither a .I id of " +
                       files.queries.string() + " nor a position 1.." + std::to_string(records.size()) +
                       " in it; is this the collection's query file?");
    }
    auto doc = collection.ids.find(canonical(q.doc));
    if (doc == collection.ids.end()) {
      warnings.add("a judgment names a document that is not in the collection; it was dropped",
                   where(files.qrels, q.line));
      continue;
    }
    auto [it, fresh] = first.emplace(std::pair(*at, doc->second), &q);
    if (!fresh && it->second->grade != q.grade) {
      throw InputError(where(files.qrels, q.line) + ": query " + q.query + ", document " + q.doc +
                       " judged again with another grade (first at line " + std::to_string(it->second->line) +
                       "); keep one judgment");
    }
    judged[*at][doc->second] = q.grade;
  }
  QuestionSet set;
  for (const auto& [at, relevant] : judged) {
    const SmartRecord& record = records[at];
    std::string text = one_line(record.text('W'));
    if (text.empty()) text = one_line(record.text('T'));
    if (text.empty()) {
      warnings.add("a judged query has no .W or .T text; it was left out", where(files.queries, record.line));
      continue;
    }
    Question q;
    q.id = by_position ? std::to_string(at + 1) : record.id;
    q.text = std::move(text);
    q.relevant = relevant;
    set.questions.push_back(std::move(q));
  }
  return set;
}

}  // namespace

SmartFiles smart_files(const fs::path& src, const ConvertOptions& options) {
  SmartFiles files;
  files.docs = pick(src, options.docs, is_docs_name, "documents", "--docs", "cran.all.1400, *.all, *.all.*");
  files.queries = pick(src, options.queries, is_queries_name, "queries", "--queries", "*.qry, *.que, query.text, *.queries");
  files.qrels = pick(src, options.qrels, is_qrels_name, "qrels", "--qrels", "cranqrel, qrels.text, *.rel, *.qrels");
  return files;
}

ConvertResult convert_smart(const fs::path& src, const fs::path& out, const ConvertOptions& options) {
  ConvertResult result = start(src, out, options);
  const SmartFiles files = smart_files(src, options);
  std::vector<SmartRecord> docs = read_smart(files.docs);
  Collection collection;
  for (const SmartRecord& doc : docs) collection.ids[canonical(doc.id)] = doc.id;
  Warnings warnings;
  QuestionSet questions = smart_questions(files, options, collection, warnings, result.queries_by_position);
  std::vector<Frontmatter> fields;
  fields.reserve(docs.size());
  for (const SmartRecord& doc : docs) fields.push_back(document_fields(doc, collection, files.docs, warnings, result.links));
  create_bundle_folder(result.bundle);
  for (std::size_t i = 0; i < docs.size(); ++i) {
    write_concept(result.bundle, safe_concept_id(docs[i].id), fields[i], docs[i].text('W'));
    result.renamed += safe_concept_id(docs[i].id) != docs[i].id ? 1 : 0;
    ++result.documents;
  }
  result.warnings = warnings.take();
  return finish(std::move(result), std::move(questions), out);
}

}  // namespace okfbench::datasets
