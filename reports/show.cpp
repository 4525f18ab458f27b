#include "reports/show.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "reports/format.hpp"
#include "reports/trial_metrics.hpp"

namespace okfbench::reports {

namespace {

using nlohmann::json;

std::string count(const std::optional<std::int64_t>& v) { return v ? format_count(static_cast<double>(*v)) : "?"; }

// The first line of `text` cut to `width` columns (bytes; a cut never splits a
// UTF-8 sequence), with how much was left out; whole with `full`.
std::string cut(const std::string& text, std::size_t width, bool full) {
  if (full) return text;
  std::string line = text.substr(0, text.find('\n'));
  const std::string more = fmt::format(" ... [{} bytes]", text.size());
  if (line.size() == text.size() && line.size() <= width) return line;
  std::size_t keep = width > more.size() + 8 ? width - more.size() : 8;
  keep = std::min(keep, line.size());
  while (keep > 0 && (static_cast<unsigned char>(line[keep]) & 0xC0) == 0x80) --keep;
  return line.substr(0, keep) + more;
}

std::string indent(const std::string& text, const std::string& prefix) {
  std::string out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    out += prefix + text.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return out;
}

std::string attribution_line(const TurnRecord& turn) {
  std::vector<std::string> parts;
  std::int64_t sum = 0;
  for (const auto& p : turn.attribution) {
    parts.push_back(fmt::format("{} {}", p.origin, format_count(static_cast<double>(p.tokens))));
    sum += p.tokens;
  }
  std::string out = fmt::format("{}", fmt::join(parts, ", "));
  if (turn.input_tokens && *turn.input_tokens != sum) {
    out += fmt::format(" (okfbench counts {}, the provider {}: {:+})", format_count(static_cast<double>(sum)),
                       format_count(static_cast<double>(*turn.input_tokens)), *turn.input_tokens - sum);
  }
  return out;
}

std::string turn_text(const TrialRecord& r, std::size_t i, const TranscriptTurn* tt,
                      const std::map<std::string, const TranscriptMessage*>& results, const ShowOptions& o) {
  const TurnRecord& turn = r.turns[i];
  std::string out = fmt::format("turn {}: {} in ({} new, {} re-sent, {} cached), {} out\n", i + 1, count(turn.input_tokens),
                                count(turn_new_input(r, i)), count(turn_resent_input(r, i)), count(turn.cached_tokens),
                                count(turn.output_tokens));
  if (!turn.attribution.empty()) out += "  input: " + attribution_line(turn) + "\n";
  const std::vector<TranscriptToolCall> no_calls;
  const auto& calls = tt && tt->reply ? tt->reply->tool_calls : no_calls;
  for (std::size_t c = 0; c < turn.tool_calls.size(); ++c) {
    const ToolCallRecord& call = turn.tool_calls[c];
    out += fmt::format("  -> {}({}){}{}\n", call.name, cut(call.arguments, o.width, o.full),
                       call.repeated ? " [repeated]" : "", call.error.empty() ? "" : " error: " + call.error);
    const TranscriptMessage* result = nullptr;
    if (c < calls.size()) {
      auto it = results.find(calls[c].id);
      if (it != results.end()) result = it->second;
    }
    if (result) {
      out += o.full ? indent(result->content, "     ") : "     " + cut(result->content, o.width > 5 ? o.width - 5 : 1, false) + "\n";
    } else {
      out += fmt::format("     [{} bytes]\n", call.result_bytes);
    }
  }
  if (turn.dropped_tool_calls > 0) out += fmt::format("  ({} more call(s) dropped: over the per-turn cap)\n", turn.dropped_tool_calls);
  if (tt && !tt->error.empty()) out += "  call failed: " + tt->error + "\n";
  return out;
}

std::string question_of(const Transcript* t) {
  if (!t) return "";
  for (const auto& turn : t->turns) {
    for (const auto& m : turn.added) {
      if (m.role == "user") return m.content;
    }
  }
  return "";
}

}  // namespace

std::string show_text(const TrialRecord& r, const Transcript* t, const TranscriptSet& prompts, const ShowOptions& o) {
  std::string out = fmt::format("trial {}\n{} ({} concepts), question {}\n{}\n", r.trial_key, r.bundle,
                                format_count(static_cast<double>(r.concept_count)), r.question_id, r.config.label());
  const std::string question = question_of(t);
  if (!question.empty()) out += "Q: " + cut(question, o.width > 3 ? o.width - 3 : 1, o.full) + "\n";
  if (t && !t->turns.empty()) {
    if (const TranscriptPrompt* p = prompts.prompt(t->turns[0].prompt_hash)) {
      out += fmt::format("system prompt: {}\n", cut(p->system, o.width > 15 ? o.width - 15 : 1, o.full));
      std::vector<std::string> names;
      for (const auto& tool : p->tools) names.push_back(tool.name);
      if (!names.empty()) out += fmt::format("tools: {}\n", fmt::join(names, ", "));
    }
  }
  if (!t) out += "(no transcript: the run kept none for this trial)\n";
  out += "\n";
  const auto results = t ? tool_results_by_call(*t) : std::map<std::string, const TranscriptMessage*>{};
  const auto answered = t ? answered_turns(*t) : std::vector<const TranscriptTurn*>{};
  for (std::size_t i = 0; i < r.turns.size(); ++i) {
    out += turn_text(r, i, i < answered.size() ? answered[i] : nullptr, results, o);
  }
  if (t && !t->turns.empty() && !t->turns.back().reply) out += "last call failed: " + t->turns.back().error + "\n";
  out += "\nA: " + (r.answer.empty() ? std::string("(none)") : (o.full ? r.answer : cut(r.answer, o.width > 3 ? o.width - 3 : 1, false))) + "\n";
  if (!r.grades.empty()) {
    out += "\ngrades:\n";
    for (const auto& g : r.grades) {
      const std::string score = g.score ? format_decimal(*g.score, 3) : std::string(to_string(g.status));
      out += fmt::format("  {}: {}{}{}\n", g.grader, score, g.status == GradeStatus::graded ? (g.correct ? " correct" : " not correct") : "",
                         g.detail.empty() ? "" : " (" + cut(g.detail, o.width, o.full) + ")");
    }
  }
  if (r.evidence_recall) out += fmt::format("evidence recall: {}\n", format_decimal(*r.evidence_recall, 3));
  if (!r.error.empty()) out += fmt::format("error ({}): {}\n", r.error_class.empty() ? "permanent" : r.error_class, r.error);
  return out;
}

json show_json(const TrialRecord& r, const Transcript* t, const TranscriptSet& prompts) {
  json turns = json::array();
  for (std::size_t i = 0; i < r.turns.size(); ++i) {
    auto v = [](const std::optional<std::int64_t>& x) { return x ? json(*x) : json(nullptr); };
    turns.push_back({{"turn", i + 1},
                     {"input_tokens", v(r.turns[i].input_tokens)},
                     {"new_input_tokens", v(turn_new_input(r, i))},
                     {"resent_input_tokens", v(turn_resent_input(r, i))},
                     {"cached_tokens", v(r.turns[i].cached_tokens)},
                     {"output_tokens", v(r.turns[i].output_tokens)},
                     {"attribution", r.turns[i].attribution}});
  }
  json used = json::object();
  if (t) {
    for (const auto& turn : t->turns) {
      if (const TranscriptPrompt* p = prompts.prompt(turn.prompt_hash)) used[p->hash] = *p;
    }
  }
  return {{"record", r}, {"transcript", t ? json(*t) : json(nullptr)}, {"prompts", used}, {"turns", turns}};
}

}  // namespace okfbench::reports
