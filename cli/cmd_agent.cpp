// okfbench agent: run the agent loop over one bundle (or several, each tool then
// taking a `bundle` argument) and one question, printing
// each tool call as it happens and the run's summary line.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "agents/agent_json.hpp"
#include "agents/bundle_tools.hpp"
#include "agents/models.hpp"
#include "agents/multi_bundle_tools.hpp"
#include "cli/commands.hpp"
#include "cli/keep_until_exit.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "engine/bundle_source.hpp"
#include "engine/limits.hpp"
#include "engine/number_option.hpp"
#include "engine/search_flags.hpp"
#include "engine/selection_flags.hpp"
#include "engine/spec.hpp"
#include "engine/trial_model.hpp"
#include "reports/trial_metrics.hpp"
#include "retrieval/tokens.hpp"

namespace okfbench::cli {
namespace {
using nlohmann::json;

struct AgentArgs {
  std::vector<std::string> inputs;  // BUNDLE... QUESTION
  std::string model = "sim";
  std::string tools;  // comma-separated subset; "" = the whole surface
  std::string surface = "grafito";
  std::string profile = "okf";
  int max_turns = 12;
  // The same deadlines as a spec's model entry (engine/spec.hpp): a hung
  // server used to hold `agent` for 10-15 minutes.
  double connect_timeout_s = engine::kDefaultConnectTimeoutSeconds;
  double timeout_s = engine::kDefaultRequestTimeoutSeconds;
  double trial_timeout_s = engine::kDefaultTrialDeadlineSeconds;
  std::string cache_model = "none";
  std::string base_url;
  std::string api_key;
  std::size_t max_body_chars = agents::ToolsOptions{}.max_body_chars;
  std::size_t index_char_budget = agents::ToolsOptions{}.index_char_budget;
  std::uint64_t seed = 0;
  agents::SimOptions sim;  // the policy knobs of `--model sim`
  bool sim_no_follow = false;
  std::string record;
  std::string cache_db;
  bool verbose = false;
  bool stream = false;
  bool json = false;
  engine::SourceFlags git;
  RetrievalFlags retrieval;
  SelectionFlags selection;  // lessons and expertise profiles
};

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// `{"query": "slow query"}` as the seed prints it. Long values are cut, and a
// long call keeps only the field that names what it acts on, then "...".
std::string show_arguments(const std::string& arguments) {
  json args = json::parse(arguments, nullptr, false);
  if (!args.is_object()) return arguments.substr(0, 80);
  auto field = [](const std::string& key, const json& value) {
    std::string text = json_text(value);
    if (text.size() > 60) text = text.substr(0, 56) + "...\"";
    return json_text(json(key)) + ": " + text;
  };
  std::string all;
  for (auto it = args.begin(); it != args.end(); ++it) all += (all.empty() ? "" : ", ") + field(it.key(), it.value());
  if (all.size() <= 110) return "{" + all + "}";
  for (const char* key : {"concept_id", "path", "query", "layer"})
    if (args.contains(key)) return "{" + field(key, args[key]) + ", ...}";
  return "{" + all.substr(0, 100) + "...}";
}

std::string listing(const json& items, const char* id_key, std::size_t show) {
  std::string text;
  std::size_t n = 0;
  for (const json& item : items) {
    if (n++ == show) break;
    std::string id = item.value(id_key, item.value("path", std::string("?")));
    text += fmt::format("{}{} ({})", text.empty() ? "" : ", ", id, item.value("title", std::string()));
  }
  if (items.size() > show) text += fmt::format(", +{} more", items.size() - show);
  return text;
}

// One line that says what a tool call returned, as in the seed's worked example.
// New input per turn and re-sent input, as every report defines them
// (reports/trial_metrics.hpp) over the trial record of this run.
void add_input_split(json& summary, const agents::AgentRun& run) {
  reports::TrialRecord record;
  record.config.kind = reports::PathKind::agent;
  record.turns = engine::record_turns(run);
  json fresh = json::array();
  for (std::size_t i = 0; i < record.turns.size(); ++i) {
    const auto value = reports::turn_new_input(record, i);
    fresh.push_back(value ? json(*value) : json(nullptr));
  }
  summary["new_input_per_turn"] = fresh;
  const auto resent = reports::resent_tokens(record);
  summary["resent_input_tokens"] = resent ? json(static_cast<std::int64_t>(*resent)) : json(nullptr);
}

std::string describe(const agents::AgentToolCall& call, const std::string& result) {
  if (!call.error.empty()) return "error: " + call.error;
  json r = json::parse(result, nullptr, false);
  const std::string& n = call.name;
  if ((n == "search" || n == "search_concepts" || n == "follow") && r.is_array())
    return fmt::format("{} result(s){}{}", r.size(), r.empty() ? "" : ": ", listing(r, "id", 3));
  if (n == "open" && r.is_object())
    return fmt::format("{} - {} ({} link(s), {} citation(s))", r.value("id", ""), r.value("title", ""),
                       r["links"].size(), r["cites"].size());
  if (n == "read_concept") return fmt::format("{} ({} byte(s))", result.substr(0, result.find('\n')), result.size());
  if (n == "get_neighbors" && r.is_object())
    return fmt::format("{} outbound, {} backlink(s), {} unresolved", r["outbound"].size(), r["backlinks"].size(),
                       r["unresolved"].size());
  if (n == "browse" && r.is_object())
    return fmt::format("/{}: {} subdir(s), {} concept(s)", r.value("layer", ""), r["subdirs"].size(), r["concepts"].size());
  if (n == "history" && r.is_array()) return fmt::format("{} entr{}", r.size(), r.size() == 1 ? "y" : "ies");
  if (n == "remember" && r.is_object())
    return fmt::format("saved {}, linked to {}", r.value("saved", ""), json_text(r["links"]));
  return fmt::format("{} byte(s)", result.size());
}

// What the selection policy kept out of the tools' answers, as `context`
// reports it: "policy" and "excluded": [{"id", "reason"}].
void add_selection(json& out, const retrieval::Selection& selection) {
  out["policy"] = selection.policy;
  out["excluded"] = json::array();
  for (const retrieval::Exclusion& e : selection.excluded) out["excluded"].push_back({{"id", e.id}, {"reason", e.reason}});
}

void print_selection(const retrieval::Selection& selection) {
  std::printf("  policy: %s\n", selection.policy.c_str());
  for (const retrieval::Exclusion& e : selection.excluded)
    std::printf("  excluded: %s (%s)\n", e.id.c_str(), e.reason.c_str());
  std::printf("\n");
}

int run_agent_command(const AgentArgs& a) {
  std::optional<agents::Surface> surface = agents::parse_surface(a.surface);
  if (!surface) throw UsageError(fmt::format("unknown surface '{}': use grafito or harnessx", a.surface));
  agents::CacheKind cache = agents::parse_cache_kind(a.cache_model);

  retrieval::LoadOptions load;
  load.profile = profile_option(a.profile);
  const std::vector<std::string> wheres(a.inputs.begin(), a.inputs.end() - 1);
  const std::string& question = a.inputs.back();
  if (wheres.size() > 1 && a.retrieval.method != "bm25f")
    throw UsageError(fmt::format("--retrieval {} takes one bundle; several bundles are searched with bm25f",
                                 a.retrieval.method));
  if (wheres.size() > 1 && !retrieval::is_okf_or_repo(load.profile))
    throw UsageError(fmt::format("--profile {} takes one bundle: its policy names concepts by id",
                                 retrieval::to_string(load.profile)));
  engine::SourceBundles& loaded = keep_until_exit(engine::load_sources(wheres, a.git, load));
  for (std::size_t i = 0; i < wheres.size(); ++i)
    engine::require_concepts(*loaded.bundles[i], engine::shown_source(wheres[i]));
  retrieval::Bundle& bundle = *loaded.bundles.front();
  agents::ToolsOptions tools_options;
  tools_options.surface = *surface;
  tools_options.include = split_list(a.tools);
  tools_options.max_body_chars = a.max_body_chars;
  tools_options.index_char_budget = a.index_char_budget;
  tools_options.bundle_name = loaded.names.front();
  tools_options.selection = make_selection(bundle, a.selection);
  std::optional<retrieval::SearchIndex> index;
  std::unique_ptr<HybridRanking> ranking;
  std::optional<retrieval::Retriever> retriever;
  std::unique_ptr<agents::Toolbox> tools;
  const agents::MultiBundleTools* several = nullptr;
  if (wheres.size() == 1) {
    index.emplace(std::move(*loaded.indexes.front()));
    ranking = make_retrieval(bundle, a.retrieval);
    if (ranking) tools_options.retriever = &retriever.emplace(ranking->retriever(*index));
    tools = std::make_unique<agents::BundleTools>(bundle, tools_options, &*index);
  } else {
    std::vector<agents::ToolBundle> named;
    for (std::size_t i = 0; i < wheres.size(); ++i) named.push_back({loaded.names[i], loaded.bundles[i].get()});
    auto multi = std::make_unique<agents::MultiBundleTools>(std::move(named), tools_options);
    several = multi.get();
    tools = std::move(multi);
  }

  auto counter = retrieval::make_counter("o200k_base");
  agents::ModelOptions model_options;
  model_options.cache = cache;
  model_options.sim = a.sim;
  model_options.sim.seed = a.seed;
  if (a.sim_no_follow) model_options.sim.follow_links = agents::FollowLinks::no;
  model_options.counter = counter.get();
  model_options.endpoint.base_url = a.base_url;
  model_options.endpoint.api_key = a.api_key;
  model_options.endpoint.retry.connect_timeout_seconds = a.connect_timeout_s;
  model_options.endpoint.stream = a.stream;
  model_options.endpoint.retry.timeout_seconds = a.timeout_s;
  // Every model call of the question, retries and waits included, ends by then.
  model_options.endpoint.retry.deadline_at =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(a.trial_timeout_s));
  model_options.record = a.record;
  model_options.cache_db = a.cache_db;
  std::unique_ptr<agents::ChatModel> model = agents::make_model(a.model, model_options);

  FILE* log = a.json ? stderr : stdout;
  bool show_calls = !a.json || a.verbose;
  if (show_calls) std::fprintf(log, "Q: %s\n\n", question.c_str());
  agents::AgentOptions options;
  options.max_turns = a.max_turns;
  options.counter = counter.get();
  options.breakpoints = agents::breakpoints_for(cache);
  options.on_tool_call = [&](const agents::AgentToolCall& call, std::string_view result) {
    if (!show_calls) return;
    std::fprintf(log, "  -> %s(%s)\n     %s\n", call.name.c_str(), show_arguments(call.arguments).c_str(),
                 describe(call, std::string(result)).c_str());
    std::fflush(log);
  };
  agents::AgentRun run = agents::run_agent(*model, *tools, question, options);
  if (a.verbose) {
    for (const agents::AgentTurn& t : run.turns)
      std::fprintf(log, "  turn %d: %s in, %s cached, %s written, %s out\n", t.turn,
                   t.usage.input_tokens ? std::to_string(*t.usage.input_tokens).c_str() : "?",
                   t.usage.cached_input_tokens ? std::to_string(*t.usage.cached_input_tokens).c_str() : "?",
                   t.usage.cache_write_tokens ? std::to_string(*t.usage.cache_write_tokens).c_str() : "?",
                   t.usage.output_tokens ? std::to_string(*t.usage.output_tokens).c_str() : "?");
  }
  if (a.json) {
    json out = run;
    out["question"] = question;
    out["model"] = model->name();
    out["surface"] = a.surface;
    out["tools"] = json::array();
    for (const agents::ToolSpec& s : run.tools) out["tools"].push_back(s.name);
    if (several) {
      out["opened"] = json::array();
      for (const auto& [name, id] : several->opened(run)) out["opened"].push_back({{"bundle", name}, {"id", id}});
    } else {
      out["opened"] = agents::opened_concepts(run, bundle);
    }
    add_input_split(out["summary"], run);
    if (tools_options.selection) add_selection(out, *tools_options.selection);
    std::printf("%s\n", json_text(out, 2).c_str());
  } else {
    std::printf("  %s\n\n", agents::summary_line(run).c_str());
    if (tools_options.selection) print_selection(*tools_options.selection);
    if (run.stop == agents::AgentStop::answered) std::printf("A: %s\n", run.answer.c_str());
  }
  if (run.stop == agents::AgentStop::model_error) {
    std::fprintf(stderr, "okfbench: error: the model call failed: %s\n", run.error.c_str());
    return 1;
  }
  if (run.stop == agents::AgentStop::max_turns) {
    std::fprintf(stderr, "okfbench: no answer within %d turn(s); raise --max-turns\n", a.max_turns);
    return 1;
  }
  return 0;
}

}  // namespace

void add_agent_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<AgentArgs>();
  CLI::App* cmd = app.add_subcommand("agent", "Answer a question with the tool-calling agent loop over a bundle");
  cmd->add_option("bundle... question", args->inputs,
                  "Bundle folders or git URLs (with several, every tool takes a `bundle` argument and search "
                  "covers them all), then the question")
      ->required()
      ->expected(2, -1);
  cmd->add_option("--model", args->model, "sim, sim:PROFILE.yaml, openai:MODEL, anthropic:MODEL or replay:CASSETTE")->capture_default_str();
  cmd->add_option("--tools", args->tools, "Comma-separated subset of the surface's tools (default: all)");
  cmd->add_option("--surface", args->surface, "Tool naming: grafito or harnessx")->capture_default_str();
  cmd->add_option("--profile", args->profile,
                  "Bundle profile: okf, repo (plain markdown, wikilinks), lessons (lifecycle selection) or expertise "
                  "(expertise pack); the last two apply their selection policy to every tool")
      ->capture_default_str();
  cmd->add_option("--max-turns", args->max_turns, "Model calls before giving up")
      ->check(number_in(engine::limits::max_turns))
      ->capture_default_str();
  cmd->add_option("--connect-timeout-s", args->connect_timeout_s, "Seconds per connection attempt to the provider")
      ->check(number_in(engine::limits::model_timeout_seconds))
      ->capture_default_str();
  cmd->add_option("--timeout-s", args->timeout_s, "Seconds per HTTP attempt (a spec's request_timeout_seconds)")
      ->check(number_in(engine::limits::model_timeout_seconds))
      ->capture_default_str();
  cmd->add_option("--trial-timeout-s", args->trial_timeout_s,
                  "Seconds for all the question's model calls, retries and waits included (a spec's trial_deadline_seconds)")
      ->check(number_in(engine::limits::model_timeout_seconds))
      ->capture_default_str();
  cmd->add_option("--cache-model", args->cache_model,
                  "Prompt cache the sim simulates (none, openai, anthropic); anthropic also sends cache breakpoints")
      ->capture_default_str();
  cmd->add_option("--base-url", args->base_url, "Provider base URL (else OPENAI_BASE_URL / ANTHROPIC_BASE_URL)");
  cmd->add_option("--api-key", args->api_key,
                  "Provider API key (else OPENAI_API_KEY / ANTHROPIC_API_KEY; the environment keeps it out of `ps`). "
                  "Never written to any file");
  cmd->add_option("--max-body-chars", args->max_body_chars, "Body budget of open/read_concept")
      ->check(number_in(engine::limits::max_body_chars))
      ->capture_default_str();
  cmd->add_option("--index-char-budget", args->index_char_budget,
                  "Root index.md characters in the harnessx system prompt")
      ->check(number_in(engine::limits::index_char_budget))
      ->capture_default_str();
  cmd->add_option("--seed", args->seed, "Sim variation seed (0 = none)")
      ->check(number_in(engine::limits::seed))
      ->capture_default_str();
  cmd->add_option("--sim-search-k", args->sim.search_k, "Sim: hits it asks search for")
      ->check(number_in(engine::limits::sim_search_k))
      ->capture_default_str();
  cmd->add_option("--sim-max-open", args->sim.max_open, "Sim: concepts it opens at most")
      ->check(number_in(engine::limits::sim_max_open))
      ->capture_default_str();
  cmd->add_option("--sim-open-ratio", args->sim.open_ratio,
                  "Sim: opens hits scoring at least this share of the best hit's score")
      ->check(number_in(engine::limits::sim_open_ratio))
      ->capture_default_str();
  cmd->add_flag("--sim-no-follow", args->sim_no_follow, "Sim: never follow links of what it opened");
  cmd->add_option("--sim-answer-tokens", args->sim.answer_tokens, "Sim: mean answer length in output tokens")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--sim-answer-spread", args->sim.answer_tokens_spread,
                  "Sim: standard deviation of the answer length across questions (with --seed)")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  cmd->add_option("--record", args->record, "Append each new exchange to this cassette (JSONL, keys redacted)");
  cmd->add_option("--cache-db", args->cache_db, "SQLite response cache: repeated requests are not sent again");
  add_source_flags(*cmd, args->git);
  add_retrieval_flags(*cmd, args->retrieval);
  add_selection_flags(*cmd, args->selection);
  cmd->add_flag("--verbose", args->verbose, "Also print per-turn token counts");
  cmd->add_flag("--stream", args->stream,
                "openai/anthropic models: ask for server-sent events; the same answer, usage and transcript as without");
  cmd->add_flag("--json", args->json, "Print the run as JSON on stdout (tool calls go to stderr with --verbose)");
  cmd->callback([args, &action] { action = [args] { return run_agent_command(*args); }; });
}

}  // namespace okfbench::cli
