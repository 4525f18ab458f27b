#pragma once
// Duplicate mapping keys. YAML requires the keys of a mapping to be unique
// (YAML 1.2, section 3.2.1.1), but yaml-cpp keeps every pair it reads: a
// lookup by name returns the first, a loop over the pairs sees the last, so
// a repeated key silently picks one of its values. The spec, question set
// and frontmatter readers report what find_duplicate_keys() finds instead.
#include <yaml-cpp/node/node.h>

#include <string>
#include <vector>

namespace okfbench::retrieval {

struct DuplicateKey {
  std::string path;     // the mapping that holds it: "" for the root, "paths.context", "questions[3]"
  std::string key;      // the repeated key as written
  int line = 0;         // 1-based line of the repetition in the parsed text
  int first_line = 0;   // 1-based line of the key's first occurrence
};

// Every repeated key of every mapping under `root`, in document order. Keys
// are compared by their text, as the readers take them (`1` and "1" are the
// same key); keys that are themselves lists or mappings are not compared.
// Each node is visited once however many aliases point at it, so a
// "billion laughs" document costs no more than its size.
std::vector<DuplicateKey> find_duplicate_keys(const YAML::Node& root);

// "spec.yaml:5: duplicate key `k` in paths.context (first at line 3)" for up to
// `shown` of `found`, one per line, and how many more there are; lines are
// shifted by `line_offset` (the file line of the parsed text's first line, minus 1).
std::string describe_duplicate_keys(const std::vector<DuplicateKey>& found, const std::string& file,
                                    int line_offset = 0, std::size_t shown = 10);

}  // namespace okfbench::retrieval
