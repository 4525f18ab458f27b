#include "engine/run_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>

#include "engine/limits.hpp"
#include "core/error.hpp"

namespace okfbench::engine {
namespace {

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

// A swept budget's values, or one unset value when the spec does not sweep it
// (the tools' default then applies and the label leaves it out).
std::vector<std::optional<std::int64_t>> sweep_or_unset(const std::vector<std::int64_t>& values) {
  if (values.empty()) return {std::nullopt};
  return {values.begin(), values.end()};
}

// PathConfig spells the default method bm25f as "" (left out of labels and keys).
std::string config_retrieval(const std::string& method) { return method == "bm25f" ? std::string() : method; }

}  // namespace

bool runs_external(const ModelSpec& m) { return m.calls_provider() || !m.stand_in_cache.empty(); }

std::vector<reports::PathConfig> path_configs(const ExperimentSpec& spec) {
  std::vector<reports::PathConfig> base;
  if (spec.context) {
    for (auto budget : spec.context->budget_tokens)
      for (int k : spec.context->k)
        for (int hops : spec.context->hops)
          for (const auto& strategy : spec.context->strategy)
            for (const auto& method : spec.context->retrieval) {
              reports::PathConfig c;
              c.kind = reports::PathKind::context;
              c.budget_tokens = budget;
              c.k = k;
              c.hops = hops;
              c.strategy = strategy;
              c.retrieval = config_retrieval(method);
              base.push_back(c);
            }
  }
  if (spec.agent) {
    std::size_t before = base.size();
    for (const auto& surface : spec.agent->surface) {
      std::set<std::vector<std::string>> seen;  // two lists may name the same tools in two namings
      for (const auto& written : spec.agent->tools) {
        std::optional<std::vector<std::string>> tools =
            agents::tools_for_surface(written, *agents::parse_surface(surface));
        if (!tools || !seen.insert(*tools).second) continue;  // the spec reader refused lists that do not map
        for (int turns : spec.agent->max_turns)
          for (std::optional<std::int64_t> body : sweep_or_unset(spec.agent->max_body_chars))
            for (std::optional<std::int64_t> index : sweep_or_unset(spec.agent->index_char_budget))
              for (const auto& method : spec.agent->retrieval) {
                reports::PathConfig c;
                c.kind = reports::PathKind::agent;
                c.surface = surface;
                c.tools = *tools;
                c.max_turns = turns;
                c.max_body_chars = body;
                c.index_char_budget = index;
                c.retrieval = config_retrieval(method);
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
  for (const ExternalAgent& agent : spec.external) {
    reports::PathConfig c;
    c.kind = reports::PathKind::external;
    c.external = agent.label;
    base.push_back(c);
  }
  std::vector<reports::PathConfig> out;
  for (const auto& c : base) {
    for (const auto& model : spec.models) {
      if (c.kind == reports::PathKind::external && !runs_external(model)) continue;
      // Cache models simulate a provider's cache; a real provider (or sim standing in for one) has its own.
      const bool simulated = model.is_sim() && model.stand_in_cache.empty();
      const std::vector<std::string> caches = simulated ? spec.cache_models : std::vector<std::string>{"provider"};
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

// The whole plan (every shard) is bounded before a trial is allocated.
// Round-robin over the report's rows, (bundle, configuration): round i takes
// the i-th trial of each row (its questions in order, repeat after repeat),
// so every prefix of the plan that is at least one round long -- what a run
// stopped by its cost cap ran -- holds a trial of every row. The order is a
// function of the spec alone, so a resumed run plans the same one.
std::vector<PlannedTrial> plan_trials(const ExperimentSpec& spec, const std::vector<LoadedBundle>& bundles,
                                      const Shard& shard) {
  const auto configs = path_configs(spec);
  check_plan_size(spec, bundles, configs.size());
  std::size_t rounds = 0;
  for (const auto& b : bundles) rounds = std::max(rounds, b.questions.questions.size() * static_cast<std::size_t>(spec.repeats));
  std::vector<PlannedTrial> out;
  std::size_t position = 0;
  for (std::size_t round = 0; round < rounds; ++round) {
    for (std::size_t bi = 0; bi < bundles.size(); ++bi) {
      const auto& questions = bundles[bi].questions.questions;
      if (questions.empty() || round >= questions.size() * static_cast<std::size_t>(spec.repeats)) continue;
      const datasets::Question& q = questions[round % questions.size()];
      for (const auto& config : configs) {
        if (position++ % shard.count != shard.index - 1) continue;
        PlannedTrial t;
        t.config = config;
        t.config.repeat = static_cast<int>(round / questions.size());
        t.bundle = bi;
        t.bundle_name = bundles[bi].source.name;
        t.question_id = q.id;
        t.key = trial_key(spec, bundles[bi], q, t.config);
        out.push_back(std::move(t));
      }
    }
  }
  return out;
}

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

}  // namespace okfbench::engine
