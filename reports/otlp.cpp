#include "reports/otlp.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/digest.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"

namespace okfbench::reports {

namespace {

using Json = nlohmann::ordered_json;

// OTLP's SpanKind and StatusCode enums, as integers (the JSON encoding's rule).
constexpr int kSpanInternal = 1;
constexpr int kSpanClient = 3;
constexpr int kStatusError = 2;

// A longer duration in a record is a broken record, not a slow trial (and
// would overflow nanoseconds): about 115 days.
constexpr double kMaxDurationMs = 1e10;

// The first `bytes` bytes of SHA-256, as hex: OTLP's trace (16) and span (8) ids.
std::string id_of(const std::string& text, std::size_t bytes) { return sha256_hex(text).substr(0, 2 * bytes); }

std::string trace_id(const TrialRecord& r) { return id_of("okfbench trace " + r.trial_key, 16); }
std::string span_id(const TrialRecord& r, const std::string& path) { return id_of("okfbench span " + r.trial_key + "/" + path, 8); }

// Nanoseconds since the epoch of "YYYY-MM-DDTHH:MM:SSZ".
std::int64_t epoch_nanos(const std::string& date) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0, used = 0;
  const bool parsed = std::sscanf(date.c_str(), "%4d-%2d-%2dT%2d:%2d:%2dZ%n", &y, &mo, &d, &h, &mi, &s, &used) == 6 &&
                      static_cast<std::size_t>(used) == date.size();
  using namespace std::chrono;
  const year_month_day day{year{y}, month{static_cast<unsigned>(mo)}, std::chrono::day{static_cast<unsigned>(d)}};
  if (!parsed || !day.ok() || h > 23 || mi > 59 || s > 60) {
    throw InputError(fmt::format("manifest.json: field 'date' is '{}', not ISO 8601 UTC (YYYY-MM-DDTHH:MM:SSZ); fix it or run again", date));
  }
  const auto at = sys_days{day} + hours{h} + minutes{mi} + seconds{s};
  return duration_cast<nanoseconds>(at.time_since_epoch()).count();
}

std::int64_t nanos_of(const TrialRecord& r, const char* field, std::optional<double> ms) {
  if (!ms) return 0;
  if (!std::isfinite(*ms) || *ms < 0 || *ms > kMaxDurationMs) {
    throw InputError(fmt::format("results.jsonl: trial {}: timings.{} is {}, not a duration from 0 to {} ms", r.trial_key, field, *ms,
                                 kMaxDurationMs));
  }
  return std::llround(*ms * 1e6);
}

Json attribute(const std::string& key, Json value) { return Json{{"key", key}, {"value", std::move(value)}}; }
Json text(const std::string& key, const std::string& v) { return attribute(key, Json{{"stringValue", v}}); }
// int64 values are strings in the OTLP JSON encoding (protobuf's JSON mapping).
Json integer(const std::string& key, std::int64_t v) { return attribute(key, Json{{"intValue", std::to_string(v)}}); }
Json real(const std::string& key, double v) { return attribute(key, Json{{"doubleValue", v}}); }
Json boolean(const std::string& key, bool v) { return attribute(key, Json{{"boolValue", v}}); }

void add_count(Json& attributes, const std::string& key, std::optional<std::int64_t> v) {
  if (v) attributes.push_back(integer(key, *v));
}

struct ModelName {
  std::string system;
  std::string model;
};

ModelName split_model(const std::string& name) {
  auto colon = name.find(':');
  if (colon == std::string::npos) return {name, name};
  return {name.substr(0, colon), name.substr(colon + 1)};
}

Json span(const TrialRecord& r, const std::string& path, const std::string& parent, const std::string& name, int kind,
          std::int64_t start, std::int64_t end, Json attributes) {
  Json s = {{"traceId", trace_id(r)}, {"spanId", span_id(r, path)}};
  if (!parent.empty()) s["parentSpanId"] = span_id(r, parent);
  s["name"] = name;
  s["kind"] = kind;
  s["startTimeUnixNano"] = std::to_string(start);
  s["endTimeUnixNano"] = std::to_string(end);
  s["attributes"] = std::move(attributes);
  return s;
}

void set_error(Json& s, const std::string& message, const std::string& type) {
  s["attributes"].push_back(text("error.type", type));
  s["status"] = Json{{"code", kStatusError}, {"message", message}};
}

Json model_attributes(const TrialRecord& r, const TurnRecord& t) {
  const ModelName m = split_model(r.config.model);
  Json a = Json::array({text("gen_ai.operation.name", "chat"), text("gen_ai.system", m.system), text("gen_ai.request.model", m.model)});
  add_count(a, "gen_ai.usage.input_tokens", t.input_tokens);
  add_count(a, "gen_ai.usage.output_tokens", t.output_tokens);
  add_count(a, "gen_ai.usage.cache_read.input_tokens", t.cached_tokens);
  add_count(a, "gen_ai.usage.cache_creation.input_tokens", t.cache_write_tokens);
  add_count(a, "okfbench.usage.new_input_tokens", t.new_input_tokens);
  return a;
}

std::optional<std::int64_t> usage_sum(const TrialRecord& r, std::optional<std::int64_t> TurnRecord::*field) {
  if (r.turns.empty()) return std::nullopt;
  std::int64_t sum = 0;
  for (const auto& t : r.turns) {
    if (!(t.*field)) return std::nullopt;
    sum += *(t.*field);
  }
  return sum;
}

Json root_attributes(const TrialRecord& r) {
  const ModelName m = split_model(r.config.model);
  Json a = Json::array({text("okfbench.trial_key", r.trial_key), text("okfbench.bundle", r.bundle),
                        integer("okfbench.concept_count", r.concept_count), text("okfbench.question_set", r.question_set),
                        text("okfbench.question_id", r.question_id), text("okfbench.path", std::string(to_string(r.config.kind))),
                        text("okfbench.config", r.config.label()), integer("okfbench.repeat", r.config.repeat),
                        text("gen_ai.system", m.system), text("gen_ai.request.model", m.model)});
  if (agentic(r.config.kind)) a.insert(a.begin(), text("gen_ai.operation.name", "invoke_agent"));
  add_count(a, "gen_ai.usage.input_tokens", usage_sum(r, &TurnRecord::input_tokens));
  add_count(a, "gen_ai.usage.output_tokens", usage_sum(r, &TurnRecord::output_tokens));
  add_count(a, "gen_ai.usage.cache_read.input_tokens", usage_sum(r, &TurnRecord::cached_tokens));
  if (r.evidence_recall) a.push_back(real("okfbench.evidence_recall", *r.evidence_recall));
  for (const auto& g : r.grades) {
    a.push_back(text("okfbench.grade." + g.grader + ".status", std::string(to_string(g.status))));
    if (g.score) a.push_back(real("okfbench.grade." + g.grader + ".score", *g.score));
    a.push_back(boolean("okfbench.grade." + g.grader + ".correct", g.correct));
  }
  if (!r.answer.empty()) a.push_back(text("okfbench.answer", r.answer));
  return a;
}

// Appends the trial's spans: the root, then its children in the order they ran.
void add_trial(Json& spans, const TrialRecord& r, std::int64_t run_start) {
  std::size_t tool_calls = 0;
  for (const auto& t : r.turns) tool_calls += t.tool_calls.size();
  const std::int64_t model_each = r.turns.empty() ? 0 : nanos_of(r, "model_ms", r.timings.model_ms) / static_cast<std::int64_t>(r.turns.size());
  const std::int64_t retrieval = nanos_of(r, "retrieval_ms", r.timings.retrieval_ms);
  const std::int64_t tool_each = tool_calls == 0 ? 0 : retrieval / static_cast<std::int64_t>(tool_calls);
  const Json apportioned = text("okfbench.timing", "apportioned");

  Json children = Json::array();
  std::int64_t at = run_start;
  if (r.config.kind == PathKind::context) {
    Json a = Json::array({text("okfbench.context.strategy", r.config.strategy), integer("okfbench.context.concepts", static_cast<std::int64_t>(r.packed.size()))});
    add_count(a, "okfbench.context.tokens", r.context_tokens);
    children.push_back(span(r, "pack", "trial", "okfbench.context.pack", kSpanInternal, at, at + retrieval, std::move(a)));
    at += retrieval;
  }
  for (std::size_t i = 0; i < r.turns.size(); ++i) {
    const TurnRecord& t = r.turns[i];
    const std::string turn_path = fmt::format("turn/{}", i + 1);
    Json a = model_attributes(r, t);
    a.push_back(apportioned);
    const ModelName m = split_model(r.config.model);
    children.push_back(span(r, turn_path, "trial", "chat " + m.model, kSpanClient, at, at + model_each, std::move(a)));
    at += model_each;
    if (!agentic(r.config.kind)) continue;
    for (std::size_t j = 0; j < t.tool_calls.size(); ++j) {
      const ToolCallRecord& c = t.tool_calls[j];
      Json ta = Json::array({text("gen_ai.operation.name", "execute_tool"), text("gen_ai.tool.name", c.name),
                             text("gen_ai.tool.call.arguments", c.arguments), integer("okfbench.tool.result_bytes", c.result_bytes),
                             boolean("okfbench.tool.repeated", c.repeated), apportioned});
      Json s = span(r, fmt::format("{}/tool/{}", turn_path, j + 1), "trial", "execute_tool " + c.name, kSpanInternal, at, at + tool_each,
                    std::move(ta));
      if (!c.error.empty()) set_error(s, c.error, "tool_error");
      children.push_back(std::move(s));
      at += tool_each;
    }
  }
  const std::int64_t end = std::max(at, run_start + nanos_of(r, "total_ms", r.timings.total_ms));
  Json root = span(r, "trial", "", agentic(r.config.kind) ? "invoke_agent okfbench" : "okfbench.context", kSpanInternal,
                   run_start, end, root_attributes(r));
  if (!r.error.empty()) set_error(root, r.error, r.error_class.empty() ? "error" : r.error_class);
  spans.push_back(std::move(root));
  for (auto& c : children) spans.push_back(std::move(c));
}

}  // namespace

std::string otlp_json(const RunManifest& manifest, const std::vector<TrialRecord>& records) {
  const std::int64_t run_start = epoch_nanos(manifest.date);
  Json spans = Json::array();
  for (const auto& r : records) add_trial(spans, r, run_start);
  Json resource = {{"attributes", Json::array({text("service.name", "okfbench"), text("service.version", manifest.okfbench_version),
                                               text("okfbench.spec_hash", manifest.spec_hash), text("okfbench.git_sha", manifest.git_sha)})}};
  Json scope = {{"name", "okfbench"}, {"version", manifest.okfbench_version}};
  Json out = {{"resourceSpans", Json::array({Json{{"resource", resource}, {"scopeSpans", Json::array({Json{{"scope", scope}, {"spans", spans}}})}}})}};
  return json_text(out, 1) + "\n";
}

}  // namespace okfbench::reports
