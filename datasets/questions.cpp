#include "datasets/questions.hpp"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "core/fields.hpp"
#include "core/files.hpp"
#include "core/yaml_keys.hpp"
#include "retrieval/qualified_id.hpp"
#include "retrieval/search.hpp"

namespace okfbench::datasets {
namespace fs = std::filesystem;
namespace {

std::string read_text(const fs::path& path) {
  return read_file(path, path.string() + ": cannot read the file");
}

[[noreturn]] void fail(std::string_view source, int line, const std::string& message) {
  throw InputError(std::string(source) + ":" + std::to_string(line) + ": " + message);
}

int line_of(const YAML::Node& node) { return node.Mark().line + 1; }


std::string scalar(const YAML::Node& node, std::string_view source, std::string_view what) {
  if (!node.IsScalar()) fail(source, line_of(node), std::string(what) + " must be a single value");
  return node.Scalar();
}

class QuestionReader {
 public:
  explicit QuestionReader(std::string_view source) : source_(source) {}

  Question read(const YAML::Node& node) {
    if (!node.IsMap()) fail(source_, line_of(node), "a question must be a mapping with id and text");
    Question q;
    q.line = line_of(node);
    for (const auto& kv : node) read_key(q, kv.first.Scalar(), kv.first, kv.second);
    if (q.id.empty()) fail(source_, q.line, "question has no `id`: add a unique id");
    if (q.text.empty()) fail(source_, q.line, "question '" + q.id + "' has no `text`");
    if (!ids_.insert(q.id).second) fail(source_, q.line, "duplicate question id '" + q.id + "': ids must be unique");
    return q;
  }

 private:
  void read_key(Question& q, const std::string& key, const YAML::Node& key_node, const YAML::Node& value) {
    if (key == "id") {
      q.id = scalar(value, source_, "`id`");
    } else if (key == "text") {
      q.text = scalar(value, source_, "`text`");
    } else if (key == "relevant") {
      read_relevant(q, value);
    } else if (key == "answer_facts") {
      read_answer_facts(q, value);
    } else {
      fail(source_, line_of(key_node), "unknown key '" + key + "' (expected id, text, relevant, answer_facts)");
    }
  }

  void read_answer_facts(Question& q, const YAML::Node& value) {
    const std::string expected = "`answer_facts` must be a list of non-empty strings, e.g. [\"30 s\", \"CALL db.checkpoint()\"]";
    if (!value.IsSequence()) fail(source_, line_of(value), expected);
    int previous = line_of(value) - 1;
    for (const auto& fact : value) {
      // A bare "-" has no position of its own: it is the line after the entry before it.
      const int line = fact.IsNull() && value.Style() != YAML::EmitterStyle::Flow ? previous + 1 : line_of(fact);
      previous = line;
      if (fact.IsNull() || (fact.IsScalar() && fact.Scalar().find_first_not_of(" \t\r\n") == std::string::npos)) {
        fail(source_, line, expected + ": an entry is empty");
      }
      if (fact.IsMap()) {
        read_fact_entry(q, fact, line);
        continue;
      }
      if (!fact.IsScalar()) fail(source_, line, expected + ": an entry is not a string");
      q.answer_facts.push_back(fact.Scalar());
      q.fact_importance.push_back(FactImportance::vital);
    }
  }

  // {fact: "...", importance: vital|okay}
  void read_fact_entry(Question& q, const YAML::Node& entry, int line) {
    const std::string form = "an `answer_facts` entry is a string or {fact: \"...\", importance: vital|okay}";
    std::string fact;
    FactImportance importance = FactImportance::vital;
    for (const auto& kv : entry) {
      const std::string key = kv.first.Scalar();
      const YAML::Node& v = kv.second;
      if (key == "fact") {
        if (!v.IsScalar() || v.Scalar().find_first_not_of(" \t\r\n") == std::string::npos)
          fail(source_, line_of(v), form + ": `fact` must be a non-empty string");
        fact = v.Scalar();
      } else if (key == "importance") {
        const std::string text = v.IsScalar() ? v.Scalar() : "";
        if (text != "vital" && text != "okay")
          fail(source_, line_of(v), "`importance: " + text + "`: use vital or okay");
        importance = text == "okay" ? FactImportance::okay : FactImportance::vital;
      } else {
        fail(source_, line_of(kv.first), "unknown key '" + key + "' in " + form);
      }
    }
    if (fact.empty()) fail(source_, line, form + ": `fact` is missing");
    q.answer_facts.push_back(fact);
    q.fact_importance.push_back(importance);
  }

  void read_relevant(Question& q, const YAML::Node& value) {
    if (value.IsNull()) return;
    if (!value.IsMap()) fail(source_, line_of(value), "`relevant` must map concept ids to integer grades");
    for (const auto& kv : value) {
      std::string id = scalar(kv.first, source_, "a concept id");
      const Parsed<int> grade = parse_integer(kv.second.IsScalar() ? kv.second.Scalar() : std::string(), kGrades);
      if (!grade.value) fail(source_, line_of(kv.second), "grade of '" + id + "': " + grade.problem);
      q.relevant[id] = *grade.value;  // a concept judged twice is a duplicate key, refused before
      q.relevant_line[id] = line_of(kv.first);
    }
  }

  std::string_view source_;
  std::set<std::string> ids_;
};

// Calls `each(line_number, line)` for every line of `text`.
template <typename F>
void for_each_line(std::string_view text, F&& each) {
  int number = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    each(++number, text.substr(pos, end - pos));
    pos = end + 1;
  }
}

void add_judgment(QrelsTable& table, const std::string& source, int line, std::string_view qid,
                  std::string_view doc, std::string_view grade_text) {
  const Parsed<int> grade = parse_integer(grade_text, kGrades);
  if (!grade.value) fail(source, line, "grade of '" + std::string(doc) + "': " + grade.problem);
  auto [it, inserted] = table[std::string(qid)].emplace(std::string(doc), Judgment{*grade.value, line});
  if (!inserted) {
    fail(source, line, "query '" + std::string(qid) + "' judges document '" + std::string(doc) + "' twice");
  }
}

QuestionSet questions_from(const std::map<std::string, std::string>& texts, const QrelsTable& qrels,
                           const std::string& qrels_source, std::string name) {
  QuestionSet set;
  set.name = std::move(name);
  set.source = qrels_source;
  for (const auto& [qid, judgments] : qrels) {
    auto text = texts.find(qid);
    if (text == texts.end()) {
      fail(qrels_source, judgments.begin()->second.line, "query '" + qid + "' has judgments but no query text");
    }
    Question q;
    q.id = qid;
    q.text = text->second;
    q.line = judgments.begin()->second.line;
    for (const auto& [doc, j] : judgments) {
      q.relevant[doc] = j.grade;
      q.relevant_line[doc] = j.line;
    }
    set.questions.push_back(std::move(q));
  }
  return set;
}

std::string trim(std::string_view s) {
  std::size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  std::size_t e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

// Text of `<tag>` inside one <top> block: up to the next tag, without a
// "Number:"/"Topic:"/"Description:"/"Narrative:" label.
std::string topic_field(std::string_view block, std::string_view tag) {
  std::string open(1, '<');
  open.append(tag).push_back('>');
  std::size_t start = block.find(open);
  if (start == std::string_view::npos) return {};
  start += tag.size() + 2;
  std::size_t end = block.find('<', start);
  std::string text = trim(block.substr(start, end == std::string_view::npos ? block.size() - start : end - start));
  for (std::string_view label : {"Number:", "Topic:", "Description:", "Narrative:"}) {
    if (text.starts_with(label)) text = trim(std::string_view(text).substr(label.size()));
  }
  for (char& c : text) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return text;
}

std::string topic_text(std::string_view block, TopicField field) {
  switch (field) {
    case TopicField::description: return topic_field(block, "desc");
    case TopicField::title_and_description: return topic_field(block, "title") + " " + topic_field(block, "desc");
    case TopicField::title: break;
  }
  return topic_field(block, "title");
}

std::map<std::string, std::string> read_topics(const fs::path& path, TopicField field) {
  std::string text = read_text(path);
  std::map<std::string, std::string> topics;
  if (text.find("<top>") == std::string::npos) {
    for_each_line(text, [&](int line, std::string_view row) {
      if (trim(row).empty()) return;
      std::size_t tab = row.find('\t');
      if (tab == std::string_view::npos) fail(path.string(), line, "expected 'qid<TAB>text' or <top> blocks");
      topics[trim(row.substr(0, tab))] = trim(row.substr(tab + 1));
    });
    return topics;
  }
  std::size_t pos = 0;
  while ((pos = text.find("<top>", pos)) != std::string::npos) {
    std::size_t end = text.find("</top>", pos);
    if (end == std::string::npos) end = text.size();
    std::string_view block(text.data() + pos, end - pos);
    std::string num = topic_field(block, "num");
    if (num.empty()) throw InputError(path.string() + ": a <top> block has no <num>");
    topics[num] = topic_text(block, field);
    pos = end;
  }
  return topics;
}

}  // namespace

const Question* QuestionSet::find(std::string_view id) const {
  for (const Question& q : questions) {
    if (q.id == id) return &q;
  }
  return nullptr;
}

QuestionSet parse_questions(std::string_view yaml, std::string_view source) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    fail(source, e.mark.line + 1, "not valid YAML: " + e.msg);
  }
  if (!root.IsMap()) fail(source, 1, "expected a mapping with a `questions` list");
  if (const auto repeated = find_duplicate_keys(root); !repeated.empty()) {
    throw InputError(describe_duplicate_keys(repeated, std::string(source)));
  }
  QuestionSet set;
  set.source = std::string(source);
  if (root["name"]) set.name = scalar(root["name"], source, "`name`");
  const YAML::Node list = root["questions"];
  if (!list || !list.IsSequence()) fail(source, 1, "expected a `questions:` list");
  QuestionReader reader(source);
  for (const auto& node : list) set.questions.push_back(reader.read(node));
  for (const auto& kv : root) {
    std::string key = kv.first.Scalar();
    if (key != "name" && key != "questions") {
      fail(source, line_of(kv.first), "unknown key '" + key + "' (expected name, questions)");
    }
  }
  return set;
}

QuestionSet load_questions(const fs::path& path) { return parse_questions(read_text(path), path.string()); }

namespace {

// A YAML reader refuses an implicit key longer than 1024 characters, and
// yaml-cpp's emitter switches to an explicit "? key" only by the key's length
// before escaping: 300 control characters become 1,200 as \x01 escapes.
// So the decision is made on the key as it is written.
void write_key(YAML::Emitter& out, const std::string& key) {
  YAML::Emitter alone;
  alone << YAML::DoubleQuoted << key;
  if (alone.size() > 1000) out << YAML::LongKey;
  out << YAML::Key << YAML::DoubleQuoted << key;
}

}  // namespace

std::string to_yaml(const QuestionSet& set) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  if (!set.name.empty()) out << YAML::Key << "name" << YAML::Value << YAML::DoubleQuoted << set.name;
  out << YAML::Key << "questions" << YAML::Value << YAML::BeginSeq;
  for (const Question& q : set.questions) {
    out << YAML::BeginMap;
    out << YAML::Key << "id" << YAML::Value << YAML::DoubleQuoted << q.id;
    out << YAML::Key << "text" << YAML::Value << YAML::DoubleQuoted << q.text;
    if (!q.relevant.empty()) {
      out << YAML::Key << "relevant" << YAML::Value << YAML::BeginMap;
      for (const auto& [id, grade] : q.relevant) {
        write_key(out, id);
        out << YAML::Value << grade;
      }
      out << YAML::EndMap;
    }
    if (!q.answer_facts.empty()) {
      out << YAML::Key << "answer_facts" << YAML::Value << YAML::BeginSeq;
      for (std::size_t i = 0; i < q.answer_facts.size(); ++i) {
        const bool okay = i < q.fact_importance.size() && q.fact_importance[i] == FactImportance::okay;
        if (!okay) {
          out << YAML::DoubleQuoted << q.answer_facts[i];
          continue;
        }
        out << YAML::BeginMap << YAML::Key << "fact" << YAML::Value << YAML::DoubleQuoted << q.answer_facts[i]
            << YAML::Key << "importance" << YAML::Value << "okay" << YAML::EndMap;
      }
      out << YAML::EndSeq;
    }
    out << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

void save_questions(const QuestionSet& set, const fs::path& path) {
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  write_atomically(path, to_yaml(set));
}

void check_concepts(const QuestionSet& set, const retrieval::Bundle& bundle) {
  std::string problems;
  int count = 0;
  for (const Question& q : set.questions) {
    for (const auto& [id, grade] : q.relevant) {
      if (bundle.find(id) != nullptr) continue;
      if (++count <= 10) {
        auto line = q.relevant_line.find(id);
        problems += "\n  " + set.source + ":" + std::to_string(line == q.relevant_line.end() ? q.line : line->second) +
                    ": question '" + q.id + "' judges '" + id + "', which is not a concept of the bundle";
      }
    }
  }
  if (count == 0) return;
  throw InputError(std::to_string(count) + " judged concept id(s) not found in " + bundle.root().string() + ":" +
                   problems + "\n  (is this the bundle the question set was made for?)");
}

namespace {

// Why `id` names no concept of `bundles`, or "" when it names one.
std::string qualified_problem(const std::string& id, std::span<const retrieval::NamedBundle> bundles) {
  std::string names;
  for (const auto& b : bundles) names += (names.empty() ? "" : ", ") + b.name;
  const std::optional<retrieval::QualifiedId> q = retrieval::split_qualified_id(id);
  if (!q) return "which names no bundle; write BUNDLE:ID with BUNDLE one of " + names;
  for (const auto& b : bundles) {
    if (b.name != q->bundle) continue;
    if (b.bundle->find(std::string(q->id)) != nullptr) return "";
    return "which is not a concept of bundle '" + b.name + "'";
  }
  return "whose bundle '" + std::string(q->bundle) + "' is not loaded; the bundles are " + names;
}

}  // namespace

void check_concepts(const QuestionSet& set, std::span<const retrieval::NamedBundle> bundles) {
  std::string problems;
  int count = 0;
  for (const Question& q : set.questions) {
    for (const auto& [id, grade] : q.relevant) {
      const std::string problem = qualified_problem(id, bundles);
      if (problem.empty()) continue;
      if (++count <= 10) {
        auto line = q.relevant_line.find(id);
        problems += "\n  " + set.source + ":" + std::to_string(line == q.relevant_line.end() ? q.line : line->second) +
                    ": question '" + q.id + "' judges '" + id + "', " + problem;
      }
    }
  }
  if (count == 0) return;
  throw InputError(std::to_string(count) + " judged concept id(s) not found in the bundles searched as one:" + problems);
}

QrelsTable read_trec_qrels(const fs::path& path) {
  std::string text = read_text(path);
  QrelsTable table;
  for_each_line(text, [&](int line, std::string_view row) {
    auto fields = split_fields(row);
    if (fields.empty()) return;
    if (fields.size() != 4) fail(path.string(), line, "expected 4 columns 'qid iter docno grade'");
    add_judgment(table, path.string(), line, fields[0], fields[2], fields[3]);
  });
  return table;
}

QuestionSet read_trec(const fs::path& topics, const fs::path& qrels, TopicField field) {
  return questions_from(read_topics(topics, field), read_trec_qrels(qrels), qrels.string(),
                        topics.stem().string());
}

QuestionSet read_beir(const fs::path& dir, std::string_view split) {
  fs::path queries_path = dir / "queries.jsonl";
  fs::path qrels_path = dir / "qrels" / (std::string(split) + ".tsv");
  std::map<std::string, std::string> texts;
  for_each_line(read_text(queries_path), [&](int line, std::string_view row) {
    if (trim(row).empty()) return;
    nlohmann::json query = nlohmann::json::parse(row, nullptr, false);
    if (query.is_discarded() || !query.is_object() || !query.contains("_id") || !query["text"].is_string()) {
      fail(queries_path.string(), line, "expected a JSON object with \"_id\" and \"text\"");
    }
    const auto& id = query["_id"];
    texts[id.is_string() ? id.get<std::string>() : id.dump()] = query["text"].get<std::string>();
  });
  QrelsTable table;
  for_each_line(read_text(qrels_path), [&](int line, std::string_view row) {
    auto fields = split_fields(row);
    if (fields.empty() || (line == 1 && fields[0] == "query-id")) return;
    if (fields.size() != 3) fail(qrels_path.string(), line, "expected 3 columns 'query-id corpus-id score'");
    add_judgment(table, qrels_path.string(), line, fields[0], fields[1], fields[2]);
  });
  return questions_from(texts, table, qrels_path.string(), dir.filename().string() + "-" + std::string(split));
}

}  // namespace okfbench::datasets
