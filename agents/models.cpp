#include "agents/models.hpp"

#include <fmt/format.h>

#include "agents/decorators.hpp"
#include "agents/secrets.hpp"
#include "agents/sim_profile_file.hpp"
#include "core/error.hpp"
#include "retrieval/tokens.hpp"

namespace okfbench::agents {
namespace {

// A SimModel that owns its counter when the caller did not give one.
class OwningSim : public ChatModel {
 public:
  OwningSim(SimOptions options, std::unique_ptr<retrieval::TokenCounter> counter)
      : counter_(std::move(counter)), sim_(std::move(options), *counter_) {}
  ChatResponse chat(const ChatRequest& request) override { return sim_.chat(request); }
  std::string name() const override { return sim_.name(); }

 private:
  std::unique_ptr<retrieval::TokenCounter> counter_;
  SimModel sim_;
};

std::unique_ptr<ChatModel> base_model(std::string_view spec, const ModelOptions& o) {
  std::string_view kind = spec.substr(0, spec.find(':'));
  std::string rest = spec.find(':') == std::string_view::npos ? "" : std::string(spec.substr(spec.find(':') + 1));
  if (spec == "sim" || kind == "sim") {
    if (spec == "sim:") throw UsageError("sim: needs a profile: --model sim:PROFILE.yaml");
    SimOptions sim = rest.empty() ? o.sim : load_sim_profile(rest, o.sim);
    sim.cache = o.cache;
    if (o.counter) return std::make_unique<SimModel>(sim, *o.counter);
    return std::make_unique<OwningSim>(sim, retrieval::make_counter("o200k_base"));
  }
  if (kind == "openai" || kind == "anthropic") {
    Endpoint e = o.endpoint;
    e.model = rest;
    if (kind == "openai") return std::make_unique<OpenAIModel>(resolve_endpoint(Provider::openai, e));
    return std::make_unique<AnthropicModel>(resolve_endpoint(Provider::anthropic, e));
  }
  if (kind == "replay") {
    if (rest.empty()) throw UsageError("replay needs a cassette: --model replay:PATH");
    return std::make_unique<ReplayModel>(rest);
  }
  throw UsageError(fmt::format("unknown model '{}': use sim, sim:PROFILE.yaml, openai:MODEL, anthropic:MODEL or replay:PATH", spec));
}

std::string endpoint_of(const ChatModel& model) {
  if (auto* m = dynamic_cast<const OpenAIModel*>(&model)) return m->base_url();
  if (auto* m = dynamic_cast<const AnthropicModel*>(&model)) return m->base_url();
  return "local";
}
}  // namespace

std::unique_ptr<ChatModel> make_model(std::string_view spec, const ModelOptions& options) {
  remember_secret(options.endpoint.api_key);  // redacted even when this model never sends it
  std::unique_ptr<ChatModel> model = base_model(spec, options);
  StackOptions stack;
  stack.cache_db = options.cache_db;
  stack.endpoint = endpoint_of(*model);
  stack.repeat_index = options.repeat_index;
  stack.record = options.record;
  return stack_model(std::move(model), stack);
}

// The decorators add every key resolved so far to `secrets` at each write.
std::unique_ptr<ChatModel> stack_model(std::unique_ptr<ChatModel> model, const StackOptions& options) {
  if (!options.cache_db.empty()) {
    model = std::make_unique<CachingModel>(std::move(model), options.cache_db, display_url(options.endpoint),
                                           options.repeat_index, options.secrets);
  }
  if (!options.record.empty()) model = std::make_unique<RecordingModel>(std::move(model), options.record, options.secrets);
  return model;
}

CacheBreakpoints breakpoints_for(CacheKind cache) {
  return cache == CacheKind::anthropic ? CacheBreakpoints::tools_system_and_last_message : CacheBreakpoints::none;
}

}  // namespace okfbench::agents
