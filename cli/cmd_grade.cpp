// okfbench grade: grade answers from any system (another harness, a
// production log) against a question set by the same graders a run uses.
//
//   okfbench grade --questions Q.yaml --answers ANSWERS.jsonl
//                  [--grader facts|citations|answered|judge:MODEL]... [--bundle B] [--votes N]
//                  [--judge-cache FILE] [--pricing FILE] [--json]
//
// ANSWERS.jsonl is read as engine/answers.hpp says. Every line is checked
// before anything is graded, so a bad line costs no judge call; then the
// answers are graded and written one at a time, so a long file costs memory
// for the summary's figures, not for its answers.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/json_text.hpp"
#include "datasets/questions.hpp"
#include "engine/answers.hpp"
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
using nlohmann::json;

// The documented cache folder (as the git and index caches), not a folder
// made silently in the working directory; only a judge writes there.
fs::path default_judge_cache() {
  return user_cache_dir("judge-responses.sqlite", "the judge's response cache", "--judge-cache FILE");
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

// ---- output ----

// A Markdown table cell (reports/format.hpp escapes every untrusted text).
std::string cell(const std::string& text) { return reports::markdown_text(text); }

std::string score_text(const reports::Grade& g) { return g.score ? fmt::format("{:.3f}", *g.score) : "n/a"; }

std::string optional_text(const std::optional<double>& v, int places) {
  return v ? reports::format_decimal(*v, places) : "n/a";
}

// The summary's figures, a graded answer at a time: answers and grades are
// written as they are graded and then dropped, so grading a long file holds
// one answer at a time.
struct Tallies {
  explicit Tallies(const reports::PricingTable& pricing) : grades(pricing) {}
  void add(const reports::TrialRecord& r) {
    grades.add(r);
    judge_facts.add(r);
    ++answers;
  }
  reports::GradeTally grades;
  reports::AgreementTally judge_facts{"judge", "facts"};
  std::size_t answers = 0;
};

// One output format, written as the answers are graded.
class GradeWriter {
 public:
  virtual ~GradeWriter() = default;
  virtual void add(int line, const reports::TrialRecord& record) = 0;
  virtual void finish(const Tallies& all) = 0;
};

class MarkdownWriter : public GradeWriter {
 public:
  MarkdownWriter(const GradeArgs& a, std::size_t answers, const std::vector<reports::Grader>& graders) {
    for (const auto& gr : graders) names_.push_back(gr.name);
    std::fputs(fmt::format("# okfbench grade\n\nquestions: {}; answers: {} ({} lines); graders: {}\n\n",
                           cell(a.questions), cell(a.answers), answers, fmt::join(names_, ", "))
                   .c_str(),
               stdout);
    std::fputs("| line | question | grader | status | score | correct | detail |\n|--:|---|---|---|--:|:-:|---|\n", stdout);
  }
  void add(int line, const reports::TrialRecord& record) override {
    for (const auto& grade : record.grades) {
      std::fputs(fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", line, cell(record.question_id), grade.grader,
                             reports::to_string(grade.status), score_text(grade), grade.correct ? "yes" : "no",
                             cell(grade.detail))
                     .c_str(),
                 stdout);
    }
  }
  void finish(const Tallies& all) override {
    std::fputs(summary(all).c_str(), stdout);
  }

 private:
  std::string summary(const Tallies& all) const {
    std::string out = "\n## Summary\n\n| grader | graded | not graded | judge errors | mean score | correct |\n"
                      "|---|--:|--:|--:|--:|--:|\n";
    const auto stats = all.grades.grader_stats();
    for (const auto& name : names_) {
      auto it = stats.find(name);
      if (it == stats.end()) continue;
      const reports::GraderStats& s = it->second;
      out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", name, s.graded, s.not_graded, s.judge_errors,
                         optional_text(s.mean_score, 3),
                         s.share_correct ? fmt::format("{} ({})", s.correct, reports::format_share(s.share_correct)) : "n/a");
    }
    return out + judge_lines(all);
  }
  std::string judge_lines(const Tallies& all) const {
    const reports::JudgeTotals judge = all.grades.judge_totals();
    if (judge.trials == 0) return "";
    std::string out = fmt::format(
        "\nJudge {}: {} call(s), {} from the response cache; {} input and {} output tokens; {}.\n", cell(judge.model),
        judge.calls, judge.cache_hits,
        judge.input_tokens ? reports::format_count(static_cast<double>(*judge.input_tokens)) : "n/a",
        judge.output_tokens ? reports::format_count(static_cast<double>(*judge.output_tokens)) : "n/a",
        judge.dollars ? reports::format_dollars(*judge.dollars) : "cost n/a (no price for the judge model)");
    const reports::Agreement agree = all.judge_facts.agreement();
    if (agree.pairs > 0) {
      out += fmt::format("Judge and facts agree on {} of {} answers graded by both (Cohen's kappa {}).\n",
                         reports::format_share(agree.share), agree.pairs, optional_text(agree.kappa, 3));
    }
    if (judge.model == "sim") out += fmt::format("Note: {}.\n", reports::kSimJudgeNote);
    return out;
  }

  std::vector<std::string> names_;
};

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

// `text` with `spaces` more indentation on every line but the first: a
// pretty-printed value placed inside a pretty-printed document.
std::string indented(const std::string& text, int spaces) {
  std::string out;
  for (char c : text) {
    out += c;
    if (c == '\n') out.append(static_cast<std::size_t>(spaces), ' ');
  }
  return out;
}

// {"grades": [...], "summary": {...}} as json_text(value, 2) prints it, the
// grades written one by one as they are graded.
class JsonWriter : public GradeWriter {
 public:
  JsonWriter() { std::fputs("{\n  \"grades\": [", stdout); }
  void add(int line, const reports::TrialRecord& record) override {
    auto number = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
    for (const auto& grade : record.grades) {
      json entry = {{"line", line},
                    {"question_id", record.question_id},
                    {"grader", grade.grader},
                    {"status", reports::to_string(grade.status)},
                    {"score", number(grade.score)},
                    {"correct", grade.correct},
                    {"detail", grade.detail}};
      if (!grade.raw.empty()) entry["raw"] = grade.raw;
      std::fputs(((entries_++ ? ",\n    " : "\n    ") + indented(okfbench::json_text(entry, 2), 4)).c_str(), stdout);
    }
  }
  void finish(const Tallies& all) override {
    std::fputs(entries_ ? "\n  ],\n  \"summary\": " : "],\n  \"summary\": ", stdout);
    std::fputs((indented(okfbench::json_text(summary(all), 2), 2) + "\n}\n").c_str(), stdout);
  }

 private:
  json summary(const Tallies& all) const {
    auto number = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
    json summary = {{"answers", all.answers}, {"graders", stats_json(all.grades.grader_stats())}};
    const reports::JudgeTotals judge = all.grades.judge_totals();
    summary["judge"] = nullptr;
    if (judge.trials == 0) return summary;
    auto count = [](const std::optional<std::int64_t>& v) { return v ? json(*v) : json(nullptr); };
    const reports::Agreement agree = all.judge_facts.agreement();
    summary["judge"] = {{"model", judge.model},
                        {"calls", judge.calls},
                        {"cache_hits", judge.cache_hits},
                        {"input_tokens", count(judge.input_tokens)},
                        {"output_tokens", count(judge.output_tokens)},
                        {"cost_usd", number(judge.dollars)},
                        {"agreement_with_facts", {{"pairs", agree.pairs}, {"share", number(agree.share)}, {"kappa", number(agree.kappa)}}},
                        {"note", judge.model == "sim" ? json(reports::kSimJudgeNote) : json(nullptr)}};
    return summary;
  }

  std::size_t entries_ = 0;
};

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
  const std::size_t answers = engine::check_answers(a.answers, set, a.questions);
  const auto pricing = a.pricing.empty() ? engine::load_default_pricing() : reports::PricingTable::load(a.pricing);
  const bool judged = std::any_of(graders.begin(), graders.end(), [](const reports::Grader& g) { return g.name == "judge"; });
  if (judged && !bundle) std::fprintf(stderr, "okfbench grade: no --bundle, so the judge sees no reference text\n");
  std::unique_ptr<GradeWriter> out;
  if (a.json) {
    out = std::make_unique<JsonWriter>();
  } else {
    out = std::make_unique<MarkdownWriter>(a, answers, graders);
  }
  Tallies tallies(pricing);
  engine::for_each_answer(a.answers, set, a.questions, [&](engine::AnswerLine&& line) {
    reports::TrialRecord r;
    r.question_id = line.question->id;
    r.answer = line.answer;
    reports::Grading grading = reports::grade_all(graders, engine::grade_input(line, bundle ? &*bundle : nullptr, judged));
    r.grades = std::move(grading.grades);
    r.judge_usage = std::move(grading.judge_usage);
    out->add(line.line, r);
    tallies.add(r);
  });
  out->finish(tallies);
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
