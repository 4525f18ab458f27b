#pragma once
// What the converters share (not installed for other callers): reading
// source text, writing concepts with their frontmatter, counting warnings.
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "datasets/convert.hpp"
#include "datasets/questions.hpp"

namespace okfbench::datasets::detail {

// A source file's text with CRs dropped; an InputError when unreadable.
std::string read_text(const std::filesystem::path& path);
std::vector<std::string> lines_of(const std::string& text);
std::string trim(std::string_view s);
// Joins wrapped lines into one line (for titles and descriptions).
std::string one_line(std::string_view text);
// The first sentence of `text` on one line (up to ". ", "? " or "! "),
// at most 300 bytes.
std::string first_sentence(std::string_view text);

// Frontmatter in the order fields are added; empty values are left out.
class Frontmatter {
 public:
  void text(std::string_view key, std::string_view value);
  void list(std::string_view key, const std::vector<std::string>& values);
  void links(const std::vector<std::pair<std::string, std::string>>& targets_and_relations);
  void node(std::string_view key, const YAML::Node& value);  // kept as the source wrote it
  std::string yaml() const;

 private:
  std::vector<std::pair<std::string, YAML::Node>> fields_;
};

// Creates the bundle folder; an InputError when it exists.
void create_bundle_folder(const std::filesystem::path& bundle);
void write_concept(const std::filesystem::path& bundle, const std::string& id, const Frontmatter& fields,
                   std::string_view body);

// Counts each warning message once, with the first few places.
class Warnings {
 public:
  void add(const std::string& message, std::string place);
  std::vector<ConvertWarning> take() { return std::move(list_); }

 private:
  std::vector<ConvertWarning> list_;
};

// Writes `set` (ids renamed as the concepts were) to <out>/questions.yaml.
ConvertResult finish(ConvertResult result, QuestionSet set, const std::filesystem::path& out);

// ConvertResult with name and bundle folder set from the options.
ConvertResult start(const std::filesystem::path& src, const std::filesystem::path& out,
                    const ConvertOptions& options);

}  // namespace okfbench::datasets::detail
