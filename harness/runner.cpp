#include "harness/runner.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <thread>

#include "agents/agent.hpp"
#include "agents/bundle_tools.hpp"
#include "agents/context_prompt.hpp"
#include "agents/provider_models.hpp"
#include "agents/sim_model.hpp"
#include "datasets/convert.hpp"
#include "datasets/generator.hpp"
#include "datasets/questions.hpp"
#include "harness/judge.hpp"
#include "harness/limits.hpp"
#include "harness/store.hpp"
#include "reports/graders.hpp"
#include "reports/measures.hpp"
#include "reports/pricing.hpp"
#include "reports/report_files.hpp"
#include "reports/summary.hpp"
#include "retrieval/context.hpp"
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

// Builds a cache entry in a temporary folder and renames it into place, so an
// interrupted build never leaves a half-written entry behind.
template <class Build>
fs::path cached_folder(const fs::path& cache_dir, const std::string& name, Build build) {
  const fs::path final_dir = cache_dir / name;
  if (fs::exists(final_dir / ".okfbench-complete")) return final_dir;
  const fs::path tmp = cache_dir / fmt::format(".{}.tmp-{}", name, ::getpid());
  fs::remove_all(tmp);
  fs::create_directories(cache_dir);
  build(tmp);
  std::FILE* marker = std::fopen((tmp / ".okfbench-complete").c_str(), "wb");
  if (marker) std::fclose(marker);
  std::error_code ec;
  fs::remove_all(final_dir, ec);  // an incomplete entry from an older run
  fs::rename(tmp, final_dir, ec);
  if (ec) {
    fs::remove_all(tmp);
    if (!fs::exists(final_dir / ".okfbench-complete")) {
      throw InputError(fmt::format("cannot create {}: {}", final_dir.string(), ec.message()));
    }
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
      const std::vector<std::string> caches = model == "sim" ? spec.cache_models : std::vector<std::string>{"provider"};
      for (const auto& cache : caches) {
        reports::PathConfig m = c;
        m.model = model;
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
// Spaces model calls evenly over all workers: at most `per_minute` per minute.
class RateLimiter {
 public:
  explicit RateLimiter(double per_minute) : interval_(per_minute > 0 ? 60.0 / per_minute : 0.0) {}
  void wait() {
    if (interval_ <= 0) return;
    Clock::time_point slot;
    {
      std::lock_guard lock(mutex_);
      const auto now = Clock::now();
      next_ = std::max(next_, now);
      slot = next_;
      next_ += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(interval_));
    }
    std::this_thread::sleep_until(slot);
  }

 private:
  double interval_;
  std::mutex mutex_;
  Clock::time_point next_{};
};

// Times and paces a trial's model calls.
class PacedModel : public agents::ChatModel {
 public:
  PacedModel(std::unique_ptr<agents::ChatModel> inner, RateLimiter& limiter) : inner_(std::move(inner)), limiter_(limiter) {}
  agents::ChatResponse chat(const agents::ChatRequest& request) override {
    limiter_.wait();
    const auto start = Clock::now();
    auto response = inner_->chat(request);
    ms_ += ms_since(start);
    return response;
  }
  std::string name() const override { return inner_->name(); }
  double ms() const { return ms_; }

 private:
  std::unique_ptr<agents::ChatModel> inner_;
  RateLimiter& limiter_;
  double ms_ = 0;
};

std::unique_ptr<agents::ChatModel> provider_model(const std::string& model) {
  const auto colon = model.find(':');
  const std::string provider = model.substr(0, colon);
  agents::Endpoint endpoint;
  endpoint.model = model.substr(colon + 1);
  if (provider == "openai") return std::make_unique<agents::OpenAIModel>(agents::resolve_endpoint(agents::Provider::openai, endpoint));
  if (provider == "anthropic") {
    return std::make_unique<agents::AnthropicModel>(agents::resolve_endpoint(agents::Provider::anthropic, endpoint));
  }
  throw UsageError(fmt::format("model \"{}\" is not supported by okfbench run; use sim, openai:MODEL or anthropic:MODEL", model));
}

std::unique_ptr<agents::ChatModel> make_trial_model(const reports::PathConfig& c, std::uint64_t seed,
                                                    const retrieval::TokenCounter& counter) {
  if (c.model == "sim") {
    agents::SimOptions options;
    options.seed = seed;
    options.cache = agents::parse_cache_kind(c.cache_model);
    return std::make_unique<agents::SimModel>(options, counter);
  }
  return provider_model(c.model);
}

// Resolves each provider model once before anything runs, so an unusable key
// or URL (a missing key, a line break in it) stops the run with its own exit
// code instead of failing every trial.
void check_models(const ExperimentSpec& spec) {
  for (const auto& model : spec.models)
    if (model != "sim") provider_model(model);
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
                       const retrieval::TokenCounter& counter, double& retrieval_ms) {
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
  agents::ChatRequest request;
  request.model = r.config.model;
  request.messages.push_back({agents::Role::system, std::string(agents::kContextSystemPrompt), {}, {}, {}});
  request.messages.push_back({agents::Role::user, agents::context_user_message(pack.text, q.text), {}, {}, {}});
  const agents::ChatResponse response = model.chat(request);
  reports::TurnRecord turn = turn_from_usage(response.usage);
  turn.new_input_tokens = turn.input_tokens;  // the first call sends everything for the first time
  r.turns.push_back(turn);
  r.answer = response.message.content;
  add_evidence(r, q, packed_ids, *b.bundle);
}

void run_agent_trial(reports::TrialRecord& r, LoadedBundle& b, const datasets::Question& q, agents::ChatModel& model,
                     const retrieval::TokenCounter& counter, double& retrieval_ms) {
  TrialTools tools(b.tools_for(r.config));
  agents::AgentOptions options;
  options.max_turns = *r.config.max_turns;
  options.counter = &counter;
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
  if (run.stop == agents::AgentStop::model_error) r.error = "model error: " + run.error;
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

reports::RunManifest make_manifest(const ExperimentSpec& spec) {
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
    if (model.starts_with("openai:")) endpoint = agents::recorded_base_url(agents::Provider::openai);
    if (model.starts_with("anthropic:")) endpoint = agents::recorded_base_url(agents::Provider::anthropic);
    m.models.push_back({model, endpoint});
  }
  m.cache_models = spec.cache_models;
  m.seeds.push_back(spec.seed);
  for (const auto& b : spec.bundles) {
    if (b.kind == BundleKind::generated && std::find(m.seeds.begin(), m.seeds.end(), b.seed) == m.seeds.end()) m.seeds.push_back(b.seed);
  }
  return m;
}

// The manifest of the folder: kept when resuming the same spec, refused for another.
reports::RunManifest open_manifest(const ExperimentSpec& spec, const fs::path& dir) {
  const fs::path path = dir / "manifest.json";
  if (fs::exists(path)) {
    reports::RunManifest existing = reports::read_manifest(path);
    if (existing.schema_version != reports::kSchemaVersion) {
      // Trial keys include the schema version: resuming would run every trial again beside the old records.
      throw InputError(fmt::format("{} holds a run written with record schema {} (this okfbench writes {}): "
                                   "`okfbench report` still reads it; pass a new --out folder to run again",
                                   dir.string(), existing.schema_version, reports::kSchemaVersion));
    }
    if (existing.spec_hash != spec.hash) {
      throw InputError(fmt::format("{} holds a run of another spec (hash {}, this one is {}): resume it with the same spec "
                                   "and --set values, or pass a new --out folder",
                                   dir.string(), existing.spec_hash, spec.hash));
    }
    return existing;
  }
  reports::RunManifest manifest = make_manifest(spec);
  fs::create_directories(dir);
  reports::write_text_atomically(path, reports::manifest_to_json_text(manifest));
  return manifest;
}

// ---------------------------------------------------------------- the pool
struct RunState {
  RunState(const ExperimentSpec& spec_, std::vector<LoadedBundle>& bundles_, const std::vector<PlannedTrial>& trials_,
           ResultStore& store_, const reports::PricingTable& pricing_, const retrieval::TokenCounter& counter_,
           Progress style, std::size_t to_run)
      : spec(spec_), bundles(bundles_), trials(trials_), store(store_), pricing(pricing_), counter(counter_),
        limiter(spec_.requests_per_minute), progress(style, to_run) {}
  const ExperimentSpec& spec;
  std::vector<LoadedBundle>& bundles;
  const std::vector<PlannedTrial>& trials;
  ResultStore& store;
  const reports::PricingTable& pricing;
  const retrieval::TokenCounter& counter;
  std::vector<reports::Grader> graders;
  RateLimiter limiter;
  ProgressReport progress;
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex mutex;  // guards the figures below
  std::size_t done = 0;
  std::size_t failed = 0;
  std::size_t unpriced = 0;
  double spent = 0;
  std::int64_t tokens = 0;
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

reports::TrialRecord run_trial(RunState& s, const PlannedTrial& t) {
  LoadedBundle& b = s.bundles[t.bundle];
  const datasets::Question& q = find_question(b, t.question_id);
  reports::TrialRecord r;
  r.trial_key = t.key;
  r.bundle = t.bundle_name;
  r.concept_count = static_cast<std::int64_t>(b.bundle->concepts().size());
  r.question_set = b.questions.name;
  r.question_id = q.id;
  r.config = t.config;
  const auto start = Clock::now();
  double retrieval_ms = 0;
  try {
    PacedModel model(make_trial_model(t.config, s.spec.seed + static_cast<std::uint64_t>(t.config.repeat), s.counter), s.limiter);
    if (t.config.kind == reports::PathKind::context) {
      run_context_trial(r, b, q, model, s.counter, retrieval_ms);
    } else {
      run_agent_trial(r, b, q, model, s.counter, retrieval_ms);
    }
    r.timings.model_ms = model.ms();
  } catch (const std::exception& e) {
    r.error = e.what();
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

void record_finished(RunState& s, const reports::TrialRecord& r) {
  s.store.add(r);
  const auto cost = reports::trial_cost(r, s.pricing);
  std::lock_guard lock(s.mutex);
  ++s.done;
  if (!r.error.empty()) ++s.failed;
  s.spent += judge_spend(r, s.pricing);
  if (cost.dollars) {
    s.spent += *cost.dollars;
  } else {
    ++s.unpriced;
  }
  for (const auto& turn : r.turns) s.tokens = saturating_add(s.tokens, turn.input_tokens.value_or(0));
  if (s.spec.cost_cap_usd && s.spent >= *s.spec.cost_cap_usd) s.stop = true;
  s.progress.update(s.done, s.tokens);
}

void worker(RunState& s, const std::vector<std::size_t>& todo) {
  for (std::size_t i = s.next++; i < todo.size() && !s.stop; i = s.next++) {
    record_finished(s, run_trial(s, s.trials[todo[i]]));
  }
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
  if (options.mode == Mode::run) check_models(spec);
  std::vector<LoadedBundle> bundles;
  for (const auto& source : spec.bundles) bundles.push_back(load_bundle(spec, source));
  const std::vector<PlannedTrial> trials = plan_trials(spec, bundles, options.shard);
  result.setup_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  result.planned = trials.size();
  for (const auto& t : trials) result.estimated_input_tokens += t.estimated_input_tokens;
  if (options.mode == Mode::dry_run) {
    result.trials = trials;
    return result;
  }
  const reports::RunManifest manifest = open_manifest(spec, result.out_dir);
  ResultStore store = ResultStore::open(result.out_dir);
  const std::set<std::string> stored = store.keys();
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < trials.size(); ++i) {
    if (!stored.count(trials[i].key)) todo.push_back(i);
  }
  result.already_stored = trials.size() - todo.size();
  const reports::PricingTable pricing = reports::PricingTable::load_default();
  const auto counter = retrieval::make_counter("o200k_base");
  RunState state(spec, bundles, trials, store, pricing, *counter, options.progress, todo.size());
  std::optional<JudgeSettings> judge;
  if (spec.judge) judge = JudgeSettings{spec.judge->model, spec.judge->votes, spec.cache_dir / "judge-responses.sqlite"};
  state.graders = make_graders(spec.graders, judge);
  for (const auto& r : store.records()) {  // spend so far counts against the cap
    if (auto cost = reports::trial_cost(r, pricing).dollars) state.spent += *cost;
    state.spent += judge_spend(r, pricing);
  }
  if (spec.cost_cap_usd && state.spent >= *spec.cost_cap_usd) state.stop = true;
  log_line(fmt::format("{} trials planned, {} already stored in {}, {} to run on {} worker(s)", trials.size(),
                       result.already_stored, result.out_dir.string(), todo.size(), spec.concurrency));
  const auto pool_start = Clock::now();
  {
    std::vector<std::jthread> pool;
    const unsigned workers = std::max(1u, std::min<unsigned>(spec.concurrency, static_cast<unsigned>(std::max<std::size_t>(1, todo.size()))));
    for (unsigned w = 0; w < workers; ++w) pool.emplace_back([&state, &todo] { worker(state, todo); });
  }
  result.trial_seconds = std::chrono::duration<double>(Clock::now() - pool_start).count();
  result.ran = state.done;
  result.failed = state.failed;
  result.stopped_at_cost_cap = state.stop && state.done < todo.size();
  const std::vector<reports::TrialRecord> records = store.records();
  result.spent_usd = 0;
  for (const auto& r : records) {
    if (auto cost = reports::trial_cost(r, pricing).dollars) {
      result.spent_usd += *cost;
    } else {
      ++result.unpriced;
    }
    result.judge_spent_usd += judge_spend(r, pricing);
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
