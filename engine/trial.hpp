#pragma once
// Running one trial: its model stack (the model, the response cache, the
// recorder, pacing and the deadline outermost), the context or agent path,
// and the grades. What the runner's header says about one trial holds here.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "agents/decorators.hpp"
#include "agents/http.hpp"
#include "agents/model.hpp"
#include "agents/models.hpp"
#include "agents/provider_models.hpp"
#include "engine/pacer.hpp"
#include "engine/run_bundles.hpp"
#include "engine/run_common.hpp"
#include "engine/runner.hpp"
#include "engine/spec.hpp"
#include "reports/graders.hpp"
#include "reports/record.hpp"
#include "reports/transcript.hpp"
#include "retrieval/token_counter.hpp"

namespace okfbench::engine {

// What one trial's model calls share: the run's pacer, the estimate of the
// request being sent (read by the HTTP layer before every attempt) and the
// trial's deadline.
struct TrialPacing {
  Pacer& pacer;
  const retrieval::TokenCounter& counter;
  Clock::time_point deadline;
  double deadline_seconds = 0;
  std::int64_t tokens = 0;
};

// The outermost model of a trial: checks the deadline before every call,
// estimates the request's tokens for the pacer, paces calls that are not
// HTTP requests themselves (sim) and times the calls.
class PacedModel : public agents::ChatModel {
 public:
  PacedModel(std::unique_ptr<agents::ChatModel> inner, TrialPacing& pacing, bool pace_each_call)
      : inner_(std::move(inner)), pacing_(pacing), pace_each_call_(pace_each_call) {}
  agents::ChatResponse chat(const agents::ChatRequest& request) override;
  std::string name() const override { return inner_->name(); }
  double ms() const { return ms_; }
  // Each call's HTTP timing (agents::last_call_timing), in call order; unset
  // for a call that made no HTTP request (sim, a replay, a cache hit).
  const std::vector<std::optional<agents::CallTiming>>& timings() const { return timings_; }

 private:
  std::unique_ptr<agents::ChatModel> inner_;
  std::vector<std::optional<agents::CallTiming>> timings_;
  TrialPacing& pacing_;
  bool pace_each_call_;
  double ms_ = 0;
  int calls_ = 0;
};

// What every trial of a run shares: the spec, the bundles, the counter, the
// pacer, the graders and the models' settings.
struct TrialSetup {
  const ExperimentSpec& spec;
  const RunOptions& options;
  std::vector<LoadedBundle>& bundles;
  const retrieval::TokenCounter& counter;
  Pacer& pacer;
  std::vector<reports::Grader> graders;
  std::map<std::string, const ModelSpec*> models;                          // by label
  std::map<std::string, agents::Endpoint> endpoints;                       // by label, provider models
  std::map<std::string, std::unique_ptr<agents::ReplayModel>> cassettes;  // by label, replay: models
  std::map<std::string, std::unique_ptr<agents::SimOptions>> sim_profiles;  // by label, sim:PROFILE models
  std::vector<std::string> secrets;  // keys and header values, redacted from cassettes and the response cache
};

// Resolves each provider model once before anything runs, so an unusable key
// or URL (a missing key, a line break in it) stops the run with its own exit
// code instead of failing every trial.
std::map<std::string, agents::Endpoint> resolve_endpoints(const ExperimentSpec& spec);

// Everything the trials' models need before the first trial starts: the
// resolved endpoints, replay cassettes loaded once, the secrets to redact.
void prepare_models(TrialSetup& s, std::map<std::string, agents::Endpoint> endpoints);

// The endpoint a provider model's base URL is recorded under.
agents::Provider provider_of(const ModelSpec& m);

// A finished trial: its record and its conversation.
struct TrialOutcome {
  reports::TrialRecord record;
  reports::Transcript transcript;
  std::vector<reports::TranscriptPrompt> prompts;  // the prompts the transcript's turns name
};

// Runs one planned trial and grades it. A failure of the path (a model or
// tool error, the deadline) is the record's error, never an exception. Each
// turn of the record carries its input attribution.
TrialOutcome run_trial(TrialSetup& s, const PlannedTrial& t);

}  // namespace okfbench::engine
