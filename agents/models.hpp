#pragma once
// make_model: builds a ChatModel from a spec string, for the CLI and the runner.
//
//   "sim"                 SimModel (offline), usage counted with o200k_base
//   "sim:PROFILE.yaml"    the same with a behaviour profile (agents/sim_profile.hpp)
//                         applied over ModelOptions::sim
//   "openai:MODEL"        OpenAIModel; "openai" alone takes OPENAI_MODEL
//   "anthropic:MODEL"     AnthropicModel
//   "replay:PATH"         ReplayModel over a cassette
// then wrapped by stack_model (below), the one order of every model stack.
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "agents/cache_model.hpp"
#include "agents/model.hpp"
#include "agents/provider_models.hpp"
#include "agents/sim_model.hpp"

namespace okfbench::agents {

struct ModelOptions {
  // The prompt cache to simulate (sim only; real providers report their own).
  CacheKind cache = CacheKind::none;
  SimOptions sim;  // sim knobs; sim.cache is replaced by `cache`
  // Counter for the sim's usage; nullptr = o200k_base. Must outlive the model.
  const retrieval::TokenCounter* counter = nullptr;
  Endpoint endpoint;                  // overrides for openai/anthropic (the model comes from the spec)
  std::filesystem::path record;       // cassette to append to; empty = none
  std::filesystem::path cache_db;     // SQLite response cache; empty = none
  int repeat_index = 0;               // part of the response-cache key
};

// Throws UsageError for an unknown spec, InputError for a missing key or cassette.
// The model is stack_model(base model, {record, cache_db, its endpoint, repeat_index}).
std::unique_ptr<ChatModel> make_model(std::string_view spec, const ModelOptions& options = {});

// What wraps a model. Every command builds its stack through stack_model, so
// `agent`, `run`, the judge and anything later write the same cassette and the
// same cache entry for the same exchange.
struct StackOptions {
  std::filesystem::path cache_db;  // SQLite response cache; empty = none
  std::string endpoint;            // the cache key's endpoint: a base URL (its user-info is dropped) or "local"
  int repeat_index = 0;            // part of the response-cache key
  std::filesystem::path record;    // cassette to append to; empty = none
  std::vector<std::string> secrets;  // redacted from cassettes and the cache, beside every key resolved so far
};

// The stack, innermost first:
//   1. `model`: sim, a provider (its HTTP retries with backoff inside), a replay
//   2. CachingModel when cache_db is set
//   3. RecordingModel when record is set: it sees every exchange, answered by
//      the cache or not, so a recorded run replays whole
//   4. rate limits and deadlines: the runner's PacedModel (engine/trial.hpp),
//      which wraps what this returns
std::unique_ptr<ChatModel> stack_model(std::unique_ptr<ChatModel> model, const StackOptions& options);

// Breakpoints a run should send for a cache model: anthropic needs explicit
// ones (tools, system, last message); the others need none.
CacheBreakpoints breakpoints_for(CacheKind cache);

}  // namespace okfbench::agents
