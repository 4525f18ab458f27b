// okfbench grade: grade answers from any system (another harness, a
// production log) against a question set by the same graders a run uses.
//
//   okfbench grade --questions Q.yaml --answers ANSWERS.jsonl
//                  [--grader facts|citations|answered|judge:MODEL]... [--bundle B] [--votes N]
//                  [--judge-cache FILE] [--pricing FILE] [--json]
//
// ANSWERS.jsonl: one JSON object a line with "question_id" (a string, or an
// integer read as its decimal text) and "answer" (a string); other keys are
// ignored, blank lines skipped. Every line is checked before anything is
// graded, so a bad line costs no judge call.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "datasets/questions.hpp"
#include "engine/bundle_source.hpp"
#include "engine/selection_flags.hpp"
#include "engine/data_files.hpp"
#include "engine/judge.hpp"
#include "engine/limits.hpp"
#include "engine/number_option.hpp"
#include "reports/format.hpp"
#include "reports/graders.hpp"
#include "reports/judge.hpp"
#include "reports/pricing.hpp"
#include "reports/summary.hpp"
#include "retrieval/bundle.hpp"

namespace okfbench::cli {
namespace {

namespace fs = std::filesystem;

namespace fs = std::filesystem;
using nlohmann::json;

// The documented cache folder (as the git and index caches), not a folder
// made silently in the working directory; only a judge writes there.
fs::path default_judge_cache() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return fs::path(xdg) / "okfbench" / "judge-responses.sqlite";
  if (const char* home = std::getenv("HOME"); home && *home) return fs::path(home) / ".cache" / "okfbench" / "judge-responses.sqlite";
  throw InputError("neither XDG_CACHE_HOME nor HOME is set: pass --judge-cache FILE for the judge's response cache");
}

struct GradeArgs {
  std::string questions;
  std::string answers;
  std::vector<std::string> graders;
  std::string bundle;
  std::string profile = "okf";
  int votes = 1;
  std::string judge_cache;  // "" = default_judge_cache()
  std::string pricing;
  bool json = false;
};

struct AnswerLine {
  int line = 0;
  const datasets::Question* question = nullptr;
  std::string answer;
};

std::string where(const std::string& file, int line) { return fmt::format("{}:{}", file, line); }

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

std::vector<AnswerLine> read_answers(const std::string& path, const datasets::QuestionSet& set,
                                     const std::string& questions_file) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot be read; check the path", path));
  std::vector<AnswerLine> lines;
  std::string text;
  for (int number = 1; std::getline(in, text); ++number) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    AnswerLine line = read_line(text, where(path, number), set, questions_file);
    line.line = number;
    lines.push_back(std::move(line));
  }
  if (lines.empty()) throw InputError(fmt::format("{}: no answers (the file is empty)", path));
  return lines;
}

// --grader values -> grader names and the judge model.
std::vector<reports::Grader> graders_of(const GradeArgs& a) {
  std::vector<std::string> names;
  std::optional<engine::JudgeSettings> judge;
  const std::vector<std::string> given =
      a.graders.empty() ? std::vector<std::string>{"facts", "citations", "answered"} : a.graders;
  for (const auto& g : given) {
    if (g.starts_with("judge:")) {
      if (judge) throw UsageError("--grader judge:MODEL is given twice; use one judge (and --votes N)");
      judge = engine::JudgeSettings{g.substr(6), a.votes, 
                                     a.judge_cache.empty() ? default_judge_cache() : fs::path(a.judge_cache)};
      names.push_back("judge");
    } else if (g == "judge") {
      throw UsageError("--grader judge needs a model: judge:sim, judge:openai:MODEL or judge:anthropic:MODEL");
    } else {
      names.push_back(g);
    }
  }
  return engine::make_graders(names, judge);
}

reports::GradeInput input_of(const AnswerLine& line, const retrieval::Bundle* bundle, bool judged) {
  const datasets::Question& q = *line.question;
  reports::GradeInput in;
  in.question_id = q.id;
  in.question = q.text;
  in.relevant = reports::Judgments(q.relevant.begin(), q.relevant.end());
  in.answer_facts = q.answer_facts;
  in.fact_importance = engine::nugget_importance(q);
  in.answer = line.answer;
  // Without a bundle every bracketed id counts as a citation.
  in.citations = reports::cited_ids(line.answer, [&](const std::string& id) { return !bundle || bundle->find(id); });
  in.end = line.answer.find_first_not_of(" \t\r\n") == std::string::npos ? reports::TrialEnd::no_answer
                                                                          : reports::TrialEnd::answered;
  for (const auto& [id, grade] : q.relevant) {
    const retrieval::Concept* c = judged && bundle && grade > 0 ? bundle->find(id) : nullptr;
    if (c) in.references.push_back({id, c->title + "\n\n" + c->body});
  }
  return in;
}

// ---- output ----

// A Markdown table cell (reports/format.hpp escapes every untrusted text).
std::string cell(const std::string& text) { return reports::markdown_text(text); }

std::string score_text(const reports::Grade& g) { return g.score ? fmt::format("{:.3f}", *g.score) : "n/a"; }

std::string optional_text(const std::optional<double>& v, int places) {
  return v ? reports::format_decimal(*v, places) : "n/a";
}

struct Graded {
  std::vector<reports::TrialRecord> records;  // one per answer line: the question id, answer and grades
  std::vector<int> lines;
};

std::string markdown(const GradeArgs& a, const Graded& g, const std::vector<reports::Grader>& graders,
                     const reports::PricingTable& pricing) {
  std::vector<std::string> names;
  for (const auto& gr : graders) names.push_back(gr.name);
  std::string out = fmt::format("# okfbench grade\n\nquestions: {}; answers: {} ({} lines); graders: {}\n\n",
                                cell(a.questions), cell(a.answers), g.records.size(), fmt::join(names, ", "));
  out += "| line | question | grader | status | score | correct | detail |\n|--:|---|---|---|--:|:-:|---|\n";
  for (std::size_t i = 0; i < g.records.size(); ++i) {
    for (const auto& grade : g.records[i].grades) {
      out += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", g.lines[i], cell(g.records[i].question_id),
                         grade.grader, reports::to_string(grade.status), score_text(grade),
                         grade.correct ? "yes" : "no", cell(grade.detail));
    }
  }
  std::vector<const reports::TrialRecord*> all;
  for (const auto& r : g.records) all.push_back(&r);
  out += "\n## Summary\n\n| grader | graded | not graded | judge errors | mean score | correct |\n"
         "|---|--:|--:|--:|--:|--:|\n";
  const auto stats = reports::grader_stats(all);
  for (const auto& name : names) {
    auto it = stats.find(name);
    if (it == stats.end()) continue;
    const reports::GraderStats& s = it->second;
    out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", name, s.graded, s.not_graded, s.judge_errors,
                       optional_text(s.mean_score, 3),
                       s.share_correct ? fmt::format("{} ({})", s.correct, reports::format_share(s.share_correct)) : "n/a");
  }
  const reports::JudgeTotals judge = reports::judge_totals(all, pricing);
  if (judge.trials > 0) {
    out += fmt::format("\nJudge {}: {} call(s), {} from the response cache; {} input and {} output tokens; {}.\n",
                       cell(judge.model), judge.calls, judge.cache_hits,
                       judge.input_tokens ? reports::format_count(static_cast<double>(*judge.input_tokens)) : "n/a",
                       judge.output_tokens ? reports::format_count(static_cast<double>(*judge.output_tokens)) : "n/a",
                       judge.dollars ? reports::format_dollars(*judge.dollars) : "cost n/a (no price for the judge model)");
    const reports::Agreement agree = reports::agreement(all, "judge", "facts");
    if (agree.pairs > 0) {
      out += fmt::format("Judge and facts agree on {} of {} answers graded by both (Cohen's kappa {}).\n",
                         reports::format_share(agree.share), agree.pairs, optional_text(agree.kappa, 3));
    }
    if (judge.model == "sim") out += fmt::format("Note: {}.\n", reports::kSimJudgeNote);
  }
  return out;
}

json stats_json(const std::map<std::string, reports::GraderStats>& stats) {
  auto number = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  json out = json::object();
  for (const auto& [name, s] : stats) {
    out[name] = {{"graded", s.graded},           {"not_graded", s.not_graded},
                 {"judge_errors", s.judge_errors}, {"correct", s.correct},
                 {"mean_score", number(s.mean_score)}, {"share_correct", number(s.share_correct)}};
  }
  return out;
}

std::string json_text(const Graded& g, const reports::PricingTable& pricing) {
  auto number = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  json grades = json::array();
  std::vector<const reports::TrialRecord*> all;
  for (std::size_t i = 0; i < g.records.size(); ++i) {
    all.push_back(&g.records[i]);
    for (const auto& grade : g.records[i].grades) {
      json entry = {{"line", g.lines[i]},
                    {"question_id", g.records[i].question_id},
                    {"grader", grade.grader},
                    {"status", reports::to_string(grade.status)},
                    {"score", number(grade.score)},
                    {"correct", grade.correct},
                    {"detail", grade.detail}};
      if (!grade.raw.empty()) entry["raw"] = grade.raw;
      grades.push_back(std::move(entry));
    }
  }
  json summary = {{"answers", g.records.size()}, {"graders", stats_json(reports::grader_stats(all))}};
  const reports::JudgeTotals judge = reports::judge_totals(all, pricing);
  summary["judge"] = nullptr;
  if (judge.trials > 0) {
    auto count = [](const std::optional<std::int64_t>& v) { return v ? json(*v) : json(nullptr); };
    const reports::Agreement agree = reports::agreement(all, "judge", "facts");
    summary["judge"] = {{"model", judge.model},
                        {"calls", judge.calls},
                        {"cache_hits", judge.cache_hits},
                        {"input_tokens", count(judge.input_tokens)},
                        {"output_tokens", count(judge.output_tokens)},
                        {"cost_usd", number(judge.dollars)},
                        {"agreement_with_facts", {{"pairs", agree.pairs}, {"share", number(agree.share)}, {"kappa", number(agree.kappa)}}},
                        {"note", judge.model == "sim" ? json(reports::kSimJudgeNote) : json(nullptr)}};
  }
  return okfbench::json_text(json{{"grades", grades}, {"summary", summary}}, 2) + "\n";
}

int run_grade(const GradeArgs& a) {
  const std::vector<reports::Grader> graders = graders_of(a);
  const datasets::QuestionSet set = datasets::load_questions(a.questions);
  std::optional<retrieval::Bundle> bundle;
  if (!a.bundle.empty()) {
    retrieval::LoadOptions load;
    load.profile = profile_option(a.profile);
    bundle = retrieval::Bundle::load(a.bundle, load);
    engine::require_concepts(*bundle, a.bundle);
    datasets::check_concepts(set, *bundle);
  }
  const std::vector<AnswerLine> lines = read_answers(a.answers, set, a.questions);
  const auto pricing = a.pricing.empty() ? engine::load_default_pricing() : reports::PricingTable::load(a.pricing);
  const bool judged = std::any_of(graders.begin(), graders.end(), [](const reports::Grader& g) { return g.name == "judge"; });
  if (judged && !bundle) std::fprintf(stderr, "okfbench grade: no --bundle, so the judge sees no reference text\n");
  Graded g;
  for (const auto& line : lines) {
    reports::TrialRecord r;
    r.question_id = line.question->id;
    r.answer = line.answer;
    reports::Grading grading = reports::grade_all(graders, input_of(line, bundle ? &*bundle : nullptr, judged));
    r.grades = std::move(grading.grades);
    r.judge_usage = std::move(grading.judge_usage);
    g.records.push_back(std::move(r));
    g.lines.push_back(line.line);
  }
  std::fputs((a.json ? json_text(g, pricing) : markdown(a, g, graders, pricing)).c_str(), stdout);
  return 0;
}

}  // namespace

void add_grade_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<GradeArgs>();
  CLI::App* cmd = app.add_subcommand("grade", "Grade answers (JSONL: question_id, answer) against a question set");
  cmd->add_option("--questions", args->questions, "Question set YAML (with answer_facts and relevant concepts)")->required();
  cmd->add_option("--answers", args->answers, "JSONL file, one {\"question_id\", \"answer\"} object a line")->required();
  cmd->add_option("--grader", args->graders,
                  "facts, citations, answered or judge:MODEL (sim, openai:MODEL, anthropic:MODEL); repeatable "
                  "(default: facts, citations, answered)");
  cmd->add_option("--bundle", args->bundle, "The bundle the questions are about: citations must name its concepts, "
                                            "and the judge reads the relevant concepts' text");
  cmd->add_option("--profile", args->profile, "--bundle's profile: okf, repo, lessons or expertise")
      ->check(CLI::IsMember({"okf", "repo", "lessons", "expertise"}))
      ->capture_default_str();
  cmd->add_option("--votes", args->votes, "Judge votes per answer (majority; ties go to the lower verdict)")
      ->capture_default_str()
      ->check(number_in(engine::limits::judge_votes));
  cmd->add_option("--judge-cache", args->judge_cache,
                  "Response cache of judge replies (SQLite; default $XDG_CACHE_HOME/okfbench/judge-responses.sqlite)");
  cmd->add_option("--pricing", args->pricing, "Pricing table for the judge's cost (default: share/okfbench/pricing.yaml)");
  cmd->add_flag("--json", args->json, "Print {\"grades\": [...], \"summary\": {...}} instead of Markdown");
  cmd->callback([args, &action] { action = [args] { return run_grade(*args); }; });
}

}  // namespace okfbench::cli
