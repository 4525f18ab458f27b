// TREC files (reports/trec.hpp): the input is a qrels text, a line "---",
// then a run text. Each part is read on its own; when both read, the run is
// evaluated against the qrels with every measure and printed as trec_eval
// prints it.
//
// Invariants: a bad file is an InputError, nothing else; a run written with
// write_run() reads back to the same scores in the same ranked order;
// measures of an evaluation are finite.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>

#include "reports/measures.hpp"
#include "reports/trec.hpp"
#include "core/error.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

using namespace okfbench::reports;
using okfbench::fuzz::check;

template <typename F>
auto read(F reader) -> std::optional<decltype(reader())> {
  try {
    return reader();
  } catch (const okfbench::InputError&) {
    return std::nullopt;
  }
}

void check_round_trip(const Run& run) {
  std::ostringstream out;
  write_run(out, run);
  const Run back = parse_run(out.str(), "written");
  check(back.queries.size() == run.queries.size(), "a written run has other queries");
  for (const auto& [qid, entries] : run.queries) {
    const std::vector<RunEntry> expected = ranked(entries);
    const std::vector<RunEntry>& got = back.queries.at(qid);
    check(got.size() == expected.size(), "a written run lost entries");
    for (std::size_t i = 0; i < got.size(); ++i) {
      check(got[i].docno == expected[i].docno, "a written run changed the ranking");
      check(got[i].score == expected[i].score, "a written run changed a score");
    }
  }
}

void check_evaluation(const Qrels& qrels, const Run& run) {
  const std::vector<std::string> measures = {"all_trec"};
  for (auto missing : {MissingQueries::ignore, MissingQueries::count_as_zero}) {
    std::optional<Evaluation> evaluation = read([&] { return evaluate(qrels, run, measures, {.missing = missing}); });
    if (!evaluation) continue;
    for (const Score& score : evaluation->all) check(std::isfinite(score.value), "a measure is not finite");
    for (const QueryScores& query : evaluation->queries)
      for (const Score& score : query.scores) check(std::isfinite(score.value), "a per-query measure is not finite");
    (void)format_trec_eval(*evaluation, QueryLines::include);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const okfbench::fuzz::Halves parts = okfbench::fuzz::split_at_line(okfbench::fuzz::as_text(data, size), "---");
  const std::optional<Qrels> qrels = read([&] { return parse_qrels(parts.first, "fuzz.qrels"); });
  const std::optional<Run> run = read([&] { return parse_run(parts.second, "fuzz.run"); });
  if (run) check_round_trip(*run);
  if (qrels && run) check_evaluation(*qrels, *run);
  return 0;
}
