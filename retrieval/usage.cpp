#include "retrieval/usage.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <set>

#include "retrieval/analyzer.hpp"

namespace okfbench::retrieval {
namespace {

using namespace std::string_view_literals;

constexpr std::array onboarding{"readme"sv,   "quickstart"sv, "onboarding"sv, "introduction"sv, "intro"sv,
                                "overview"sv, "setup"sv,      "install"sv,    "installation"sv, "tutorial"sv,
                                "welcome"sv,  "started"sv,    "start"sv};
constexpr std::array debugging{"debug"sv,     "debugging"sv,  "troubleshoot"sv, "troubleshooting"sv, "error"sv,
                               "errors"sv,    "bug"sv,        "bugs"sv,         "faq"sv,             "incident"sv,
                               "incidents"sv, "postmortem"sv, "diagnose"sv,     "failure"sv,         "failures"sv,
                               "runbook"sv,   "runbooks"sv,   "slow"sv,         "crash"sv,           "fix"sv};
constexpr std::array architecture{"architecture"sv, "design"sv,     "adr"sv,     "decision"sv, "decisions"sv,
                                  "internals"sv,    "components"sv, "modules"sv, "module"sv};
constexpr std::array reference{"api"sv,    "reference"sv, "cli"sv,      "config"sv,        "configuration"sv,
                               "options"sv, "schema"sv,   "glossary"sv, "specification"sv, "spec"sv};
constexpr std::array operations{"deploy"sv,     "deployment"sv, "release"sv, "releasing"sv, "operations"sv,
                                "monitoring"sv, "upgrade"sv,    "migration"sv, "backup"sv,  "restore"sv};
constexpr std::array instructions{"agents"sv,     "claude"sv,     "contributing"sv, "conventions"sv,
                                  "guidelines"sv, "instructions"sv, "style"sv};

constexpr std::array rules{
    UsageRule{"onboarding", onboarding},     UsageRule{"debugging", debugging},
    UsageRule{"architecture", architecture}, UsageRule{"reference", reference},
    UsageRule{"operations", operations},     UsageRule{"instructions", instructions},
};

void add_words(std::string_view text, std::set<std::string, std::less<>>& words) {
  for_each_token(text, [&](std::string_view word) { words.emplace(word); });
}

// Tags named under `usage:` in the frontmatter; anything else there is ignored.
std::vector<std::string> declared_usage(const Concept& item) {
  std::vector<std::string> declared;
  auto it = item.extra.find("usage");
  if (it == item.extra.end()) return declared;
  try {
    YAML::Node node = YAML::Load(it->second);
    auto add = [&](const YAML::Node& value) {
      if (value.IsScalar() && !value.Scalar().empty()) declared.push_back(fold_case(value.Scalar()));
    };
    if (node.IsSequence())
      for (const YAML::Node& value : node) add(value);
    else
      add(node);
  } catch (const YAML::Exception&) {
    // The file loaded, so this text parsed before; nothing to add if it does not now.
  }
  return declared;
}

}  // namespace

std::span<const UsageRule> usage_rules() { return rules; }

std::vector<std::string> classify_usage(const Concept& item) {
  std::set<std::string, std::less<>> words;
  add_words(item.path, words);
  add_words(item.title, words);
  for (const std::string& tag : item.tags) add_words(tag, words);
  std::vector<std::string> tags;
  for (const UsageRule& rule : rules)
    if (std::any_of(rule.words.begin(), rule.words.end(), [&](std::string_view w) { return words.contains(w); }))
      tags.emplace_back(rule.tag);
  for (std::string& tag : declared_usage(item))
    if (std::find(tags.begin(), tags.end(), tag) == tags.end()) tags.push_back(std::move(tag));
  return tags;
}

}  // namespace okfbench::retrieval
