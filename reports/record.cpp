#include "reports/record.hpp"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/json_text.hpp"
#include "core/regular_file.hpp"
#include "reports/json_fields.hpp"

namespace okfbench::reports {

using nlohmann::json;

namespace {

using json_fields::opt;
using json_fields::read;
using json_fields::read_count;
using json_fields::read_required_count;
using json_fields::read_required;
using json_fields::require_object;

void check_schema(int version) {
  if (version < 1 || version > kSchemaVersion) {
    throw InputError(fmt::format(
        "schema_version {} is not supported (this okfbench reads versions 1..{}); rebuild the run with this "
        "version or use a newer okfbench",
        version, kSchemaVersion));
  }
}

}  // namespace

std::string_view to_string(PathKind kind) {
  switch (kind) {
    case PathKind::context: return "context";
    case PathKind::agent: return "agent";
    case PathKind::external: return "external";
  }
  return "agent";
}

PathKind path_kind_from_string(std::string_view text) {
  if (text == "context") return PathKind::context;
  if (text == "agent") return PathKind::agent;
  if (text == "external") return PathKind::external;
  throw InputError(fmt::format("path kind '{}' is unknown; use 'context', 'agent' or 'external'", text));
}

std::string PathConfig::label() const {
  std::string out{to_string(kind)};
  if (budget_tokens) out += fmt::format(" budget={}", *budget_tokens);
  if (k) out += fmt::format(" k={}", *k);
  if (hops) out += fmt::format(" hops={}", *hops);
  if (!strategy.empty()) out += " strategy=" + strategy;
  if (!surface.empty()) out += " surface=" + surface;
  if (!tools.empty()) out += fmt::format(" tools={}", fmt::join(tools, "+"));
  if (max_turns) out += fmt::format(" max_turns={}", *max_turns);
  if (max_body_chars) out += fmt::format(" max_body_chars={}", *max_body_chars);
  if (index_char_budget) out += fmt::format(" index_char_budget={}", *index_char_budget);
  if (!retrieval.empty()) out += " retrieval=" + retrieval;
  if (!external.empty()) out += " agent=" + external;
  if (!model.empty()) out += " model=" + model;
  if (!cache_model.empty()) out += " cache=" + cache_model;
  return out;
}

void to_json(json& j, const PathConfig& v) {
  j = json{{"kind", to_string(v.kind)},
           {"budget_tokens", opt(v.budget_tokens)},
           {"k", opt(v.k)},
           {"hops", opt(v.hops)},
           {"strategy", v.strategy},
           {"surface", v.surface},
           {"tools", v.tools},
           {"max_turns", opt(v.max_turns)},
           {"model", v.model},
           {"cache_model", v.cache_model},
           {"repeat", v.repeat}};
  if (v.max_body_chars) j["max_body_chars"] = *v.max_body_chars;
  if (v.index_char_budget) j["index_char_budget"] = *v.index_char_budget;
  if (!v.retrieval.empty()) j["retrieval"] = v.retrieval;
  if (!v.external.empty()) j["external"] = v.external;
}

void from_json(const json& j, PathConfig& v) {
  require_object(j, "config");
  std::string kind;
  read_required(j, "kind", kind);
  v.kind = path_kind_from_string(kind);
  read(j, "budget_tokens", v.budget_tokens);
  read(j, "k", v.k);
  read(j, "hops", v.hops);
  read(j, "strategy", v.strategy);
  read(j, "surface", v.surface);
  read(j, "tools", v.tools);
  read(j, "max_turns", v.max_turns);
  read(j, "max_body_chars", v.max_body_chars);
  read(j, "index_char_budget", v.index_char_budget);
  read(j, "retrieval", v.retrieval);
  if (v.retrieval == "bm25f") v.retrieval.clear();  // the default, as label() and trial keys spell it
  if (!v.retrieval.empty() && v.retrieval != "hybrid" && v.retrieval != "hybrid+rerank") {
    throw InputError(fmt::format("config.retrieval '{}' is unknown; use bm25f, hybrid or hybrid+rerank", v.retrieval));
  }
  read(j, "external", v.external);
  read(j, "model", v.model);
  read(j, "cache_model", v.cache_model);
  read(j, "repeat", v.repeat);
}

static json access_to_json(const KnowledgeAccess& v) {
  return json{{"tool", v.tool},   {"bundle", v.bundle},        {"found", v.found},
           {"query", v.query}, {"path", v.path},            {"hits", opt(v.hits)},
           {"body_chars", opt(v.body_chars)}};
}

static KnowledgeAccess access_from_json(const json& j) {
  require_object(j, "access");
  KnowledgeAccess v;
  read_required(j, "tool", v.tool);
  read(j, "bundle", v.bundle);
  read(j, "found", v.found);
  read(j, "query", v.query);
  read(j, "path", v.path);
  read(j, "hits", v.hits);
  read(j, "body_chars", v.body_chars);
  return v;
}

void to_json(json& j, const ToolCallRecord& v) {
  j = json{{"name", v.name},
           {"arguments", v.arguments},
           {"result_bytes", v.result_bytes},
           {"error", v.error},
           {"repeated", v.repeated}};
  if (v.access) j["access"] = access_to_json(*v.access);
}

void from_json(const json& j, ToolCallRecord& v) {
  require_object(j, "tool call");
  read_required(j, "name", v.name);
  read(j, "arguments", v.arguments);
  read_count(j, "result_bytes", v.result_bytes);
  read(j, "error", v.error);
  read(j, "repeated", v.repeated);
  if (j.contains("access")) v.access = access_from_json(j.at("access"));
}

void to_json(json& j, const InputShare& v) { j = json{{"origin", v.origin}, {"tokens", v.tokens}}; }

void from_json(const json& j, InputShare& v) {
  require_object(j, "input share");
  read_required(j, "origin", v.origin);
  read_required_count(j, "tokens", v.tokens);
}

void to_json(json& j, const TurnRecord& v) {
  j = json{{"input_tokens", opt(v.input_tokens)},
           {"cached_tokens", opt(v.cached_tokens)},
           {"cache_write_tokens", opt(v.cache_write_tokens)},
           {"output_tokens", opt(v.output_tokens)},
           {"new_input_tokens", opt(v.new_input_tokens)},
           {"tool_calls", v.tool_calls},
           {"dropped_tool_calls", v.dropped_tool_calls}};
  if (!v.attribution.empty()) j["attribution"] = v.attribution;
  if (v.ms) j["ms"] = *v.ms;
  if (v.first_token_ms) j["first_token_ms"] = *v.first_token_ms;
}

void from_json(const json& j, TurnRecord& v) {
  require_object(j, "turn");
  read_count(j, "input_tokens", v.input_tokens);
  read_count(j, "cached_tokens", v.cached_tokens);
  read_count(j, "cache_write_tokens", v.cache_write_tokens);
  read_count(j, "output_tokens", v.output_tokens);
  read_count(j, "new_input_tokens", v.new_input_tokens);
  read(j, "tool_calls", v.tool_calls);
  read_count(j, "dropped_tool_calls", v.dropped_tool_calls);
  read(j, "attribution", v.attribution);
  read(j, "ms", v.ms);
  read(j, "first_token_ms", v.first_token_ms);
}

void to_json(json& j, const PackedConcept& v) { j = json{{"id", v.id}, {"tokens", v.tokens}, {"reason", v.reason}}; }

void from_json(const json& j, PackedConcept& v) {
  require_object(j, "packed concept");
  read_required(j, "id", v.id);
  read_count(j, "tokens", v.tokens);
  read(j, "reason", v.reason);
}

void to_json(json& j, const MeasureValue& v) { j = json{{"name", v.name}, {"value", v.value}}; }

void from_json(const json& j, MeasureValue& v) {
  require_object(j, "measure");
  read_required(j, "name", v.name);
  read_required(j, "value", v.value);
}

std::string_view to_string(GradeStatus status) {
  switch (status) {
    case GradeStatus::graded: return "graded";
    case GradeStatus::not_graded: return "not_graded";
    case GradeStatus::judge_error: return "judge_error";
  }
  return "graded";
}

GradeStatus grade_status_from_string(std::string_view text) {
  for (GradeStatus s : {GradeStatus::graded, GradeStatus::not_graded, GradeStatus::judge_error}) {
    if (text == to_string(s)) return s;
  }
  throw InputError(fmt::format("grade status '{}' is unknown; use graded, not_graded or judge_error", text));
}

void to_json(json& j, const Grade& v) {
  j = json{{"grader", v.grader},
           {"status", to_string(v.status)},
           {"score", opt(v.score)},
           {"correct", v.correct},
           {"detail", v.detail}};
  if (!v.raw.empty()) j["raw"] = v.raw;
  if (v.nuggets) {
    j["nuggets"] = json{{"strict_vital", v.nuggets->strict_vital},
                        {"strict_all", v.nuggets->strict_all},
                        {"vital", v.nuggets->vital},
                        {"all", v.nuggets->all}};
  }
}

namespace {

NuggetScores nuggets_from(const json& j, const std::string& grader) {
  require_object(j, "grade nuggets");
  NuggetScores n;
  for (auto [key, value] : {std::pair{"strict_vital", &n.strict_vital}, std::pair{"strict_all", &n.strict_all},
                            std::pair{"vital", &n.vital}, std::pair{"all", &n.all}}) {
    read_required(j, key, *value);
    if (!(*value >= 0.0) || *value > 1.0)
      throw InputError(fmt::format("grade '{}' has nuggets.{} {}, outside [0, 1]", grader, key, *value));
  }
  return n;
}

}  // namespace

void from_json(const json& j, Grade& v) {
  require_object(j, "grade");
  read_required(j, "grader", v.grader);
  std::string status = "graded";
  read(j, "status", status);
  v.status = grade_status_from_string(status);
  read(j, "score", v.score);
  read(j, "correct", v.correct);
  read(j, "detail", v.detail);
  read(j, "raw", v.raw);
  if (j.contains("nuggets") && !j["nuggets"].is_null()) v.nuggets = nuggets_from(j["nuggets"], v.grader);
  if (v.status == GradeStatus::graded && !v.score) throw InputError(fmt::format("grade '{}' is graded but has no score", v.grader));
  if (v.score && (!(*v.score >= 0.0) || *v.score > 1.0)) {
    throw InputError(fmt::format("grade '{}' has score {}, outside [0, 1]", v.grader, *v.score));
  }
}

void to_json(json& j, const JudgeUsage& v) {
  j = json{{"model", v.model},
           {"calls", v.calls},
           {"cache_hits", v.cache_hits},
           {"input_tokens", opt(v.input_tokens)},
           {"cached_tokens", opt(v.cached_tokens)},
           {"cache_write_tokens", opt(v.cache_write_tokens)},
           {"output_tokens", opt(v.output_tokens)}};
}

void from_json(const json& j, JudgeUsage& v) {
  require_object(j, "judge_usage");
  read_required(j, "model", v.model);
  read(j, "calls", v.calls);
  read(j, "cache_hits", v.cache_hits);
  read_count(j, "input_tokens", v.input_tokens);
  read_count(j, "cached_tokens", v.cached_tokens);
  read_count(j, "cache_write_tokens", v.cache_write_tokens);
  read_count(j, "output_tokens", v.output_tokens);
}

void to_json(json& j, const Timings& v) {
  j = json{{"total_ms", opt(v.total_ms)}, {"retrieval_ms", opt(v.retrieval_ms)}, {"model_ms", opt(v.model_ms)}};
}

void from_json(const json& j, Timings& v) {
  require_object(j, "timings");
  read(j, "total_ms", v.total_ms);
  read(j, "retrieval_ms", v.retrieval_ms);
  read(j, "model_ms", v.model_ms);
}

void to_json(json& j, const TrialRecord& v) {
  j = json{{"schema_version", v.schema_version},
           {"trial_key", v.trial_key},
           {"bundle", v.bundle},
           {"concept_count", v.concept_count},
           {"question_set", v.question_set},
           {"question_id", v.question_id},
           {"config", v.config},
           {"turns", v.turns},
           {"retrieved_ids", v.retrieved_ids},
           {"opened_ids", v.opened_ids},
           {"packed", v.packed},
           {"context_tokens", opt(v.context_tokens)},
           {"answer", v.answer},
           {"citations", v.citations},
           {"evidence_recall", opt(v.evidence_recall)},
           {"measures", v.measures},
           {"grades", v.grades},
           {"judge_usage", v.judge_usage ? json(*v.judge_usage) : json(nullptr)},
           {"error", v.error},
           {"timings", v.timings}};
  // Written only when they say something, so records of trials that ran
  // once without an error read as they always did.
  if (!v.error_class.empty()) j["error_class"] = v.error_class;
  if (v.runs != 1) j["runs"] = v.runs;
}

void from_json(const json& j, TrialRecord& v) {
  require_object(j, "trial record");
  read_required(j, "schema_version", v.schema_version);
  check_schema(v.schema_version);
  read_required(j, "trial_key", v.trial_key);
  read_required(j, "bundle", v.bundle);
  read_count(j, "concept_count", v.concept_count);
  read(j, "question_set", v.question_set);
  read_required(j, "question_id", v.question_id);
  read_required(j, "config", v.config);
  read(j, "turns", v.turns);
  read(j, "retrieved_ids", v.retrieved_ids);
  read(j, "opened_ids", v.opened_ids);
  read(j, "packed", v.packed);
  read_count(j, "context_tokens", v.context_tokens);
  read(j, "answer", v.answer);
  read(j, "citations", v.citations);
  read(j, "evidence_recall", v.evidence_recall);
  read(j, "measures", v.measures);
  read(j, "grades", v.grades);
  read(j, "judge_usage", v.judge_usage);
  read(j, "error", v.error);
  read(j, "error_class", v.error_class);
  if (!v.error_class.empty() && v.error_class != "transient" && v.error_class != "permanent") {
    throw InputError(fmt::format("field 'error_class' is \"{}\"; expected \"transient\" or \"permanent\"", v.error_class));
  }
  read(j, "runs", v.runs);
  if (v.runs < 1) throw InputError(fmt::format("field 'runs' is {}; expected at least 1", v.runs));
  read(j, "timings", v.timings);
}

void to_json(json& j, const ModelEndpoint& v) { j = json{{"model", v.model}, {"endpoint", v.endpoint}}; }

void from_json(const json& j, ModelEndpoint& v) {
  require_object(j, "model");
  read_required(j, "model", v.model);
  read(j, "endpoint", v.endpoint);
}

void to_json(json& j, const ModelPrice& v) {
  j = json{{"model", v.model},   {"input", v.input},   {"cached_input", v.cached_input}, {"cache_write", v.cache_write},
           {"output", v.output}, {"source", v.source}, {"as_of", v.as_of}};
}

void from_json(const json& j, ModelPrice& v) {
  require_object(j, "price");
  read_required(j, "model", v.model);
  read_required(j, "input", v.input);
  read_required(j, "cached_input", v.cached_input);
  read_required(j, "cache_write", v.cache_write);
  read_required(j, "output", v.output);
  read(j, "source", v.source);
  read(j, "as_of", v.as_of);
}

void to_json(json& j, const PricedModel& v) { j = json{{"model", v.model}, {"price", v.price}}; }

void from_json(const json& j, PricedModel& v) {
  require_object(j, "priced model");
  read_required(j, "model", v.model);
  read_required(j, "price", v.price);
}

void to_json(json& j, const InputHash& v) { j = json{{"kind", v.kind}, {"name", v.name}, {"sha256", v.sha256}}; }

void from_json(const json& j, InputHash& v) {
  require_object(j, "input");
  read_required(j, "kind", v.kind);
  read_required(j, "name", v.name);
  read_required(j, "sha256", v.sha256);
}

void to_json(json& j, const ForecastInterval& v) { j = json{{"value", v.value}, {"low", v.low}, {"high", v.high}}; }

// A figure is a count or dollars: finite, 0..10^12, and low <= value <= high.
void from_json(const json& j, ForecastInterval& v) {
  require_object(j, "forecast figure");
  read_required(j, "value", v.value);
  read_required(j, "low", v.low);
  read_required(j, "high", v.high);
  const auto in_range = [](double x) { return std::isfinite(x) && x >= 0 && x <= static_cast<double>(json_fields::kMaxCount); };
  if (!in_range(v.value) || !in_range(v.low) || !in_range(v.high) || v.low > v.value || v.value > v.high) {
    throw InputError(fmt::format("forecast figure {{value {}, low {}, high {}}}: expected 0 <= low <= value <= high <= 10^12",
                                 v.value, v.low, v.high));
  }
}

namespace {
// Tokens and calls are counts; dollars are rounded to the micro-dollar (core/json_text.hpp).
json count_interval(const ForecastInterval& v) {
  return json{{"value", json_count(v.value)}, {"low", json_count(v.low)}, {"high", json_count(v.high)}};
}
json dollar_interval(const std::optional<ForecastInterval>& v) {
  if (!v) return nullptr;
  return json{{"value", json_dollars(v->value)}, {"low", json_dollars(v->low)}, {"high", json_dollars(v->high)}};
}
}  // namespace

void to_json(json& j, const ForecastRow& v) {
  j = json{{"bundle", v.bundle},
           {"configuration", v.config},
           {"basis", v.basis},
           {"trials", v.trials},
           {"input_tokens", count_interval(v.input_tokens)},
           {"output_tokens", count_interval(v.output_tokens)},
           {"calls", count_interval(v.calls)},
           {"usd", dollar_interval(v.usd)}};
}

void from_json(const json& j, ForecastRow& v) {
  require_object(j, "forecast row");
  read(j, "bundle", v.bundle);
  read_required(j, "configuration", v.config);
  read(j, "basis", v.basis);
  read_required_count(j, "trials", v.trials);
  read_required(j, "input_tokens", v.input_tokens);
  read_required(j, "output_tokens", v.output_tokens);
  read_required(j, "calls", v.calls);
  read(j, "usd", v.usd);
}

void to_json(json& j, const RunForecast& v) {
  j = json{{"interval", 0.8}, {"configurations", v.rows}, {"total", v.total}};
  if (!v.shard.empty()) j["shard"] = v.shard;
}

void from_json(const json& j, RunForecast& v) {
  require_object(j, "forecast");
  read(j, "shard", v.shard);
  read_required(j, "configurations", v.rows);
  read_required(j, "total", v.total);
}

void to_json(json& j, const RunManifest& v) {
  j = json{{"schema_version", v.schema_version},
           {"date", v.date},
           {"host", v.host},
           {"git_sha", v.git_sha},
           {"build_type", v.build_type},
           {"okfbench_version", v.okfbench_version},
           {"spec_path", v.spec_path},
           {"spec_hash", v.spec_hash},
           {"models", v.models},
           {"cache_models", v.cache_models},
           {"seeds", v.seeds}};
  if (!v.prices.empty()) j["prices"] = v.prices;
  if (!v.inputs.empty()) j["inputs"] = v.inputs;
  if (v.forecast) j["forecast"] = *v.forecast;
  if (!v.baseline.empty()) j["baseline"] = v.baseline;
}

void from_json(const json& j, RunManifest& v) {
  require_object(j, "manifest");
  read_required(j, "schema_version", v.schema_version);
  check_schema(v.schema_version);
  read(j, "date", v.date);
  read(j, "host", v.host);
  read(j, "git_sha", v.git_sha);
  read(j, "build_type", v.build_type);
  read(j, "okfbench_version", v.okfbench_version);
  read(j, "spec_path", v.spec_path);
  read(j, "spec_hash", v.spec_hash);
  read(j, "models", v.models);
  read(j, "cache_models", v.cache_models);
  read(j, "seeds", v.seeds);
  read(j, "prices", v.prices);
  read(j, "inputs", v.inputs);
  read(j, "forecast", v.forecast);
  read(j, "baseline", v.baseline);
}

std::string to_jsonl_line(const TrialRecord& record) { return json_text(json(record)); }

namespace {

template <typename T>
T parse_as(std::string_view text, std::string_view where) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw InputError(fmt::format("{}: not valid JSON; the file is damaged or was cut short", where));
  try {
    return j.get<T>();
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", where, e.what()));
  }
}

// A manifest is a few kilobytes; this bounds what a wrong file can cost.
constexpr std::uint64_t kMaxManifestBytes = std::uint64_t{64} << 20;

std::string slurp(const std::filesystem::path& path) { return RegularFile(path).read_all(kMaxManifestBytes); }

// Calls `line(text, number)` for each line of the regular file `path`, read
// in blocks (never the whole file at once).
template <class Line>
void for_each_line(const std::filesystem::path& path, Line line) {
  const RegularFile file(path);
  std::string pending;
  char buffer[1 << 16];
  int number = 0;
  for (;;) {
    const ssize_t n = ::read(file.fd(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw InputError(fmt::format("{}: cannot be read: {}", path.string(), std::strerror(errno)));
    if (n == 0) break;
    pending.append(buffer, static_cast<std::size_t>(n));
    std::size_t start = 0;
    for (std::size_t end; (end = pending.find('\n', start)) != std::string::npos; start = end + 1)
      line(std::string_view(pending).substr(start, end - start), ++number);
    pending.erase(0, start);
  }
  if (!pending.empty()) line(std::string_view(pending), ++number);
}

// Every fraction of a record is in [0, 1] and every measure and timing is a
// finite number at least 0: a record saying evidence_recall 5.0 is damaged
// or forged, and would make every mean over it wrong.
void check_ranges(const TrialRecord& r) {
  const auto fail = [](std::string_view field, double value, std::string_view range) {
    throw InputError(fmt::format("field '{}' is {}; expected {}", field, value, range));
  };
  if (r.evidence_recall && !(*r.evidence_recall >= 0.0 && *r.evidence_recall <= 1.0))
    fail("evidence_recall", *r.evidence_recall, "a fraction in [0, 1]");
  for (const MeasureValue& m : r.measures)
    if (!(std::isfinite(m.value) && m.value >= 0.0)) fail("measures." + m.name, m.value, "a finite number, at least 0");
  for (auto [name, value] : {std::pair{"timings.total_ms", r.timings.total_ms}, std::pair{"timings.retrieval_ms", r.timings.retrieval_ms},
                             std::pair{"timings.model_ms", r.timings.model_ms}})
    if (value && !(std::isfinite(*value) && *value >= 0.0)) fail(name, *value, "a finite number of milliseconds, at least 0");
  if (r.judge_usage && (r.judge_usage->calls < 0 || r.judge_usage->cache_hits < 0 || r.judge_usage->cache_hits > r.judge_usage->calls))
    fail("judge_usage.cache_hits", r.judge_usage->cache_hits, "a count between 0 and judge_usage.calls");
}

}  // namespace

TrialRecord trial_from_json_text(std::string_view text, std::string_view where) {
  TrialRecord record = parse_as<TrialRecord>(text, where);
  try {
    check_ranges(record);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", where, e.what()));
  }
  return record;
}

std::string manifest_to_json_text(const RunManifest& manifest) { return json_text(json(manifest), 2) + "\n"; }

RunManifest manifest_from_json_text(std::string_view text, std::string_view where) {
  return parse_as<RunManifest>(text, where);
}

std::vector<TrialRecord> read_results_jsonl(const std::filesystem::path& path) {
  std::vector<TrialRecord> records;
  std::unordered_map<std::string, std::size_t> at;  // trial key -> index in records
  for_each_line(path, [&](std::string_view line, int number) {
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
    TrialRecord record = trial_from_json_text(line, fmt::format("{}:{}", path.string(), number));
    // A key twice (a trial run again after a failure, appended before the
    // file was rewritten): the last line is the trial's record, kept at the
    // place of the first, so no trial counts twice.
    auto [it, fresh] = at.try_emplace(record.trial_key, records.size());
    if (fresh) records.push_back(std::move(record));
    else records[it->second] = std::move(record);
  });
  return records;
}

RunManifest read_manifest(const std::filesystem::path& path) {
  return manifest_from_json_text(slurp(path), path.string());
}

StoredRun read_run_dir(const std::filesystem::path& run_dir) {
  if (!std::filesystem::is_directory(run_dir)) {
    throw InputError(fmt::format("{}: not a directory; pass the output folder of `okfbench run`", run_dir.string()));
  }
  StoredRun run;
  run.manifest = read_manifest(run_dir / "manifest.json");
  run.records = read_results_jsonl(run_dir / "results.jsonl");
  return run;
}

}  // namespace okfbench::reports
