#pragma once
// sim: a deterministic model that plays the agent's part so the whole harness
// runs offline. It reads the same ChatRequest a provider would get (tool specs
// and the conversation, tool results included) and keeps no state between
// calls except the prompt cache, so the mock server can serve it too.
//
// Policy, each call looking only at the messages after the last user message
// (the question):
//   1. Find candidates. With a search tool (`search` / `search_concepts`):
//      search the question, once, k = search_k. Without one but with `browse`:
//      browse the root, then up to 3 listed subdirectories in one turn, and
//      rank what they list by how many question terms the title and
//      description contain.
//   2. Open (`open` / `read_concept`) the top candidate and every other one
//      whose score is >= open_ratio x the top score, at most max_open, all in
//      one turn (parallel calls).
//   3. If follow_links and a `follow` / `get_neighbors` tool exists and some
//      question terms appear in nothing opened yet: list the top opened
//      concept's neighbours once, and open the first neighbour whose title
//      contains an uncovered term.
//   4. If the question asks to save/remember a note and `remember` exists:
//      remember a note under notes/<slug> linking what was opened.
//   5. Answer from what it opened (agents/sim_answer.hpp): cite the opened
//      concepts that share terms with the question and restate their
//      statements that carry those terms, about answer_tokens long.
// A request whose last user message is a context-path prompt
// (agents/context_prompt.hpp) is answered at once from the packed blocks the
// same way, whatever tools it offers.
// Question terms: lower-cased letter/digit runs of 3+ bytes minus a short
// English stop list. seed != 0 varies search_k (3/5/8), max_open (1..3) and
// open_ratio (+-0.15) deterministically per (seed, question), and draws the
// answer length from answer_tokens +- answer_tokens_spread (answer_target()).
// The answer length models retrieval behaviour, not language: a longer answer
// restates more of what was read, never filler.
//
// A profile (agents/sim_profile.hpp, `options.profile`) adds behaviours on
// top of this policy: more searches with reformulated queries (each followed
// by its own opens, all at once or one per turn), a drawn number of opens per
// search, a follow rate, repeated calls, browsing before searching, a cap on
// tool turns, and the provider's token overheads. The default profile leaves
// the policy exactly as above.
//
// Usage is counted on the request as OpenAI would tokenise it (the OpenAI
// cookbook "How to count tokens with tiktoken"): 3 tokens per message plus
// its role and content (tool calls: 3 + name + arguments each, our estimate),
// 3 tokens priming the reply; tool definitions per the cookbook's
// num_tokens_for_tools for gpt-4o (7 per function + "name:description",
// 3 if it has properties, 3 + "key:type:description" per property, enums
// -3 + 3 + item per item, 12 once at the end). The constants 3 (message,
// tool call, priming), 7 (function) and 12 (end) are the profile's
// overheads, so a calibrated profile bills what its provider bills. Per-block counts are cached by
// content hash, so a long run tokenises each message once. Cached and
// cache-write tokens come from the configured CacheModel on a simulated clock
// advancing seconds_per_call per call.
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "agents/cache_model.hpp"
#include "agents/model.hpp"
#include "agents/sim_profile.hpp"
#include "retrieval/token_counter.hpp"

namespace okfbench::agents {

enum class FollowLinks { no, yes };

struct SimOptions {
  std::size_t search_k = 5;
  std::size_t max_open = 2;
  double open_ratio = 0.8;
  FollowLinks follow_links = FollowLinks::yes;
  std::uint64_t seed = 0;
  // Answer length in output tokens: the mean, and the standard deviation of
  // the per-question draw (used when seed != 0).
  std::size_t answer_tokens = 300;
  std::size_t answer_tokens_spread = 100;
  CacheKind cache = CacheKind::none;
  std::string model = "sim";  // reported model name; "haiku" in it raises the Anthropic minimum
  double seconds_per_call = 2.0;
  // Behaviours beyond the knobs above and the billed token overheads.
  SimProfile profile;
  // A reply ahead of the policy: when set and it returns a message, sim sends
  // that instead (usage counted the same way). The harness uses it to answer
  // judge prompts with the sim judge's rule (engine/judge.hpp).
  std::function<std::optional<Message>(const ChatRequest&)> reply_first;
};

// The policy alone: the assistant message sim answers `request` with;
// `counter` measures the answer's length.
Message sim_decide(const ChatRequest& request, const SimOptions& options, const retrieval::TokenCounter& counter);

class SimModel : public ChatModel {
 public:
  // `counter` must outlive the model.
  SimModel(SimOptions options, const retrieval::TokenCounter& counter);
  ChatResponse chat(const ChatRequest& request) override;
  std::string name() const override { return "sim"; }

  // Prompt blocks of `request` in provider order with their token counts.
  std::vector<PromptBlock> blocks(const ChatRequest& request);
  // The output tokens `message` bills as the answer to `request`.
  std::int64_t output_tokens(const ChatRequest& request, const Message& message) const;

 private:
  std::int64_t block_tokens(std::uint64_t hash, const std::function<std::int64_t()>& count);
  // The profile's context_overheads for a request without tools, when it has them.
  const TokenOverheads& overheads_of(const ChatRequest& request) const;

  SimOptions options_;
  const retrieval::TokenCounter& counter_;
  std::unique_ptr<CacheModel> cache_;
  std::unordered_map<std::uint64_t, std::int64_t> block_tokens_;
  std::size_t calls_ = 0;
  std::mutex mutex_;  // the mock server calls chat() from several threads
};

}  // namespace okfbench::agents
