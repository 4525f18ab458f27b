#include "harness/runner.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "agents/agent.hpp"
#include "agents/decorators.hpp"
#include "agents/models.hpp"
#include "agents/bundle_tools.hpp"
#include "agents/context_prompt.hpp"
#include "agents/call_error.hpp"
#include "agents/provider_models.hpp"
#include "agents/sim_model.hpp"
#include "datasets/convert.hpp"
#include "datasets/generator.hpp"
#include "datasets/questions.hpp"
#include "harness/file_lock.hpp"
#include "harness/judge.hpp"
#include "harness/limits.hpp"
#include "harness/pacer.hpp"
#include "harness/store.hpp"
#include "reports/graders.hpp"
#include "reports/measures.hpp"
#include "reports/pricing.hpp"
#include "reports/report_files.hpp"
#include "reports/summary.hpp"
#include "retrieval/bpe.hpp"
#include "retrieval/context.hpp"
#include "retrieval/digest.hpp"
#include "retrieval/error.hpp"
#include "retrieval/saturate.hpp"
#include "retrieval/search.hpp"
#include "retrieval/tokens.hpp"

#ifndef OKFBENCH_BUILD_TYPE
#define OKFBENCH_BUILD_TYPE "unknown"
#endif

namespace okfbench::harness {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr const char* kCounter = "o200k_base";  // the vocabulary every trial's tokens are counted with

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

void log_line(const std::string& text) { std::fprintf(stderr, "okfbench: %s\n", text.c_str()); }

std::string utc_now(const char* format) {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buffer[64];
  std::strftime(buffer, sizeof buffer, format, &tm);
  return buffer;
}

// ---------------------------------------------------------------- bundles
// One BundleTools per tool configuration serves every worker (calls
// serialised by its mutex); all of them search the bundle's one index.
struct SharedTools {
  std::mutex mutex;
  std::unique_ptr<agents::BundleTools> tools;
};

struct LoadedBundle {
  BundleSource source;
  fs::path dir;
  fs::path questions_file;
  datasets::QuestionSet questions;
  std::unique_ptr<retrieval::Bundle> bundle;
  std::unique_ptr<retrieval::SearchIndex> index;
  std::unique_ptr<std::mutex> tools_mutex = std::make_unique<std::mutex>();
  std::map<std::string, std::unique_ptr<SharedTools>> tools;  // by surface and tool list

  SharedTools& tools_for(const reports::PathConfig& c) {
    std::lock_guard lock(*tools_mutex);
    auto& slot = tools[c.surface + "|" + fmt::format("{}", fmt::join(c.tools, ","))];
    if (!slot) {
      slot = std::make_unique<SharedTools>();
      agents::ToolsOptions options;
      options.surface = *agents::parse_surface(c.surface);
      options.include = c.tools;
      options.now = "2026-11-29T00:00:00Z";  // a fixed clock: staleness must not depend on the day of the run
      slot->tools = std::make_unique<agents::BundleTools>(*bundle, options, index.get());
    }
    return *slot;
  }
};

// Builds a cache entry in a temporary folder and publishes it by rename, under
// a lock per entry: concurrent shards wait for the one that builds it instead
// of building it twice or reading it half-written, and an interrupted build
// never leaves a half-written entry behind. A published entry (its
// .okfbench-complete marker is written before the rename) never changes, so
// it is read without the lock.
template <class Build>
fs::path cached_folder(const fs::path& cache_dir, const std::string& name, Build build) {
  const fs::path final_dir = cache_dir / name;
  const auto complete = [&] { return fs::exists(final_dir / ".okfbench-complete"); };
  if (complete()) return final_dir;
  std::error_code ec;
  fs::create_directories(cache_dir, ec);
  if (ec) throw InputError(fmt::format("cannot create the cache folder {}: {}", cache_dir.string(), ec.message()));
  const FileLock lock = FileLock::acquire(cache_dir / fmt::format(".{}.lock", name), FileLock::Wait::yes, {},
                                          [&](const std::string& holder) {
                                            log_line(fmt::format("waiting for okfbench {} to finish building {}", holder,
                                                                 final_dir.string()));
                                          });
  if (complete()) return final_dir;  // built while we waited
  // Under the lock nobody else builds this entry: what is left of it is from
  // an interrupted build.
  const std::string tmp_prefix = fmt::format(".{}.tmp-", name);
  for (const auto& entry : fs::directory_iterator(cache_dir, ec)) {
    if (entry.path().filename().string().starts_with(tmp_prefix)) fs::remove_all(entry.path(), ec);
  }
  fs::remove_all(final_dir, ec);
  const fs::path tmp = cache_dir / (tmp_prefix + std::to_string(::getpid()));
  try {
    build(tmp);
    reports::write_text_atomically(tmp / ".okfbench-complete", "");
    fs::rename(tmp, final_dir);
  } catch (const fs::filesystem_error& e) {
    fs::remove_all(tmp, ec);
    throw InputError(fmt::format("cannot build {}: {}", final_dir.string(), e.what()));
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
  return final_dir;
}

fs::path generated_bundle(const ExperimentSpec& spec, const BundleSource& b) {
  const std::string name = fmt::format("{}-{}", b.name, stable_hash(fmt::format("{}|v{}", b.identity(), datasets::kGeneratorVersion)));
  return cached_folder(spec.cache_dir, name, [&](const fs::path& tmp) {
    log_line(fmt::format("generating {} ({} concepts) into {}", b.name, b.concepts, (spec.cache_dir / name).string()));
    datasets::GeneratorOptions options;
    options.concepts = b.concepts;
    options.seed = b.seed;
    options.layers = b.layers;
    options.questions = b.question_count;
    const auto summary = datasets::generate_bundle(options, tmp / "bundle");
    reports::write_text_atomically(tmp / "questions.yaml", datasets::questions_to_yaml(summary.questions, options));
  });
}

fs::path converted_collection(const ExperimentSpec& spec, const BundleSource& b) {
  const std::string name = fmt::format("{}-{}-{}", b.format, b.source.filename().string(),
                                       stable_hash(fmt::format("{}|{}|{}", b.format, b.source.generic_string(), b.split)));
  return cached_folder(spec.cache_dir, name, [&](const fs::path& tmp) {
    log_line(fmt::format("converting {} ({}) into {}", b.source.string(), b.format, (spec.cache_dir / name).string()));
    if (b.format == "beir") {
      datasets::convert_beir(b.source, tmp, b.split);
    } else {
      datasets::convert_cranfield(b.source, tmp);
    }
  });
}

// A subset of `concepts` documents that keeps whole questions: the judged
// documents of each question in order while they fit, then other documents
// by id. Only questions whose relevant documents are all kept remain.
fs::path converted_subset(const ExperimentSpec& spec, const BundleSource& b, const fs::path& full) {
  const std::string name = fmt::format("{}-{}", b.name, stable_hash(b.identity()));
  return cached_folder(spec.cache_dir, name, [&](const fs::path& tmp) {
    const datasets::QuestionSet all = datasets::load_questions(full / "questions.yaml");
    std::vector<std::string> ids;
    for (const auto& entry : fs::recursive_directory_iterator(full / "bundle")) {
      if (entry.is_regular_file() && entry.path().extension() == ".md") {
        ids.push_back(fs::relative(entry.path(), full / "bundle").replace_extension().generic_string());
      }
    }
    std::sort(ids.begin(), ids.end());
    std::set<std::string> keep;
    for (const auto& q : all.questions) {
      std::set<std::string> need;
      for (const auto& [id, grade] : q.relevant) {
        if (grade > 0 && !keep.count(id)) need.insert(id);
      }
      if (keep.size() + need.size() <= b.concepts) keep.insert(need.begin(), need.end());
    }
    for (const std::string& id : ids) {
      if (keep.size() >= b.concepts) break;
      keep.insert(id);
    }
    for (const std::string& id : keep) {
      const fs::path to = tmp / "bundle" / (id + ".md");
      fs::create_directories(to.parent_path());
      fs::copy_file(full / "bundle" / (id + ".md"), to);
    }
    datasets::QuestionSet subset;
    subset.name = b.name;
    for (const auto& q : all.questions) {
      datasets::Question kept = q;
      kept.relevant.clear();
      bool whole = true;
      for (const auto& [id, grade] : q.relevant) {
        if (keep.count(id)) {
          kept.relevant[id] = grade;
        } else if (grade > 0) {
          whole = false;
        }
      }
      if (whole) subset.questions.push_back(std::move(kept));
    }
    datasets::save_questions(subset, tmp / "questions.yaml");
    log_line(fmt::format("{}: {} documents, {} of {} questions kept whole", b.name, keep.size(),
                         subset.questions.size(), all.questions.size()));
  });
}

LoadedBundle load_bundle(const ExperimentSpec& spec, const BundleSource& b) {
  LoadedBundle out;
  out.source = b;
  fs::path questions;
  if (b.kind == BundleKind::path) {
    out.dir = b.path;
    questions = b.questions;
  } else if (b.kind == BundleKind::generated) {
    const fs::path folder = generated_bundle(spec, b);
    out.dir = folder / "bundle";
    questions = folder / "questions.yaml";
  } else {
    fs::path folder = converted_collection(spec, b);
    if (b.concepts > 0) folder = converted_subset(spec, b, folder);
    out.dir = folder / "bundle";
    questions = folder / "questions.yaml";
  }
  out.questions_file = questions;
  const auto start = Clock::now();
  out.bundle = std::make_unique<retrieval::Bundle>(retrieval::Bundle::load(out.dir));
  out.index = std::make_unique<retrieval::SearchIndex>(retrieval::SearchIndex::build(*out.bundle));
  out.questions = datasets::load_questions(questions);
  datasets::check_concepts(out.questions, *out.bundle);
  if (spec.max_questions > 0 && out.questions.questions.size() > spec.max_questions) {
    out.questions.questions.resize(spec.max_questions);
  }
  if (out.questions.name.empty()) out.questions.name = b.name;
  log_line(fmt::format("{}: {} concepts, {} questions, loaded and indexed in {:.0f} ms", b.name,
                       out.bundle->concepts().size(), out.questions.questions.size(), ms_since(start)));
  return out;
}

// ---------------------------------------------------------------- trials
std::vector<reports::PathConfig> path_configs(const ExperimentSpec& spec) {
  std::vector<reports::PathConfig> base;
  if (spec.context) {
    for (auto budget : spec.context->budget_tokens)
      for (int k : spec.context->k)
        for (int hops : spec.context->hops)
          for (const auto& strategy : spec.context->strategy) {
            reports::PathConfig c;
            c.kind = reports::PathKind::context;
            c.budget_tokens = budget;
            c.k = k;
            c.hops = hops;
            c.strategy = strategy;
            base.push_back(c);
          }
  }
  if (spec.agent) {
    std::size_t before = base.size();
    for (const auto& surface : spec.agent->surface) {
      const auto offered = agents::surface_tools(*agents::parse_surface(surface));
      for (const auto& tools : spec.agent->tools) {
        const bool fits = std::all_of(tools.begin(), tools.end(), [&](const std::string& t) {
          return std::find(offered.begin(), offered.end(), t) != offered.end();
        });
        if (!fits) continue;  // a tool list in the other surface's naming
        for (int turns : spec.agent->max_turns) {
          reports::PathConfig c;
          c.kind = reports::PathKind::agent;
          c.surface = surface;
          c.tools = tools;
          c.max_turns = turns;
          base.push_back(c);
        }
      }
    }
    if (base.size() == before) {
      throw InputError(fmt::format("{}: paths.agent: no tool list fits a surface: grafito tools are browse, search, open, "
                                   "follow, history, remember; harnessx tools are search_concepts, read_concept, get_neighbors",
                                   spec.file.string()));
    }
  }
  std::vector<reports::PathConfig> out;
  for (const auto& c : base) {
    for (const auto& model : spec.models) {
      // Cache models simulate a provider's cache; a real provider has its own.
      const std::vector<std::string> caches = model.name == "sim" ? spec.cache_models : std::vector<std::string>{"provider"};
      for (const auto& cache : caches) {
        reports::PathConfig m = c;
        m.model = model.label;
        m.cache_model = cache;
        out.push_back(m);
      }
    }
  }
  return out;
}

std::string trial_key(const ExperimentSpec& spec, const LoadedBundle& b, const datasets::Question& q,
                      const reports::PathConfig& c) {
  std::string judged;
  for (const auto& [id, grade] : q.relevant) judged += fmt::format("{}={};", id, grade);
  return stable_hash(fmt::format("v{}|{}|{}|{}|{}|{}|repeat={}|seed={}", reports::kSchemaVersion, b.source.identity(),
                                 q.id, q.text, judged, c.label(), c.repeat, spec.seed));
}

// The whole plan (every shard) is bounded before a trial is allocated. The
// spec already bounds the trials per question, so the product fits 64 bits.
void check_plan_size(const ExperimentSpec& spec, const std::vector<LoadedBundle>& bundles, std::size_t configs) {
  std::uint64_t questions = 0;
  for (const auto& b : bundles) questions += b.questions.questions.size();
  const std::uint64_t trials = questions * configs * static_cast<std::uint64_t>(spec.repeats);
  if (trials <= limits::planned_trials) return;
  throw InputError(fmt::format("{}: the plan has {} trials ({} questions x {} configurations x {} repeats), more than the "
                               "{} a run holds; lower repeats or max_questions, shorten the lists under paths:, or split "
                               "the sweep into several specs",
                               spec.file.empty() ? spec.name : spec.file.string(), trials, questions, configs,
                               spec.repeats, limits::planned_trials));
}

std::vector<PlannedTrial> plan_trials(const ExperimentSpec& spec, const std::vector<LoadedBundle>& bundles,
                                      const Shard& shard) {
  const auto configs = path_configs(spec);
  check_plan_size(spec, bundles, configs.size());
  std::vector<PlannedTrial> out;
  std::size_t position = 0;
  for (std::size_t bi = 0; bi < bundles.size(); ++bi) {
    for (const auto& q : bundles[bi].questions.questions) {
      for (const auto& config : configs) {
        for (int repeat = 0; repeat < spec.repeats; ++repeat, ++position) {
          if (position % shard.count != shard.index - 1) continue;
          PlannedTrial t;
          t.config = config;
          t.config.repeat = repeat;
          t.bundle = bi;
          t.bundle_name = bundles[bi].source.name;
          t.question_id = q.id;
          t.key = trial_key(spec, bundles[bi], q, t.config);
          t.estimated_input_tokens = estimate_input_tokens(t.config);
          out.push_back(std::move(t));
        }
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------- models and tools
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
  agents::ChatResponse chat(const agents::ChatRequest& request) override {
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
    return inner_->chat(request);
  }
  std::string name() const override { return inner_->name(); }
  double ms() const { return ms_; }

 private:
  std::unique_ptr<agents::ChatModel> inner_;
  TrialPacing& pacing_;
  bool pace_each_call_;
  double ms_ = 0;
  int calls_ = 0;
};

// A model shared by every trial (a replay: cassette, read-only once loaded).
class SharedModel : public agents::ChatModel {
 public:
  explicit SharedModel(agents::ChatModel& inner) : inner_(inner) {}
  agents::ChatResponse chat(const agents::ChatRequest& request) override { return inner_.chat(request); }
  std::string name() const override { return inner_.name(); }

 private:
  agents::ChatModel& inner_;
};

agents::Provider provider_of(const ModelSpec& m) {
  return m.name.starts_with("anthropic:") ? agents::Provider::anthropic : agents::Provider::openai;
}

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
  return agents::resolve_endpoint(provider_of(m), e);
}


// The tools of one agent trial: BundleTools with remember() answered by an
// error (bundles are shared by concurrent trials), and the ids search showed.
class TrialTools : public agents::Toolbox {
 public:
  explicit TrialTools(SharedTools& shared) : shared_(shared) {}
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
    if (result.error.empty() && (name == "search" || name == "search_concepts")) note_hits(result.content);
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
      if (hit.contains(field) && hit[field].is_string()) retrieved_.push_back(hit[field].get<std::string>());
    }
  }
  SharedTools& shared_;
  std::vector<std::string> retrieved_;
  double ms_ = 0;
};

// Concept ids the answer cites: bracketed ids that name a concept.
std::vector<std::string> cited_ids(const std::string& answer, const retrieval::Bundle& bundle) {
  return reports::cited_ids(answer, [&](const std::string& id) { return bundle.find(id) != nullptr; });
}

reports::TurnRecord turn_from_usage(const agents::Usage& usage) {
  reports::TurnRecord t;
  t.input_tokens = usage.input_tokens;
  t.cached_tokens = usage.cached_input_tokens;
  t.cache_write_tokens = usage.cache_write_tokens;
  t.output_tokens = usage.output_tokens;
  return t;
}

void add_evidence(reports::TrialRecord& r, const datasets::Question& q, const std::vector<std::string>& reached,
                  const retrieval::Bundle& bundle) {
  const reports::Judgments judged(q.relevant.begin(), q.relevant.end());
  r.evidence_recall = reports::evidence_recall(judged, reached);
  r.citations = cited_ids(r.answer, bundle);
  const auto scores = reports::citation_scores(judged, r.citations);
  if (scores.precision) r.measures.push_back({"citation_precision", *scores.precision});
  if (scores.recall) r.measures.push_back({"citation_recall", *scores.recall});
}

void run_context_trial(reports::TrialRecord& r, LoadedBundle& b, const datasets::Question& q, agents::ChatModel& model,
                       const ModelSpec& settings, const retrieval::TokenCounter& counter, double& retrieval_ms) {
  retrieval::ContextOptions options;
  options.k = static_cast<std::size_t>(*r.config.k);
  options.expand_hops = *r.config.hops;
  options.budget_tokens = static_cast<std::size_t>(*r.config.budget_tokens);
  options.counter = &counter;
  options.strategy = r.config.strategy == "weaver" ? retrieval::PackStrategy::weaver : retrieval::PackStrategy::grafito;
  const auto start = Clock::now();
  const retrieval::ContextPack pack = retrieval::pack_context(*b.bundle, *b.index, q.text, options);
  retrieval_ms = ms_since(start);
  std::vector<std::string> packed_ids;
  for (const auto& c : pack.concepts) {
    packed_ids.push_back(c.id);
    const std::string reason = c.reason == retrieval::PackReason::seed ? "seed" : fmt::format("via {} from {}", c.relation, c.from);
    r.packed.push_back({c.id, static_cast<std::int64_t>(c.tokens), reason});
    if (c.reason == retrieval::PackReason::seed) r.retrieved_ids.push_back(c.id);
  }
  r.context_tokens = static_cast<std::int64_t>(pack.tokens);
  // As in the agent loop, the request names no model: the ChatModel knows
  // which one it is, so a cassette or cache entry holds for any label.
  agents::ChatRequest request;
  request.messages.push_back({agents::Role::system, std::string(agents::kContextSystemPrompt), {}, {}, {}});
  request.messages.push_back({agents::Role::user, agents::context_user_message(pack.text, q.text), {}, {}, {}});
  if (settings.max_output_tokens) request.max_tokens = *settings.max_output_tokens;
  request.temperature = settings.temperature;
  const agents::ChatResponse response = model.chat(request);
  reports::TurnRecord turn = turn_from_usage(response.usage);
  turn.new_input_tokens = turn.input_tokens;  // the first call sends everything for the first time
  r.turns.push_back(turn);
  r.answer = response.message.content;
  add_evidence(r, q, packed_ids, *b.bundle);
}

void run_agent_trial(reports::TrialRecord& r, LoadedBundle& b, const datasets::Question& q, agents::ChatModel& model,
                     const ModelSpec& settings, const retrieval::TokenCounter& counter, double& retrieval_ms) {
  TrialTools tools(b.tools_for(r.config));
  agents::AgentOptions options;
  options.max_turns = *r.config.max_turns;
  options.counter = &counter;
  if (settings.max_output_tokens) options.max_tokens = *settings.max_output_tokens;
  if (settings.temperature) options.temperature = settings.temperature;
  const agents::AgentRun run = agents::run_agent(model, tools, q.text, options);
  retrieval_ms = tools.ms();
  const agents::RunSummary summary = agents::summary(run);
  for (std::size_t i = 0; i < run.turns.size(); ++i) {
    reports::TurnRecord turn = turn_from_usage(run.turns[i].usage);
    if (i < summary.new_input_per_turn.size()) turn.new_input_tokens = summary.new_input_per_turn[i];
    turn.dropped_tool_calls = static_cast<std::int64_t>(run.turns[i].dropped_tool_calls);
    for (const auto& call : run.tool_calls) {
      if (call.turn != run.turns[i].turn) continue;
      turn.tool_calls.push_back({call.name, call.arguments, static_cast<std::int64_t>(call.result_bytes), call.error, call.repeated});
    }
    r.turns.push_back(std::move(turn));
  }
  r.retrieved_ids = tools.retrieved();
  r.opened_ids = agents::opened_concepts(run, *b.bundle);
  r.answer = run.answer;
  if (run.stop == agents::AgentStop::model_error) {
    r.error = "model error: " + run.error;
    r.error_class = agents::to_string(run.failure);
  }
  add_evidence(r, q, r.opened_ids, *b.bundle);
}

// ---------------------------------------------------------------- progress
class ProgressReport {
 public:
  ProgressReport(Progress style, std::size_t total) : total_(total), start_(Clock::now()) {
    bar_ = style == Progress::bar || (style == Progress::automatic && ::isatty(STDERR_FILENO));
    quiet_ = style == Progress::quiet;
  }
  void update(std::size_t done, std::int64_t tokens) {
    if (quiet_) return;
    const double seconds = std::chrono::duration<double>(Clock::now() - start_).count();
    const double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0.0;
    if (bar_) {
      constexpr std::size_t width = 30;
      const std::size_t filled = total_ ? done * width / total_ : width;
      std::fprintf(stderr, "\r[%s%s] %zu/%zu trials  %.1f trials/s  %s input tokens ", std::string(filled, '#').c_str(),
                   std::string(width - filled, '.').c_str(), done, total_, rate, fmt::format("{}", tokens).c_str());
      if (done == total_) std::fputc('\n', stderr);
      return;
    }
    // Plain lines: at most one every two seconds, and the last one.
    if (done != total_ && seconds - last_line_ < 2.0) return;
    last_line_ = seconds;
    log_line(fmt::format("{}/{} trials, {:.1f} trials/s, {} input tokens", done, total_, rate, tokens));
  }
 private:
  std::size_t total_;
  Clock::time_point start_;
  bool bar_ = false;
  bool quiet_ = false;
  double last_line_ = -10.0;
};

// ---------------------------------------------------------------- manifest
std::string command_output(const std::string& command) {
  std::string out;
  if (std::FILE* pipe = ::popen(command.c_str(), "r")) {
    char buffer[256];
    while (std::fgets(buffer, sizeof buffer, pipe)) out += buffer;
    ::pclose(pipe);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

// ---------------------------------------------------------------- inputs
std::string file_sha256(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("cannot read {} to hash it", path.string()));
  std::ostringstream text;
  text << in.rdbuf();
  return retrieval::sha256_hex(text.str());
}

// The content hash of a bundle folder: SHA-256 over "path\0sha256\n" of every
// file the loader reads (hidden names skipped, symlinks not followed), in
// path order.
std::string folder_sha256(const fs::path& dir) {
  std::vector<std::pair<std::string, fs::path>> files;
  auto it = fs::recursive_directory_iterator(dir);
  for (auto end = fs::recursive_directory_iterator(); it != end; ++it) {
    const std::string name = it->path().filename().string();
    if (name.starts_with(".")) {
      if (it->is_directory()) it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file() && !it->is_symlink()) files.emplace_back(fs::relative(it->path(), dir).generic_string(), it->path());
  }
  std::sort(files.begin(), files.end());
  std::string listing;
  for (const auto& [relative, path] : files) listing += relative + '\0' + file_sha256(path) + '\n';
  return retrieval::sha256_hex(listing);
}

std::vector<reports::InputHash> input_hashes(const std::vector<LoadedBundle>& bundles, const fs::path& pricing_file) {
  std::vector<reports::InputHash> out;
  for (const auto& b : bundles) {
    out.push_back({"bundle", b.source.name, folder_sha256(b.dir)});
    out.push_back({"questions", b.source.name, file_sha256(b.questions_file)});
  }
  for (const auto& encoding : retrieval::encoding_specs()) {
    if (encoding.name == kCounter) out.push_back({"tokenizer", encoding.name, encoding.sha256});
  }
  out.push_back({"pricing", pricing_file.string(), file_sha256(pricing_file)});
  return out;
}

// ---------------------------------------------------------------- manifest
reports::RunManifest make_manifest(const ExperimentSpec& spec, const reports::PricingTable& pricing,
                                   std::vector<reports::InputHash> inputs) {
  reports::RunManifest m;
  m.date = utc_now("%Y-%m-%dT%H:%M:%SZ");
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  m.host = host;
  m.git_sha = command_output(fmt::format("git -C '{}' rev-parse HEAD 2>/dev/null", OKFBENCH_SOURCE_DIR));
  if (m.git_sha.empty()) m.git_sha = "unknown";
  m.build_type = OKFBENCH_BUILD_TYPE;
  m.okfbench_version = "0.1.0";
  m.spec_path = spec.file.string();
  m.spec_hash = spec.hash;
  for (const auto& model : spec.models) {
    std::string endpoint;
    if (!model.replay.empty()) {
      endpoint = "replay:" + model.replay.string();
    } else if (model.calls_provider()) {
      endpoint = agents::recorded_base_url(provider_of(model), model.base_url);
    }
    m.models.push_back({model.label, endpoint});
    if (const reports::ModelPrice* price = pricing.find(model.label)) m.prices.push_back({model.label, *price});
  }
  if (spec.judge) {
    const bool listed = std::any_of(m.prices.begin(), m.prices.end(), [&](const auto& p) { return p.model == spec.judge->model; });
    const reports::ModelPrice* price = pricing.find(spec.judge->model);
    if (price && !listed) m.prices.push_back({spec.judge->model, *price});
  }
  m.cache_models = spec.cache_models;
  m.seeds.push_back(spec.seed);
  for (const auto& b : spec.bundles) {
    if (b.kind == BundleKind::generated && std::find(m.seeds.begin(), m.seeds.end(), b.seed) == m.seeds.end()) m.seeds.push_back(b.seed);
  }
  m.inputs = std::move(inputs);
  return m;
}

// Inputs whose content differs from what the run started with. The pricing
// table is not one of them: prices are compared model by model.
std::vector<std::string> changed_inputs(const std::vector<reports::InputHash>& before, const std::vector<reports::InputHash>& now) {
  std::vector<std::string> out;
  for (const auto& old : before) {
    if (old.kind == "pricing") continue;
    for (const auto& fresh : now) {
      if (fresh.kind == old.kind && fresh.name == old.name && fresh.sha256 != old.sha256) {
        out.push_back(fmt::format("{} {} (sha256 {}... then, {}... now)", old.kind, old.name, old.sha256.substr(0, 12),
                                  fresh.sha256.substr(0, 12)));
      }
    }
  }
  return out;
}

// The manifest of the folder. Resuming keeps the stored one: another spec, or
// the same spec over bundles, questions or a vocabulary whose content
// changed, is refused; prices that changed are kept as they were recorded
// (with a warning) so the run is never re-priced halfway.
reports::RunManifest open_manifest(const reports::RunManifest& fresh, const fs::path& dir,
                                   const reports::PricingTable& pricing) {
  const fs::path path = dir / "manifest.json";
  if (!fs::exists(path)) {
    reports::write_text_atomically(path, reports::manifest_to_json_text(fresh));
    return fresh;
  }
  reports::RunManifest existing = reports::read_manifest(path);
  if (existing.schema_version != reports::kSchemaVersion) {
    // Trial keys include the schema version: resuming would run every trial again beside the old records.
    throw InputError(fmt::format("{} holds a run written with record schema {} (this okfbench writes {}): "
                                 "`okfbench report` still reads it; pass a new --out folder to run again",
                                 dir.string(), existing.schema_version, reports::kSchemaVersion));
  }
  if (existing.spec_hash != fresh.spec_hash) {
    throw InputError(fmt::format("{} holds a run of another spec (hash {}, this one is {}): resume it with the same spec "
                                 "and --set values, or pass a new --out folder",
                                 dir.string(), existing.spec_hash, fresh.spec_hash));
  }
  const auto changed = changed_inputs(existing.inputs, fresh.inputs);
  if (!changed.empty()) {
    throw InputError(fmt::format("{} holds trials computed on other data: {} changed since the run started; pass a new "
                                 "--out folder (or restore the data) so old and new results do not mix",
                                 dir.string(), fmt::join(changed, ", ")));
  }
  const auto repriced = reports::repriced_models(pricing, existing.prices);
  if (!repriced.empty()) {
    log_line(fmt::format("warning: the pricing table or the spec now prices {} differently; this run keeps the prices "
                         "recorded in {} when it started",
                         fmt::join(repriced, ", "), path.string()));
  }
  return existing;
}

// ---------------------------------------------------------------- the pool
// A trial to run: a new one, or a stored failure to run again.
struct Todo {
  std::size_t trial = 0;  // index into the planned trials
  int runs_before = 0;    // 0 for a new trial
};

struct RunState {
  RunState(const ExperimentSpec& spec_, const RunOptions& options_, std::vector<LoadedBundle>& bundles_,
           const std::vector<PlannedTrial>& trials_, ResultStore& store_, const reports::PricingTable& pricing_,
           const retrieval::TokenCounter& counter_, std::size_t to_run)
      : spec(spec_), options(options_), bundles(bundles_), trials(trials_), store(store_), pricing(pricing_),
        counter(counter_),
        pacer(spec_.requests_per_minute, spec_.tokens_per_minute,
              options_.pacing_clock ? *options_.pacing_clock : system_pacing_clock()),
        progress(options_.progress, to_run) {}
  const ExperimentSpec& spec;
  const RunOptions& options;
  std::vector<LoadedBundle>& bundles;
  const std::vector<PlannedTrial>& trials;
  ResultStore& store;
  const reports::PricingTable& pricing;
  const retrieval::TokenCounter& counter;
  std::vector<reports::Grader> graders;
  Pacer pacer;
  ProgressReport progress;
  std::map<std::string, const ModelSpec*> models;                          // by label
  std::map<std::string, agents::Endpoint> endpoints;                       // by label, provider models
  std::map<std::string, std::unique_ptr<agents::ReplayModel>> cassettes;  // by label, replay: models
  std::vector<std::string> secrets;  // keys and header values, redacted from cassettes and the response cache
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex mutex;  // guards the figures below
  std::size_t done = 0;
  std::size_t failed = 0;
  std::size_t unpriced = 0;
  double spent = 0;
  std::int64_t tokens = 0;
  std::exception_ptr fatal;  // a failure to store a result: the run stops and rethrows it
};

// Grades a finished trial with the run's graders; the judge reads the
// relevant concepts' text as its reference.
void grade_trial(reports::TrialRecord& r, const LoadedBundle& b, const datasets::Question& q,
                 const std::vector<reports::Grader>& graders) {
  reports::GradeInput in;
  in.question_id = q.id;
  in.question = q.text;
  in.relevant = reports::Judgments(q.relevant.begin(), q.relevant.end());
  in.answer_facts = q.answer_facts;
  in.answer = r.answer;
  in.citations = r.citations;
  in.end = reports::trial_end(r);
  const bool judged = std::any_of(graders.begin(), graders.end(), [](const reports::Grader& g) { return g.name == "judge"; });
  for (const auto& [id, grade] : q.relevant) {
    const retrieval::Concept* c = judged && grade > 0 ? b.bundle->find(id) : nullptr;
    if (c) in.references.push_back({id, c->title + "\n\n" + c->body});
  }
  reports::Grading grading = reports::grade_all(graders, in);
  r.grades = std::move(grading.grades);
  r.judge_usage = std::move(grading.judge_usage);
}

const datasets::Question& find_question(const LoadedBundle& b, const std::string& id) {
  const datasets::Question* q = b.questions.find(id);
  if (!q) throw InputError(fmt::format("question {} vanished from {}", id, b.questions.source));
  return *q;
}

// The model stack of one trial, innermost first: the model itself (sim, a
// provider, a replay), the response cache (--cache-db, provider models), the
// recorder (--record, one cassette per trial) and PacedModel outermost.
std::unique_ptr<PacedModel> make_trial_model(RunState& s, const PlannedTrial& t, TrialPacing& pacing) {
  const ModelSpec& m = *s.models.at(t.config.model);
  std::unique_ptr<agents::ChatModel> model;
  if (m.name == "sim") {
    agents::SimOptions options;
    options.seed = s.spec.seed + static_cast<std::uint64_t>(t.config.repeat);
    options.cache = agents::parse_cache_kind(t.config.cache_model);
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
    const std::string base_url = e.base_url;
    if (provider_of(m) == agents::Provider::anthropic) {
      model = std::make_unique<agents::AnthropicModel>(std::move(e));
    } else {
      model = std::make_unique<agents::OpenAIModel>(std::move(e));
    }
    if (!s.options.cache_db.empty()) {
      model = std::make_unique<agents::CachingModel>(std::move(model), s.options.cache_db, base_url, t.config.repeat, s.secrets);
    }
  }
  if (!s.options.record_dir.empty()) {
    const fs::path cassette = s.options.record_dir / (t.key + ".jsonl");
    std::error_code ec;
    fs::remove(cassette, ec);  // a trial run again is recorded afresh
    model = std::make_unique<agents::RecordingModel>(std::move(model), cassette, s.secrets);
  }
  return std::make_unique<PacedModel>(std::move(model), pacing, m.name == "sim");
}

reports::TrialRecord run_trial(RunState& s, const PlannedTrial& t) {
  LoadedBundle& b = s.bundles[t.bundle];
  const datasets::Question& q = find_question(b, t.question_id);
  const ModelSpec& settings = *s.models.at(t.config.model);
  reports::TrialRecord r;
  r.trial_key = t.key;
  r.bundle = t.bundle_name;
  r.concept_count = static_cast<std::int64_t>(b.bundle->concepts().size());
  r.question_set = b.questions.name;
  r.question_id = q.id;
  r.config = t.config;
  const auto start = Clock::now();
  TrialPacing pacing{s.pacer, s.counter,
                     start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(settings.trial_deadline_seconds)),
                     settings.trial_deadline_seconds};
  double retrieval_ms = 0;
  try {
    const std::unique_ptr<PacedModel> model = make_trial_model(s, t, pacing);
    if (t.config.kind == reports::PathKind::context) {
      run_context_trial(r, b, q, *model, settings, s.counter, retrieval_ms);
    } else {
      run_agent_trial(r, b, q, *model, settings, s.counter, retrieval_ms);
    }
    r.timings.model_ms = model->ms();
  } catch (const std::exception& e) {
    r.error = e.what();
    r.error_class = agents::to_string(agents::failure_of(e));
  }
  r.timings.total_ms = ms_since(start);
  r.timings.retrieval_ms = retrieval_ms;
  grade_trial(r, b, q, s.graders);
  return r;
}

// What the judge of a trial cost; 0 without a judge or a price for it. The
// cost cap counts it (it is money spent), reports never add it to the path.
double judge_spend(const reports::TrialRecord& r, const reports::PricingTable& pricing) {
  return r.judge_usage ? reports::judge_cost(*r.judge_usage, pricing).value_or(0.0) : 0.0;
}

void record_finished(RunState& s, reports::TrialRecord r, int runs_before) {
  if (runs_before > 0) {
    r.runs = runs_before + 1;
    s.store.replace(r);
  } else {
    s.store.add(r);
  }
  const auto cost = reports::trial_cost(r, s.pricing);
  const double judged = judge_spend(r, s.pricing);
  std::lock_guard lock(s.mutex);
  ++s.done;
  if (!r.error.empty()) ++s.failed;
  s.spent += judged;
  if (cost.dollars) {
    s.spent += *cost.dollars;
  } else {
    ++s.unpriced;
  }
  for (const auto& turn : r.turns) s.tokens = saturating_add(s.tokens, turn.input_tokens.value_or(0));
  if (s.spec.cost_cap_usd && s.spent >= *s.spec.cost_cap_usd) s.stop = true;
  s.progress.update(s.done, s.tokens);
}

// Runs trials until none are left or the run stops. A failure to store a
// result (a full disk) stops every worker; run_experiment rethrows it.
void worker(RunState& s, const std::vector<Todo>& todo) {
  try {
    for (std::size_t i = s.next++; i < todo.size() && !s.stop; i = s.next++) {
      record_finished(s, run_trial(s, s.trials[todo[i].trial]), todo[i].runs_before);
    }
  } catch (...) {
    std::lock_guard lock(s.mutex);
    if (!s.fatal) s.fatal = std::current_exception();
    s.stop = true;
  }
}

// Whether a stored record is a failure that this run should try again.
bool run_again(const reports::TrialRecord& r, const RunOptions& options) {
  if (r.error.empty()) return false;
  if (options.retry_failed) return true;
  return r.error_class == "transient" && r.runs < kMaxTrialRuns;
}

// The pricing of this run before any manifest: the table, a spec's own
// prices, and a labelled model priced as the model it names.
reports::PricingTable run_pricing(const ExperimentSpec& spec) {
  reports::PricingTable pricing = reports::PricingTable::load_default();
  for (const auto& m : spec.models) {
    if (m.price) {
      pricing.set_price(m.label, *m.price);
    } else if (m.label != m.name) {
      if (const reports::ModelPrice* price = pricing.find(m.name)) pricing.set_price(m.label, *price);
    }
  }
  return pricing;
}

// A cost cap is only a cap when every model that spends money has a price.
void check_prices(const ExperimentSpec& spec, const reports::PricingTable& pricing, bool allow_unpriced) {
  std::vector<std::string> unpriced;
  for (const auto& m : spec.models) {
    if (m.calls_provider() && !pricing.find(m.label)) unpriced.push_back(m.label);
  }
  if (spec.judge && spec.judge->model != "sim" && !pricing.find(spec.judge->model)) {
    unpriced.push_back(spec.judge->model + " (the judge)");
  }
  if (unpriced.empty()) return;
  if (spec.cost_cap_usd && !allow_unpriced) {
    throw UsageError(fmt::format("the cost cap of ${} cannot be kept: no price for {} (the pricing table has no row for "
                                 "it); give the model a price: {{input_per_mtok: ..., output_per_mtok: ...}} in the "
                                 "spec, or pass --allow-unpriced to run with its spend uncounted",
                                 *spec.cost_cap_usd, fmt::join(unpriced, ", ")));
  }
  log_line(fmt::format("warning: no price for {}: its trials cost n/a{}", fmt::join(unpriced, ", "),
                       spec.cost_cap_usd ? " and do not count against the cost cap" : ""));
}

// Resolves each provider model once before anything runs, so an unusable key
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
void prepare_models(RunState& s, std::map<std::string, agents::Endpoint> endpoints) {
  s.endpoints = std::move(endpoints);
  for (const auto& m : s.spec.models) {
    s.models[m.label] = &m;
    if (!m.cassette.empty()) s.cassettes[m.label] = std::make_unique<agents::ReplayModel>(m.cassette);
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

double judge_sum(const std::vector<reports::TrialRecord>& records, const reports::PricingTable& pricing) {
  double sum = 0;
  for (const auto& r : records) sum += judge_spend(r, pricing);
  return sum;
}

std::vector<FailureGroup> group_failures(const std::vector<reports::TrialRecord>& records) {
  std::map<std::pair<std::string, std::string>, std::size_t> counts;
  for (const auto& r : records) {
    if (!r.error.empty()) ++counts[{r.error_class.empty() ? "permanent" : r.error_class, r.error}];
  }
  std::vector<FailureGroup> out;
  for (const auto& [key, count] : counts) out.push_back({key.second, key.first, count});
  std::stable_sort(out.begin(), out.end(), [](const FailureGroup& a, const FailureGroup& b) { return a.count > b.count; });
  return out;
}

// The priced spend of `records` (their paths; judges apart, judge_sum);
// `unpriced` counts the trials whose cost is unknown.
double priced_sum(const std::vector<reports::TrialRecord>& records, const reports::PricingTable& pricing, std::size_t* unpriced) {
  double sum = 0;
  for (const auto& r : records) {
    if (auto cost = reports::trial_cost(r, pricing).dollars) {
      sum += *cost;
    } else if (unpriced) {
      ++*unpriced;
    }
  }
  return sum;
}

fs::path default_out_dir() { return fs::path("okfbench-out") / utc_now("%Y%m%dT%H%M%SZ"); }

}  // namespace

Shard parse_shard(std::string_view text) {
  const auto slash = text.find('/');
  const std::string_view index = text.substr(0, slash);
  const std::string_view count = slash == std::string_view::npos ? std::string_view() : text.substr(slash + 1);
  // Each shard runs at least one trial of a full plan, so N is bounded by it.
  const Parsed<std::size_t> n = parse_integer(count, IntegerRange<std::size_t>{1, limits::planned_trials});
  if (!n.value) throw UsageError(fmt::format("--shard {}: expected K/N with N {}", text, describe(IntegerRange<std::size_t>{1, limits::planned_trials})));
  const Parsed<std::size_t> k = parse_integer(index, IntegerRange<std::size_t>{1, *n.value});
  if (!k.value) throw UsageError(fmt::format("--shard {}: expected K/N with K {}", text, describe(IntegerRange<std::size_t>{1, *n.value})));
  return Shard{*k.value, *n.value};
}

std::int64_t estimate_input_tokens(const reports::PathConfig& config) {
  // Fitted to the default experiment with sim (docs/runner.md): a context
  // pack fills about 90% of its budget; sim's agent answers in 4 calls with
  // browse/follow/history available and in 3 with search and open alone.
  if (config.kind == reports::PathKind::context) return config.budget_tokens.value_or(2000) * 9 / 10 + 150;
  const auto tools = static_cast<std::int64_t>(config.tools.size());
  const std::int64_t turns = std::min<std::int64_t>(config.max_turns.value_or(12), tools > 2 ? 4 : 3);
  const std::int64_t fixed = 225 + 71 * tools;  // system prompt and tool schemas, every call
  const std::int64_t growth = 300;              // tool results added per call
  return turns * fixed + growth * turns * (turns - 1) / 2;
}

RunResult run_experiment(const ExperimentSpec& spec, const RunOptions& options) {
  const auto start = Clock::now();
  RunResult result;
  result.out_dir = options.out_dir.empty() ? default_out_dir() : options.out_dir;
  // Checked before any bundle is built, so a run that cannot go ahead says so at once:
  // prices under a cap, every provider model's key and URL, the folder's lock.
  reports::PricingTable pricing = run_pricing(spec);
  std::optional<FileLock> lock;
  std::map<std::string, agents::Endpoint> endpoints;
  if (options.mode == Mode::run) {
    check_prices(spec, pricing, options.allow_unpriced);
    endpoints = resolve_endpoints(spec);
    std::error_code ec;
    fs::create_directories(result.out_dir, ec);
    if (ec) throw InputError(fmt::format("cannot create the output folder {}: {}", result.out_dir.string(), ec.message()));
    lock = FileLock::acquire(result.out_dir / "okfbench.lock", FileLock::Wait::no,
                             "another okfbench run or merge is writing this folder; wait for it to finish or pass another --out");
  }
  std::vector<LoadedBundle> bundles;
  for (const auto& source : spec.bundles) bundles.push_back(load_bundle(spec, source));
  const std::vector<PlannedTrial> trials = plan_trials(spec, bundles, options.shard);
  result.planned = trials.size();
  for (const auto& t : trials) result.estimated_input_tokens += t.estimated_input_tokens;
  if (options.mode == Mode::dry_run) {
    result.setup_seconds = std::chrono::duration<double>(Clock::now() - start).count();
    result.trials = trials;
    return result;
  }
  const reports::RunManifest manifest = open_manifest(
      make_manifest(spec, pricing, input_hashes(bundles, reports::PricingTable::default_path())), result.out_dir, pricing);
  pricing = reports::with_recorded_prices(std::move(pricing), manifest.prices);
  result.setup_seconds = std::chrono::duration<double>(Clock::now() - start).count();

  ResultStore store = ResultStore::open(result.out_dir);
  const std::vector<reports::TrialRecord> stored_records = store.records();
  const std::vector<reports::TrialRecord> superseded = store.superseded();
  std::map<std::string, const reports::TrialRecord*> stored;
  for (const auto& r : stored_records) stored.emplace(r.trial_key, &r);
  std::vector<Todo> todo;
  for (std::size_t i = 0; i < trials.size(); ++i) {
    const auto it = stored.find(trials[i].key);
    if (it == stored.end()) {
      todo.push_back({i, 0});
    } else if (run_again(*it->second, options)) {
      todo.push_back({i, it->second->runs});
      ++result.retried;
    }
  }
  result.already_stored = trials.size() - (todo.size() - result.retried);
  const auto counter = retrieval::make_counter(kCounter);
  RunState state(spec, options, bundles, trials, store, pricing, *counter, todo.size());
  std::optional<JudgeSettings> judge;
  if (spec.judge) judge = JudgeSettings{spec.judge->model, spec.judge->votes, spec.cache_dir / "judge-responses.sqlite"};
  state.graders = make_graders(spec.graders, judge);
  prepare_models(state, std::move(endpoints));
  // Spend so far counts against the cap: the trials' and their judges',
  // failed runs that were replaced included.
  for (const auto* records : {&stored_records, &superseded}) {
    state.spent += priced_sum(*records, pricing, nullptr) + judge_sum(*records, pricing);
  }
  if (spec.cost_cap_usd && state.spent >= *spec.cost_cap_usd) state.stop = true;
  log_line(fmt::format("{} trials planned, {} already stored in {}, {} to run ({} of them failed before) on {} worker(s)",
                       trials.size(), result.already_stored, result.out_dir.string(), todo.size(), result.retried,
                       spec.concurrency));
  const auto pool_start = Clock::now();
  {
    std::vector<std::jthread> pool;
    const unsigned workers = std::max(1u, std::min<unsigned>(spec.concurrency, static_cast<unsigned>(std::max<std::size_t>(1, todo.size()))));
    for (unsigned w = 0; w < workers; ++w) pool.emplace_back([&state, &todo] { worker(state, todo); });
  }
  if (state.fatal) std::rethrow_exception(state.fatal);
  store.flush_jsonl();
  result.trial_seconds = std::chrono::duration<double>(Clock::now() - pool_start).count();
  result.ran = state.done;
  result.failed = state.failed;
  result.stopped_at_cost_cap = state.stop && state.done < todo.size();
  result.not_run = todo.size() - state.done;
  const std::vector<reports::TrialRecord> records = store.records();
  const std::vector<reports::TrialRecord> replaced = store.superseded();
  result.superseded_usd = priced_sum(replaced, pricing, nullptr);
  result.spent_usd = priced_sum(records, pricing, &result.unpriced) + result.superseded_usd;
  result.judge_spent_usd = judge_sum(records, pricing) + judge_sum(replaced, pricing);
  result.failures = group_failures(records);
  for (const auto& r : records) {
    if (r.error.empty()) continue;
    ++result.failures_remaining;
    if (r.error_class == "transient" && r.runs < kMaxTrialRuns) ++result.retryable;
  }
  result.headline = write_run_reports(manifest, records, pricing, result.out_dir);
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

std::string write_run_reports(const reports::RunManifest& manifest, const std::vector<reports::TrialRecord>& records,
                              const reports::PricingTable& pricing, const fs::path& dir) {
  const std::array formats = {reports::ReportFormat::markdown, reports::ReportFormat::json};
  reports::write_report_files(manifest, records, pricing, formats, dir);
  return reports::headline_markdown(reports::summarize(records, pricing));
}

}  // namespace okfbench::harness
