#pragma once
// A generator of realistic OKF v0.2 bundles of any size, with a question set
// whose relevant concepts are known by construction.
//
// The bundle imitates a company's knowledge catalog: top-level layers
// (metrics/, tables/, playbooks/, ...) nested by business area (and by
// entity group when an area grows past a few hundred concepts), an index.md
// in every directory (the root one declares okf_version), log.md files at the
// root and per layer, typed link sections ("# Depends on" -> DEPENDS_ON),
// power-law link degrees (preferential attachment), tags, statuses, trust
// tiers, sources cited by footnotes, and title/description/body lengths drawn
// to match the four real bundles in OKFBENCH_DATA/okf (engine/docs/gen.md
// has the measured figures).
//
// Every concept is about one topic: (area, entity, attribute), for example
// (billing, invoice, latency) -> "Billing Invoice Latency". Titles use the
// catalog term ("invoice latency"); descriptions, bodies and questions use a
// plain-language paraphrase ("response time of bills"), so a question does not
// simply copy its answer's title.
//
// Output is a function of GeneratorOptions alone (the thread count only
// changes speed): the same seed gives byte-identical files.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace okfbench::datasets {

// Bumped whenever the same options would give different files, so cached
// generated bundles (okfbench run's cache_dir) are rebuilt.
inline constexpr int kGeneratorVersion = 3;

struct GeneratorOptions {
  std::size_t concepts = 100;
  std::uint64_t seed = 1;
  std::size_t layers = 0;     // top-level directories, 1..8; 0 = chosen from `concepts`
  std::size_t questions = 0;  // 0 = min(concepts, 20)
  unsigned threads = 0;       // 0 = hardware concurrency
};

// A question with graded relevance: grade 2 for the concept that answers it,
// grade 1 for the concepts it depends on when the question asks about them.
struct GeneratedQuestion {
  std::string id;
  std::string text;
  std::vector<std::pair<std::string, int>> relevant;  // concept id, grade; grade 2 first
  std::vector<std::string> answer_facts;               // what the question asks, verbatim from the answer's body
};

struct GenerationSummary {
  std::size_t concepts = 0;
  std::size_t links = 0;         // concept-to-concept links written, broken ones included
  std::size_t broken_links = 0;  // links to concepts that do not exist (legal in OKF)
  std::size_t directories = 0;
  std::size_t files = 0;  // concepts + index.md + log.md files
  std::uintmax_t bytes = 0;
  std::vector<GeneratedQuestion> questions;
};

// Writes the bundle into `out` (created if missing; must be empty or absent so
// a generated bundle never mixes with other files). Throws InputError when
// `out` is not empty or cannot be written, UsageError for options out of range.
GenerationSummary generate_bundle(const GeneratorOptions& options, const std::filesystem::path& out);

// The question set as YAML in the okfbench question-set format:
//   questions:
//     - id: q001
//       text: "..."
//       relevant: {concept/id: 2, other/id: 1}
//       answer_facts: ["..."]
std::string questions_to_yaml(const std::vector<GeneratedQuestion>& questions,
                              const GeneratorOptions& options);

}  // namespace okfbench::datasets
