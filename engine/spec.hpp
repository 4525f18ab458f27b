#pragma once
// Experiment specs: which bundles, which questions, which retrieval paths and
// models, and how to run them. A spec expands into trials (one question on
// one path configuration with one model, cache model and repeat index), each
// with a stable key, the hash of everything that determines its result.
//
// YAML format (every key optional unless marked; a scalar is accepted where a
// list is expected and means a one-element list; [lo..hi] is the allowed
// range, from engine/limits.hpp):
//
//   name: default                  # default: the file name without .yaml
//   seed: 1                        # [0..2^64-1] passed to sim and to generated bundles
//   repeats: 1                     # [1..1000] each configuration runs this many times
//   concurrency: 2                 # [1..256] trials in flight at once
//   requests_per_minute: 0         # [0..1000000] HTTP attempts (retries included) per minute over all workers; 0 = no limit
//   tokens_per_minute: 0           # [0..1000000000000] estimated input tokens sent per minute over all workers; 0 = no limit
//   cost_cap_usd: 5.0              # (0..1000000] stop starting trials once the spend reaches this
//   max_questions: 0               # [0..10000000] per bundle, the first N questions; 0 = all
//   cache_dir: cache               # generated and converted bundles and the judge's replies, relative to this
//                                  # file; default $XDG_CACHE_HOME/okfbench/bundles ($HOME/.cache/okfbench/bundles)
//   bundles:                       # REQUIRED, at least one
//     - path: ../bundles/demo      # an existing bundle, relative to this file; ${VAR} expands
//       name: demo                 # default: the folder name
//       questions: ../questions/demo.yaml  # default: <path>/questions.yaml
//       profile: okf               # okf, repo, lessons or expertise (also on a git entry)
//       lessons: {as_of: 2026-12-01, include_candidates: false, prefer_scope: project}
//                                  # profile lessons only: as_of REQUIRED (the clock of expires_at,
//                                  # so a trial does not change with the day it runs)
//       expertise: {as_of: 2026-12-01, task_tags: [python-library]}
//                                  # profile expertise only: as_of REQUIRED; task_tags a tag or a list
//     - path: https://github.com/acme/kb/tree/v2/bundles/sales   # or any git URL (engine/git_source.hpp),
//       ref: v2                    # cloned when the run loads it; ref: and subdir: replace the URL's
//       subdir: bundles/sales      # name: default the subdir's last part or the repository's name;
//                                  # questions: default questions.yaml in the bundle folder of the checkout
//     - name: kb                 # several bundles as one trial set: one index over all of them
//       paths:                   # (shared statistics), the agent's tools take `bundle`; two or more,
//         - ../kb/sales          # each a path or git URL, or a mapping {path, name, ref, subdir,
//         - {path: ../kb/support, name: help}   # profile}; names default as above, unique, no ':'
//       questions: kb.yaml       # REQUIRED; relevant ids name their bundle: sales:metrics/revenue
//                                # (retrieval/qualified_id.hpp); name: default the names joined by +
//     - generate: {concepts: [10, 100], seed: 1, layers: 0, questions: 20}
//                                  # concepts [1..10000000], seed [0..2^64-1],
//                                  # layers [0..8] (0 = automatic), questions [1..10000000]
//     - convert: {format: beir, source: "${OKFBENCH_DATA}/collections/scifact",
//                 split: test, concepts: [100, 1000, 5183]}  # subsets [1..10000000] that keep the judged documents
//   paths:                         # REQUIRED, at least one of context, agent and external
//     context: {budget_tokens: [2000], k: [5], hops: [1], strategy: [grafito]}
//                                  # budget_tokens [1..10000000], k [1..1000], hops [0..10]
//       retrieval: [bm25f, hybrid] # the seed search: bm25f (default), hybrid or hybrid+rerank
//                                  # (offline sim embedder and reranker); one bundle, not a paths: entry
//     agent:
//       surface: [grafito]         # grafito or harnessx tool names
//       tools: [[browse, search, open, follow, history, remember], [search, open]]
//       max_turns: [12]            # [1..1000]
//       max_body_chars: [8000]     # [1..100000000] body characters open/read_concept return (default 8000)
//       index_char_budget: [4000]  # [1..100000000] root index.md characters in the harnessx prompt (default 4000)
//       retrieval: [bm25f]         # the search tool's method, as under context:
//     external:                    # the user's own agent (engine/external_trial.hpp); a mapping or a list
//       command: [python3, my_agent.py]  # REQUIRED: argv as given, no shell; run in the spec's folder
//       label: mine                # how trials name it (default: the command and args joined by spaces); unique
//       timeout_s: 300             # [1..86400] per question; past it the process group is killed
//       answer: stdout             # stdout (the whole output, trimmed) or json ({"answer": "..."} on stdout)
//       upstream: http://host:8080/v1   # the proxy's upstream; default the model's endpoint
//       args: [[--fast], [--slow]] # a sweep: one configuration per list, appended to command
//                                  # external configurations run with each openai: / anthropic: model
//   models:                        # default [sim]; each entry a name or a mapping
//     - sim                        # the offline model
//     - sim:profiles/mini.yaml     # sim with a behaviour profile (agents/sim_profile.hpp),
//                                  # relative to this file; `okfbench calibrate` writes one
//     - openai:gpt-4o-mini         # an OpenAI-compatible endpoint (Chat Completions)
//     - anthropic:claude-sonnet-4-5  # the Anthropic Messages API
//     - replay:calls.jsonl         # answers from one cassette (agent --record), no network
//     - name: openai:gpt-4o-mini   # REQUIRED in a mapping: what to call
//       label: mini-via-gateway    # how trials and reports name it (default: name); unique
//       base_url: http://gateway:8080/v1   # default $OPENAI_BASE_URL / $ANTHROPIC_BASE_URL, else the official one
//       api_key_env: GATEWAY_KEY   # the variable holding the key (default OPENAI_API_KEY / ANTHROPIC_API_KEY)
//       headers: {X-Team: evals}   # extra request headers; no control characters, not
//                                  # Authorization / x-api-key / Content-Type / Content-Length / Host
//       connect_timeout_seconds: 10     # per connection attempt
//       request_timeout_seconds: 120    # per HTTP attempt
//       trial_deadline_seconds: 600     # everything one trial does with the model, retries and waits included
//       max_output_tokens: 1024    # per call, 1 to 1000000
//       temperature: 0             # 0 to 2
//       stream: true               # our client streams (server-sent events); the record's turns then carry
//                                  # first_token_ms beside ms; same usage and transcripts as without
//       price: {input_per_mtok: 0.15, cached_input_per_mtok: 0.075, cache_write_per_mtok: 0.15,
//               output_per_mtok: 0.60}  # dollars per million tokens; input and output required, the
//                                       # cached and cache-write prices default to the input price;
//                                       # without one the pricing table prices the name (reports/pricing.hpp)
//       replay: recorded/          # answer each trial from the cassette `run --record recorded/`
//                                  # wrote for it (no network, no key; same trial keys and records)
//   cache_models: [openai]         # none, openai, anthropic
//   graders: [facts, citations, answered]   # the default; also judge (reports/graders.hpp)
//   judge: {model: sim, votes: 1}  # optional LLM-as-judge: sim, openai:MODEL or anthropic:MODEL,
//                                  # votes 1..9; adds "judge" to graders when they do not name it
//   forecast: {openai:gpt-4o: gpt-4o.yaml}  # the sim profile (okfbench calibrate) that
//                                  # run --dry-run forecasts a model's spend with
//   baseline: one-shot             # the configuration the reports' verdict and "x baseline"
//                                  # columns compare with: a short name ("one-shot budget=2000")
//                                  # or a full label; default the cheapest context configuration
//                                  # by input tokens (reports/verdict.hpp)
//
// Numbers are written as core/numbers.hpp says: integers in plain
// decimal digits (no "5.0", "1e3", "0x10", "+5" or leading zeros), reals
// as decimals with an optional exponent ("0.5", "1e3"), never nan or inf.
// A plan may hold at most limits::planned_trials (1,000,000) trials: more
// configurations per question than that are refused here, more trials over
// all questions by the runner, before anything is allocated.
//
// The spec hash (which a run folder keeps, so that it is only resumed with the
// same spec) leaves out what changes how a run goes but not what a trial
// computes: cost_cap_usd, concurrency, requests_per_minute, tokens_per_minute,
// forecast, baseline and, in model mappings, api_key_env, price, replay and the timeouts.
//
// Problems are InputErrors naming the file, the line and the key, e.g.
//   default.yaml:14: paths.context.budget_tokens: expected an integer from 1 to 10000000, got "lots"
// A repeated key anywhere in the file is one too (YAML keys are unique). A
// problem in a value that --set wrote is a UsageError naming the --set
// argument instead of a line:
//   --set repeats=0: repeats: expected an integer from 1 to 1000, got "0"
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/git_source.hpp"
#include "core/hash.hpp"
#include "engine/selection_flags.hpp"
#include "reports/record.hpp"

namespace okfbench::engine {

enum class BundleKind { path, generated, converted, git, combined };

// One bundle of the experiment (a generate/convert entry with a list of sizes
// becomes one BundleSource per size).
struct BundleSource {
  BundleKind kind = BundleKind::path;
  std::string name;                  // unique within the spec, e.g. "demo", "gen-1000", "scifact-100"
  std::filesystem::path path;        // kind path: the bundle folder
  std::filesystem::path questions;   // kind path: the question set file
  std::string profile = "okf";       // kinds path and git: okf, repo, lessons or expertise
  cli::SelectionFlags policy;        // lessons / expertise: the `lessons:` or `expertise:` keys
  std::size_t concepts = 0;          // generated / converted: the size
  std::uint64_t seed = 1;            // generated
  std::size_t layers = 0;            // generated; 0 = the generator's default
  std::size_t question_count = 0;    // generated; 0 = the generator's default
  std::string format;                // converted: beir or cranfield
  std::filesystem::path source;      // converted: the collection folder
  std::string split = "test";        // converted beir: the qrels split
  GitSource git;                     // kind git: repository, ref, subdirectory (engine/git_source.hpp)
  std::string commit;                // kind git: the commit checked out, set when the runner loads it
  // kind combined: its bundles (each of kind path or git, with its own name), in
  // the spec's order; `questions` is the combined question set.
  std::vector<BundleSource> parts;

  // What determines the bundle's content, for trial keys.
  std::string identity() const;
};

struct ContextSweep {
  std::vector<std::int64_t> budget_tokens = {2000};
  std::vector<int> k = {5};
  std::vector<int> hops = {1};
  std::vector<std::string> strategy = {"grafito"};  // grafito (search, expand, pack) or weaver
  // The seed search's method: bm25f, hybrid or hybrid+rerank (offline sim
  // embedder and reranker); one bundle only, so not with a combined entry.
  std::vector<std::string> retrieval = {"bm25f"};
};

struct AgentSweep {
  std::vector<std::string> surface = {"grafito"};
  std::vector<std::vector<std::string>> tools = {{"browse", "search", "open", "follow", "history", "remember"}};
  std::vector<int> max_turns = {12};
  // The tools' budgets; empty = the tools' defaults (8,000 and 4,000), not swept.
  std::vector<std::int64_t> max_body_chars;
  std::vector<std::int64_t> index_char_budget;
  // The search tool's method, as ContextSweep::retrieval.
  std::vector<std::string> retrieval = {"bm25f"};
};

// One agent command of paths.external (one per `args` entry).
struct ExternalAgent {
  std::string label;                 // unique among them; PathConfig::external
  std::vector<std::string> command;  // argv, args appended
  double timeout_s = 300;
  bool answer_json = false;          // answer: json
  std::string upstream;              // "" = the model's endpoint
  std::filesystem::path working_dir; // the spec's folder
  bool operator==(const ExternalAgent&) const = default;
};

// The judge a spec names (engine/judge.hpp builds it).
struct JudgeSpec {
  std::string model = "sim";
  int votes = 1;
};

// Defaults of a model's network settings (one definition, used by the spec
// reader and documented above).
inline constexpr double kDefaultConnectTimeoutSeconds = 10;
inline constexpr double kDefaultRequestTimeoutSeconds = 120;
inline constexpr double kDefaultTrialDeadlineSeconds = 600;

// One entry of `models:`.
struct ModelSpec {
  std::string name;   // sim, sim:PROFILE, openai:MODEL, anthropic:MODEL or replay:CASSETTE
  std::string label;  // how trials name it (PathConfig::model); the name unless the spec gives one
  std::string base_url;
  std::string api_key_env;
  std::vector<std::pair<std::string, std::string>> headers;
  double connect_timeout_seconds = kDefaultConnectTimeoutSeconds;
  double request_timeout_seconds = kDefaultRequestTimeoutSeconds;
  double trial_deadline_seconds = kDefaultTrialDeadlineSeconds;
  std::optional<int> max_output_tokens;
  std::optional<double> temperature;
  bool stream = false;  // stream: true, openai: and anthropic: models
  std::optional<reports::ModelPrice> price;  // price.model is the label
  std::filesystem::path replay;              // folder of per-trial cassettes; "" = call the model
  std::filesystem::path cassette;            // replay:CASSETTE, resolved against the spec's folder
  std::filesystem::path sim_profile;         // sim:PROFILE, resolved against the spec's folder
  // Set by the forecast only: sim answering for a provider model. Its trials
  // are planned as the provider's (cache "provider", so their labels match
  // the run's) and sim runs them with this cache model.
  std::string stand_in_cache;

  // A model of that name and label with every other setting at its default.
  static ModelSpec named(std::string name) {
    ModelSpec m;
    m.label = name;
    m.name = std::move(name);
    return m;
  }
  // openai:..., anthropic:... without replay: trials cost money.
  bool calls_provider() const;
  // sim or sim:PROFILE: offline, answered by the sim policy.
  bool is_sim() const { return name == "sim" || name.starts_with("sim:"); }
  bool operator==(const ModelSpec&) const = default;
};

struct ExperimentSpec {
  std::string name;
  std::filesystem::path file;  // where it was read from ("" for text)
  std::string hash;            // of the spec after --set overrides, without the settings
                               // listed above; 16 hex digits
  std::uint64_t seed = 1;
  int repeats = 1;
  unsigned concurrency = 2;
  double requests_per_minute = 0;
  double tokens_per_minute = 0;
  std::optional<double> cost_cap_usd;
  std::size_t max_questions = 0;
  std::filesystem::path cache_dir;  // "" when no cache folder is known: see cache_folder()
  std::vector<BundleSource> bundles;
  std::optional<ContextSweep> context;
  std::optional<AgentSweep> agent;
  std::vector<ExternalAgent> external;  // empty: no paths.external
  std::vector<ModelSpec> models = {ModelSpec::named("sim")};
  std::vector<std::string> cache_models = {"none"};
  std::vector<std::string> graders = {"facts", "citations", "answered"};  // "judge" when judge is set
  std::optional<JudgeSpec> judge;
  // forecast: {MODEL: PROFILE.yaml}, by model label or name: the profile
  // --dry-run forecasts that model's spend with (engine/forecast.hpp).
  std::map<std::string, std::filesystem::path> forecast_profiles;
  std::string baseline;  // baseline: as written ("" when absent); validated against the configurations
};

// Reads `file`, applies each "KEY=VALUE" override (KEY is a dotted path such
// as paths.context.budget_tokens, VALUE is YAML: 500, [500, 1000], sim),
// validates and returns the spec. Throws InputError for an unreadable file or
// a bad spec, UsageError for a malformed override or a bad value it set
// (a KEY part that is not a key of a mapping or not an index of a list, a
// duplicate key in VALUE, a VALUE out of range).
ExperimentSpec load_spec(const std::filesystem::path& file, const std::vector<std::string>& overrides = {});

// The same over text; `file_name` names it in messages and relative paths are
// resolved against `base_dir`.
ExperimentSpec parse_spec(std::string_view yaml, std::string_view file_name, const std::filesystem::path& base_dir,
                          const std::vector<std::string>& overrides = {});

// The spec's cache_dir; InputError saying how to set one when it is empty
// (neither XDG_CACHE_HOME nor HOME was set and the spec names none).
std::filesystem::path cache_folder(const ExperimentSpec& spec);

}  // namespace okfbench::engine
