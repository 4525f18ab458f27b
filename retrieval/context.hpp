#pragma once
// context(): the one-shot retrieval path. Search, expand along links, pack
// into a token budget, as one deterministic pass with no model in the loop.
//
// Strategy `grafito` (the OKFBundle.context() of the grafito seed):
//   1. seed: the top `k` search hits, by score (ties by id);
//   2. expand: each seed's outbound links up to `expand_hops`, optionally only
//      one relation, in seed order then breadth-first; a concept already in
//      the list is not repeated;
//   3. pack greedily, seeds first then neighbours: a block that does not fit
//      the remaining budget is skipped and packing goes on with the next one.
//      The top hit is never dropped: when it alone exceeds the budget it is
//      cut on a token boundary and ends with a marker saying how much was cut.
//   Guarantee: counter.count(pack.text) <= budget_tokens, counted over the
//   exact final text.
//
// Strategy `weaver` (contextweaver's select_knowledge; retrieval/docs/context.md):
//   every live concept scored by Jaccard(query words, words of body + title +
//   tags) + confidence clamped to [0, 1] (frontmatter `confidence`, default
//   1); sorted by score descending then id; the first `k` (0 = all) packed
//   greedily with the seed's cost, max(1, tokens of the body alone), skipping
//   what does not fit; no graph expansion, no truncation. With `now` set,
//   concepts whose stale_after has passed are dropped first. Because the
//   seed's cost leaves out the block headers, pack.tokens (the exact count of
//   the rendered text) may exceed the budget; pack.over_budget says so.
//
// Block format (one block per concept, blocks separated by one blank line):
//
//   ### <title>
//   id: <id>[ | bundle: <name>] | type: <type>[ | status: draft][ | seed, score <s>| via <RELATION> from <id>]
//   <description, when present>
//
//   <body, trimmed>
//
//   Citations:                      (include_citations, when the concept has any)
//   - <label>: <text>
//
// Several bundles (the NamedBundle overload): the seeds come from one index
// over all of them (SearchIndex::build(span<const NamedBundle>), shared
// statistics), each seed expands along links inside its own bundle, and
// every block and entry names its bundle. weaver scores every live concept
// of every bundle, ties by id, then bundle.
//
// A cut block ends with "\n[truncated: <shown> of <total> tokens shown]" (the
// marker itself is dropped only when the budget is too small to hold it).
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "retrieval/bundle.hpp"
#include "retrieval/rerank.hpp"
#include "retrieval/search.hpp"
#include "retrieval/token_counter.hpp"

namespace okfbench::retrieval {

enum class PackStrategy { grafito, weaver };
enum class Citations { include, omit };

struct ContextOptions {
  std::size_t k = 5;                  // seed hits (grafito); most concepts considered (weaver, 0 = all)
  int expand_hops = 1;                // 0 = no expansion
  std::string relation;               // "" = every relation, else e.g. "JOINS_WITH"
  std::size_t budget_tokens = 2000;   // must be >= 1
  const TokenCounter* counter = nullptr;  // nullptr = HeuristicCounter
  Citations citations = Citations::include;
  PackStrategy strategy = PackStrategy::grafito;
  std::string now;                    // weaver: ISO-8601 clock; "" = no clock, nothing expires
  // grafito: the retrieval method of the seed search; nullptr = `index` (BM25F).
  const Retriever* retriever = nullptr;
  SearchOptions filters;              // grafito: type/tags/layer/usage_tag filters of the seed search (limit is k);
                                      // weaver: usage_tag only. Both: `selection` (lessons, expertise packs):
                                      // excluded concepts are neither seeds nor neighbours, preferred ones
                                      // are seeds before the others
};

enum class PackReason { seed, via };

// One concept of a pack, in pack order (the trial record keeps id, tokens and
// the reason as reports::PackedConcept).
struct PackEntry {
  std::string id;
  PackReason reason = PackReason::seed;
  std::string relation;  // via: the link relation
  std::string from;      // via: the concept it was reached from
  int hops = 0;          // via: link distance from the seed
  double score = 0.0;    // seed: search (grafito) or weaver score
  std::size_t tokens = 0;  // tokens of its block as packed (weaver: the seed's body-only cost)
  bool truncated = false;  // the block was cut to fit
  std::string bundle;      // several bundles: the concept's bundle; else ""
};

struct PackCitation {
  std::string concept_id;
  std::string label;
  std::string text;
  std::string bundle;  // as PackEntry::bundle
};

struct ContextPack {
  std::string text;                     // prompt-ready; "" when nothing matched
  std::vector<PackEntry> concepts;      // in pack order
  std::vector<std::string> skipped;     // candidates left out because they did not fit, in order
  std::vector<PackCitation> citations;  // of the packed concepts, in pack order (include_citations)
  std::size_t tokens = 0;               // counter.count(text)
  std::size_t budget_tokens = 0;
  std::string counter;                  // counter name
  PackStrategy strategy = PackStrategy::grafito;
  bool truncated = false;               // something was cut or skipped
  bool over_budget = false;             // tokens > budget_tokens (weaver only; grafito never)
  std::string policy;                   // the selection policy applied ("" = none)
  std::vector<Exclusion> excluded;      // every concept the policy kept out, with the reason, by id
};

// Throws UsageError when budget_tokens is 0. No hits gives an empty pack.
ContextPack pack_context(const Bundle& bundle, const SearchIndex& index, std::string_view query,
                         const ContextOptions& options);
// Over several bundles: `index` is built from the same `bundles`, in any
// order. UsageError as check_bundle_names says, or when options.retriever is
// set (a retrieval method other than BM25F takes one bundle).
ContextPack pack_context(std::span<const NamedBundle> bundles, const SearchIndex& index, std::string_view query,
                         const ContextOptions& options);

std::string_view to_string(PackStrategy strategy);
std::string_view to_string(PackReason reason);

// contextweaver's word set: lowercase, split on non-word characters (letters,
// numbers and '_' are word characters), words of 2+ characters that are not
// in its English stop-word list. Exposed for tests.
std::vector<std::string> weaver_words(std::string_view text);

}  // namespace okfbench::retrieval
