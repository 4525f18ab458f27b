#include "harness/search_flags.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>

#include "retrieval/error.hpp"

namespace okfbench::cli {

retrieval::IndexConfig SearchFlags::config() const {
  retrieval::IndexConfig config;
  config.mode = flat ? retrieval::FieldMode::flat : retrieval::FieldMode::fielded;
  if (k1) config.k1 = *k1;
  if (b) config.b = *b;
  config.analyzer.stemmer = retrieval::parse_stemmer(stemmer);
  config.analyzer.stopwords = retrieval::parse_stopwords(stopwords);
  return config;
}

retrieval::LoadOptions SearchFlags::load_options() const {
  retrieval::LoadOptions options;
  if (profile == "okf") {
    options.profile = retrieval::Profile::okf;
  } else if (profile == "repo") {
    options.profile = retrieval::Profile::repo;
  } else {
    throw UsageError("unknown --profile '" + profile + "': use okf or repo");
  }
  return options;
}

void add_search_flags(CLI::App& cmd, SearchFlags& flags) {
  cmd.add_flag("--flat", flags.flat, "Index title and body as one field (plain BM25) instead of BM25F");
  cmd.add_option("--k1", flags.k1, "BM25 term-frequency saturation (default 1.2)")->check(CLI::NonNegativeNumber);
  cmd.add_option("--b", flags.b, "BM25 length normalisation, 0..1 (default 0.75)")->check(CLI::Range(0.0, 1.0));
  cmd.add_option("--stemmer", flags.stemmer, "none, porter or english")->capture_default_str();
  cmd.add_option("--stopwords", flags.stopwords, "none or lucene (Lucene's 33 English stop words)")
      ->capture_default_str();
  cmd.add_option("--profile", flags.profile, "Bundle profile: okf (spec) or repo (plain markdown)")
      ->capture_default_str();
}

retrieval::Bundle load_bundle_for_search(const std::string& path, const SearchFlags& flags) {
  if (!std::filesystem::is_directory(path)) {
    throw InputError(path + " is not a directory: pass the root of an OKF bundle");
  }
  retrieval::Bundle bundle = retrieval::Bundle::load(path, flags.load_options());
  std::size_t errors = 0;
  for (const auto& d : bundle.diagnostics()) errors += d.severity == retrieval::Severity::error ? 1 : 0;
  if (errors > 0) {
    std::fprintf(stderr, "okfbench: %zu file(s) of %s skipped with errors (okfbench validate lists them)\n", errors,
                 path.c_str());
  }
  return bundle;
}

}  // namespace okfbench::cli
