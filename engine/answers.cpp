#include "engine/answers.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/regular_file.hpp"
#include "engine/judge.hpp"

namespace okfbench::engine {
namespace {

using nlohmann::json;

std::string question_id_of(const json& value, const std::string& at) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_integer()) return value.dump();
  throw InputError(fmt::format("{}: \"question_id\" must be a string (or an integer), not {}", at, value.type_name()));
}

AnswerLine read_line(const std::string& text, const std::string& at, const datasets::QuestionSet& set,
                     const std::string& questions_file) {
  const json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) throw InputError(fmt::format("{}: not valid JSON; each line must be one JSON object", at));
  if (!j.is_object()) throw InputError(fmt::format("{}: expected a JSON object, got {}", at, j.type_name()));
  if (!j.contains("question_id")) throw InputError(fmt::format("{}: key \"question_id\" is missing", at));
  if (!j.contains("answer")) throw InputError(fmt::format("{}: key \"answer\" is missing", at));
  if (!j["answer"].is_string()) {
    throw InputError(fmt::format("{}: \"answer\" must be a string, not {}", at, j["answer"].type_name()));
  }
  const std::string id = question_id_of(j["question_id"], at);
  AnswerLine out;
  out.question = set.find(id);
  if (!out.question) {
    throw InputError(fmt::format("{}: question_id \"{}\" is not in {}; grade answers against the question set they "
                                 "answer",
                                 at, id, questions_file));
  }
  out.answer = j["answer"].get<std::string>();
  return out;
}

}  // namespace

void for_each_answer(const std::filesystem::path& path, const datasets::QuestionSet& set,
                     const std::string& questions_file, const std::function<void(AnswerLine&&)>& each) {
  const RegularFile file(path);
  LineReader lines(file, path, kMaxAnswerLineBytes);
  std::size_t answers = 0;
  for (std::string text; lines.next(text);) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    AnswerLine line = read_line(text, fmt::format("{}:{}", path.string(), lines.number()), set, questions_file);
    line.line = lines.number();
    ++answers;
    each(std::move(line));
  }
  if (answers == 0) throw InputError(fmt::format("{}: no answers (the file is empty)", path.string()));
}

std::size_t check_answers(const std::filesystem::path& path, const datasets::QuestionSet& set,
                          const std::string& questions_file) {
  std::size_t answers = 0;
  for_each_answer(path, set, questions_file, [&](AnswerLine&&) { ++answers; });
  return answers;
}

reports::GradeInput question_grade_input(const datasets::Question& q, std::string answer,
                                         const std::function<const retrieval::Concept*(const std::string&)>& reference) {
  reports::GradeInput in;
  in.question_id = q.id;
  in.question = q.text;
  in.relevant = reports::Judgments(q.relevant.begin(), q.relevant.end());
  in.answer_facts = q.answer_facts;
  in.fact_importance = nugget_importance(q);
  in.answer = std::move(answer);
  for (const auto& [id, grade] : q.relevant) {
    const retrieval::Concept* c = reference && grade > 0 ? reference(id) : nullptr;
    if (c) in.references.push_back({id, c->title + "\n\n" + c->body});
  }
  return in;
}

reports::GradeInput grade_input(const AnswerLine& line, const retrieval::Bundle* bundle, bool judged) {
  std::function<const retrieval::Concept*(const std::string&)> reference;
  if (judged && bundle) reference = [bundle](const std::string& id) { return bundle->find(id); };
  reports::GradeInput in = question_grade_input(*line.question, line.answer, reference);
  in.citations = reports::cited_ids(line.answer, [&](const std::string& id) { return !bundle || bundle->find(id); });
  in.end = line.answer.find_first_not_of(" \t\r\n") == std::string::npos ? reports::TrialEnd::no_answer
                                                                          : reports::TrialEnd::answered;
  return in;
}

}  // namespace okfbench::engine
