#pragma once
// Question sets: questions with graded relevance judgments over a bundle's
// concepts, the input of `okfbench eval` and of the experiment runner.
//
// YAML format (one file per set):
//
//   name: scifact-test            # optional
//   questions:
//     - id: "1"                   # unique, non-empty
//       text: "0-dimensional biomaterials show inductive properties."
//       relevant:                 # concept id -> integer grade in [-1000000..1000000]; optional
//         "31715818": 1           # > 0 relevant (higher is better),
//         "4983": 0               # 0 judged not relevant, < 0 unjudged
//       answer_facts:             # optional: facts a good answer states
//         - "..."                 # non-empty strings (numbers are read as text): vital
//         - {fact: "...", importance: okay}   # or vital: TREC-RAG nugget importance
//
// Unknown keys, a repeated key anywhere (YAML keys are unique: a second `id`
// or a concept judged twice), a missing id or text, a duplicate question id,
// a grade that is not an integer in range (core/numbers.hpp: plain
// decimal, so not 1.5, 1e3 or 0x10), answer_facts that are not a list of
// non-empty strings and a malformed file are InputErrors
// naming the file, the line and what to fix. check_concepts() reports
// relevant ids that are not in a bundle. Qrels grades obey the same range.
//
// Readers for the usual IR layouts give the same structure: TREC topics
// (SGML <top> blocks, or "qid<TAB>text" lines) with a qrels file, and BEIR
// (queries.jsonl with qrels/<split>.tsv). Only queries that have judgments
// become questions, as trec_eval and BEIR evaluate them.
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "retrieval/bundle.hpp"
#include "core/numbers.hpp"
#include "retrieval/search.hpp"

namespace okfbench::datasets {

// Relevance grades: far beyond any graded scale, small enough that sums of
// gains over any number of judgments stay exact.
inline constexpr IntegerRange<int> kGrades{-1'000'000, 1'000'000};

// An answer fact's importance as a nugget (reports/record.hpp NuggetScores).
enum class FactImportance { vital, okay };

struct Question {
  std::string id;
  std::string text;
  std::map<std::string, int> relevant;  // concept id -> grade
  std::vector<std::string> answer_facts;
  std::vector<FactImportance> fact_importance;  // one per answer fact
  int line = 0;                              // 1-based line of the entry in its file; 0 if built in code
  std::map<std::string, int> relevant_line;  // concept id -> line of its judgment
};

struct QuestionSet {
  std::string name;
  std::string source;  // the file it came from, for messages ("" if built in code)
  std::vector<Question> questions;

  const Question* find(std::string_view id) const;
};

// Parses the YAML format above; `source` names the text in messages.
QuestionSet parse_questions(std::string_view yaml, std::string_view source);
QuestionSet load_questions(const std::filesystem::path& path);

// Writes the YAML format (ids and texts double-quoted, questions in order).
std::string to_yaml(const QuestionSet& set);
void save_questions(const QuestionSet& set, const std::filesystem::path& path);

// Throws InputError listing (up to 10 of) the judged ids that are not
// concepts of `bundle`, each with its file and line.
void check_concepts(const QuestionSet& set, const retrieval::Bundle& bundle);
// Over several bundles searched as one: every judged id is BUNDLE:ID
// (retrieval/qualified_id.hpp) naming a concept of one of `bundles`; the
// InputError says, for each id, whether it names no bundle, an unknown one or
// a concept that bundle lacks.
void check_concepts(const QuestionSet& set, std::span<const retrieval::NamedBundle> bundles);

// qrels: "qid iter docno grade" lines (TREC) -> qid -> docno -> grade, with
// the line of each judgment. A non-integer grade, a wrong column count or a
// repeated (qid, docno) is an InputError naming the line.
struct Judgment {
  int grade = 0;
  int line = 0;
};
using QrelsTable = std::map<std::string, std::map<std::string, Judgment>>;
QrelsTable read_trec_qrels(const std::filesystem::path& path);

enum class TopicField { title, description, title_and_description };

QuestionSet read_trec(const std::filesystem::path& topics, const std::filesystem::path& qrels,
                      TopicField field = TopicField::title);

// BEIR: <dir>/queries.jsonl ({"_id", "text"}) and <dir>/qrels/<split>.tsv
// ("query-id corpus-id score" with a header line).
QuestionSet read_beir(const std::filesystem::path& dir, std::string_view split = "test");

}  // namespace okfbench::datasets
