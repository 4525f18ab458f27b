#pragma once
// Converters from IR collections and plain markdown trees to OKF bundles.
//
// Every converter writes `<out>/bundle/` (one concept per document, with
// frontmatter `type`, `title` and, for a renamed document, `source_id`) and,
// when the collection has queries, `<out>/questions.yaml` (see
// questions.hpp) whose judgments name concept ids. `<out>/bundle` must not
// exist yet (nothing is overwritten).
//
// Concept ids are the source document ids wherever those are safe as file
// names (safe_concept_id), so a run written with concept ids scores against
// the collection's original qrels. Any other id is rewritten and the original
// kept in `source_id`, which `okfbench eval --run` writes instead.
//
//   cranfield SRC  SRC holds cran.all.1400, cran.qry, cranqrel. Questions are
//                  numbered 1..225 by position (as the qrels number them);
//                  grades follow cranqrel.readme, where code 1 (a complete
//                  answer) is best: grade = 5 - code, and code -1 (not
//                  relevant) is grade 0. Title .T, body .W; author .A and
//                  bibliography .B are kept as frontmatter.
//   beir SRC       SRC holds corpus.jsonl ({_id, title, text}), queries.jsonl
//                  and qrels/<split>.tsv.
//   markdown SRC   a tree of markdown pages such as tldr-pages: the first
//                  "# " line is the title, the "> " lines under it the
//                  description, "> See also: `a`, `b`" names other pages,
//                  which become links under a "## See also" heading (same
//                  directory first, then any directory). No question set.
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace okfbench::datasets {

struct ConvertResult {
  std::filesystem::path bundle;     // <out>/bundle
  std::filesystem::path questions;  // <out>/questions.yaml, or empty
  std::size_t documents = 0;
  std::size_t renamed = 0;  // documents whose id was not safe as a file name
  std::size_t question_count = 0;
  std::size_t links = 0;  // markdown: "See also" references that became links
};

// `id` itself when it is 1..120 characters of [A-Za-z0-9._-], starts with a
// letter or digit and is not a reserved name (index, log); otherwise the
// unsafe characters become '_' and "-<8 hex digits of a hash of id>" is
// appended, so distinct ids stay distinct.
std::string safe_concept_id(std::string_view id);

ConvertResult convert_cranfield(const std::filesystem::path& src, const std::filesystem::path& out);
ConvertResult convert_beir(const std::filesystem::path& src, const std::filesystem::path& out,
                           std::string_view split = "test");
ConvertResult convert_markdown(const std::filesystem::path& src, const std::filesystem::path& out);

}  // namespace okfbench::datasets
