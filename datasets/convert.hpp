#pragma once
// Converters from IR collections and plain markdown trees to OKF bundles.
//
// Every converter writes `<out>/<folder>/` (one concept per document, with
// frontmatter `type`, `title`, `description` and, for a renamed document,
// `source_id`) and, when the collection has queries, `<out>/questions.yaml`
// (see questions.hpp) whose judgments name concept ids. Bundle folder and
// question set are named after the collection: ConvertOptions::name, by
// default the source folder's name. `<out>/<folder>` must not exist yet
// (nothing is overwritten).
//
// Concept ids are the source document ids wherever those are safe as file
// names (safe_concept_id), so a run written with concept ids scores against
// the collection's original qrels. Any other id is rewritten and the original
// kept in `source_id`, which `okfbench eval --run` writes instead.
//
//   smart SRC      a SMART collection (Cranfield, CACM, CISI, MED, ...):
//                  documents, queries and qrels found by name (smart_files())
//                  or given. Every field is kept: .T title, .A authors (the
//                  `authors` list, and tags, so search finds a name), .W
//                  body (its first sentence the description), .K keywords
//                  as tags, .C categories as `categories`, .X citations as
//                  frontmatter links with relation CITES, .B and .N as
//                  `bibliography` and `note`. Trailing whitespace on marker
//                  lines is tolerated; other text outside a field is an
//                  InputError naming the file, the line and the characters
//                  (escaped: ".Q\x20"). Qrels: 2 columns (query doc: grade
//                  1), 3 (query doc grade; Cranfield's `cranqrel` codes map
//                  to grade = 5 - code, code -1 to 0) or 4 (TREC "query
//                  iteration doc grade"; CACM/CISI "query doc 0 0": grade 1).
//                  Queries are matched by their .I number, or by position
//                  when the qrels number them 1..N (Cranfield).
//   beir SRC       SRC holds corpus.jsonl ({_id, title, text}), queries.jsonl
//                  and qrels/<split>.tsv.
//   markdown SRC   a tree of markdown pages such as tldr-pages: the first
//                  "# " line is the title, the "> " lines under it the
//                  description, "> See also: `a`, `b`" names other pages,
//                  which become links under a "## See also" heading (same
//                  directory first, then any directory). No question set.
//                  A vault (Obsidian, Foam) is not converted: serve it as
//                  it is with --profile repo (retrieval/bundle.hpp).
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace okfbench::datasets {

// How the third column of a 3-column SMART qrels file is read.
enum class SmartGrades {
  automatic,  // cranfield for a file named `cranqrel`, as_written otherwise
  cranfield,  // cranqrel.readme codes: 1 (complete answer) .. 4, -1 not relevant
  as_written  // the integer is the grade
};

struct ConvertOptions {
  std::string name;    // bundle and question set name; "" = the source folder's name
  std::string folder;  // bundle folder under `out`; "" = name
  // smart: the files; empty = found in SRC by smart_files()' patterns.
  std::filesystem::path docs, queries, qrels;
  SmartGrades grades = SmartGrades::automatic;
  std::string split = "test";  // beir
};

// One repeated problem, counted once ("6,077 notes: an empty tags entry,
// ignored"); `examples` holds the first few places ("file:line").
struct ConvertWarning {
  std::string message;
  std::size_t count = 0;
  std::vector<std::string> examples;
};

struct ConvertResult {
  std::string name;
  std::filesystem::path bundle;     // <out>/<folder>
  std::filesystem::path questions;  // <out>/questions.yaml, or empty
  std::size_t documents = 0;
  std::size_t renamed = 0;  // documents whose id was not safe as a file name
  std::size_t question_count = 0;
  std::size_t links = 0;  // links written: SMART citations, markdown "See also" and wikilinks
  bool queries_by_position = false;  // smart: qrels numbered the queries 1..N
  std::vector<ConvertWarning> warnings;
};

// The files of a SMART collection in `src` (file names compared
// case-insensitively; each must match exactly one file unless given):
//   documents  cran.all.1400, *.all, *.all.*        (CACM cacm.all, CISI.ALL, MED.ALL)
//   queries    *.qry, *.que, query.text, *.queries  (cran.qry, CISI.QRY, query.text)
//   qrels      cranqrel, qrels.text, *.rel, *.qrels (CISI.REL, MED.REL)
// An InputError names the role, the candidates and the flag to give.
struct SmartFiles {
  std::filesystem::path docs, queries, qrels;
};
SmartFiles smart_files(const std::filesystem::path& src, const ConvertOptions& options = {});

// `id` itself when it is 1..120 characters of [A-Za-z0-9._-], starts with a
// letter or digit and is not a reserved name (index, log); otherwise the
// unsafe characters become '_' and "-<8 hex digits of a hash of id>" is
// appended, so distinct ids stay distinct.
std::string safe_concept_id(std::string_view id);

// The collection name ConvertOptions::name defaults to: the last part of
// `src` (after dropping a trailing '/'). A UsageError when `name` is not
// 1..120 characters of [A-Za-z0-9._-] starting with a letter or digit.
std::string collection_name(const std::filesystem::path& src, std::string_view name = {});

ConvertResult convert_smart(const std::filesystem::path& src, const std::filesystem::path& out,
                            const ConvertOptions& options = {});
// The former name of convert_smart, for Cranfield.
inline ConvertResult convert_cranfield(const std::filesystem::path& src, const std::filesystem::path& out,
                                       const ConvertOptions& options = {}) {
  return convert_smart(src, out, options);
}
ConvertResult convert_beir(const std::filesystem::path& src, const std::filesystem::path& out,
                           const ConvertOptions& options = {});
ConvertResult convert_markdown(const std::filesystem::path& src, const std::filesystem::path& out,
                               const ConvertOptions& options = {});

// `text` with every byte a reader cannot see written as \xNN: controls,
// bytes outside ASCII, and spaces at the end (".T " -> ".T\x20").
std::string escape_visible(std::string_view text);

}  // namespace okfbench::datasets
