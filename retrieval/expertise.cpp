#include "retrieval/expertise.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <set>

#include "retrieval/frontmatter.hpp"

namespace okfbench::retrieval {
namespace {

constexpr const char* kIndex = "index.md";

Diagnostic index_error(int line, std::string message) { return {Severity::error, kIndex, line, std::move(message)}; }

const char* kind_of(const YAML::Node& node) {
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a mapping";
  return "empty";
}

// The `version` node of the root index.md frontmatter; an undefined node
// when the YAML cannot be read or has no such key.
YAML::Node version_node(const std::string& yaml) {
  try {
    YAML::Node root = YAML::Load(yaml);
    if (root.IsMap()) return root["version"];
  } catch (const YAML::Exception&) {
    // parse_index already reported the YAML; the version counts as missing.
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

bool applies(const Concept& node, const std::vector<std::string>& task_tags) {
  const std::vector<std::string>& tags = node.lifecycle->applies_to;
  if (task_tags.empty() || tags.empty()) return true;
  return std::any_of(tags.begin(), tags.end(),
                     [&](const std::string& t) { return std::find(task_tags.begin(), task_tags.end(), t) != task_tags.end(); });
}

std::string_view trimmed(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

std::string describe_policy(const Bundle& pack, const ExpertisePolicy& policy, const std::string& now) {
  std::string version = pack_version(pack);
  std::string tasks;
  for (const std::string& t : policy.task_tags) tasks += (tasks.empty() ? "" : ", ") + t;
  return fmt::format("expertise pack {} as of {} for {}: rejected, deprecated, expired and inapplicable nodes excluded",
                     version.empty() ? "(no version)" : version, now, tasks.empty() ? "every task" : "task tags " + tasks);
}

}  // namespace

std::string pack_version(const Bundle& pack) {
  const auto& index = pack.root_index_frontmatter();
  if (!index) return {};
  YAML::Node version = version_node(index->yaml);
  return version.IsDefined() && version.IsScalar() ? version.Scalar() : std::string();
}

std::vector<Diagnostic> check_pack_index(const std::optional<Bundle::IndexFrontmatter>& index) {
  if (!index)
    return {index_error(0, "the expertise pack has no root index.md with frontmatter; add one that declares the "
                           "pack's version, such as `version: \"1.0.0\"`")};
  YAML::Node version = version_node(index->yaml);
  if (!version.IsDefined())
    return {index_error(index->line, "the root index.md declares no `version`; add `version: \"1.0.0\"` (the "
                                     "pack's version) to its frontmatter")};
  if (!version.IsScalar() || version.Scalar().empty())
    return {index_error(index->line + version.Mark().line,
                        fmt::format("`version` in the root index.md is {}; write a plain value such as "
                                    "`version: \"1.0.0\"`",
                                    kind_of(version)))};
  return {};
}

std::string expertise_exclusion(const Concept& node, const ExpertisePolicy& policy, const std::string& now) {
  const Lifecycle& life = *node.lifecycle;
  if (life.status == LessonStatus::rejected) return "status:rejected";
  if (node.status == Status::deprecated) return "status:deprecated";
  if (!life.expires_valid) return "expires_at:invalid";
  if (!life.expires_at.empty() && *parse_timestamp(life.expires_at) <= *parse_timestamp(now)) return "expired";
  if (!applies(node, policy.task_tags)) return "inapplicable";
  return {};
}

Selection select_expertise(const Bundle& pack, const ExpertisePolicy& policy) {
  const std::string now = policy_clock(policy.now, "expertise");
  Selection selection;
  selection.policy = describe_policy(pack, policy, now);
  for (const Concept& node : pack.concepts())  // sorted by id, so `excluded` is too
    if (std::string reason = expertise_exclusion(node, policy, now); !reason.empty())
      selection.excluded.push_back({node.id, std::move(reason)});
  return selection;
}

std::vector<Conflict> detect_conflicts(const Bundle& pack, const ExpertisePolicy& policy) {
  const std::string now = policy_clock(policy.now, "expertise");
  std::map<std::string, std::vector<const Concept*>> by_key;
  for (const Concept& node : pack.concepts())
    if (!node.lifecycle->key.empty() && expertise_exclusion(node, policy, now).empty())
      by_key[node.lifecycle->key].push_back(&node);
  std::vector<Conflict> out;
  for (const auto& [key, nodes] : by_key) {
    std::set<std::string_view> texts;
    for (const Concept* node : nodes) texts.insert(trimmed(node->body));
    if (texts.size() < 2) continue;
    Conflict conflict{key, {}, texts.size()};
    for (const Concept* node : nodes) conflict.ids.push_back(node->id);  // concepts() is sorted by id
    out.push_back(std::move(conflict));
  }
  return out;
}

}  // namespace okfbench::retrieval
