// CSV writers (RFC 4180: fields with a comma, quote or line break are quoted,
// quotes doubled; lines end with CRLF as the RFC says).
#include <fmt/format.h>

#include "reports/summary.hpp"
#include "reports/writers.hpp"

namespace okfbench::reports {

namespace {

std::string field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string number(std::optional<double> v) { return v ? fmt::format("{:.10g}", *v) : ""; }

std::string line(const std::vector<std::string>& fields) {
  std::string out;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out += ',';
    out += field(fields[i]);
  }
  return out + "\r\n";
}

}  // namespace

std::string summary_csv(const Summary& summary) {
  std::string out = line({"bundle", "concepts", "question_set", "path", "config", "trials", "errors", "input_tokens",
                          "model_calls", "resent_tokens", "resent_share", "cached_tokens", "output_tokens",
                          "tool_calls", "tool_bytes", "evidence_recall", "cost_usd", "one_shot_ratio",
                          "answer_score", "share_correct", "cost_per_correct_usd", "equal_quality_ratio"});
  for (const auto& r : summary.rows) {
    out += line({r.bundle, std::to_string(r.concept_count), r.question_set, std::string(to_string(r.config.kind)),
                 r.label, std::to_string(r.trials), std::to_string(r.errors), number(r.input_tokens.mean),
                 number(r.model_calls.mean), number(r.resent_tokens.mean), number(r.resent_share),
                 number(r.cached_tokens.mean), number(r.output_tokens.mean), number(r.tool_calls.mean),
                 number(r.tool_bytes.mean), number(r.evidence_recall.mean), number(r.cost.mean),
                 number(r.one_shot_ratio), number(row_metric(r, kAnswerGrader)),
                 number(row_metric(r, std::string(kAnswerGrader) + "_correct")), number(r.cost_per_correct),
                 number(r.equal_quality_ratio)});
  }
  return out;
}

std::string trials_csv(const std::vector<TrialRecord>& records, const PricingTable& pricing) {
  std::vector<std::string> header = {"trial_key", "bundle", "concepts", "question_set", "question_id", "path",
                                     "config", "repeat"};
  for (const auto& m : builtin_metrics()) header.push_back(m.name);
  for (const auto& g : grader_names()) header.push_back(g);
  header.push_back("error");
  std::string out = line(header);
  for (const auto& r : records) {
    std::vector<std::string> fields = {r.trial_key,       r.bundle,
                                       std::to_string(r.concept_count), r.question_set,
                                       r.question_id,     std::string(to_string(r.config.kind)),
                                       r.config.label(),  std::to_string(r.config.repeat)};
    for (const auto& m : builtin_metrics()) fields.push_back(number(trial_metric(r, m.name, pricing)));
    for (const auto& g : grader_names()) fields.push_back(number(trial_metric(r, g, pricing)));
    fields.push_back(r.error);
    out += line(fields);
  }
  return out;
}

}  // namespace okfbench::reports
