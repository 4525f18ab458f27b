// What the converters share: source text, concept files, warnings, names.
#include "datasets/convert_common.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <sstream>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/hash.hpp"
#include "retrieval/utf8.hpp"

namespace okfbench::datasets {
namespace fs = std::filesystem;
namespace {

constexpr std::size_t kMaxDescription = 300;
constexpr std::size_t kWarningExamples = 5;

bool is_safe_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == '-';
}

bool is_safe_name(std::string_view name) {
  return !name.empty() && name.size() <= 120 && std::all_of(name.begin(), name.end(), is_safe_char) &&
         std::isalnum(static_cast<unsigned char>(name.front()));
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

std::string collection_name(const fs::path& src, std::string_view name) {
  if (!name.empty()) {
    if (!is_safe_name(name)) {
      throw UsageError("--name '" + escape_visible(name) +
                       "': use 1..120 letters, digits, '.', '_' or '-', starting with a letter or digit");
    }
    return std::string(name);
  }
  fs::path clean = src.lexically_normal();
  if (!clean.empty() && clean.filename().empty()) clean = clean.parent_path();
  if (clean.empty() || clean == "." || clean.filename() == "..") clean = fs::absolute(clean).lexically_normal();
  std::string base = clean.filename().string();
  if (!is_safe_name(base)) {
    throw UsageError(src.string() + ": the folder name '" + escape_visible(base) +
                     "' cannot name a bundle; give --name NAME (letters, digits, '.', '_', '-')");
  }
  return base;
}

std::string escape_visible(std::string_view text) {
  std::size_t visible_end = text.find_last_not_of(' ');
  visible_end = visible_end == std::string_view::npos ? 0 : visible_end + 1;
  std::string out;
  for (std::size_t i = 0; i < text.size() && out.size() < 200; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c >= 0x7f || (c == ' ' && i >= visible_end) || c == '\\') {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02X", c);
      out += hex;
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out;
}

namespace detail {

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
  std::size_t b = s.find_first_not_of(" \t\n\v\f");
  if (b == std::string_view::npos) return {};
  return std::string(s.substr(b, s.find_last_not_of(" \t\n\v\f") - b + 1));
}

std::string one_line(std::string_view text) {
  std::string out;
  std::istringstream in{std::string(text)};
  for (std::string word; in >> word;) out += (out.empty() ? "" : " ") + word;
  return out;
}

std::string first_sentence(std::string_view text) {
  std::string line = one_line(text);
  for (std::size_t i = 0; i + 1 < line.size(); ++i) {
    if ((line[i] == '.' || line[i] == '?' || line[i] == '!') && line[i + 1] == ' ') {
      line.resize(i + 1);
      break;
    }
  }
  line.resize(retrieval::utf8_prefix(line, kMaxDescription).size());
  return line;
}

void Frontmatter::text(std::string_view key, std::string_view value) {
  if (!value.empty()) fields_.emplace_back(std::string(key), YAML::Node(std::string(value)));
}

void Frontmatter::list(std::string_view key, const std::vector<std::string>& values) {
  if (values.empty()) return;
  YAML::Node seq(YAML::NodeType::Sequence);
  for (const std::string& v : values) seq.push_back(v);
  fields_.emplace_back(std::string(key), seq);
}

void Frontmatter::links(const std::vector<std::pair<std::string, std::string>>& targets_and_relations) {
  if (targets_and_relations.empty()) return;
  YAML::Node seq(YAML::NodeType::Sequence);
  for (const auto& [target, rel] : targets_and_relations) {
    YAML::Node entry(YAML::NodeType::Map);
    entry["target"] = target;
    entry["rel"] = rel;
    seq.push_back(entry);
  }
  fields_.emplace_back("links", seq);
}

void Frontmatter::node(std::string_view key, const YAML::Node& value) { fields_.emplace_back(std::string(key), value); }

namespace {

// Strings double-quoted, so a title such as "yes" or "1.0" stays a string.
void emit(YAML::Emitter& yaml, const YAML::Node& node) {
  if (node.IsMap()) {
    yaml << YAML::BeginMap;
    for (const auto& entry : node) {
      yaml << YAML::Key << entry.first.Scalar() << YAML::Value;
      emit(yaml, entry.second);
    }
    yaml << YAML::EndMap;
  } else if (node.IsSequence()) {
    yaml << YAML::BeginSeq;
    for (const auto& item : node) emit(yaml, item);
    yaml << YAML::EndSeq;
  } else if (node.IsScalar()) {
    yaml << YAML::DoubleQuoted << node.Scalar();
  } else {
    yaml << YAML::Null;
  }
}

}  // namespace

std::string Frontmatter::yaml() const {
  YAML::Emitter yaml;
  yaml << YAML::BeginMap;
  for (const auto& [key, value] : fields_) {
    yaml << YAML::Key << key << YAML::Value;
    emit(yaml, value);
  }
  yaml << YAML::EndMap;
  return yaml.c_str();
}

void create_bundle_folder(const fs::path& bundle) {
  if (fs::exists(bundle)) {
    throw InputError(bundle.string() + " already exists: choose another --out or remove it first");
  }
  fs::create_directories(bundle);
}

void write_concept(const fs::path& bundle, const std::string& id, const Frontmatter& fields, std::string_view body) {
  fs::path path = bundle / (id + ".md");
  fs::create_directories(path.parent_path());
  std::string text = "---\n" + fields.yaml() + "\n---\n\n" + std::string(body);
  if (!text.ends_with('\n')) text += '\n';
  write_atomically(path, text);
}

void Warnings::add(const std::string& message, std::string place) {
  auto it = std::find_if(list_.begin(), list_.end(), [&](const ConvertWarning& w) { return w.message == message; });
  if (it == list_.end()) it = list_.insert(list_.end(), ConvertWarning{message, 0, {}});
  ++it->count;
  if (it->examples.size() < kWarningExamples) it->examples.push_back(std::move(place));
}

ConvertResult finish(ConvertResult result, QuestionSet set, const fs::path& out) {
  rename_judged_ids(set);
  set.name = result.name;
  result.questions = out / "questions.yaml";
  result.question_count = set.questions.size();
  save_questions(set, result.questions);
  return result;
}

ConvertResult start(const fs::path& src, const fs::path& out, const ConvertOptions& options) {
  ConvertResult result;
  if (options.folder.empty()) {  // the name is the folder's: it must be safe as a file name
    result.name = collection_name(src, options.name);
    result.bundle = out / result.name;
  } else {
    result.name = options.name.empty() ? collection_name(src) : options.name;
    result.bundle = out / options.folder;
  }
  return result;
}

}  // namespace detail
}  // namespace okfbench::datasets
