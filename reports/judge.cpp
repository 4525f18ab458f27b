#include "reports/judge.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/json_text.hpp"

namespace okfbench::reports {

namespace {

using nlohmann::json;

constexpr double kJudgeThreshold = 1.0;

double score_of(Verdict v) {
  switch (v) {
    case Verdict::correct: return 1.0;
    case Verdict::partial: return 0.5;
    case Verdict::incorrect: return 0.0;
  }
  return 0.0;
}

std::optional<Verdict> verdict_from(std::string_view text) {
  for (Verdict v : {Verdict::incorrect, Verdict::partial, Verdict::correct}) {
    if (text == to_string(v)) return v;
  }
  return std::nullopt;
}

std::string_view trimmed(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r\n");
  return s.substr(first, last - first + 1);
}

std::string reply_json(Verdict v, const std::string& reason, const std::vector<NuggetLabel>& labels = {}) {
  json j{{"verdict", to_string(v)}, {"reason", reason}};
  if (!labels.empty()) {
    j["facts"] = json::array();
    for (NuggetLabel l : labels) j["facts"].push_back(to_string(l));
  }
  return json_text(j);
}

// The majority verdict of conforming votes; ties go to the lower verdict.
Verdict majority(const std::vector<Verdict>& votes) {
  std::array<int, 3> counts{};
  for (Verdict v : votes) ++counts[static_cast<std::size_t>(v)];
  Verdict best = Verdict::incorrect;
  for (Verdict v : {Verdict::incorrect, Verdict::partial, Verdict::correct}) {
    if (counts[static_cast<std::size_t>(v)] > counts[static_cast<std::size_t>(best)]) best = v;
  }
  return best;
}

void add(std::optional<std::int64_t>& total, const std::optional<std::int64_t>& more) {
  total = total && more ? std::optional<std::int64_t>(*total + *more) : std::nullopt;
}

Grade judge_error(std::string detail, std::string raw) {
  return Grade{"judge", GradeStatus::judge_error, std::nullopt, false, std::move(detail), std::move(raw)};
}

GraderResult run_judge(const JudgeOptions& o, const GradeInput& in) {
  if (in.end == TrialEnd::error) {
    return {Grade{"judge", GradeStatus::not_graded, std::nullopt, false, "the trial failed; the judge was not asked", ""},
            std::nullopt};
  }
  const JudgePrompt prompt = judge_prompt(in);
  JudgeUsage usage;
  usage.model = o.model;
  usage.input_tokens = usage.cached_tokens = usage.cache_write_tokens = usage.output_tokens = 0;
  std::vector<Verdict> verdicts;
  std::vector<std::string> reasons;
  std::vector<std::optional<std::vector<NuggetLabel>>> labels;
  for (int vote = 0; vote < o.votes; ++vote) {
    JudgeReply reply;
    ++usage.calls;
    try {
      reply = o.call(prompt, vote);
    } catch (const std::exception& e) {
      return {judge_error(fmt::format("vote {} of {}: the judge call failed: {}", vote + 1, o.votes, e.what()), ""),
              usage};
    }
    if (reply.from_cache) {
      ++usage.cache_hits;
    } else {
      add(usage.input_tokens, reply.input_tokens);
      add(usage.cached_tokens, reply.cached_tokens);
      add(usage.cache_write_tokens, reply.cache_write_tokens);
      add(usage.output_tokens, reply.output_tokens);
    }
    ParsedVerdict parsed = parse_verdict(reply.text);
    if (!parsed.verdict) {
      return {judge_error(fmt::format("vote {} of {}: the reply is not the JSON asked for: {}", vote + 1, o.votes,
                                      parsed.reason),
                          reply.text),
              usage};
    }
    if (parsed.facts && parsed.facts->size() != in.answer_facts.size()) {
      return {judge_error(fmt::format("vote {} of {}: the reply labels {} fact(s), but the question has {}", vote + 1,
                                      o.votes, parsed.facts->size(), in.answer_facts.size()),
                          reply.text),
              usage};
    }
    verdicts.push_back(*parsed.verdict);
    reasons.push_back(std::move(parsed.reason));
    labels.push_back(std::move(parsed.facts));
  }
  const Verdict winner = majority(verdicts);
  const auto first = std::find(verdicts.begin(), verdicts.end(), winner) - verdicts.begin();
  std::string detail{to_string(winner)};
  if (o.votes > 1) {
    std::vector<std::string_view> names;
    for (Verdict v : verdicts) names.push_back(to_string(v));
    detail += fmt::format(" ({} of {} votes: {})", std::count(verdicts.begin(), verdicts.end(), winner), o.votes,
                          fmt::join(names, ", "));
  }
  detail += ": " + reasons[static_cast<std::size_t>(first)];
  const double score = score_of(winner);
  Grade grade{"judge", GradeStatus::graded, score, score >= kJudgeThreshold, std::move(detail), "", std::nullopt};
  if (const auto& facts = labels[static_cast<std::size_t>(first)]; facts && !facts->empty())
    grade.nuggets = nugget_scores(in.fact_importance, *facts);
  return {std::move(grade), usage};
}

// ---- the sim judge ----

// Reads "PREFIX<json>\n" at `at`; advances past the line.
std::optional<json> json_line(std::string_view text, std::size_t& at, std::string_view prefix) {
  if (text.substr(at, prefix.size()) != prefix) return std::nullopt;
  const auto end = text.find('\n', at);
  if (end == std::string_view::npos) return std::nullopt;
  json value = json::parse(text.substr(at + prefix.size(), end - at - prefix.size()), nullptr, false);
  at = end + 1;
  if (value.is_discarded()) return std::nullopt;
  return value;
}

std::optional<std::vector<std::string>> string_list(const std::optional<json>& value) {
  if (!value || !value->is_array()) return std::nullopt;
  std::vector<std::string> out;
  for (const auto& item : *value) {
    if (!item.is_string()) return std::nullopt;
    out.push_back(item.get<std::string>());
  }
  return out;
}

// The answer after "Answer (N bytes):\n": exactly N bytes.
std::optional<std::string> answer_block(std::string_view text, std::size_t at) {
  constexpr std::string_view head = "Answer (";
  if (text.substr(at, head.size()) != head) return std::nullopt;
  at += head.size();
  std::size_t bytes = 0;
  auto [end, ec] = std::from_chars(text.data() + at, text.data() + text.size(), bytes);
  constexpr std::string_view tail = " bytes):\n";
  if (ec != std::errc()) return std::nullopt;
  at = static_cast<std::size_t>(end - text.data());
  if (text.substr(at, tail.size()) != tail) return std::nullopt;
  at += tail.size();
  if (bytes > text.size() - at) return std::nullopt;
  return std::string(text.substr(at, bytes));
}

std::string sim_verdict(const std::vector<std::string>& facts, const std::vector<std::string>& references,
                        const std::string& answer) {
  const std::vector<std::string> cited =
      cited_ids(answer, [&](const std::string& id) { return std::find(references.begin(), references.end(), id) != references.end(); });
  const std::string cites = cited.empty() ? "cites none of the reference concepts"
                                          : fmt::format("cites {}", fmt::join(cited, ", "));
  if (facts.empty()) {
    if (references.empty()) return reply_json(Verdict::incorrect, "nothing to judge against: no facts and no reference");
    const Verdict v = cited.size() == references.size() ? Verdict::correct : cited.empty() ? Verdict::incorrect : Verdict::partial;
    return reply_json(v, fmt::format("no expected facts; {} of {} reference concepts cited ({})", cited.size(),
                                     references.size(), cites));
  }
  const FactsMatch m = match_facts(facts, answer);
  std::vector<NuggetLabel> labels;
  for (const std::string& fact : facts) {
    const bool stated = std::find(m.matched.begin(), m.matched.end(), fact) != m.matched.end();
    labels.push_back(stated ? NuggetLabel::support : NuggetLabel::not_support);
  }
  if (m.matched.empty())
    return reply_json(Verdict::incorrect, fmt::format("states none of the {} expected facts", facts.size()), labels);
  if (!m.missing.empty()) {
    return reply_json(Verdict::partial, fmt::format("states {} of {} expected facts and {}", m.matched.size(),
                                                    facts.size(), cites),
                      labels);
  }
  return reply_json(cited.empty() ? Verdict::partial : Verdict::correct,
                    fmt::format("states all {} expected facts and {}", facts.size(), cites), labels);
}

}  // namespace

std::string_view to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::correct: return "correct";
    case Verdict::partial: return "partial";
    case Verdict::incorrect: return "incorrect";
  }
  return "incorrect";
}

const std::string& judge_system_prompt() {
  static const std::string prompt =
      "You grade an answer to a question about a knowledge bundle. You are given the question, the facts a "
      "correct answer must state, the ids and text of the concepts that answer it (the reference), and the "
      "answer.\n"
      "Verdicts:\n"
      "- \"correct\": the answer states every expected fact, in any wording, and nothing the reference "
      "contradicts.\n"
      "- \"partial\": the answer states some of the expected facts, or all of them together with a claim the "
      "reference contradicts.\n"
      "- \"incorrect\": the answer states none of the expected facts, contradicts the reference, or does not "
      "answer.\n"
      "When no facts are listed, judge the answer against the reference alone.\n"
      "When facts are listed, also label each, in order: \"support\" (the answer states it), "
      "\"partial_support\" (in part) or \"not_support\".\n"
      "Reply with one JSON object and nothing else, no code fence: "
      "{\"verdict\": \"correct\" | \"partial\" | \"incorrect\", \"reason\": \"<one sentence>\", "
      "\"facts\": [\"support\" | \"partial_support\" | \"not_support\", ...]}";
  return prompt;
}

JudgePrompt judge_prompt(const GradeInput& in) {
  std::vector<std::string> ids;
  for (const auto& [id, grade] : in.relevant) {
    if (grade > 0) ids.push_back(id);
  }
  std::string user = fmt::format("Question: {}\nExpected facts: {}\nReference concept ids: {}\nAnswer ({} bytes):\n{}\n\nReference:\n",
                                 json_text(json(in.question)), json_text(json(in.answer_facts)), json_text(json(ids)),
                                 in.answer.size(), in.answer);
  if (in.references.empty()) user += "(no reference text was given)\n";
  for (const auto& r : in.references) user += fmt::format("### {}\n{}\n\n", r.id, r.text);
  return {judge_system_prompt(), user};
}

ParsedVerdict parse_verdict(std::string_view reply) {
  const std::string_view body = trimmed(reply);
  if (body.empty()) return {std::nullopt, "the reply is empty", std::nullopt};
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded()) return {std::nullopt, "the reply is not a JSON value"};
  if (!j.is_object()) return {std::nullopt, fmt::format("the reply is a JSON {}, not an object", j.type_name())};
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() != "verdict" && it.key() != "reason" && it.key() != "facts")
      return {std::nullopt, fmt::format("unexpected key \"{}\"", it.key())};
  }
  std::optional<std::vector<NuggetLabel>> facts;
  if (j.contains("facts")) {
    if (!j["facts"].is_array()) return {std::nullopt, "\"facts\" is not a list of labels"};
    facts.emplace();
    for (const auto& item : j["facts"]) {
      const auto label = item.is_string() ? parse_nugget_label(item.get<std::string>()) : std::nullopt;
      if (!label) return {std::nullopt, fmt::format("fact label {} is not support, partial_support or not_support", item.dump())};
      facts->push_back(*label);
    }
  }
  if (!j.contains("verdict") || !j["verdict"].is_string()) return {std::nullopt, "no string \"verdict\""};
  if (!j.contains("reason") || !j["reason"].is_string()) return {std::nullopt, "no string \"reason\""};
  const std::string verdict = j["verdict"].get<std::string>();
  const auto v = verdict_from(verdict);
  if (!v) return {std::nullopt, fmt::format("verdict \"{}\" is not correct, partial or incorrect", verdict)};
  return {v, j["reason"].get<std::string>(), std::move(facts)};
}

Grader make_judge_grader(JudgeOptions options) {
  if (options.votes < 1 || options.votes > kMaxJudgeVotes) {
    throw UsageError(fmt::format("judge votes {}: use 1 to {}", options.votes, kMaxJudgeVotes));
  }
  if (!options.call) throw UsageError("the judge has no model to ask");
  std::string help = fmt::format("LLM-as-judge ({}, {} vote(s)): correct 1, partial 0.5, incorrect 0", options.model,
                                 options.votes);
  return Grader{"judge", std::move(help), kJudgeThreshold,
                [o = std::move(options)](const GradeInput& in) { return run_judge(o, in); }};
}

bool is_judge_request(std::string_view system) { return system == judge_system_prompt(); }

std::string sim_judge_reply(std::string_view user) {
  std::size_t at = 0;
  const auto question = json_line(user, at, "Question: ");
  const auto facts = string_list(json_line(user, at, "Expected facts: "));
  const auto references = string_list(json_line(user, at, "Reference concept ids: "));
  const auto answer = answer_block(user, at);
  if (!question || !facts || !references || !answer) {
    return "The sim judge could not read this request: it expects the judge_prompt() layout "
           "(Question, Expected facts, Reference concept ids, Answer (N bytes)).";
  }
  return sim_verdict(*facts, *references, *answer);
}

}  // namespace okfbench::reports
