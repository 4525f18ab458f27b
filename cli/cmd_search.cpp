// okfbench search BUNDLE... "query": ranked concepts of a bundle, as the agent's
// search tool sees them (id, title, description, score; never the body).
// Several bundles are searched as one combined index with shared statistics
// (retrieval/search.hpp), and every hit names its bundle.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "engine/bundle_source.hpp"
#include "cli/commands.hpp"
#include "cli/keep_until_exit.hpp"
#include "engine/limits.hpp"
#include "engine/number_option.hpp"
#include "engine/search_flags.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "retrieval/search.hpp"

namespace okfbench::cli {
namespace {

struct SearchArgs {
  std::vector<std::string> inputs;  // BUNDLE... QUERY
  std::size_t k = 5;
  std::string type;
  std::vector<std::string> tags;
  std::string layer;
  std::string usage_tag;
  bool json = false;
  SearchFlags flags;
};

// What a listing shows of each hit: from its concept, or from the index
// cache's cards when the bundle was not restored.
using Cards = std::vector<std::optional<retrieval::ConceptCard>>;

Cards cards_of(const std::vector<retrieval::Hit>& hits, const retrieval::CachedSearch* cached) {
  Cards out;
  for (const retrieval::Hit& hit : hits) {
    if (const retrieval::Concept* c = hit.concept_ptr) out.push_back(retrieval::ConceptCard{c->title, c->description, c->type});
    else out.push_back(cached ? cached->card(hit.id) : std::nullopt);
  }
  return out;
}

nlohmann::ordered_json hit_json(const retrieval::Hit& hit, const std::optional<retrieval::ConceptCard>& card,
                                std::size_t rank) {
  nlohmann::ordered_json out = {{"rank", rank}, {"id", hit.id}, {"score", hit.score}};
  if (!hit.bundle.empty()) out["bundle"] = hit.bundle;
  if (card) {
    out["title"] = card->title;
    out["description"] = card->description;
    out["type"] = card->type;
  }
  return out;
}

void print_hits(const std::vector<retrieval::Hit>& hits, const Cards& cards) {
  if (hits.empty()) {
    std::fputs("no results\n", stdout);
    return;
  }
  for (std::size_t i = 0; i < hits.size(); ++i) {
    std::string line = fmt::format("{:>3}  {:8.4f}  ", i + 1, hits[i].score);
    if (!hits[i].bundle.empty()) line += fmt::format("[{}] ", hits[i].bundle);
    line += hits[i].id;
    if (cards[i] && !cards[i]->title.empty()) line += fmt::format("  {}", cards[i]->title);
    if (cards[i] && !cards[i]->description.empty()) line += fmt::format(" - {}", cards[i]->description);
    std::printf("%s\n", line.c_str());
  }
}

void print_json(const SearchArgs& args, const std::vector<retrieval::Hit>& hits, const Cards& cards,
                const HybridRanking* hybrid) {
  nlohmann::ordered_json out = {{"query", args.inputs.back()}};
  if (hybrid) out["hybrid"] = {{"embedding_model", hybrid->model()}, {"rrf_k", args.flags.hybrid.rrf_k}};
  if (hybrid && !hybrid->reranker().empty())
    out["rerank"] = {{"model", hybrid->reranker()}, {"depth", args.flags.hybrid.rerank_depth}};
  out["hits"] = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < hits.size(); ++i) out["hits"].push_back(hit_json(hits[i], cards[i], i + 1));
  std::printf("%s\n", json_text(out, 2).c_str());
}

void print(const SearchArgs& args, const std::vector<retrieval::Hit>& hits, const retrieval::CachedSearch* cached,
           const HybridRanking* hybrid) {
  const Cards cards = cards_of(hits, cached);
  if (args.json) print_json(args, hits, cards, hybrid);
  else print_hits(hits, cards);
}

retrieval::SearchOptions search_options(const SearchArgs& args) {
  retrieval::SearchOptions options;
  options.limit = args.k;
  options.type = args.type;
  options.tags = args.tags;
  options.layer = args.layer;
  options.usage_tag = args.usage_tag;
  return options;
}

// Several bundles: one combined BM25F index; hybrid search embeds one bundle.
int search_several(const SearchArgs& args, const std::vector<std::string>& wheres) {
  if (!args.flags.hybrid.model.empty() || !args.flags.hybrid.rerank.empty())
    throw UsageError("--hybrid and --rerank search one bundle; several bundles are searched with BM25F");
  const retrieval::IndexConfig config = args.flags.config();
  const engine::SourceBundles& loaded =
      keep_until_exit(engine::load_sources(wheres, args.flags.git, args.flags.load_options(), config));
  for (std::size_t i = 0; i < loaded.bundles.size(); ++i) warn_skipped(*loaded.bundles[i], wheres[i]);
  const retrieval::SearchIndex index = retrieval::SearchIndex::build(loaded.named(), config);
  print(args, index.search(args.inputs.back(), search_options(args)), nullptr, nullptr);
  return 0;
}

int run_search(const SearchArgs& args) {
  const std::vector<std::string> wheres(args.inputs.begin(), args.inputs.end() - 1);
  if (wheres.size() > 1) return search_several(args, wheres);
  const engine::BundleSourceFolder source = engine::BundleSourceFolder::open(wheres.front(), args.flags.git);
  // BM25F alone needs no concept's body: a current cache answers without
  // restoring the bundle.
  if (lexical_only(args.flags))
    if (const std::optional<retrieval::CachedSearch> cached = cached_search(source, wheres.front(), args.flags)) {
      print(args, cached->index().search(args.inputs.back(), search_options(args)), &*cached, nullptr);
      return 0;
    }
  const retrieval::CachedBundle& loaded = keep_until_exit(load_bundle_for_search(source, wheres.front(), args.flags));
  const retrieval::Bundle& bundle = loaded.bundle;
  const retrieval::SearchIndex& index = loaded.index;
  const retrieval::SearchOptions options = search_options(args);
  const std::string& query = args.inputs.back();
  std::unique_ptr<HybridRanking> hybrid = make_hybrid(bundle, args.flags);
  std::vector<retrieval::Hit> hits = hybrid ? hybrid->search(index, query, options) : index.search(query, options);
  print(args, hits, nullptr, hybrid.get());
  return 0;
}

}  // namespace

void add_search_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<SearchArgs>();
  CLI::App* cmd = app.add_subcommand("search", "Rank a bundle's concepts for a query (BM25F, or BM25 with --flat)");
  cmd->add_option("bundle... query", args->inputs,
                  "Bundle folders or git URLs (several are searched as one index; hits name their bundle), then "
                  "the query text")
      ->required()
      ->expected(2, -1);
  cmd->add_option("--k", args->k, "Number of hits, 1..1000")->check(number_in(engine::limits::search_k))->capture_default_str();
  cmd->add_option("--type", args->type, "Only concepts of this type (case-insensitive)");
  cmd->add_option("--tag", args->tags, "Only concepts with this tag (repeatable; all must match)");
  cmd->add_option("--layer", args->layer, "Only concepts in this top-level directory");
  cmd->add_option("--usage-tag", args->usage_tag,
                  "Only concepts with this usage tag (debugging, onboarding, ...; retrieval/docs/wikilinks.md)");
  cmd->add_flag("--json", args->json,
                "Print {query, hits: [{rank, id, score, title, description, type}]} (bundle too with several)");
  add_search_flags(*cmd, args->flags);
  cmd->callback([args, &action] { action = [args] { return run_search(*args); }; });
}

}  // namespace okfbench::cli
