#include "agents/agent.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <set>

#include "agents/json_util.hpp"
#include "agents/openai_json.hpp"
#include "core/error.hpp"
#include "core/saturate.hpp"
#include "core/json_text.hpp"

namespace okfbench::agents {
namespace {

// Arguments compare as JSON, so {"a":1, "b":2} repeats {"b":2,"a":1}.
// Arguments nested too deep to serialise safely compare as text.
std::string canonical_call(const ToolCall& call) {
  if (json_util::nesting_depth(call.arguments) > json_util::kMaxDepth) return call.name + '\n' + call.arguments;
  nlohmann::json args = nlohmann::json::parse(call.arguments, nullptr, false);
  return call.name + '\n' + (args.is_discarded() ? call.arguments : json_text(args));
}

std::vector<Message> opening_messages(const Toolbox& tools, std::string_view question, const AgentOptions& options) {
  std::vector<Message> messages = options.history;
  bool has_system = !messages.empty() && messages.front().role == Role::system;
  if (!has_system) {
    std::string prompt = options.system_prompt ? *options.system_prompt : tools.default_system_prompt();
    if (!prompt.empty()) messages.insert(messages.begin(), Message{Role::system, prompt, {}, {}, {}});
  }
  messages.push_back(Message{Role::user, std::string(question), {}, {}, {}});
  return messages;
}

bool offered(const std::vector<ToolSpec>& specs, const std::string& name) {
  return std::any_of(specs.begin(), specs.end(), [&](const ToolSpec& s) { return s.name == name; });
}

std::string available_names(const std::vector<ToolSpec>& specs) {
  std::string names;
  for (const ToolSpec& s : specs) names += (names.empty() ? "" : ", ") + s.name;
  return names;
}

class Loop {
 public:
  Loop(ChatModel& model, Toolbox& tools, const AgentOptions& options) : model_(model), tools_(tools), options_(options) {}

  AgentRun run(std::string_view question) {
    run_.tools = tools_.specs();
    run_.messages = opening_messages(tools_, question, options_);
    if (options_.counter)
      run_.schema_tokens_per_call = static_cast<std::int64_t>(
          run_.tools.empty() ? 0 : options_.counter->count(openai::tools_to_json(run_.tools)));
    for (int turn = 1; turn <= options_.max_turns; ++turn) {
      ChatResponse response;
      try {
        response = model_.chat(request());
      } catch (const std::exception& e) {
        run_.stop = AgentStop::model_error;
        run_.error = e.what();
        run_.failure = failure_of(e);
        return std::move(run_);
      }
      Message message = std::move(response.message);
      message.role = Role::assistant;
      if (message.tool_calls.empty()) {
        run_.turns.push_back(AgentTurn{turn, response.usage, 0, 0});
        run_.answer = message.content;
        run_.messages.push_back(std::move(message));
        run_.stop = AgentStop::answered;
        return std::move(run_);
      }
      std::size_t dropped = drop_extra_calls(message);
      run_.turns.push_back(AgentTurn{turn, response.usage, message.tool_calls.size(), dropped});
      for (std::size_t i = 0; i < message.tool_calls.size(); ++i)
        if (message.tool_calls[i].id.empty()) message.tool_calls[i].id = fmt::format("call_{}_{}", turn, i + 1);
      run_.messages.push_back(message);
      for (const ToolCall& call : message.tool_calls) execute(turn, call);
      // The model learns of the dropped calls where it reads about the ones that ran.
      if (dropped > 0) run_.messages.back().content += dropped_note(dropped);
    }
    run_.stop = AgentStop::max_turns;
    return std::move(run_);
  }

 private:
  ChatRequest request() const {
    ChatRequest r;
    r.messages = run_.messages;
    r.tools = run_.tools;
    r.max_tokens = options_.max_tokens;
    r.temperature = options_.temperature;
    r.breakpoints = options_.breakpoints;
    return r;
  }

  std::size_t cap() const { return std::max<std::size_t>(1, options_.max_tool_calls_per_turn); }

  // Keeps the first cap() calls of a reply; returns how many were cut.
  std::size_t drop_extra_calls(Message& message) const {
    if (message.tool_calls.size() <= cap()) return 0;
    std::size_t dropped = message.tool_calls.size() - cap();
    message.tool_calls.resize(cap());
    return dropped;
  }

  std::string dropped_note(std::size_t dropped) const {
    return fmt::format("\n[{} more tool call(s) in your last reply were not run: at most {} run per turn. Ask "
                       "again for what you still need.]",
                       dropped, cap());
  }

  ToolResult call_tool(const ToolCall& call) {
    if (!offered(run_.tools, call.name))
      return tool_error(
          fmt::format("unknown tool '{}'; available tools: {}", call.name, available_names(run_.tools)));
    try {
      return tools_.call(call.name, call.arguments);
    } catch (const std::exception& e) {
      return tool_error(fmt::format("{} failed: {}", call.name, e.what()));
    }
  }

  void execute(int turn, const ToolCall& call) {
    ToolResult result = call_tool(call);
    AgentToolCall record{turn, call.name, call.arguments, result.content.size(), result.error,
                         !seen_.insert(canonical_call(call)).second, std::nullopt};
    if (offered(run_.tools, call.name)) record.access = tools_.access(call.name, call.arguments, result);
    if (options_.on_tool_call) options_.on_tool_call(record, result.content);
    run_.tool_calls.push_back(std::move(record));
    run_.messages.push_back(Message{Role::tool, std::move(result.content), {}, call.id, call.name});
  }

  ChatModel& model_;
  Toolbox& tools_;
  const AgentOptions& options_;
  AgentRun run_;
  std::set<std::string> seen_;
};

std::string count_text(const std::optional<std::int64_t>& value) {
  return value ? std::to_string(*value) : std::string("?");
}
}  // namespace

ToolResult tool_error(std::string message) {
  return ToolResult{json_text(nlohmann::json{{"error", message}}), std::move(message)};
}

AgentRun run_agent(ChatModel& model, Toolbox& tools, std::string_view question, const AgentOptions& options) {
  return Loop(model, tools, options).run(question);
}

RunSummary summary(const AgentRun& run) {
  RunSummary s;
  s.turns = run.turns.size();
  s.tool_calls = run.tool_calls.size();
  for (const AgentToolCall& call : run.tool_calls) {
    s.errors += call.error.empty() ? 0 : 1;
    s.repeated_calls += call.repeated ? 1 : 0;
    s.result_bytes += call.result_bytes;
    s.bytes_by_tool[call.name] += call.result_bytes;
    s.calls_by_tool[call.name] += 1;
  }
  for (std::size_t i = 0; i < run.turns.size(); ++i) {
    const Usage& u = run.turns[i].usage;
    s.dropped_tool_calls += run.turns[i].dropped_tool_calls;
    s.usage = i == 0 ? u : add(s.usage, u);
    s.input_per_turn.push_back(u.input_tokens);
  }
  if (run.schema_tokens_per_call)
    s.schema_tokens = saturating_mul(*run.schema_tokens_per_call, static_cast<std::int64_t>(run.turns.size()));
  return s;
}

std::string summary_line(const AgentRun& run) {
  RunSummary s = summary(run);
  return fmt::format("[{} turn(s), {} tool call(s), {} tool byte(s), {} in ({} cached) / {} out]", s.turns,
                     s.tool_calls, s.result_bytes, count_text(s.usage.input_tokens),
                     count_text(s.usage.cached_input_tokens), count_text(s.usage.output_tokens));
}

const char* to_string(AgentStop stop) {
  switch (stop) {
    case AgentStop::answered: return "answered";
    case AgentStop::max_turns: return "max_turns";
    case AgentStop::model_error: return "model_error";
  }
  return "answered";
}

}  // namespace okfbench::agents
