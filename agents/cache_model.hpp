#pragma once
// Simulated provider prompt caches, for the sim model (and for estimating what
// caching would save on a recorded run).
//
// A request is seen as the ordered blocks the provider serialises (tool
// definitions, system prompt, each message), each with a content hash and a
// token count. Providers put special tokens between messages, so the token
// sequence of a request is the concatenation of its blocks' sequences and a
// shared run of whole blocks is a shared token prefix. A partial match inside
// the first differing block is not counted (an under-estimate by less than
// one block).
//
//   none       nothing is cached; reports cached = 0 and written = 0.
//   openai     automatic prefix cache (https://platform.openai.com/docs/guides/prompt-caching):
//              the longest prefix shared with an earlier request still inside
//              the TTL; a hit needs >= 1,024 tokens and counts in steps of 128:
//                cached = 0                                  if p < 1024
//                       = 1024 + 128 * floor((p - 1024) / 128) otherwise
//              Writes are free and not reported (written = unknown).
//   anthropic  explicit breakpoints (https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching):
//              a prefix ending at a breakpoint is written when it has at least
//              the model's minimum (1,024 tokens Sonnet/Opus, 2,048 Haiku);
//              a read is the longest written prefix that ends at a block within
//              20 blocks before some breakpoint of this request (the API's
//              lookback window); written = tokens up to the last eligible
//              breakpoint minus the read. Entries live 5 minutes, refreshed on
//              every read.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace okfbench::agents {

struct PromptBlock {
  std::uint64_t hash = 0;     // content hash of this block alone
  std::int64_t tokens = 0;
  bool breakpoint = false;    // cache_control on this block (anthropic)
};

struct CacheOutcome {
  std::int64_t input = 0;    // all prompt tokens
  std::int64_t cached = 0;   // read from the cache
  std::optional<std::int64_t> written;  // written to the cache; nullopt when the provider does not report it
  bool operator==(const CacheOutcome&) const = default;
};

class CacheModel {
 public:
  virtual ~CacheModel() = default;
  // Accounts one request made at `now_seconds` (any monotonic clock) and
  // remembers what it leaves in the cache.
  virtual CacheOutcome apply(const std::vector<PromptBlock>& blocks, double now_seconds) = 0;
  virtual std::string name() const = 0;
};

enum class CacheKind { none, openai, anthropic };

CacheKind parse_cache_kind(std::string_view name);  // throws UsageError on an unknown name
const char* to_string(CacheKind kind);

class NoCache : public CacheModel {
 public:
  CacheOutcome apply(const std::vector<PromptBlock>& blocks, double now_seconds) override;
  std::string name() const override { return "none"; }
};

class OpenAIPrefixCache : public CacheModel {
 public:
  explicit OpenAIPrefixCache(double ttl_seconds = 300.0) : ttl_(ttl_seconds) {}
  CacheOutcome apply(const std::vector<PromptBlock>& blocks, double now_seconds) override;
  std::string name() const override { return "openai"; }
  // The billed part of a shared prefix of `prefix_tokens`.
  static std::int64_t cached_tokens(std::int64_t prefix_tokens);

 private:
  double ttl_;
  std::unordered_map<std::uint64_t, double> last_used_;  // prefix hash -> time
};

class AnthropicBreakpointCache : public CacheModel {
 public:
  explicit AnthropicBreakpointCache(std::int64_t min_tokens = 1024, double ttl_seconds = 300.0)
      : min_tokens_(min_tokens), ttl_(ttl_seconds) {}
  CacheOutcome apply(const std::vector<PromptBlock>& blocks, double now_seconds) override;
  std::string name() const override { return "anthropic"; }
  // 2,048 for Haiku models, 1,024 otherwise.
  static std::int64_t minimum_for(std::string_view model);

 private:
  std::int64_t min_tokens_;
  double ttl_;
  std::unordered_map<std::uint64_t, double> written_;  // prefix hash -> last write or read
};

// `model` picks the Anthropic minimum; ignored by the others.
std::unique_ptr<CacheModel> make_cache_model(CacheKind kind, std::string_view model = {});

}  // namespace okfbench::agents
