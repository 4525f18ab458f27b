// okfbench context: the one-shot path. Search a bundle, expand along links,
// pack into a token budget, print the pack and a footer. Several bundles are
// searched as one index (retrieval/context.hpp); blocks name their bundle.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "engine/bundle_source.hpp"
#include "cli/commands.hpp"
#include "cli/keep_until_exit.hpp"
#include "engine/limits.hpp"
#include "engine/number_option.hpp"
#include "engine/search_flags.hpp"
#include "engine/selection_flags.hpp"
#include "retrieval/context.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "retrieval/tokens.hpp"

namespace okfbench::retrieval {

void to_json(nlohmann::json& j, const PackEntry& c) {
  j = {{"id", c.id}, {"reason", to_string(c.reason)}, {"score", c.score}, {"tokens", c.tokens},
       {"truncated", c.truncated}};
  if (!c.bundle.empty()) j["bundle"] = c.bundle;
  if (c.reason == PackReason::via) {
    j["relation"] = c.relation;
    j["from"] = c.from;
    j["hops"] = c.hops;
  }
}

void to_json(nlohmann::json& j, const PackCitation& c) {
  j = {{"concept_id", c.concept_id}, {"label", c.label}, {"text", c.text}};
  if (!c.bundle.empty()) j["bundle"] = c.bundle;
}

void to_json(nlohmann::json& j, const Exclusion& e) { j = {{"id", e.id}, {"reason", e.reason}}; }

void to_json(nlohmann::json& j, const ContextPack& p) {
  j = {{"text", p.text},
       {"tokens", p.tokens},
       {"budget_tokens", p.budget_tokens},
       {"counter", p.counter},
       {"strategy", to_string(p.strategy)},
       {"truncated", p.truncated},
       {"over_budget", p.over_budget},
       {"concepts", p.concepts},
       {"skipped", p.skipped},
       {"citations", p.citations}};
  if (!p.policy.empty()) {
    j["policy"] = p.policy;
    j["excluded"] = p.excluded;
  }
}

}  // namespace okfbench::retrieval

namespace okfbench::cli {
namespace {

struct ContextArgs {
  std::vector<std::string> inputs;  // BUNDLE... QUERY
  std::string strategy = "grafito";
  std::string encoding = "o200k_base";
  std::string profile = "okf";
  retrieval::ContextOptions options;
  bool no_citations = false;
  bool json = false;
  engine::SourceFlags git;
  RetrievalFlags retrieval;
  SelectionFlags selection;
};

std::string footer(const retrieval::ContextPack& pack) {
  std::size_t seeds = 0;
  for (const auto& c : pack.concepts) seeds += c.reason == retrieval::PackReason::seed ? 1 : 0;
  std::string line = fmt::format("tokens: {} / {} ({}) | concepts: {} ({} seed, {} via) | truncated: {}", pack.tokens,
                                 pack.budget_tokens, pack.counter, pack.concepts.size(), seeds,
                                 pack.concepts.size() - seeds, pack.truncated ? "yes" : "no");
  if (!pack.skipped.empty()) line += fmt::format(" | skipped: {}", fmt::join(pack.skipped, ", "));
  if (pack.over_budget) line += " | over budget (weaver counts bodies only)";
  if (pack.policy.empty()) return line;
  line += "\npolicy: " + pack.policy;
  for (const retrieval::Exclusion& e : pack.excluded) line += fmt::format("\nexcluded: {} ({})", e.id, e.reason);
  return line;
}

int run_context(ContextArgs args) {
  auto counter = retrieval::make_counter(args.encoding);
  retrieval::LoadOptions load;
  load.profile = profile_option(args.profile);
  const std::vector<std::string> wheres(args.inputs.begin(), args.inputs.end() - 1);
  const std::string& query = args.inputs.back();
  if (wheres.size() > 1 && args.retrieval.method != "bm25f")
    throw UsageError(fmt::format("--retrieval {} takes one bundle; several bundles are searched with bm25f",
                                 args.retrieval.method));
  if (wheres.size() > 1 && (load.profile == retrieval::Profile::lessons || load.profile == retrieval::Profile::expertise))
    throw UsageError(fmt::format("--profile {} takes one bundle: its policy names concepts by id",
                                 retrieval::to_string(load.profile)));
  engine::SourceBundles& loaded = keep_until_exit(engine::load_sources(wheres, args.git, load));
  args.options.filters.selection = make_selection(*loaded.bundles.front(), args.selection);
  const std::vector<retrieval::NamedBundle> named = loaded.named();
  const retrieval::SearchIndex index =
      named.size() == 1 ? std::move(*loaded.indexes.front()) : retrieval::SearchIndex::build(named);
  std::unique_ptr<HybridRanking> ranking = make_retrieval(*loaded.bundles.front(), args.retrieval);
  std::optional<retrieval::Retriever> retriever;
  if (ranking) args.options.retriever = &retriever.emplace(ranking->retriever(index));
  args.options.counter = counter.get();
  args.options.strategy = args.strategy == "weaver" ? retrieval::PackStrategy::weaver : retrieval::PackStrategy::grafito;
  args.options.citations = args.no_citations ? retrieval::Citations::omit : retrieval::Citations::include;
  const retrieval::ContextPack pack = retrieval::pack_context(named, index, query, args.options);
  if (args.json) {
    std::printf("%s\n", json_text(nlohmann::json(pack), 2).c_str());
    return 0;
  }
  if (!pack.text.empty()) std::printf("%s\n\n", pack.text.c_str());
  std::printf("---\n%s\n", footer(pack).c_str());
  return 0;
}

}  // namespace

void add_context_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<ContextArgs>();
  CLI::App* cmd = app.add_subcommand("context", "Pack the concepts relevant to a query into a token budget (one shot)");
  cmd->add_option("bundle... query", args->inputs,
                  "Bundle folders or git URLs (several are searched as one index; blocks name their bundle), then "
                  "the question or search terms")
      ->required()
      ->expected(2, -1);
  cmd->add_option("--budget", args->options.budget_tokens, "Token budget of the pack")
      ->capture_default_str()
      ->check(number_in(engine::limits::budget_tokens));
  cmd->add_option("--k", args->options.k, "Seed hits (weaver: most concepts considered, 0 = all)")
      ->capture_default_str()
      ->check(number_in(engine::limits::Int{0, engine::limits::k.max}));
  cmd->add_option("--hops", args->options.expand_hops, "Link hops to expand from each seed (0 = none)")
      ->capture_default_str()
      ->check(number_in(engine::limits::hops));
  cmd->add_option("--relation", args->options.relation, "Follow only links of this relation, e.g. JOINS_WITH");
  cmd->add_option("--strategy", args->strategy, "grafito (search + expand) or weaver (contextweaver select_knowledge)")
      ->capture_default_str()
      ->check(CLI::IsMember({"grafito", "weaver"}));
  cmd->add_option("--encoding", args->encoding, "Token counter: o200k_base, cl100k_base or heuristic")
      ->capture_default_str();
  cmd->add_option("--now", args->options.now, "Clock for weaver (ISO-8601): drops concepts past stale_after");
  cmd->add_option("--profile", args->profile, "Bundle profile: okf, repo, lessons (lifecycle selection) or expertise")
      ->capture_default_str();
  cmd->add_option("--usage-tag", args->options.filters.usage_tag,
                  "Only concepts with this usage tag (debugging, onboarding, ...; retrieval/docs/wikilinks.md)");
  cmd->add_flag("--no-citations", args->no_citations, "Leave the Citations lines out of the blocks");
  cmd->add_flag("--json", args->json, "Print the pack as JSON");
  add_source_flags(*cmd, args->git);
  add_retrieval_flags(*cmd, args->retrieval);
  add_selection_flags(*cmd, args->selection);
  cmd->callback([args, &action] { action = [args] { return run_context(*args); }; });
}

}  // namespace okfbench::cli
