#include "agents/cache_model.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "core/hash.hpp"
#include "core/error.hpp"

namespace okfbench::agents {
namespace {

constexpr std::size_t kLookbackBlocks = 20;

struct Prefixes {
  std::vector<std::uint64_t> hash;   // hash[i]: blocks 0..i
  std::vector<std::int64_t> tokens;  // tokens[i]: blocks 0..i
};

Prefixes prefixes(const std::vector<PromptBlock>& blocks) {
  Prefixes p;
  std::uint64_t h = kFnvOffset;
  std::int64_t t = 0;
  for (const PromptBlock& b : blocks) {
    h = chain(h, b.hash);
    t += b.tokens;
    p.hash.push_back(h);
    p.tokens.push_back(t);
  }
  return p;
}

std::int64_t total(const Prefixes& p) { return p.tokens.empty() ? 0 : p.tokens.back(); }

bool alive(const std::unordered_map<std::uint64_t, double>& store, std::uint64_t key, double now, double ttl) {
  auto it = store.find(key);
  return it != store.end() && now - it->second <= ttl;
}
}  // namespace

CacheKind parse_cache_kind(std::string_view name) {
  if (name == "none") return CacheKind::none;
  if (name == "openai") return CacheKind::openai;
  if (name == "anthropic") return CacheKind::anthropic;
  throw UsageError(fmt::format("unknown cache model '{}': use none, openai or anthropic", name));
}

const char* to_string(CacheKind kind) {
  switch (kind) {
    case CacheKind::none: return "none";
    case CacheKind::openai: return "openai";
    case CacheKind::anthropic: return "anthropic";
  }
  return "none";
}

CacheOutcome NoCache::apply(const std::vector<PromptBlock>& blocks, double) {
  return CacheOutcome{total(prefixes(blocks)), 0, 0};
}

std::int64_t OpenAIPrefixCache::cached_tokens(std::int64_t prefix_tokens) {
  if (prefix_tokens < 1024) return 0;
  return 1024 + 128 * ((prefix_tokens - 1024) / 128);
}

CacheOutcome OpenAIPrefixCache::apply(const std::vector<PromptBlock>& blocks, double now) {
  Prefixes p = prefixes(blocks);
  std::int64_t shared = 0;
  for (std::size_t i = p.hash.size(); i-- > 0;) {
    if (alive(last_used_, p.hash[i], now, ttl_)) {
      shared = p.tokens[i];
      break;
    }
  }
  for (std::uint64_t h : p.hash) last_used_[h] = now;
  return CacheOutcome{total(p), cached_tokens(shared), std::nullopt};
}

std::int64_t AnthropicBreakpointCache::minimum_for(std::string_view model) {
  std::string lower(model);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return lower.find("haiku") != std::string::npos ? 2048 : 1024;
}

CacheOutcome AnthropicBreakpointCache::apply(const std::vector<PromptBlock>& blocks, double now) {
  Prefixes p = prefixes(blocks);
  // Longest live entry ending within the lookback window of any breakpoint.
  std::optional<std::size_t> hit;
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    if (!blocks[b].breakpoint) continue;
    std::size_t first = b >= kLookbackBlocks ? b - kLookbackBlocks : 0;
    for (std::size_t i = b + 1; i-- > first;) {
      if (alive(written_, p.hash[i], now, ttl_)) {
        if (!hit || i > *hit) hit = i;
        break;
      }
    }
  }
  std::int64_t read = hit ? p.tokens[*hit] : 0;
  if (hit) written_[p.hash[*hit]] = now;
  std::int64_t write_end = read;
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    if (!blocks[b].breakpoint || p.tokens[b] < min_tokens_ || (hit && b <= *hit)) continue;
    written_[p.hash[b]] = now;
    write_end = std::max(write_end, p.tokens[b]);
  }
  return CacheOutcome{total(p), read, write_end - read};
}

std::unique_ptr<CacheModel> make_cache_model(CacheKind kind, std::string_view model) {
  switch (kind) {
    case CacheKind::none: return std::make_unique<NoCache>();
    case CacheKind::openai: return std::make_unique<OpenAIPrefixCache>();
    case CacheKind::anthropic:
      return std::make_unique<AnthropicBreakpointCache>(AnthropicBreakpointCache::minimum_for(model));
  }
  return std::make_unique<NoCache>();
}

}  // namespace okfbench::agents
