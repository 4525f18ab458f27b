#pragma once
// Usage tags of documentation pages (contextweaver's classify_usage): what a
// reader opens a page for, such as "debugging" or "onboarding", so a
// selection can ask for the pages of one use.
//
// Deterministic and literal: a concept gets a tag when one of the tag's
// words is a word of its file path, title or tags (case-folded, split on
// anything that is not a letter or a digit), plus every tag its frontmatter
// names under `usage:` (a string or a list of strings). Tags come in the
// order of usage_rules(), then frontmatter tags in the order written; no tag
// twice. The rules are listed in retrieval/docs/wikilinks.md ("Usage tags").
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "retrieval/bundle.hpp"

namespace okfbench::retrieval {

struct UsageRule {
  std::string_view tag;
  std::span<const std::string_view> words;
};

std::span<const UsageRule> usage_rules();

std::vector<std::string> classify_usage(const Concept& item);

}  // namespace okfbench::retrieval
