#include "engine/judge.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "agents/decorators.hpp"
#include "agents/models.hpp"
#include "reports/judge.hpp"
#include "core/error.hpp"
#include "retrieval/tokens.hpp"

namespace okfbench::engine {
namespace {

void check_model(const std::string& model) {
  if (!is_judge_model(model)) {
    throw UsageError(fmt::format("judge model \"{}\": use sim, openai:MODEL or anthropic:MODEL", model));
  }
}

reports::JudgeReply ask(const JudgeSettings& s, const retrieval::TokenCounter* counter, const reports::JudgePrompt& prompt,
                        int vote) {
  agents::ModelOptions options;
  options.sim = judging_sim({});
  options.counter = counter;
  options.cache_db = s.cache_db;
  options.repeat_index = vote;
  const std::unique_ptr<agents::ChatModel> model = agents::make_model(s.model, options);
  agents::ChatRequest request;
  request.model = s.model;
  request.messages.push_back({agents::Role::system, prompt.system, {}, {}, {}});
  request.messages.push_back({agents::Role::user, prompt.user, {}, {}, {}});
  request.max_tokens = reports::kJudgeMaxTokens;
  request.temperature = 0.0;
  const agents::ChatResponse response = model->chat(request);
  const auto* cache = dynamic_cast<const agents::CachingModel*>(model.get());
  reports::JudgeReply reply;
  reply.text = response.message.content;
  reply.input_tokens = response.usage.input_tokens;
  reply.cached_tokens = response.usage.cached_input_tokens;
  reply.cache_write_tokens = response.usage.cache_write_tokens;
  reply.output_tokens = response.usage.output_tokens;
  reply.from_cache = cache && cache->hits() > 0;
  return reply;
}

}  // namespace

std::vector<reports::NuggetImportance> nugget_importance(const datasets::Question& question) {
  std::vector<reports::NuggetImportance> out;
  for (datasets::FactImportance f : question.fact_importance)
    out.push_back(f == datasets::FactImportance::okay ? reports::NuggetImportance::okay : reports::NuggetImportance::vital);
  return out;
}

bool is_judge_model(std::string_view model) {
  return model == "sim" || (model.starts_with("openai:") && model.size() > 7) ||
         (model.starts_with("anthropic:") && model.size() > 10);
}

reports::Grader make_judge(const JudgeSettings& settings) {
  check_model(settings.model);
  reports::JudgeOptions options;
  options.model = settings.model;
  options.votes = settings.votes;
  // sim counts its usage with o200k_base: load the vocabulary once, not per call.
  std::shared_ptr<const retrieval::TokenCounter> counter;
  if (settings.model == "sim") counter = retrieval::make_counter("o200k_base");
  options.call = [settings, counter](const reports::JudgePrompt& prompt, int vote) {
    return ask(settings, counter.get(), prompt, vote);
  };
  return reports::make_judge_grader(std::move(options));
}

agents::SimOptions judging_sim(agents::SimOptions options) {
  options.reply_first = [](const agents::ChatRequest& request) -> std::optional<agents::Message> {
    if (!request.tools.empty() || !reports::is_judge_request(agents::system_prompt(request))) return std::nullopt;
    std::string user;
    for (const auto& m : request.messages) {
      if (m.role == agents::Role::user) user = m.content;
    }
    return agents::Message{agents::Role::assistant, reports::sim_judge_reply(user), {}, {}, {}};
  };
  return options;
}

std::vector<reports::Grader> make_graders(const std::vector<std::string>& names,
                                          const std::optional<JudgeSettings>& judge) {
  std::vector<reports::Grader> out;
  for (const auto& name : names) {
    if (std::any_of(out.begin(), out.end(), [&](const reports::Grader& g) { return g.name == name; })) {
      throw UsageError(fmt::format("grader \"{}\" is named twice", name));
    }
    if (name == "judge") {
      if (!judge) throw UsageError("grader \"judge\" needs a judge model (judge: {model: ...} or --grader judge:MODEL)");
      out.push_back(make_judge(*judge));
      continue;
    }
    const reports::Grader* g = reports::find_builtin_grader(name);
    if (!g) throw UsageError(fmt::format("unknown grader \"{}\": use facts, citations, answered or judge", name));
    out.push_back(*g);
  }
  return out;
}

}  // namespace okfbench::engine
