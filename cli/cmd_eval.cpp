// okfbench eval: rank a bundle's concepts for every question of a question
// set and score the rankings with trec_eval's measures (-c semantics), or
// check a regression spec (--spec).
#include <yaml-cpp/yaml.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include "datasets/convert.hpp"
#include "datasets/questions.hpp"
#include "engine/bundle_source.hpp"
#include "cli/commands.hpp"
#include "cli/keep_until_exit.hpp"
#include "engine/limits.hpp"
#include "engine/number_option.hpp"
#include "engine/regression.hpp"
#include "engine/search_flags.hpp"
#include "reports/measures.hpp"
#include "reports/trec.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/json_text.hpp"
#include "retrieval/qualified_id.hpp"

namespace okfbench::cli {
namespace {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct EvalArgs {
  std::vector<std::string> bundles;
  std::string questions;
  std::vector<std::string> measures;
  std::string run_path;
  bool per_query = false;
  bool json = false;
  std::size_t k = 1000;
  SearchFlags flags;
  // --spec mode
  std::string spec;
  std::string data;
  std::string work;
  bool verify = false;
};

const std::vector<std::string> kDefaultMeasures = {"ndcg_cut.10", "recall.100", "map", "recip_rank", "P.10"};

// The document id a run names: the source collection's id when the
// converter had to rename the concept (frontmatter `source_id`).
std::string docno_of(const retrieval::Concept& concept_ref) {
  auto it = concept_ref.extra.find("source_id");
  if (it == concept_ref.extra.end()) return concept_ref.id;
  try {
    return YAML::Load(it->second).as<std::string>();
  } catch (const YAML::Exception&) {
    return concept_ref.id;
  }
}

reports::Qrels qrels_of(const datasets::QuestionSet& set, const retrieval::Bundle& bundle) {
  reports::Qrels qrels;
  for (const datasets::Question& q : set.questions) {
    for (const auto& [id, grade] : q.relevant) qrels.add(q.id, docno_of(*bundle.find(id)), grade, set.source);
  }
  return qrels;
}

struct EvalRun {
  reports::Run run;
  reports::Evaluation evaluation;
  retrieval::IndexStats stats;
  double build_seconds = 0;
  double query_seconds = 0;
  std::vector<double> query_ms;  // each question's ranking time, in question order
  std::size_t questions = 0;
};

// The nearest-rank percentile `p` (0 < p <= 100) of `values`; 0 when empty.
double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(values.size())));
  return values[std::clamp<std::size_t>(rank, 1, values.size()) - 1];
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Ranks every question with `search` (which gives the hits and the docno
// of each) and scores the run against `qrels` (-c: a question without hits
// counts as zero).
template <class Search>
void rank_and_score(EvalRun& result, const datasets::QuestionSet& set, const reports::Qrels& qrels,
                    const std::vector<std::string>& measures, Search search) {
  result.questions = set.questions.size();
  result.run.tag = "okfbench";
  const auto start = Clock::now();
  for (const datasets::Question& q : set.questions) {
    result.run.queries[q.id];
    const auto asked = Clock::now();
    const auto hits = search(q.text);
    result.query_ms.push_back(1e3 * seconds_since(asked));
    for (const auto& [docno, score] : hits) result.run.add(q.id, docno, score);
  }
  result.query_seconds = seconds_since(start);
  reports::EvalOptions eval_options;
  eval_options.missing = reports::MissingQueries::count_as_zero;
  result.evaluation = reports::evaluate(qrels, result.run, measures, eval_options);
}

using Ranked = std::vector<std::pair<std::string, double>>;

using Index = retrieval::SearchIndex;

// Builds the index with `build` (timed), then ranks every question with
// `rank(index, text, options)` to depth k and scores the run.
template <typename Build, typename Rank>
EvalRun index_and_score(Build build, const datasets::QuestionSet& set, const reports::Qrels& qrels,
                        const std::vector<std::string>& measures, std::size_t k, Rank rank) {
  EvalRun result;
  const auto start = Clock::now();
  const Index index = build();
  result.build_seconds = seconds_since(start);
  result.stats = index.stats();
  retrieval::SearchOptions options;
  options.limit = k;
  rank_and_score(result, set, qrels, measures, [&](const std::string& text) { return rank(index, text, options); });
  return result;
}

EvalRun evaluate_bundle(const retrieval::Bundle& bundle, const datasets::QuestionSet& set,
                        const retrieval::IndexConfig& config, const std::vector<std::string>& measures,
                        std::size_t k, HybridRanking* hybrid = nullptr) {
  datasets::check_concepts(set, bundle);
  const auto build = [&] { return retrieval::SearchIndex::build(bundle, config); };
  return index_and_score(build, set, qrels_of(set, bundle), measures, k, [&](const Index& index, const std::string& text,
                                                                              const retrieval::SearchOptions& options) {
    Ranked out;
    for (const retrieval::Hit& hit : hybrid ? hybrid->search(index, text, options) : index.search(text, options))
      out.emplace_back(docno_of(*hit.concept_ptr), hit.score);
    return out;
  });
}

// Several bundles as one index (shared statistics): the question set's
// relevant ids and the run's document ids are BUNDLE:DOCNO.
EvalRun evaluate_several(const engine::SourceBundles& loaded, const datasets::QuestionSet& set,
                         const retrieval::IndexConfig& config, const std::vector<std::string>& measures,
                         std::size_t k) {
  const std::vector<retrieval::NamedBundle> named = loaded.named();
  datasets::check_concepts(set, named);
  reports::Qrels qrels;
  for (const datasets::Question& q : set.questions) {
    for (const auto& [id, grade] : q.relevant) {
      const retrieval::QualifiedId at = *retrieval::split_qualified_id(id);  // checked above
      for (const retrieval::NamedBundle& b : named)
        if (b.name == at.bundle)
          qrels.add(q.id, retrieval::qualified_id(b.name, docno_of(*b.bundle->find(std::string(at.id)))), grade, set.source);
    }
  }
  const auto build = [&] { return retrieval::SearchIndex::build(named, config); };
  return index_and_score(build, set, qrels, measures, k, [](const Index& index, const std::string& text,
                                                            const retrieval::SearchOptions& options) {
    Ranked out;
    for (const retrieval::Hit& hit : index.search(text, options))
      out.emplace_back(retrieval::qualified_id(hit.bundle, docno_of(*hit.concept_ptr)), hit.score);
    return out;
  });
}

void print_summary(const EvalRun& r) {
  std::printf("\n| measure | value |\n|---|---:|\n");
  for (const reports::Score& s : r.evaluation.all) {
    if (s.aggregate == reports::Aggregate::mean) std::printf("| %s | %.4f |\n", s.name.c_str(), s.value);
  }
  std::printf("\n%zu questions, %zu concepts indexed (%zu terms) in %.3f s, queries %.3f s (%.0f us/question)\n",
              r.questions, r.stats.documents, r.stats.terms, r.build_seconds, r.query_seconds,
              r.questions ? 1e6 * r.query_seconds / static_cast<double>(r.questions) : 0.0);
}

void print_json(const EvalRun& r, bool per_query) {
  nlohmann::ordered_json out;
  out["questions"] = r.questions;
  out["index"] = {{"documents", r.stats.documents}, {"terms", r.stats.terms}, {"postings", r.stats.postings},
                  {"tokens", r.stats.tokens}, {"build_seconds", r.build_seconds}};
  out["query_seconds"] = r.query_seconds;
  out["query_ms"] = {{"p50", percentile(r.query_ms, 50)}, {"p99", percentile(r.query_ms, 99)}};
  for (const reports::Score& s : r.evaluation.all) {
    if (s.text.empty()) out["measures"][s.name] = s.value;
  }
  if (per_query) {
    for (const reports::QueryScores& q : r.evaluation.queries) {
      for (const reports::Score& s : q.scores) {
        if (s.text.empty()) out["per_query"][q.qid][s.name] = s.value;
      }
    }
  }
  std::printf("%s\n", json_text(out, 2).c_str());
}

EvalRun evaluate_one(const EvalArgs& args, const datasets::QuestionSet& set, const std::vector<std::string>& measures) {
  const retrieval::CachedBundle& loaded = keep_until_exit(load_bundle_for_search(args.bundles.front(), args.flags));
  const retrieval::Bundle& bundle = loaded.bundle;  // eval builds and times its own index
  const auto start = Clock::now();
  std::unique_ptr<HybridRanking> hybrid = make_hybrid(bundle, args.flags);
  if (hybrid)
    std::fprintf(stderr, "okfbench: embedded %zu concepts with %s in %.2f s\n", hybrid->embedded(),
                 hybrid->model().c_str(), seconds_since(start));
  return evaluate_bundle(bundle, set, args.flags.config(), measures, args.k, hybrid.get());
}

int run_eval(const EvalArgs& args) {
  args.flags.config();  // a bad --stemmer or --stopwords is a usage error before anything loads
  datasets::QuestionSet set = datasets::load_questions(args.questions);
  const auto& measures = args.measures.empty() ? kDefaultMeasures : args.measures;
  EvalRun r;
  if (args.bundles.size() == 1) {
    r = evaluate_one(args, set, measures);
  } else {
    if (!args.flags.hybrid.model.empty() || !args.flags.hybrid.rerank.empty())
      throw UsageError("--hybrid and --rerank search one bundle; several bundles are searched with BM25F");
    const engine::SourceBundles& loaded =
        keep_until_exit(engine::load_sources(args.bundles, args.flags.git, args.flags.load_options()));
    r = evaluate_several(loaded, set, args.flags.config(), measures, args.k);
  }
  if (!args.run_path.empty()) reports::write_run_file(args.run_path, r.run);
  if (args.json) {
    print_json(r, args.per_query);
    return 0;
  }
  auto lines = args.per_query ? reports::QueryLines::include : reports::QueryLines::omit;
  std::fputs(reports::format_trec_eval(r.evaluation, lines).c_str(), stdout);
  print_summary(r);
  return 0;
}

// ---- regression specs ------------------------------------------------------

// Converts the spec's corpus under `work` once (core/files.hpp: concurrent
// checks wait for the one converting it); later runs reuse it.
fs::path converted_corpus(const RegressionSpec& spec, const fs::path& data, const fs::path& work) {
  const fs::path src = data / spec.path;
  // "-v2": the converters' output changed (descriptions, SMART fields), so
  // folders converted by an earlier version are not reused.
  return publish_folder(work, spec.format + "-" + fs::path(spec.path).filename().string() + "-" + spec.split + "-v2",
                        [&](const fs::path& tmp) {
                          // Written as <corpus>/bundle, where run_spec reads it.
                          datasets::ConvertOptions options;
                          options.name = spec.name;
                          options.folder = "bundle";
                          options.split = spec.split;
                          if (spec.format == "beir") {
                            datasets::convert_beir(src, tmp, options);
                          } else {
                            datasets::convert_smart(src, tmp, options);
                          }
                        });
}

CheckLine check_score(const RegressionSpec& spec, const ExpectedScore& e, const reports::Evaluation& ev) {
  std::optional<double> actual = ev.mean(e.score);
  if (!actual) return {false, fmt::format("{}: {} was not computed (measure {})", spec.name, e.score, e.measure)};
  bool ok = equal_to_4_decimals(*actual, e.expected);
  return {ok, fmt::format("{}: {} {:.4f} (expected {:.4f})", spec.name, e.score, *actual, e.expected)};
}

std::vector<CheckLine> check_spec(const RegressionSpec& spec, const EvalRun& r) {
  std::vector<CheckLine> lines;
  const std::map<std::string, std::size_t> actual = {{"documents", r.stats.documents},
                                                     {"terms", r.stats.terms},
                                                     {"postings", r.stats.postings},
                                                     {"tokens", r.stats.tokens},
                                                     {"questions", r.questions}};
  for (const auto& [name, expected] : spec.statistics) {
    auto it = actual.find(name);
    std::size_t value = it == actual.end() ? 0 : it->second;
    lines.push_back({it != actual.end() && value == expected,
                     fmt::format("{}: index {} {} (expected {})", spec.name, name, value, expected)});
  }
  for (const ExpectedScore& e : spec.scores) {
    lines.push_back(check_score(spec, e, r.evaluation));
    if (!e.reference) continue;
    double value = r.evaluation.mean(e.score).value_or(-1.0);
    bool ok = std::fabs(value - *e.reference) <= e.reference_tolerance + 1e-12;
    lines.push_back({ok, fmt::format("{}: {} {:.4f} within {} of {:.4f} ({})", spec.name, e.score, value,
                                     e.reference_tolerance, *e.reference, e.reference_source)});
  }
  return lines;
}

int run_spec(const EvalArgs& args) {
  RegressionSpec spec = load_regression(args.spec);
  if (args.data.empty()) throw UsageError("--spec needs --data (the reference data root, e.g. $OKFBENCH_DATA)");
  const fs::path work = args.work.empty() ? user_cache_dir("regress", "the converted corpora", "--work DIR") : fs::path(args.work);
  fs::path corpus = converted_corpus(spec, args.data, work);
  retrieval::Bundle bundle = retrieval::Bundle::load(corpus / "bundle");
  datasets::QuestionSet set = datasets::load_questions(corpus / "questions.yaml");
  std::vector<std::string> measures;
  for (const ExpectedScore& e : spec.scores) measures.push_back(e.measure);
  EvalRun r = evaluate_bundle(bundle, set, spec.config, measures, spec.k);
  if (!args.run_path.empty()) reports::write_run_file(args.run_path, r.run);
  bool all_ok = true;
  for (const CheckLine& line : check_spec(spec, r)) {
    all_ok = all_ok && line.ok;
    std::printf("[%s] %s\n", line.ok ? "OK" : "FAIL", line.text.c_str());
  }
  return args.verify && !all_ok ? 1 : 0;
}

}  // namespace

void add_eval_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<EvalArgs>();
  CLI::App* cmd = app.add_subcommand("eval", "Score a bundle's search against a question set (trec_eval measures, -c)");
  cmd->add_option("--bundle", args->bundles,
                  "Bundle folder or git URL; several (--bundle A --bundle B) are searched as one index (shared "
                  "statistics) and the question set's relevant ids and the run's document ids are BUNDLE:ID");
  cmd->add_option("--questions", args->questions, "Question set (YAML)");
  cmd->add_option("--measures", args->measures, "trec_eval measures, e.g. ndcg_cut.10,recall.100 (default: "
                  "ndcg_cut.10 recall.100 map recip_rank P.10)")->delimiter(',');
  cmd->add_option("--run", args->run_path, "Also write the ranking as a TREC run file (source document ids)");
  cmd->add_flag("--per-query", args->per_query, "Print per-question lines too");
  cmd->add_option("--k", args->k, "Hits ranked per question")->check(number_in(engine::limits::eval_k))->capture_default_str();
  cmd->add_flag("--json", args->json, "Print {questions, index, measures[, per_query]} as JSON");
  add_search_flags(*cmd, args->flags);
  cmd->add_option("--spec", args->spec, "Check a regression spec (datasets/regressions/*.yaml) instead");
  cmd->add_option("--data", args->data, "With --spec: the reference data root holding the corpus");
  cmd->add_option("--work", args->work, "With --spec: where converted corpora are kept (default $XDG_CACHE_HOME/okfbench/regress)");
  cmd->add_flag("--verify", args->verify, "With --spec: exit 1 when any check fails");
  cmd->callback([args, &action] {
    if (!args->spec.empty()) {
      action = [args] { return run_spec(*args); };
      return;
    }
    if (args->bundles.empty() || args->questions.empty()) {
      throw UsageError("eval needs --bundle and --questions (or --spec)");
    }
    action = [args] { return run_eval(*args); };
  });
}

}  // namespace okfbench::cli
