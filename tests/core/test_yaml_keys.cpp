#include "core/yaml_keys.hpp"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <string>

namespace okfbench::retrieval {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// "path|key|line|first" per duplicate, in the order found.
std::vector<std::string> duplicates(const std::string& yaml) {
  std::vector<std::string> out;
  for (const DuplicateKey& d : find_duplicate_keys(YAML::Load(yaml))) {
    out.push_back(fmt::format("{}|{}|{}|{}", d.path, d.key, d.line, d.first_line));
  }
  return out;
}

TEST(YamlKeys, YamlCppKeepsBothPairsSoLookupAndIterationDisagree) {
  // The reason for find_duplicate_keys: a lookup sees the first value, a loop the last.
  const YAML::Node root = YAML::Load("a: 1\na: 2\n");
  EXPECT_EQ(root["a"].as<int>(), 1);
  std::string last;
  for (const auto& entry : root) last = entry.second.Scalar();
  EXPECT_EQ(last, "2");
}

TEST(YamlKeys, FindsRepeatsAtEveryDepthWithTheirLines) {
  EXPECT_THAT(duplicates("a: 1\nb: 2\n"), IsEmpty());
  EXPECT_THAT(duplicates("a: 1\nb: 2\na: 3\n"), ElementsAre("|a|3|1"));
  EXPECT_THAT(duplicates("paths:\n  context:\n    k: 1\n    hops: 0\n    k: 2\n"), ElementsAre("paths.context|k|5|3"));
  EXPECT_THAT(duplicates("bundles:\n  - path: x\n  - path: y\n    path: z\n"), ElementsAre("bundles[1]|path|4|3"));
  EXPECT_THAT(duplicates("{a: {b: 1, b: 2}, a: 3}"), ElementsAre("a|b|1|1", "|a|1|1"));
  EXPECT_THAT(duplicates("x: 1\nx: 2\nx: 3\n"), ElementsAre("|x|2|1", "|x|3|1"));
  // Keys compare by their text, as the readers take them.
  EXPECT_THAT(duplicates("relevant:\n  \"1\": 2\n  1: 0\n"), ElementsAre("relevant|1|3|2"));
  // Keys in nested lists of lists, and repeats reported in document order.
  EXPECT_THAT(duplicates("z: [[{k: 1, k: 2}]]\ny: 1\ny: 2\n"), ElementsAre("z[0][0]|k|1|1", "|y|3|2"));
}

TEST(YamlKeys, NonScalarKeysAndScalarsAreHarmless) {
  EXPECT_THAT(duplicates("? [a, b]\n: 1\n? [a, b]\n: 2\n"), IsEmpty());
  EXPECT_THAT(duplicates("? {k: 1, k: 2}\n: v\n"), ElementsAre("|k|1|1"));
  EXPECT_THAT(duplicates("just a scalar"), IsEmpty());
  EXPECT_THAT(duplicates(""), IsEmpty());
  EXPECT_THAT(duplicates("[1, 1, 1]"), IsEmpty());
}

TEST(YamlKeys, AliasesAreWalkedOnceSoABillionLaughsCostsItsSize) {
  // Nine levels of ten aliases: 10^9 nodes if expanded, a few dozen here.
  std::string yaml = "l0: &l0 {k: 1, k: 2}\n";
  for (int level = 1; level <= 9; ++level) {
    yaml += fmt::format("l{}: &l{} [", level, level);
    for (int i = 0; i < 10; ++i) yaml += fmt::format("{}*l{}", i ? ", " : "", level - 1);
    yaml += "]\n";
  }
  EXPECT_THAT(duplicates(yaml), ElementsAre("l0|k|1|1"));  // once, where the anchor is
}

TEST(YamlKeys, DescribeNamesFileLineKeyAndFirstLine) {
  const auto found = find_duplicate_keys(YAML::Load("a: 1\nb: {c: 1, c: 2}\na: 2\n"));
  EXPECT_EQ(describe_duplicate_keys(found, "spec.yaml"),
            "spec.yaml:2: b.c: duplicate key (first at line 2); YAML keys must be unique, keep one\n"
            "spec.yaml:3: a: duplicate key (first at line 1); YAML keys must be unique, keep one");
  EXPECT_EQ(describe_duplicate_keys(found, "f.md", 4, 1),
            "f.md:6: b.c: duplicate key (first at line 6); YAML keys must be unique, keep one\n(and 1 more duplicate keys)");
}

}  // namespace
}  // namespace okfbench::retrieval
