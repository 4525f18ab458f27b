#pragma once
// Behaviour profiles: the parameters of sim's policy that make it act like a
// given real agent, and the token overheads its provider bills. A profile is
// a small YAML file (`--model sim:PROFILE.yaml`, `models: [sim:PROFILE.yaml]`
// in a spec); `okfbench calibrate` writes one fitted to recordings. Every key
// is optional and defaults to today's sim policy, so an empty file is the
// default profile and reproduces sim's output byte for byte.
//
//   # counts are distributions: an integer (always that many) or a mapping
//   # {count: weight, ...} with counts 0..50 and weights >= 0 that sum to > 0
//   searches: 1                 # searches per question
//   drop_terms: 0               # question terms a later search leaves out
//   add_terms: 0                # terms a later search takes from titles it has seen
//   search_k: 5                 # hits asked for, 1..50
//   opens_per_search: ratio     # "ratio" (the top hit and those >= open_ratio x its
//                               # score, at most max_open) or a distribution
//   open_ratio: 0.8             # 0..1
//   max_open: 2                 # 0..50
//   parallel_opens: 1.0         # probability the opens of a search go in one turn (else one per turn)
//   follow_rate: 1.0            # probability of following links when question terms remain uncovered
//   follow_when_covered: false  # true: follow whatever the opened concepts cover, and open
//                               # neighbours whose titles hold any question term (uncovered first)
//   follow_concepts: 1          # opened concepts (the first ones) whose neighbours are listed, in one turn
//   neighbour_opens: 1          # neighbours opened after listing them, in one turn
//   rereads: 0                  # concepts (the first opened) opened again just before answering, in one turn
//   repeats: 0                  # calls per question that repeat the call before verbatim
//   browse_rate: 0.0            # probability of browsing the root before searching
//   max_tool_turns: 0           # answer after at most this many tool turns; 0 = when the policy is done
//   answer_tokens: 300          # mean answer length in output tokens, 1..100000
//   answer_tokens_spread: 100   # its standard deviation (with a seed), 0..100000
//   context_answer_tokens: 300  # the same for a one-shot (context-path) prompt, when the model
//                               # answers those at another length; absent = answer_tokens
//   context_answer_tokens_spread: 0  # its standard deviation; only with context_answer_tokens
//   seed_variation: true        # a seed also varies search_k (3/5/8), max_open (1..3), open_ratio (+-0.15)
//   overheads:                  # tokens the provider bills beyond the text, integers 0..10000
//     per_message: 3            # each message
//     per_tool_call: 3          # each tool call inside an assistant message
//     reply_priming: 3          # once per request
//     per_tool: 7               # each tool definition
//     tools_end: 12             # once when the request has tools
//     content_ratio: 1.0        # provider tokens per o200k_base token of text, 0.1..10
//   context_overheads: {...}    # the same keys, billed instead for requests without tools
//                               # (one-shot context prompts, whose prose a provider's tokenizer
//                               # may count at another ratio than tool-call JSON); absent = overheads
//
// Draws are deterministic per (seed, question, parameter, index): the policy
// keeps no state between calls, so it redraws the same value on every call.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace okfbench::agents {

// A distribution over small counts: (count, weight) pairs, weights summing to > 0.
struct CountDistribution {
  std::vector<std::pair<int, double>> weights;

  static CountDistribution always(int count) { return CountDistribution{{{count, 1.0}}}; }
  // The count for a uniform number u in [0, 1): the first whose cumulative share exceeds u.
  int draw(double u) const;
  double mean() const;
  bool operator==(const CountDistribution&) const = default;
};

// Tokens a provider bills beyond the text of a request (the OpenAI cookbook's
// constants for gpt-4o by default).
struct TokenOverheads {
  int per_message = 3;
  int per_tool_call = 3;
  int reply_priming = 3;
  int per_tool = 7;
  int tools_end = 12;
  // Provider tokens per o200k_base token of text: a provider whose tokenizer
  // differs bills its text at about this ratio (input and output alike).
  double content_ratio = 1.0;
  // Text tokens as billed: `tokens` itself at ratio 1, else rounded.
  std::int64_t billed(std::int64_t tokens) const;
  bool operator==(const TokenOverheads&) const = default;
};

// An answer length in output tokens: the mean, and the standard deviation of
// the per-question draw (used when the seed is not 0).
struct AnswerLength {
  std::size_t mean = 300;
  std::size_t spread = 0;
  bool operator==(const AnswerLength&) const = default;
};

// The behaviour parameters beyond SimOptions' knobs.
struct SimProfile {
  CountDistribution searches = CountDistribution::always(1);
  CountDistribution drop_terms = CountDistribution::always(0);
  CountDistribution add_terms = CountDistribution::always(0);
  std::optional<CountDistribution> opens_per_search;  // nullopt = the open_ratio rule
  double parallel_opens = 1.0;
  double follow_rate = 1.0;
  bool follow_when_covered = false;
  CountDistribution follow_concepts = CountDistribution::always(1);
  CountDistribution neighbour_opens = CountDistribution::always(1);
  CountDistribution rereads = CountDistribution::always(0);
  CountDistribution repeats = CountDistribution::always(0);
  double browse_rate = 0.0;
  int max_tool_turns = 0;
  // A real model answers a one-shot prompt (a packed context and a question)
  // at a length of its own, often much shorter than after a tool loop;
  // nullopt answers it at SimOptions::answer_tokens.
  std::optional<AnswerLength> context_answer;
  bool seed_variation = true;
  TokenOverheads overheads;
  std::optional<TokenOverheads> context_overheads;  // requests without tools; nullopt = overheads
  bool operator==(const SimProfile&) const = default;
};

// A uniform number in [0, 1) for (seed, question, what, index): the same on
// every platform.
double profile_draw(std::uint64_t seed, std::string_view question, std::string_view what, std::uint64_t index = 0);

}  // namespace okfbench::agents
