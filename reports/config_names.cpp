#include "reports/config_names.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>
#include <utility>

namespace okfbench::reports {

namespace {

// Up to this many tools are listed by name; more are counted.
constexpr std::size_t kToolsListed = 3;

struct Setting {
  std::string key;
  std::string value;  // as compared between configurations
};

std::vector<Setting> settings_of(const PathConfig& c) {
  std::vector<Setting> out;
  if (c.budget_tokens) out.push_back({"budget", std::to_string(*c.budget_tokens)});
  if (c.k) out.push_back({"k", std::to_string(*c.k)});
  if (c.hops) out.push_back({"hops", std::to_string(*c.hops)});
  if (!c.strategy.empty()) out.push_back({"strategy", c.strategy});
  if (!c.surface.empty()) out.push_back({"surface", c.surface});
  if (!c.tools.empty()) out.push_back({"tools", fmt::format("{}", fmt::join(c.tools, "+"))});
  if (c.max_turns) out.push_back({"max_turns", std::to_string(*c.max_turns)});
  if (!c.external.empty()) out.push_back({"agent", c.external});
  if (!c.model.empty()) out.push_back({"model", c.model});
  if (!c.cache_model.empty()) out.push_back({"cache", c.cache_model});
  return out;
}

std::string shown(const Setting& s, const PathConfig& c, bool full_tools) {
  if (s.key == "tools") {
    if (full_tools || c.tools.size() <= kToolsListed) return s.value;
    return fmt::format("{} tools", c.tools.size());
  }
  if (s.key == "model" || s.key == "agent") return s.value;
  return s.key + "=" + s.value;
}

std::string path_word(PathKind kind) {
  switch (kind) {
    case PathKind::context: return "one-shot";
    case PathKind::agent: return "agent";
    case PathKind::external: return "external";
  }
  return "agent";
}

// Keys whose value differs between the configurations of one path kind.
std::set<std::string> differing_keys(const std::vector<const PathConfig*>& same_kind) {
  std::map<std::string, std::set<std::string>> values;
  for (const auto* c : same_kind) {
    for (const auto& s : settings_of(*c)) values[s.key].insert(s.value);
  }
  std::set<std::string> keys;
  for (const auto& [key, seen] : values) {
    std::size_t with_key = 0;
    for (const auto* c : same_kind) {
      for (const auto& s : settings_of(*c)) with_key += s.key == key ? 1 : 0;
    }
    if (seen.size() > 1 || with_key < same_kind.size()) keys.insert(key);
  }
  return keys;
}

std::string name_of(const PathConfig& c, const std::set<std::string>& keys, bool full_tools) {
  std::string name = path_word(c.kind);
  for (const auto& s : settings_of(c)) {
    if (!keys.count(s.key)) continue;
    name += ' ';  // appended in two steps: GCC 12 misreads " " + string as an overlapping copy
    name += shown(s, c, full_tools);
  }
  return name;
}

}  // namespace

std::map<std::string, std::string> short_config_names(const std::vector<PathConfig>& configs) {
  std::map<std::string, const PathConfig*> by_label;
  for (const auto& c : configs) by_label.emplace(c.label(), &c);
  std::map<PathKind, std::vector<const PathConfig*>> by_kind;
  for (const auto& [label, c] : by_label) by_kind[c->kind].push_back(c);

  std::map<std::string, std::string> names;
  for (const auto& [kind, group] : by_kind) {
    const auto keys = differing_keys(group);
    std::map<std::string, int> uses;
    for (const auto* c : group) ++uses[name_of(*c, keys, false)];
    for (const auto* c : group) {
      std::string name = name_of(*c, keys, false);
      if (uses[name] > 1) name = name_of(*c, keys, true);
      names[c->label()] = name;
    }
  }
  // Labels are distinct, so only configurations that differ in a setting the
  // name leaves out can still share a name; number them in label order.
  std::map<std::string, int> seen;
  std::map<std::string, int> total;
  for (const auto& [label, name] : names) ++total[name];
  for (auto& [label, name] : names) {
    if (total[name] > 1 && ++seen[name] > 1) name += fmt::format(" #{}", seen[name]);
  }
  return names;
}

}  // namespace okfbench::reports
