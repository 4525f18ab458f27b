#pragma once
// TREC relevance judgments (qrels) and ranked runs, as trec_eval reads them.
//
//   qrels line:  qid  iter  docno  gain        e.g. "1 0 184 3"
//   run line:    qid  Q0    docno  rank  score  tag
//
// Fields are separated by any run of spaces or tabs; blank lines are
// skipped. A qrels gain is an integer: > 0 relevant (graded), 0 judged not
// relevant, < 0 in the pool but unjudged. The run's rank column is read and
// kept but, as in trec_eval, ranking comes from the score: score descending,
// then docno descending (byte order), see `ranked()`.
//
// Readers throw InputError naming the file, the line and the field, and
// saying what was expected; a docno that appears twice for one query (in a
// qrels file or in a run) is an error too, because trec_eval refuses it.
// A score must be a finite number, a rank and a gain integers.
#include <filesystem>
#include <iosfwd>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace okfbench::reports {

// Judgments of one query: docno -> gain, ordered by docno (byte order).
using Judgments = std::map<std::string, int>;

struct Qrels {
  // qid -> judgments, ordered by qid (byte order, as trec_eval's strcmp).
  std::map<std::string, Judgments> queries;

  // Adds one judgment; throws InputError when the docno is already judged
  // for this query (`where` names the origin for the message).
  void add(const std::string& qid, const std::string& docno, int gain, std::string_view where = "qrels");
};

struct RunEntry {
  std::string docno;
  double score = 0.0;
  long rank = 0;  // as written in the file; not used for ranking
};

struct Run {
  std::string tag;  // the run tag of the first line ("" when empty)
  // qid -> entries in file order, ordered by qid (byte order).
  std::map<std::string, std::vector<RunEntry>> queries;

  // Appends one retrieved document (rank = its position in the query's
  // list). Duplicates are not checked here (that would cost a lookup per
  // call); evaluate() and write_run() reject them.
  void add(const std::string& qid, const std::string& docno, double score);
};

// `source` names the text in error messages (normally the file path).
Qrels parse_qrels(std::string_view text, std::string_view source);
Run parse_run(std::string_view text, std::string_view source);

// Read a file; a missing or unreadable file is an InputError.
Qrels read_qrels(const std::filesystem::path& path);
Run read_run(const std::filesystem::path& path);

// The entries of one query in trec_eval's order: score descending, then
// docno descending (byte order). Ranks in the result are not renumbered.
std::vector<RunEntry> ranked(const std::vector<RunEntry>& entries);

// Writes `run` as a TREC run file: queries by qid, each in ranked() order
// with ranks renumbered 1..n, scores with up to 17 significant digits so the
// order survives a round trip, tag `run.tag` ("okfbench" when empty).
void write_run(std::ostream& out, const Run& run);
void write_run_file(const std::filesystem::path& path, const Run& run);

}  // namespace okfbench::reports
