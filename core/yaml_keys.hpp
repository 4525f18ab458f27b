#pragma once
// Duplicate mapping keys. YAML requires the keys of a mapping to be unique
// (YAML 1.2, section 3.2.1.1), but yaml-cpp keeps every pair it reads: a
// lookup by name returns the first, a loop over the pairs sees the last, so
// a repeated key silently picks one of its values. The spec, question set,
// regression spec, pricing table and frontmatter readers report what
// find_duplicate_keys() finds instead. Header-only, like error.hpp, so that
// reports/ (which depends on nothing of ours) uses it too.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace okfbench {

struct DuplicateKey {
  std::string path;     // the mapping that holds it: "" for the root, "paths.context", "questions[3]"
  std::string key;      // the repeated key as written
  int line = 0;         // 1-based line of the repetition in the parsed text
  int first_line = 0;   // 1-based line of the key's first occurrence
};

namespace yaml_keys_detail {

inline int line_of(const YAML::Node& node) { return node.Mark().line >= 0 ? node.Mark().line + 1 : 0; }

inline std::string child_path(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

inline bool is_collection(const YAML::Node& node) { return node.IsMap() || node.IsSequence(); }

class DuplicateFinder {
 public:
  // Scalars hold no keys: only collections are walked (and their paths built).
  void walk(const YAML::Node& node, const std::string& path) {
    if (!first_visit(node)) return;
    if (node.IsSequence()) {
      std::size_t index = 0;
      for (const YAML::Node& item : node) {
        if (is_collection(item)) walk(item, fmt::format("{}[{}]", path, index));
        ++index;
      }
      return;
    }
    // This mapping's keys, sorted by text so that repeats are neighbours (a
    // stable sort keeps the first occurrence first). They sit on one stack
    // shared by every mapping: a nested mapping pushes and pops its own keys
    // above these. (Pointers to the text, not key nodes: assigning a
    // YAML::Node, as sorting does, writes through to the tree.)
    const std::size_t start = keys_.size();
    for (const auto& entry : node) {
      if (entry.first.IsScalar()) {
        keys_.push_back({&entry.first.Scalar(), line_of(entry.first)});
        if (is_collection(entry.second)) walk(entry.second, child_path(path, entry.first.Scalar()));
      } else {
        if (is_collection(entry.first)) walk(entry.first, path);
        if (is_collection(entry.second)) walk(entry.second, path);
      }
    }
    const auto begin = keys_.begin() + static_cast<std::ptrdiff_t>(start);
    std::stable_sort(begin, keys_.end(), [](const Key& a, const Key& b) { return *a.text < *b.text; });
    for (std::size_t i = start + 1; i < keys_.size(); ++i) {
      const std::size_t first = i - 1;
      for (; i < keys_.size() && *keys_[i].text == *keys_[first].text; ++i) {
        found.push_back({path, *keys_[i].text, keys_[i].line, keys_[first].line});
      }
    }
    keys_.resize(start);
  }

  std::vector<DuplicateKey> found;

 private:
  // An alias is the anchored node itself, met again. Nodes are told apart by
  // identity (Node::is), looked up by stream position: a short list for the
  // usual small document, an index once it grows.
  bool first_visit(const YAML::Node& node) {
    const int pos = node.Mark().pos;
    if (by_position_.empty()) {
      for (const auto& [at, other] : visited_) {
        if (at == pos && other.is(node)) return false;
      }
      visited_.emplace_back(pos, node);
      if (visited_.size() > 32) {
        for (auto& [at, other] : visited_) by_position_[at].push_back(other);
      }
      return true;
    }
    std::vector<YAML::Node>& same = by_position_[pos];
    for (const YAML::Node& other : same) {
      if (other.is(node)) return false;
    }
    same.push_back(node);
    return true;
  }

  struct Key {
    const std::string* text;
    int line;
  };
  std::vector<Key> keys_;
  std::vector<std::pair<int, YAML::Node>> visited_;
  std::unordered_map<int, std::vector<YAML::Node>> by_position_;
};

}  // namespace yaml_keys_detail

// Every repeated key of every mapping under `root`, in document order. Keys
// are compared by their text, as the readers take them (`1` and "1" are the
// same key); keys that are themselves lists or mappings are not compared.
// Each node is visited once however many aliases point at it, so a
// "billion laughs" document costs no more than its size.
inline std::vector<DuplicateKey> find_duplicate_keys(const YAML::Node& root) {
  yaml_keys_detail::DuplicateFinder finder;
  if (yaml_keys_detail::is_collection(root)) finder.walk(root, "");
  std::stable_sort(finder.found.begin(), finder.found.end(),
                   [](const DuplicateKey& a, const DuplicateKey& b) { return a.line < b.line; });
  return std::move(finder.found);
}

// "spec.yaml:5: paths.context.k: duplicate key (first at line 3); ..." for up
// to `shown` of `found`, one per line, and how many more there are; lines are
// shifted by `line_offset` (the file line of the parsed text's first line, minus 1).
inline std::string describe_duplicate_keys(const std::vector<DuplicateKey>& found, const std::string& file,
                                           int line_offset = 0, std::size_t shown = 10) {
  std::string out;
  for (std::size_t i = 0; i < found.size() && i < shown; ++i) {
    const DuplicateKey& d = found[i];
    out += fmt::format("{}{}:{}: {}: duplicate key (first at line {}); YAML keys must be unique, keep one",
                       i == 0 ? "" : "\n", file, d.line + line_offset, yaml_keys_detail::child_path(d.path, d.key),
                       d.first_line + line_offset);
  }
  if (found.size() > shown) out += fmt::format("\n(and {} more duplicate keys)", found.size() - shown);
  return out;
}

}  // namespace okfbench
