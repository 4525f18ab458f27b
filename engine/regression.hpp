#pragma once
// Regression specs (Anserini style): a corpus, the index settings, expected
// index statistics and expected scores, checked by `okfbench eval --spec`
// and scripts/regress.sh, which print one [OK] or [FAIL] line per check.
//
//   name: scifact-flat
//   corpus: {format: beir, path: collections/scifact, split: test}  # path under the data root
//   index: {mode: flat, k1: 0.9, b: 0.4, stemmer: porter, stopwords: lucene}
//   statistics: {documents: 5183, terms: ..., postings: ..., tokens: ...}
//   search: {k: 1000}
//   measures:
//     - measure: ndcg_cut.10      # as for trec_eval -m
//       score: ndcg_cut_10        # the value checked
//       expected: 0.6789          # our score, to 4 decimals (|diff| <= 0.00005)
//       reference: 0.6789         # optional published figure ...
//       reference_tolerance: 0.01 # ... and how close we must be to it
//       reference_source: "Pyserini BEIR, Lucene BM25 flat"
//
// Scores use trec_eval -c semantics: every question counts, unanswered as 0.
#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "retrieval/search.hpp"

namespace okfbench::cli {

struct ExpectedScore {
  std::string measure;  // request, e.g. "ndcg_cut.10"
  std::string score;    // value name, e.g. "ndcg_cut_10"
  double expected = 0.0;
  std::optional<double> reference;
  double reference_tolerance = 0.0;
  std::string reference_source;
};

struct RegressionSpec {
  std::string name;
  std::string format;  // beir | cranfield
  std::string path;    // relative to the data root
  std::string split = "test";
  retrieval::IndexConfig config;
  std::map<std::string, std::size_t> statistics;  // documents, terms, postings, tokens
  std::size_t k = 1000;
  std::vector<ExpectedScore> scores;
};

// Throws InputError naming the file and the field for a malformed spec.
RegressionSpec load_regression(const std::filesystem::path& path);

// One check: "[OK] name: what" or "[FAIL] name: what".
struct CheckLine {
  bool ok = false;
  std::string text;
};

// |actual - expected| <= 0.00005 (equal to 4 decimals).
bool equal_to_4_decimals(double actual, double expected);

}  // namespace okfbench::cli
