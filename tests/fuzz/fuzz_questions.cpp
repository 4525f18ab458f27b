// A question set (datasets/questions.hpp) from YAML.
//
// Invariants: a bad file is an InputError, nothing else; a set that loads
// has non-empty unique ids and texts; writing it with to_yaml() and reading
// that back gives the same set (convert writes question sets this way and
// eval reads them back). Bytes that are not UTF-8 load, as everywhere a run
// reads text, and are written as U+FFFD, so for such a set only the number
// of questions must survive and what is written must be UTF-8.
#include <cstddef>
#include <cstdint>
#include <set>

#include "datasets/questions.hpp"
#include "core/error.hpp"
#include "retrieval/utf8.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

using namespace okfbench::datasets;
using okfbench::fuzz::check;

bool same(const QuestionSet& a, const QuestionSet& b) {
  if (a.name != b.name || a.questions.size() != b.questions.size()) return false;
  for (std::size_t i = 0; i < a.questions.size(); ++i) {
    const Question& x = a.questions[i];
    const Question& y = b.questions[i];
    if (x.id != y.id || x.text != y.text || x.relevant != y.relevant || x.answer_facts != y.answer_facts) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  QuestionSet set;
  try {
    set = parse_questions(okfbench::fuzz::as_text(data, size), "fuzz.yaml");
  } catch (const okfbench::InputError&) {
    return 0;
  }
  std::set<std::string> ids;
  for (const Question& q : set.questions) {
    check(!q.id.empty() && !q.text.empty(), "a question without id or text loaded");
    check(ids.insert(q.id).second, "two questions share an id");
    check(q.line >= 1, "a question has no line");
  }
  const std::string written = to_yaml(set);
  QuestionSet back;
  try {
    back = parse_questions(written, "written.yaml");
  } catch (const okfbench::InputError& e) {
    check(false, std::string("to_yaml wrote a set that does not load: ") + e.what());
  }
  if (okfbench::retrieval::invalid_utf8_offset(okfbench::fuzz::as_text(data, size)) == std::string_view::npos) {
    check(same(set, back), "to_yaml and parse_questions do not round-trip");
  } else {
    check(back.questions.size() == set.questions.size(), "to_yaml lost questions of a set that is not UTF-8");
    check(okfbench::retrieval::invalid_utf8_offset(written) == std::string::npos, "to_yaml wrote bytes that are not UTF-8");
  }
  return 0;
}
