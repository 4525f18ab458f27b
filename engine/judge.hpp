#pragma once
// The graders a run or `okfbench grade` uses, and the judge's model side: the
// reports::JudgeCall (reports/judge.hpp) implemented over an agents::ChatModel.
//
// Judge models: "sim" (offline; okfbench's rule-based judge, not a language
// model), "openai:MODEL", "anthropic:MODEL" (endpoints and keys from the
// environment, as for trials). Each call is made at temperature 0 with the
// rubric as the system prompt, through the SQLite response cache when
// `cache_db` is set, keyed with the vote index, so grading the same answers
// again costs nothing and votes stay distinct samples.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agents/sim_model.hpp"
#include "datasets/questions.hpp"
#include "reports/graders.hpp"

namespace okfbench::engine {

struct JudgeSettings {
  std::string model = "sim";
  int votes = 1;
  std::filesystem::path cache_db;  // response cache; "" = none
};

// sim, openai:MODEL or anthropic:MODEL.
// The question's answer facts as nuggets: their importance, one per fact.
std::vector<reports::NuggetImportance> nugget_importance(const datasets::Question& question);

bool is_judge_model(std::string_view model);

// Throws UsageError for a model other than sim, openai:MODEL, anthropic:MODEL,
// or votes outside 1..reports::kMaxJudgeVotes.
reports::Grader make_judge(const JudgeSettings& settings);

// `options` with reply_first set so that sim answers judge requests
// (reports::is_judge_request) with reports::sim_judge_reply and everything
// else with its usual policy. `okfbench mock-server` serves this sim.
agents::SimOptions judging_sim(agents::SimOptions options);

// The graders named, in order: "facts", "citations", "answered", and "judge"
// (built from `judge`, which must then be set). Throws UsageError naming an
// unknown grader, a repeated one, or "judge" without settings.
std::vector<reports::Grader> make_graders(const std::vector<std::string>& names,
                                          const std::optional<JudgeSettings>& judge);

}  // namespace okfbench::engine
