#include "engine/trial.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>

#include "agents/agent.hpp"
#include "agents/bundle_tools.hpp"
#include "agents/call_error.hpp"
#include "agents/context_prompt.hpp"
#include "agents/decorators.hpp"
#include "agents/models.hpp"
#include "agents/secrets.hpp"
#include "agents/sim_model.hpp"
#include "agents/sim_profile_file.hpp"
#include "engine/answers.hpp"
#include "engine/external_trial.hpp"
#include "engine/judge.hpp"
#include "engine/transcripts.hpp"
#include "engine/trial_model.hpp"
#include "reports/measures.hpp"
#include "reports/trial_metrics.hpp"
#include "retrieval/context.hpp"
#include "core/error.hpp"
#include "retrieval/qualified_id.hpp"
#include "retrieval/tokens.hpp"

namespace okfbench::engine {
namespace {

namespace fs = std::filesystem;

// A model shared by every trial (a replay: cassette, read-only once loaded).
class SharedModel : public agents::ChatModel {
 public:
  explicit SharedModel(agents::ChatModel& inner) : inner_(inner) {}
  agents::ChatResponse chat(const agents::ChatRequest& request) override { return inner_.chat(request); }
  std::string name() const override { return inner_.name(); }

 private:
  agents::ChatModel& inner_;
};

}  // namespace

agents::ChatResponse PacedModel::chat(const agents::ChatRequest& request) {
  ++calls_;
  if (Clock::now() >= pacing_.deadline) {
    throw agents::CallError(agents::Failure::transient,
                            fmt::format("the trial deadline of {} s passed before model call {}", pacing_.deadline_seconds, calls_));
  }
  if (pacing_.pacer.limits_tokens()) pacing_.tokens = estimate_request_tokens(request, pacing_.counter);
  if (pace_each_call_) pacing_.pacer.wait(pacing_.tokens);
  const auto start = Clock::now();
  struct Timer {
    double& ms;
    Clock::time_point start;
    ~Timer() { ms += ms_since(start); }
  } timer{ms_, start};
  agents::reset_call_timing();
  agents::ChatResponse response = inner_->chat(request);
  timings_.push_back(agents::last_call_timing());
  return response;
}

agents::Provider provider_of(const ModelSpec& m) {
  return m.name.starts_with("anthropic:") ? agents::Provider::anthropic : agents::Provider::openai;
}

namespace {

// The endpoint of a provider model: the spec's settings, then the
// environment and the provider's defaults. Throws InputError for a key that
// is not set and UsageError for a header value agents refuses.
agents::Endpoint endpoint_for(const ExperimentSpec& spec, const ModelSpec& m) {
  agents::Endpoint e;
  e.base_url = m.base_url;
  e.model = m.name.substr(m.name.find(':') + 1);
  e.api_key_env = m.api_key_env;
  e.extra_headers = m.headers;
  e.origin = fmt::format("{}: model {}", spec.file.empty() ? spec.name : spec.file.string(), m.label);
  e.retry.connect_timeout_seconds = m.connect_timeout_seconds;
  e.retry.timeout_seconds = m.request_timeout_seconds;
  e.stream = m.stream;
  return agents::resolve_endpoint(provider_of(m), e);
}

// The tools of one agent trial: BundleTools with remember() answered by an
// error (bundles are shared by concurrent trials), and the ids search showed.
class TrialTools : public agents::Toolbox {
 public:
  TrialTools(SharedTools& shared, const LoadedBundle& bundle) : shared_(shared), bundle_(bundle) {}
  std::vector<agents::ToolSpec> specs() const override {
    std::lock_guard lock(shared_.mutex);
    return shared_.tools->specs();
  }
  std::string default_system_prompt() const override {
    std::lock_guard lock(shared_.mutex);
    return shared_.tools->default_system_prompt();
  }
  agents::ToolResult call(std::string_view name, std::string_view arguments) override {
    if (name == "remember") {
      return agents::tool_error("remember is disabled in okfbench runs: every trial shares one copy of the bundle, so nothing is written");
    }
    const auto start = Clock::now();
    agents::ToolResult result;
    {
      std::lock_guard lock(shared_.mutex);
      result = shared_.tools->call(name, arguments);
    }
    ms_ += ms_since(start);
    if (result.error.empty() && agents::tool_role(name) == agents::ToolRole::search) note_hits(result.content);
    return result;
  }
  const std::vector<std::string>& retrieved() const { return retrieved_; }
  double ms() const { return ms_; }

 private:
  void note_hits(const std::string& content) {
    const auto hits = nlohmann::json::parse(content, nullptr, false);
    if (!hits.is_array()) return;
    for (const auto& hit : hits) {
      const char* field = hit.contains("id") ? "id" : "path";
      if (!hit.contains(field) || !hit[field].is_string()) continue;
      std::string id = hit[field].get<std::string>();
      if (shared_.several) id = qualified(hit, id);
      retrieved_.push_back(std::move(id));
    }
  }
  // Several bundles: a hit as BUNDLE:ID with its canonical id (harnessx hits
  // carry paths), as the question set judges it.
  std::string qualified(const nlohmann::json& hit, const std::string& id) const {
    if (!hit.contains("bundle") || !hit["bundle"].is_string()) return id;
    const std::string bundle = hit["bundle"].get<std::string>();
    for (std::size_t i = 0; i < bundle_.parts.size(); ++i) {
      if (bundle_.source.parts[i].name != bundle) continue;
      const retrieval::Concept* c = bundle_.parts[i]->lookup(id);
      return retrieval::qualified_id(bundle, c ? c->id : id);
    }
    return retrieval::qualified_id(bundle, id);
  }
  SharedTools& shared_;
  const LoadedBundle& bundle_;
  std::vector<std::string> retrieved_;
  double ms_ = 0;
};

// The concept `id` names: an id of the bundle, or BUNDLE:ID of a part of a
// combined entry.
const retrieval::Concept* find_concept(const LoadedBundle& b, const std::string& id) {
  if (!b.combined()) return b.bundle->find(id);
  const std::optional<retrieval::QualifiedId> q = retrieval::split_qualified_id(id);
  if (!q) return nullptr;
  for (std::size_t i = 0; i < b.parts.size(); ++i)
    if (b.source.parts[i].name == q->bundle) return b.parts[i]->find(std::string(q->id));
  return nullptr;
}

// A bare id of a combined entry as BUNDLE:ID, once for each part that has it.
std::vector<std::string> qualified_holders(const LoadedBundle& b, const std::string& id) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < b.parts.size(); ++i)
    if (b.parts[i]->find(id)) out.push_back(retrieval::qualified_id(b.source.parts[i].name, id));
  return out;
}

// Concept ids the answer cites: bracketed ids that name a concept. Over a
// combined entry a citation is BUNDLE:ID, or a bare id (what a model that
// read "id: X | bundle: B" blocks tends to write), credited to the parts that
// have it and whose concept reached the model, or to every part that has it
// when none did.
std::vector<std::string> cited_ids(const std::string& answer, const LoadedBundle& b, const std::vector<std::string>& reached) {
  if (!b.combined()) return reports::cited_ids(answer, [&](const std::string& id) { return b.bundle->find(id) != nullptr; });
  const auto cited = reports::cited_ids(
      answer, [&](const std::string& id) { return find_concept(b, id) || !qualified_holders(b, id).empty(); });
  std::vector<std::string> out;
  const auto add = [&](const std::string& id) {
    if (std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
  };
  for (const std::string& id : cited) {
    if (find_concept(b, id)) {
      add(id);
      continue;
    }
    const std::vector<std::string> holders = qualified_holders(b, id);
    std::vector<std::string> seen;
    for (const std::string& h : holders)
      if (std::find(reached.begin(), reached.end(), h) != reached.end()) seen.push_back(h);
    for (const std::string& h : seen.empty() ? holders : seen) add(h);
  }
  return out;
}

// Evidence recall over the concepts that reached the model
// (reports::reached_ids), and the answer's citations.
void add_evidence(reports::TrialRecord& r, const datasets::Question& q, const LoadedBundle& b) {
  const reports::Judgments judged(q.relevant.begin(), q.relevant.end());
  r.evidence_recall = reports::trial_evidence_recall(r, judged);
  r.citations = cited_ids(r.answer, b, reports::reached_ids(r));
  const auto scores = reports::citation_scores(judged, r.citations);
  if (scores.precision) r.measures.push_back({"citation_precision", *scores.precision});
  if (scores.recall) r.measures.push_back({"citation_recall", *scores.recall});
}

// The pack of a context trial: over one bundle, or over a combined entry's
// parts with one index (shared statistics).
retrieval::ContextPack pack_for(const LoadedBundle& b, const std::string& question, const retrieval::ContextOptions& options) {
  if (!b.combined()) return retrieval::pack_context(*b.bundle, *b.index, question, options);
  const std::vector<retrieval::NamedBundle> named = b.named();
  return retrieval::pack_context(named, *b.index, question, options);
}

void run_context_trial(reports::TrialRecord& r, LoadedBundle& b, const datasets::Question& q, TranscriptRecorder& model,
                       const ModelSpec& settings, const retrieval::TokenCounter& counter, double& retrieval_ms) {
  retrieval::ContextOptions options;
  options.k = static_cast<std::size_t>(*r.config.k);
  options.expand_hops = *r.config.hops;
  options.budget_tokens = static_cast<std::size_t>(*r.config.budget_tokens);
  options.counter = &counter;
  options.strategy = r.config.strategy == "weaver" ? retrieval::PackStrategy::weaver : retrieval::PackStrategy::grafito;
  options.filters.selection = b.selection;
  options.retriever = b.retriever_for(r.config.retrieval);  // embeddings built on first use, outside the timing
  const auto start = Clock::now();
  const retrieval::ContextPack pack = pack_for(b, q.text, options);
  retrieval_ms = ms_since(start);
  r.packed = record_pack(pack);
  for (const auto& c : r.packed) {
    if (c.reason == "seed") r.retrieved_ids.push_back(c.id);
  }
  r.context_tokens = static_cast<std::int64_t>(pack.tokens);
  model.set_pack(r.packed);
  // As in the agent loop, the request names no model: the ChatModel knows
  // which one it is, so a cassette or cache entry holds for any label.
  agents::ChatRequest request;
  request.messages.push_back({agents::Role::system, std::string(agents::kContextSystemPrompt), {}, {}, {}});
  request.messages.push_back({agents::Role::user, agents::context_user_message(pack.text, q.text), {}, {}, {}});
  if (settings.max_output_tokens) request.max_tokens = *settings.max_output_tokens;
  request.temperature = settings.temperature;
  const agents::ChatResponse response = model.chat(request);
  r.turns.push_back(record_turn(response.usage));
  fill_new_input(r.turns);
  r.answer = response.message.content;
  add_evidence(r, q, b);
}

void run_agent_trial(reports::TrialRecord& r, LoadedBundle& b, const datasets::Question& q, TranscriptRecorder& model,
                     const ModelSpec& settings, const retrieval::TokenCounter& counter, double& retrieval_ms) {
  SharedTools& shared = b.tools_for(r.config);
  TrialTools tools(shared, b);
  agents::AgentOptions options;
  options.max_turns = *r.config.max_turns;
  options.counter = &counter;
  if (settings.max_output_tokens) options.max_tokens = *settings.max_output_tokens;
  if (settings.temperature) options.temperature = settings.temperature;
  const agents::AgentRun run = agents::run_agent(model, tools, q.text, options);
  retrieval_ms = tools.ms();
  model.note_conversation(run.messages);
  r.turns = record_turns(run);
  r.retrieved_ids = tools.retrieved();
  if (shared.several) {
    for (const auto& [bundle, id] : shared.several->opened(run)) r.opened_ids.push_back(retrieval::qualified_id(bundle, id));
  } else {
    r.opened_ids = agents::opened_concepts(run, *b.bundle);
  }
  r.answer = run.answer;
  if (run.stop == agents::AgentStop::model_error) {
    r.error = "model error: " + run.error;
    r.error_class = agents::to_string(run.failure);
  }
  add_evidence(r, q, b);
}

// The MCP server's bundles of a trial: the bundle with its index (when built
// with the default config), or a combined entry's parts (each indexed by the server).
std::vector<mcp::ServedBundle> served_bundles(LoadedBundle& b) {
  if (!b.combined()) {
    const bool usable = b.index && b.index->config() == retrieval::IndexConfig{};
    return {{b.source.name, b.bundle.get(), usable ? b.index.get() : nullptr}};
  }
  std::vector<mcp::ServedBundle> out;
  for (std::size_t i = 0; i < b.parts.size(); ++i) out.push_back({b.source.parts[i].name, b.parts[i].get(), nullptr});
  return out;
}

const ExternalAgent& external_agent(const ExperimentSpec& spec, const std::string& label) {
  for (const ExternalAgent& a : spec.external)
    if (a.label == label) return a;
  throw InputError(fmt::format("no external agent is labelled \"{}\" in the spec", label));
}

// An external trial, or, in the forecast (sim standing in for the model),
// okfbench's own loop with the default agent settings in its place.
void run_external(reports::TrialRecord& r, TrialSetup& s, const PlannedTrial& t, LoadedBundle& b,
                  const datasets::Question& q, const ModelSpec& settings, reports::Transcript& transcript) {
  const ExternalAgent& agent = external_agent(s.spec, t.config.external);
  const ExternalTrialInput in{agent, settings, s.endpoints.at(settings.label), served_bundles(b), b.source.name, q.id,
                              q.text, t.key, s.counter, s.secrets};
  ExternalTrialResult ran = run_external_trial(in);
  r.turns = std::move(ran.turns);
  r.retrieved_ids = std::move(ran.retrieved);
  r.opened_ids = std::move(ran.opened);
  r.answer = std::move(ran.answer);
  r.error = std::move(ran.error);
  r.error_class = std::move(ran.error_class);
  r.timings.model_ms = ran.model_ms;
  for (std::size_t i = 0; i < r.turns.size(); ++i) {
    r.turns[i].ms = ran.turn_ms[i];
    r.turns[i].first_token_ms = ran.first_token_ms[i];
  }
  add_evidence(r, q, b);
  for (std::size_t i = 0; i < r.turns.size(); ++i) {
    reports::TranscriptTurn turn;
    turn.input_tokens = r.turns[i].input_tokens;
    turn.cached_tokens = r.turns[i].cached_tokens;
    turn.cache_write_tokens = r.turns[i].cache_write_tokens;
    turn.output_tokens = r.turns[i].output_tokens;
    turn.ms = ran.turn_ms[i];
    // The proxy keeps no message text: a reply is there (empty) when the
    // provider reported usage, else the exchange failed.
    if (r.turns[i].input_tokens) {
      turn.reply = reports::TranscriptMessage{"assistant", "", {}, "", ""};
    } else {
      turn.error = "the exchange reported no usage (failed, cut, or streamed without usage)";
    }
    transcript.turns.push_back(std::move(turn));
  }
}

// Each turn's HTTP timing, when every call made one request (a retried or
// failed call leaves the turns and the calls out of step: none is set then).
void add_turn_timings(std::vector<reports::TurnRecord>& turns, const std::vector<std::optional<agents::CallTiming>>& timings,
                      bool streamed) {
  if (turns.size() != timings.size()) return;
  for (std::size_t i = 0; i < turns.size(); ++i) {
    if (!timings[i]) continue;
    turns[i].ms = timings[i]->ms;
    if (streamed) turns[i].first_token_ms = timings[i]->first_byte_ms;
  }
}

reports::PathConfig forecast_stand_in(reports::PathConfig c) {
  const AgentSweep defaults;
  c.kind = reports::PathKind::agent;
  c.external.clear();
  c.surface = defaults.surface.front();
  c.tools = defaults.tools.front();
  c.max_turns = defaults.max_turns.front();
  return c;
}

// Grades a finished trial with the run's graders; the judge reads the
// relevant concepts' text as its reference.
void grade_trial(reports::TrialRecord& r, const LoadedBundle& b, const datasets::Question& q,
                 const std::vector<reports::Grader>& graders) {
  const bool judged = std::any_of(graders.begin(), graders.end(), [](const reports::Grader& g) { return g.name == "judge"; });
  std::function<const retrieval::Concept*(const std::string&)> reference;
  if (judged) reference = [&b](const std::string& id) { return find_concept(b, id); };
  reports::GradeInput in = question_grade_input(q, r.answer, reference);
  in.citations = r.citations;
  in.end = reports::trial_end(r);
  reports::Grading grading = reports::grade_all(graders, in);
  r.grades = std::move(grading.grades);
  r.judge_usage = std::move(grading.judge_usage);
}

const datasets::Question& find_question(const LoadedBundle& b, const std::string& id) {
  const datasets::Question* q = b.questions.find(id);
  if (!q) throw InputError(fmt::format("question {} vanished from {}", id, b.questions.source));
  return *q;
}

// The model of one trial (sim, a provider, a replay), in agents::stack_model's
// stack: the response cache (--cache-db, provider models only: sim and replays
// answer locally), the recorder (--record, one cassette per trial), then
// PacedModel outermost (rate limits and the trial deadline).
std::unique_ptr<PacedModel> make_trial_model(TrialSetup& s, const PlannedTrial& t, TrialPacing& pacing) {
  const ModelSpec& m = *s.models.at(t.config.model);
  std::unique_ptr<agents::ChatModel> model;
  agents::StackOptions stack;
  stack.repeat_index = t.config.repeat;
  stack.secrets = s.secrets;
  if (m.is_sim()) {
    agents::SimOptions options = m.sim_profile.empty() ? agents::SimOptions{} : *s.sim_profiles.at(m.label);
    options.seed = s.spec.seed + static_cast<std::uint64_t>(t.config.repeat);
    options.cache = agents::parse_cache_kind(m.stand_in_cache.empty() ? t.config.cache_model : m.stand_in_cache);
    model = std::make_unique<agents::SimModel>(options, s.counter);
  } else if (!m.cassette.empty()) {
    model = std::make_unique<SharedModel>(*s.cassettes.at(m.label));
  } else if (!m.replay.empty()) {
    const fs::path cassette = m.replay / (t.key + ".jsonl");
    if (!fs::exists(cassette)) {
      throw InputError(fmt::format("no cassette for trial {} in {}: that run did not record this trial (record it with "
                                   "okfbench run --record {})",
                                   t.key, m.replay.string(), m.replay.string()));
    }
    model = std::make_unique<agents::ReplayModel>(cassette);
  } else {
    agents::Endpoint e = s.endpoints.at(m.label);
    e.retry.before_attempt = [&pacing] { pacing.pacer.wait(pacing.tokens); };
    e.retry.deadline_at = pacing.deadline;
    stack.cache_db = s.options.cache_db;
    stack.endpoint = e.base_url;
    if (provider_of(m) == agents::Provider::anthropic) {
      model = std::make_unique<agents::AnthropicModel>(std::move(e));
    } else {
      model = std::make_unique<agents::OpenAIModel>(std::move(e));
    }
  }
  if (!s.options.record_dir.empty()) {
    stack.record = s.options.record_dir / (t.key + ".jsonl");
    std::error_code ec;
    fs::remove(stack.record, ec);  // a trial run again is recorded afresh
  }
  model = agents::stack_model(std::move(model), stack);
  return std::make_unique<PacedModel>(std::move(model), pacing, m.is_sim());
}

}  // namespace

// or URL (a missing key, a line break in it) stops the run with its own exit
// code instead of failing every trial.
std::map<std::string, agents::Endpoint> resolve_endpoints(const ExperimentSpec& spec) {
  std::map<std::string, agents::Endpoint> out;
  for (const auto& m : spec.models) {
    if (m.calls_provider()) out[m.label] = endpoint_for(spec, m);
  }
  return out;
}

// Everything the trials' models need before the first trial starts: the
// resolved endpoints, replay cassettes loaded once, the secrets to redact.
void prepare_models(TrialSetup& s, std::map<std::string, agents::Endpoint> endpoints) {
  s.endpoints = std::move(endpoints);
  for (const auto& m : s.spec.models) {
    s.models[m.label] = &m;
    if (!m.cassette.empty()) s.cassettes[m.label] = std::make_unique<agents::ReplayModel>(m.cassette);
    if (!m.sim_profile.empty()) s.sim_profiles[m.label] = std::make_unique<agents::SimOptions>(agents::load_sim_profile(m.sim_profile));
  }
  for (const auto& [label, e] : s.endpoints) {
    for (const auto& [name, value] : e.extra_headers) s.secrets.push_back(value);
  }
  // Keys resolve_endpoint remembered, the environment's, and every extra header value.
  for (auto& secret : agents::known_secrets()) s.secrets.push_back(std::move(secret));
  if (!s.options.record_dir.empty()) {
    std::error_code ec;
    fs::create_directories(s.options.record_dir, ec);
    if (ec) throw InputError(fmt::format("--record {}: cannot create the folder: {}", s.options.record_dir.string(), ec.message()));
  }
}

TrialOutcome run_trial(TrialSetup& s, const PlannedTrial& t) {
  LoadedBundle& b = s.bundles[t.bundle];
  const datasets::Question& q = find_question(b, t.question_id);
  const ModelSpec& settings = *s.models.at(t.config.model);
  reports::TrialRecord r;
  r.trial_key = t.key;
  r.bundle = t.bundle_name;
  r.concept_count = static_cast<std::int64_t>(b.concept_count());
  r.question_set = b.questions.name;
  r.question_id = q.id;
  r.config = t.config;
  const auto start = Clock::now();
  TrialPacing pacing{s.pacer, s.counter,
                     start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(settings.trial_deadline_seconds)),
                     settings.trial_deadline_seconds};
  double retrieval_ms = 0;
  std::unique_ptr<PacedModel> model;
  std::optional<TranscriptRecorder> recorder;
  reports::Transcript external_transcript;
  const bool external = t.config.kind == reports::PathKind::external && !settings.is_sim();
  try {
    if (external) {
      run_external(r, s, t, b, q, settings, external_transcript);
    } else {
      model = make_trial_model(s, t, pacing);
      recorder.emplace(*model, s.secrets, s.counter);
      if (t.config.kind == reports::PathKind::context) {
        run_context_trial(r, b, q, *recorder, settings, s.counter, retrieval_ms);
      } else if (t.config.kind == reports::PathKind::external) {
        r.config = forecast_stand_in(t.config);
        run_agent_trial(r, b, q, *recorder, settings, s.counter, retrieval_ms);
        r.config = t.config;
      } else {
        run_agent_trial(r, b, q, *recorder, settings, s.counter, retrieval_ms);
      }
      r.timings.model_ms = model->ms();
      add_turn_timings(r.turns, model->timings(), settings.stream);
    }
  } catch (const std::exception& e) {
    r.error = e.what();
    r.error_class = agents::to_string(agents::failure_of(e));
  }
  r.timings.total_ms = ms_since(start);
  r.timings.retrieval_ms = retrieval_ms;
  grade_trial(r, b, q, s.graders);
  TrialOutcome out;
  if (recorder) {
    recorder->attribute(r.turns);
    out.transcript = recorder->transcript(r.trial_key, r.answer, r.error);
    out.prompts = recorder->prompts();
  } else {
    out.transcript = std::move(external_transcript);
    out.transcript.trial_key = r.trial_key;
    out.transcript.answer = r.answer;
    out.transcript.error = agents::redact(r.error, s.secrets);
  }
  out.record = std::move(r);
  return out;
}


}  // namespace okfbench::engine
