// split_fields: the column splitter of the TREC, qrels and BEIR readers.
#include "core/fields.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace okfbench {
namespace {

std::vector<std::string> fields(std::string_view line) {
  std::vector<std::string> out;
  for (std::string_view f : split_fields(line)) out.emplace_back(f);
  return out;
}

TEST(SplitFields, RunsOfSpacesAndTabsSeparateAndCrIsIgnored) {
  EXPECT_EQ(fields("1 0 doc-7 2"), (std::vector<std::string>{"1", "0", "doc-7", "2"}));
  EXPECT_EQ(fields("  q1\t\tQ0  d1 1 0.5 run\r"), (std::vector<std::string>{"q1", "Q0", "d1", "1", "0.5", "run"}));
  EXPECT_TRUE(fields("").empty());
  EXPECT_TRUE(fields(" \t\r").empty());
  EXPECT_EQ(fields("a\rb"), (std::vector<std::string>{"a", "b"}));  // a stray CR splits like a blank
}

}  // namespace
}  // namespace okfbench
