#include "retrieval/tokens.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace okfbench::retrieval {
namespace {

TEST(Tokens, HeuristicIsCeilingOfBytesOverFour) {
  HeuristicCounter counter;
  EXPECT_EQ(counter.count(""), 0u);
  EXPECT_EQ(counter.count("a"), 1u);
  EXPECT_EQ(counter.count("abcd"), 1u);
  EXPECT_EQ(counter.count("abcde"), 2u);
  EXPECT_EQ(counter.count("\xE4\xB8\xAD\xE6\x96\x87"), 2u);  // bytes, not characters
  EXPECT_EQ(counter.name(), "heuristic");
}

TEST(Tokens, FactoryNamesEveryCounter) {
  EXPECT_EQ(counter_names(), (std::vector<std::string>{"o200k_base", "cl100k_base", "heuristic"}));
  for (const auto& name : counter_names()) EXPECT_EQ(make_counter(name)->name(), name);
  EXPECT_THROW(make_counter("gpt2"), UsageError);
  EXPECT_THROW(make_counter(""), UsageError);
}

TEST(Tokens, BpeCounterCountsExactly) {
  auto o200k = make_counter("o200k_base");
  auto cl100k = make_counter("cl100k_base");
  EXPECT_EQ(o200k->count("hello world"), 2u);
  EXPECT_EQ(cl100k->count("HELLO WORLD"), 3u);
  // Special-token strings are counted as ordinary text.
  EXPECT_EQ(o200k->count("<|endoftext|>"), BpeEncoding::get("o200k_base").encode_ordinary("<|endoftext|>").size());
  EXPECT_GT(o200k->count("<|endoftext|>"), 1u);
  // One process-wide vocabulary: two counters share it.
  auto again = make_counter("o200k_base");
  EXPECT_EQ(&dynamic_cast<const BpeCounter&>(*again).encoding(), &dynamic_cast<const BpeCounter&>(*o200k).encoding());
}

}  // namespace
}  // namespace okfbench::retrieval
