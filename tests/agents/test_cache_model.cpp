#include "agents/cache_model.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace okfbench::agents {
namespace {

PromptBlock block(std::uint64_t id, std::int64_t tokens, bool breakpoint = false) {
  return PromptBlock{id, tokens, breakpoint};
}

TEST(OpenAIPrefixCache, StepsOf128From1024) {
  EXPECT_EQ(OpenAIPrefixCache::cached_tokens(0), 0);
  EXPECT_EQ(OpenAIPrefixCache::cached_tokens(1023), 0);
  EXPECT_EQ(OpenAIPrefixCache::cached_tokens(1024), 1024);
  EXPECT_EQ(OpenAIPrefixCache::cached_tokens(1151), 1024);
  EXPECT_EQ(OpenAIPrefixCache::cached_tokens(1152), 1152);
  EXPECT_EQ(OpenAIPrefixCache::cached_tokens(5000), 4992);  // 1024 + 128*31
}

TEST(OpenAIPrefixCache, LongestSharedPrefixWithinTtl) {
  OpenAIPrefixCache cache(300.0);
  std::vector<PromptBlock> turn1{block(1, 900), block(2, 100), block(3, 300)};  // 1300
  EXPECT_EQ(cache.apply(turn1, 0.0), (CacheOutcome{1300, 0, std::nullopt}));
  std::vector<PromptBlock> turn2 = turn1;
  turn2.push_back(block(4, 500));  // shares all 1300 -> 1024 + 2*128
  EXPECT_EQ(cache.apply(turn2, 10.0), (CacheOutcome{1800, 1280, std::nullopt}));
  // Differs at block 2: shared prefix 900 < 1024, nothing cached.
  std::vector<PromptBlock> other{block(1, 900), block(9, 700)};
  EXPECT_EQ(cache.apply(other, 20.0).cached, 0);
  // After the TTL the entries are gone (last use of turn2's prefix at t=10).
  EXPECT_EQ(cache.apply(turn2, 311.0).cached, 0);
  // ...and that request re-populated them.
  EXPECT_EQ(cache.apply(turn2, 312.0).cached, 1792);  // 1800 shared -> 1024 + 6*128
}

TEST(AnthropicBreakpointCache, WritesThenReadsAtBreakpoints) {
  AnthropicBreakpointCache cache(1024, 300.0);
  // tools+system 1200 tokens with a breakpoint, then the question.
  std::vector<PromptBlock> turn1{block(1, 1000), block(2, 200, true), block(3, 50, true)};
  // Last breakpoint prefix 1250 >= 1024: write everything up to it.
  EXPECT_EQ(cache.apply(turn1, 0.0), (CacheOutcome{1250, 0, 1250}));
  // Turn 2 moves the last-message breakpoint; lookback finds turn 1's 1250 prefix.
  std::vector<PromptBlock> turn2{block(1, 1000), block(2, 200, true), block(3, 50), block(4, 30), block(5, 400, true)};
  EXPECT_EQ(cache.apply(turn2, 5.0), (CacheOutcome{1680, 1250, 430}));
  // The identical request reads all of it and writes nothing.
  EXPECT_EQ(cache.apply(turn2, 6.0), (CacheOutcome{1680, 1680, 0}));
}

TEST(AnthropicBreakpointCache, MinimumPerModelAndNoBreakpoints) {
  EXPECT_EQ(AnthropicBreakpointCache::minimum_for("claude-3-5-haiku-latest"), 2048);
  EXPECT_EQ(AnthropicBreakpointCache::minimum_for("claude-sonnet-4-5"), 1024);
  EXPECT_EQ(AnthropicBreakpointCache::minimum_for("claude-opus-4-1"), 1024);
  AnthropicBreakpointCache haiku(2048);
  std::vector<PromptBlock> small{block(1, 1500, true), block(2, 100, true)};
  EXPECT_EQ(haiku.apply(small, 0.0), (CacheOutcome{1600, 0, 0}));  // below 2,048: never cached
  EXPECT_EQ(haiku.apply(small, 1.0), (CacheOutcome{1600, 0, 0}));
  AnthropicBreakpointCache sonnet(1024);
  std::vector<PromptBlock> unmarked{block(1, 5000), block(2, 100)};
  EXPECT_EQ(sonnet.apply(unmarked, 0.0), (CacheOutcome{5100, 0, 0}));
  EXPECT_EQ(sonnet.apply(unmarked, 1.0), (CacheOutcome{5100, 0, 0}));
}

TEST(AnthropicBreakpointCache, TtlRefreshedByReadsAndLookbackLimitedTo20Blocks) {
  AnthropicBreakpointCache cache(1024, 300.0);
  std::vector<PromptBlock> base{block(1, 2000, true)};
  EXPECT_EQ(cache.apply(base, 0.0).written, 2000);
  EXPECT_EQ(cache.apply(base, 250.0).cached, 2000);  // read refreshes
  EXPECT_EQ(cache.apply(base, 500.0).cached, 2000);  // 250 s after the refresh
  EXPECT_EQ(cache.apply(base, 801.0).cached, 0);     // 301 s later: expired, written again
  // A breakpoint 21 blocks after the cached prefix cannot see it.
  std::vector<PromptBlock> far = base;
  for (int i = 0; i < 21; ++i) far.push_back(block(100 + i, 10));
  far.back().breakpoint = true;
  far.front().breakpoint = false;
  EXPECT_EQ(cache.apply(far, 802.0), (CacheOutcome{2210, 0, 2210}));
}

TEST(NoCache, ReportsZeroes) {
  NoCache cache;
  std::vector<PromptBlock> blocks{block(1, 3000, true)};
  EXPECT_EQ(cache.apply(blocks, 0.0), (CacheOutcome{3000, 0, 0}));
  EXPECT_EQ(cache.apply(blocks, 1.0), (CacheOutcome{3000, 0, 0}));
}

TEST(CacheKind, ParsesNames) {
  EXPECT_EQ(parse_cache_kind("openai"), CacheKind::openai);
  EXPECT_EQ(make_cache_model(CacheKind::anthropic, "claude-haiku-4-5")->name(), "anthropic");
  EXPECT_THROW(parse_cache_kind("redis"), UsageError);
}

}  // namespace
}  // namespace okfbench::agents
