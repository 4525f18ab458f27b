#pragma once
// The trial record schema: what one finished trial (one question on one
// retrieval path with one configuration) leaves behind, and the manifest that
// describes the run it belongs to. The runner fills these in and writes one
// TrialRecord per line to results.jsonl plus manifest.json; every report
// (summary, Markdown, HTML, CSV, JUnit, compare) is rebuilt from them alone.
//
// Conventions:
// - A token count the provider did not report is std::nullopt ("unknown"),
//   never 0; aggregations say how many values were unknown instead of
//   treating them as zero.
// - Schema changes bump kSchemaVersion; readers reject records from a newer
//   schema with a message that says which version they understand, and read
//   every older one (version 1 records have no grades and no judge usage,
//   version 2 ones no attribution).
// - Core types hold no JSON; conversion lives in to_json/from_json below and
//   in the read/write helpers at the end.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/knowledge_access.hpp"

namespace okfbench::reports {

// 2: grades[] and judge_usage (reports/graders.hpp).
// 3: turns[].attribution (each call's input tokens by origin).
inline constexpr int kSchemaVersion = 3;

// external: a command the user gave (paths.external), measured through the
// run's recording proxy and MCP server (engine/external_trial.hpp).
enum class PathKind { context, agent, external };

std::string_view to_string(PathKind kind);
// Agent and external trials: a loop of model calls with tools, reported turn by turn.
inline bool agentic(PathKind kind) { return kind != PathKind::context; }
// Throws InputError for anything other than "context", "agent" or "external".
PathKind path_kind_from_string(std::string_view text);

// The configuration a trial ran with. Fields that do not apply to the path
// kind stay empty (context: budget/k/hops/strategy; agent: surface/tools/
// max_turns); model and cache model apply to both (a context trial may send
// its pack to a model for the one-shot answer).
struct PathConfig {
  PathKind kind = PathKind::context;
  std::optional<std::int64_t> budget_tokens;
  std::optional<int> k;
  std::optional<int> hops;
  std::string strategy;            // context packing strategy, e.g. "greedy"
  std::string surface;             // agent tool surface name, e.g. "okf" or "harnessx"
  std::vector<std::string> tools;  // agent tools offered, in the order offered
  std::optional<int> max_turns;
  // The agent tools' budgets: open/read_concept body characters and the
  // root index characters of the harnessx prompt; unset = the tools'
  // defaults (8,000 and 4,000), and then left out of label() and the JSON.
  std::optional<std::int64_t> max_body_chars;
  std::optional<std::int64_t> index_char_budget;
  // The retrieval method of context()'s seed search or the agent's search
  // tool: "hybrid" or "hybrid+rerank"; "" = bm25f (the default), and then
  // left out of label() and the JSON, so bm25f labels and trial keys are
  // those of the runs before the setting.
  std::string retrieval;
  // external: the agent's label (paths.external); "" for the other kinds, and
  // then left out of label() and the JSON.
  std::string external;
  std::string model;        // e.g. "sim", "gpt-4.1-mini"
  std::string cache_model;  // "none", "openai", "anthropic"
  int repeat = 0;           // repeat index; not part of label()

  // A stable human-readable name for the configuration without the repeat
  // index, e.g. "context budget=2000 k=5 hops=1 model=sim cache=openai".
  // Records with equal bundle and label are aggregated together.
  std::string label() const;
  bool operator==(const PathConfig&) const = default;
};

struct ToolCallRecord {
  std::string name;
  std::string arguments;  // the call's arguments as JSON text, as the model sent them
  std::int64_t result_bytes = 0;
  std::string error;      // empty when the tool succeeded
  bool repeated = false;  // same name and arguments as an earlier call in the trial
  std::optional<KnowledgeAccess> access;  // "access" in the JSON; absent for tools that read no knowledge
  bool operator==(const ToolCallRecord&) const = default;
};

// Part of one call's input tokens, by where it came from (engine/attribution.hpp
// lists the origins: "tools", "system", "question", "pack:ID",
// "history:assistant", "history:tool:NAME", "new:tool:NAME", ...).
struct InputShare {
  std::string origin;
  std::int64_t tokens = 0;
  bool operator==(const InputShare&) const = default;
};

// One model call. input_tokens includes cached and cache-write tokens (the
// normalised meaning; agents/README.md, "Provider clients").
struct TurnRecord {
  std::optional<std::int64_t> input_tokens;
  std::optional<std::int64_t> cached_tokens;       // input served from a prompt cache
  std::optional<std::int64_t> cache_write_tokens;  // input written to a prompt cache
  std::optional<std::int64_t> output_tokens;
  // Input tokens not sent in any earlier turn of this trial (the rest of
  // input_tokens is re-sent conversation prefix).
  std::optional<std::int64_t> new_input_tokens;
  std::vector<ToolCallRecord> tool_calls;
  // Calls the model asked for beyond the per-turn cap; not run (0 in older records).
  std::int64_t dropped_tool_calls = 0;
  // The input tokens by origin as okfbench counts them (exact for sim; for a
  // provider, input_tokens minus their sum is the difference from its count).
  // Empty in records before schema 3 and when the call was not recorded.
  std::vector<InputShare> attribution;
  // The call's time, start to end, and to its reply's first byte (a stream's
  // first event): measured for provider calls over HTTP (first_token_ms only
  // when the model streams) and by the proxy for external agents; unset for
  // sim, replays and cache hits, and then absent from the JSON.
  std::optional<double> ms;
  std::optional<double> first_token_ms;
  bool operator==(const TurnRecord&) const = default;
};

// A concept that made it into a context pack, in pack order.
struct PackedConcept {
  std::string id;
  std::int64_t tokens = 0;
  std::string reason;  // "seed" or "via RELATION from <id>"
  bool operator==(const PackedConcept&) const = default;
};

// A named per-trial measure (e.g. "ndcg_cut_10", "citation_precision") that
// the runner computed with the measures registry.
struct MeasureValue {
  std::string name;
  double value = 0.0;
  bool operator==(const MeasureValue&) const = default;
};

// What one grader (reports/graders.hpp) made of a trial's answer.
//   graded      score in [0, 1]; correct = score >= the grader's threshold
//   not_graded  the grader had nothing to grade against (a question without
//               answer_facts, without relevant concepts); no score, never correct
//   judge_error the judge's reply was not the JSON asked for, or its call
//               failed; no score, never correct; `raw` keeps the reply
enum class GradeStatus { graded, not_graded, judge_error };

std::string_view to_string(GradeStatus status);
// Throws InputError for anything other than the three names above.
GradeStatus grade_status_from_string(std::string_view text);

// TREC 2024 RAG track nugget scores (Pradeep et al., "Initial Nugget
// Evaluation Results for the TREC 2024 RAG Track with the AutoNuggetizer
// Framework", 2024), over a question's answer_facts as nuggets, each vital
// or okay and labelled support / partial_support / not_support by the judge:
//   all          = (sum over all nuggets of s) / |all|,  s = 1, 0.5, 0
//   vital        = (sum over vital nuggets of s) / |vital|
//   strict_all   = |all nuggets supported| / |all|       (partial counts 0)
//   strict_vital = |vital nuggets supported| / |vital|
// A class without nuggets (no vital facts) scores 0.
struct NuggetScores {
  double strict_vital = 0.0;
  double strict_all = 0.0;
  double vital = 0.0;
  double all = 0.0;
  bool operator==(const NuggetScores&) const = default;
};

struct Grade {
  std::string grader;  // "facts", "citations", "answered", "judge"
  GradeStatus status = GradeStatus::graded;
  std::optional<double> score;  // set exactly when status is graded
  bool correct = false;
  std::string detail;  // why: the facts missing, the citations, the judge's reason
  std::string raw;     // judge_error: the reply as received ("" otherwise)
  std::optional<NuggetScores> nuggets = std::nullopt;  // judge: when it labelled every fact
  bool operator==(const Grade&) const = default;
};

// What the judge spent on one trial, kept apart from the trial's turns so it
// is never part of the cost of the path it judged. Token counts are sums over
// the calls that reached the provider; calls answered by the response cache
// cost nothing now and are counted in cache_hits only.
struct JudgeUsage {
  std::string model;  // as the spec names it: "sim", "openai:gpt-4.1-mini", ...
  int calls = 0;      // judge calls made for this trial (one per vote)
  int cache_hits = 0; // of those, answered by the response cache
  std::optional<std::int64_t> input_tokens;  // includes cached and cache-write tokens
  std::optional<std::int64_t> cached_tokens;
  std::optional<std::int64_t> cache_write_tokens;
  std::optional<std::int64_t> output_tokens;
  bool operator==(const JudgeUsage&) const = default;
};

struct Timings {
  std::optional<double> total_ms;
  std::optional<double> retrieval_ms;  // search/expand/pack or tool execution
  std::optional<double> model_ms;      // waiting for model calls
  bool operator==(const Timings&) const = default;
};

struct TrialRecord {
  int schema_version = kSchemaVersion;
  std::string trial_key;  // stable hash of the trial's inputs
  std::string bundle;     // bundle name as the spec names it
  std::int64_t concept_count = 0;
  std::string question_set;
  std::string question_id;
  PathConfig config;
  std::vector<TurnRecord> turns;  // every model call, in order (one for a one-shot answer)
  std::vector<std::string> retrieved_ids;  // search results the path saw, in rank order
  std::vector<std::string> opened_ids;     // agent: concepts whose body was opened
  std::vector<PackedConcept> packed;       // context: the pack, in order
  std::optional<std::int64_t> context_tokens;  // context: token count of the whole pack
  std::string answer;
  std::vector<std::string> citations;  // concept ids the answer cites
  std::optional<double> evidence_recall;  // share of relevant concepts that reached the model
  std::vector<MeasureValue> measures;
  std::vector<Grade> grades;              // one per grader the run named, in the order named
  std::optional<JudgeUsage> judge_usage;  // when a judge graded the trial
  std::string error;  // empty when the trial finished; otherwise why it did not
  // With an error: "transient" (network, timeout, HTTP 429/5xx, the trial
  // deadline: trying again may succeed, and resume does) or "permanent"
  // (anything else: resume leaves it unless asked); empty without an error.
  std::string error_class;
  int runs = 1;  // how many times this trial has been run, this run included (resume re-runs failures)
  Timings timings;
  bool operator==(const TrialRecord&) const = default;
};

struct ModelEndpoint {
  std::string model;
  std::string endpoint;  // base URL only; never a key or a URL carrying credentials
  bool operator==(const ModelEndpoint&) const = default;
};

// A model list price in dollars per million tokens (a row of
// datasets/pricing.yaml, or a price a spec gives one of its models).
struct ModelPrice {
  std::string model;          // the row's name
  double input = 0.0;         // uncached input tokens
  double cached_input = 0.0;  // input tokens served from cache
  double cache_write = 0.0;   // input tokens written to cache
  double output = 0.0;        // output tokens
  std::string source;
  std::string as_of;  // date the price was read at `source`, YYYY-MM-DD
  bool operator==(const ModelPrice&) const = default;
};

// A model of a run and the price it was priced with.
struct PricedModel {
  std::string model;  // as the spec names it, e.g. "openai:gpt-4o-mini"
  ModelPrice price;
  bool operator==(const PricedModel&) const = default;
};

// The content hash of something a run read: kind "bundle" (every file of the
// folder, see the runner), "questions" (the file), "tokenizer" (the
// vocabulary file) or "pricing" (the table file).
struct InputHash {
  std::string kind;
  std::string name;  // bundle name, question set file, encoding or table path
  std::string sha256;
  bool operator==(const InputHash&) const = default;
};

// A run's forecast (engine/forecast.hpp computes it, reports/forecast.hpp
// sets it beside the actual spend): each figure with its 80% interval.
struct ForecastInterval {
  double value = 0, low = 0, high = 0;
  bool operator==(const ForecastInterval&) const = default;
};

struct ForecastRow {
  std::string bundle;  // "" for the total
  std::string config;  // PathConfig::label(); "total" for the total
  std::string basis;   // "exact (sim)", "profile FILE", "default profile (no forecast: entry)"; "" for the total
  std::size_t trials = 0;
  ForecastInterval input_tokens, output_tokens, calls;
  std::optional<ForecastInterval> usd;  // nullopt when a trial has no price
  bool operator==(const ForecastRow&) const = default;
};

struct RunForecast {
  std::string shard;  // "K/N" when the run was one shard of a plan, else ""
  std::vector<ForecastRow> rows;  // by bundle, then configuration label
  ForecastRow total;
  bool operator==(const RunForecast&) const = default;
};

struct RunManifest {
  int schema_version = kSchemaVersion;
  std::string date;  // ISO 8601 UTC, e.g. "2026-11-29T12:40:00Z"
  std::string host;
  std::string git_sha;
  std::string build_type;
  std::string okfbench_version;
  std::string spec_path;
  std::string spec_hash;
  std::vector<ModelEndpoint> models;
  std::vector<std::string> cache_models;
  std::vector<std::uint64_t> seeds;
  std::vector<PricedModel> prices;  // every priced model of the run, as priced when it started
  std::vector<InputHash> inputs;    // what the run read, so changed data is noticed on resume and compare
  std::optional<RunForecast> forecast;  // made when the run started its folder; absent in older manifests
  std::string baseline;  // the spec's `baseline:` (a label or short name); "" when it names none
  bool operator==(const RunManifest&) const = default;
};

// JSON conversion (nlohmann ADL hooks). from_json throws InputError naming
// the field that is missing or has the wrong type.
void to_json(nlohmann::json& j, const PathConfig& v);
void from_json(const nlohmann::json& j, PathConfig& v);
void to_json(nlohmann::json& j, const ToolCallRecord& v);
void from_json(const nlohmann::json& j, ToolCallRecord& v);
void to_json(nlohmann::json& j, const InputShare& v);
void from_json(const nlohmann::json& j, InputShare& v);
void to_json(nlohmann::json& j, const TurnRecord& v);
void from_json(const nlohmann::json& j, TurnRecord& v);
void to_json(nlohmann::json& j, const PackedConcept& v);
void from_json(const nlohmann::json& j, PackedConcept& v);
void to_json(nlohmann::json& j, const MeasureValue& v);
void from_json(const nlohmann::json& j, MeasureValue& v);
void to_json(nlohmann::json& j, const Grade& v);
void from_json(const nlohmann::json& j, Grade& v);
void to_json(nlohmann::json& j, const JudgeUsage& v);
void from_json(const nlohmann::json& j, JudgeUsage& v);
void to_json(nlohmann::json& j, const Timings& v);
void from_json(const nlohmann::json& j, Timings& v);
void to_json(nlohmann::json& j, const TrialRecord& v);
void from_json(const nlohmann::json& j, TrialRecord& v);
void to_json(nlohmann::json& j, const ModelEndpoint& v);
void from_json(const nlohmann::json& j, ModelEndpoint& v);
void to_json(nlohmann::json& j, const ModelPrice& v);
void from_json(const nlohmann::json& j, ModelPrice& v);
void to_json(nlohmann::json& j, const PricedModel& v);
void from_json(const nlohmann::json& j, PricedModel& v);
void to_json(nlohmann::json& j, const InputHash& v);
void from_json(const nlohmann::json& j, InputHash& v);
void to_json(nlohmann::json& j, const ForecastInterval& v);
void from_json(const nlohmann::json& j, ForecastInterval& v);
void to_json(nlohmann::json& j, const ForecastRow& v);
void from_json(const nlohmann::json& j, ForecastRow& v);
void to_json(nlohmann::json& j, const RunForecast& v);
void from_json(const nlohmann::json& j, RunForecast& v);
void to_json(nlohmann::json& j, const RunManifest& v);
void from_json(const nlohmann::json& j, RunManifest& v);

// One compact JSON line (no trailing newline) for results.jsonl.
std::string to_jsonl_line(const TrialRecord& record);
// Parses one results.jsonl line; `where` (e.g. "results.jsonl:12") prefixes errors.
TrialRecord trial_from_json_text(std::string_view text, std::string_view where);

std::string manifest_to_json_text(const RunManifest& manifest);  // pretty, with trailing newline
RunManifest manifest_from_json_text(std::string_view text, std::string_view where);

// Reads every record of a results.jsonl file (blank lines skipped). Throws
// InputError naming file and line for unreadable files and bad records.
std::vector<TrialRecord> read_results_jsonl(const std::filesystem::path& path);
RunManifest read_manifest(const std::filesystem::path& path);

// The stored results of one run directory: RUN_DIR/results.jsonl and
// RUN_DIR/manifest.json. Throws InputError when either is missing.
struct StoredRun {
  RunManifest manifest;
  std::vector<TrialRecord> records;
};
StoredRun read_run_dir(const std::filesystem::path& run_dir);

}  // namespace okfbench::reports
