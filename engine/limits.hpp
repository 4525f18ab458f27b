#pragma once
// The allowed range of every number a user gives okfbench: experiment spec
// keys, --set values and command-line flags read their bounds from here, so
// a spec key and the flag that means the same thing agree. The numbers are
// written (engine/README.md, "Experiment spec format") as plain integers or
// reals, see core/numbers.hpp.
//
// Upper bounds are far beyond any sensible run but small enough that nothing
// derived from them overflows: a sum of budgets or turns over every planned
// trial stays within 64 bits, and a range error says so before anything is
// allocated.
#include <cstddef>
#include <cstdint>
#include <limits>

#include "core/numbers.hpp"
#include "reports/judge.hpp"

namespace okfbench::engine::limits {

using Int = IntegerRange<std::int64_t>;

// Seeds are any 64-bit unsigned value.
inline constexpr IntegerRange<std::uint64_t> seed{0, std::numeric_limits<std::uint64_t>::max()};

// Run settings (spec top level).
inline constexpr Int repeats{1, 1000};
inline constexpr Int concurrency{1, 256};
inline constexpr RealRange requests_per_minute{0, 1'000'000};  // 0 = no limit
inline constexpr RealRange tokens_per_minute{0, 1e12};         // 0 = no limit
// A rate limit is 0 (none) or at least this much: one request every 100
// minutes, 1,000 tokens a minute. A smaller positive rate (1e-300 passed the
// range above) would have the pacer wait days between requests.
inline constexpr double min_requests_per_minute = 0.01;
inline constexpr double min_tokens_per_minute = 1000;
inline constexpr RealRange cost_cap_usd{0, 1'000'000, true};   // more than 0
inline constexpr Int max_questions{0, 10'000'000};            // 0 = all

// At most this many trials in one plan (all shards together): the plan and
// the stored records are held in memory. A spec that asks for more is
// refused before anything is generated, loaded or allocated.
inline constexpr std::size_t planned_trials = 1'000'000;

// Model entries (spec models[i]): the connect and request timeouts and the
// trial deadline, in seconds (more than 0, at most a day), output tokens per
// call, temperature, and prices in dollars per million tokens (far above any
// list price).
inline constexpr RealRange model_timeout_seconds{0.001, 86'400};  // libcurl counts in milliseconds
inline constexpr Int max_output_tokens{1, 1'000'000};
inline constexpr RealRange temperature{0, 2};
inline constexpr RealRange price_per_mtok{0, 1'000'000};

// Bundles: generate/convert sizes (and `gen --concepts`), generator layers
// (spec 0 = automatic; `gen --layers` 1..8) and question counts.
inline constexpr Int concepts{1, 10'000'000};
inline constexpr Int layers{0, 8};
inline constexpr Int generated_questions{1, 10'000'000};
inline constexpr Int threads{0, 256};  // gen --threads; 0 = every core

// Retrieval paths (spec paths.context / paths.agent and the matching flags).
inline constexpr Int budget_tokens{1, 10'000'000};
inline constexpr Int k{1, 1000};  // context seed hits; `context --k` also takes 0 (weaver: all)
inline constexpr Int hops{0, 10};
inline constexpr Int max_turns{1, 1000};
inline constexpr Int judge_votes{1, reports::kMaxJudgeVotes};  // spec judge.votes
inline constexpr Int max_body_chars{1, 100'000'000};
inline constexpr Int index_char_budget{1, 100'000'000};
inline constexpr RealRange external_timeout_seconds{1, 86'400};  // paths.external.timeout_s

// Search and evaluation flags (and the regression specs' index and search keys).
inline constexpr Int search_k{1, 1000};
inline constexpr Int eval_k{1, 100'000};
inline constexpr RealRange bm25_k1{0, 1000};
inline constexpr RealRange bm25_b{0, 1};
inline constexpr RealRange rrf_k{0, 1'000'000, true};
inline constexpr Int fusion_depth{1, 100'000};
inline constexpr Int rerank_depth{1, 1000};  // candidates a rerank stage re-scores
inline constexpr Int permutations{100, 1'000'000};
inline constexpr Int neighbor_hops{1, 10};

// Bundle loading guardrails (validate, browse, open, neighbors, history).
inline constexpr Int max_file_bytes{1, std::int64_t{1} << 40};
inline constexpr Int max_files{1, 100'000'000};
inline constexpr Int max_total_bytes{1, std::int64_t{1} << 50};

// Git bundles (--git-timeout, git_timeout in specs): seconds, more than 0, at most a day.
inline constexpr RealRange git_timeout_seconds{0.001, 86'400};
// --git-max-bytes / --git-max-files: what one clone's folder may hold (GitOptions has the defaults).
inline constexpr Int git_clone_bytes{1, std::int64_t{1} << 50};
inline constexpr Int git_clone_files{1, 100'000'000};

// calibrate --holdout: the share of questions held out of the fit.
inline constexpr RealRange calibrate_holdout{0, 0.9};

// The sim's policy knobs (agent --sim-*).
inline constexpr Int sim_search_k{1, 50};
inline constexpr Int sim_max_open{0, 50};
inline constexpr RealRange sim_open_ratio{0, 1};

// mock-server and mcp --port (0 = a free port).
inline constexpr Int port{0, 65535};
// mcp --session-timeout: an idle HTTP session ends after this many seconds (a week at most).
inline constexpr Int session_timeout_seconds{1, 604'800};

// Regression specs: expected scores and their tolerances (every trec_eval
// measure is at least 0) and index statistics.
inline constexpr RealRange score{0, 1e12};
inline constexpr IntegerRange<std::uint64_t> count{0, std::numeric_limits<std::uint64_t>::max()};

}  // namespace okfbench::engine::limits
