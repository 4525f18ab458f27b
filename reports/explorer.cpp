#include "reports/explorer.hpp"

#include <openssl/evp.h>
#include <zlib.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <tuple>

#include "reports/summary.hpp"
#include "retrieval/error.hpp"
#include "retrieval/json_text.hpp"

namespace okfbench::reports {

namespace {

using nlohmann::json;

// Bytes of an answer kept in the table row for text search; the whole
// answer is in the details.
constexpr std::size_t kAnswerExcerptBytes = 160;

template <typename T>
json opt(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

std::vector<const TrialRecord*> table_order(const std::vector<TrialRecord>& records) {
  std::vector<const TrialRecord*> out;
  for (const auto& r : records) out.push_back(&r);
  std::stable_sort(out.begin(), out.end(), [](const TrialRecord* a, const TrialRecord* b) {
    auto key = [](const TrialRecord* r) {
      return std::make_tuple(r->concept_count, std::cref(r->bundle), std::cref(r->question_set), static_cast<int>(r->config.kind),
                             r->config.label(), std::cref(r->question_id), r->config.repeat, std::cref(r->trial_key));
    };
    return key(a) < key(b);
  });
  return out;
}

const Grade* grade_of(const TrialRecord& r, const std::string& grader) {
  for (const auto& g : r.grades) {
    if (g.grader == grader) return &g;
  }
  return nullptr;
}

std::string facts_label(const TrialRecord& r) {
  const Grade* g = grade_of(r, kAnswerGrader);
  if (!g) return "";
  if (g->status != GradeStatus::graded || !g->score) return "not graded";
  if (g->correct) return "correct";
  return *g->score > 0 ? "partial" : "wrong";
}

// Sum over turns; unknown when a turn's count is, or when there was no model
// call (a context trial then counts its pack, as the summary does).
std::optional<std::int64_t> turn_sum(const TrialRecord& r, std::optional<std::int64_t> TurnRecord::*field) {
  if (r.turns.empty()) return field == &TurnRecord::input_tokens ? r.context_tokens : std::nullopt;
  std::int64_t sum = 0;
  for (const auto& t : r.turns) {
    if (!(t.*field)) return std::nullopt;
    sum += *(t.*field);
  }
  return sum;
}

// Cuts at a UTF-8 character boundary so the excerpt stays valid text.
std::string excerpt(const std::string& text, std::size_t bytes) {
  if (text.size() <= bytes) return text;
  std::size_t end = bytes;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

json turn_json(const TurnRecord& t, const std::optional<TurnSplit>& split) {
  json calls = json::array();
  for (const auto& c : t.tool_calls) {
    calls.push_back({{"name", c.name}, {"arguments", c.arguments}, {"result_bytes", c.result_bytes}, {"error", c.error},
                     {"repeated", c.repeated}});
  }
  json j = {{"input", opt(t.input_tokens)},    {"cached", opt(t.cached_tokens)},   {"cache_write", opt(t.cache_write_tokens)},
            {"output", opt(t.output_tokens)},  {"tool_calls", calls},              {"dropped_tool_calls", t.dropped_tool_calls},
            {"new", nullptr},                  {"resent", nullptr}};
  if (split) {
    j["new"] = split->new_tokens;
    j["resent"] = split->resent_uncached_tokens;
    j["cached_part"] = split->cached_tokens;
  }
  return j;
}

}  // namespace

const std::vector<std::string>& explorer_columns() {
  static const std::vector<std::string> columns = {"bundle", "concepts", "question_set", "question", "path", "config", "repeat",
                                                   "turns", "input_tokens", "output_tokens", "cost", "facts", "error", "answer"};
  return columns;
}

json explorer_details(const TrialRecord& r, const PricingTable& pricing) {
  json turns = json::array();
  const auto splits = trial_turn_splits(r);
  for (std::size_t i = 0; i < r.turns.size(); ++i) turns.push_back(turn_json(r.turns[i], splits[i]));
  json grades = json::array();
  for (const auto& g : r.grades) {
    grades.push_back({{"grader", g.grader}, {"status", to_string(g.status)}, {"score", opt(g.score)}, {"correct", g.correct},
                      {"detail", g.detail}});
  }
  json packed = json::array();
  for (const auto& p : r.packed) packed.push_back({{"id", p.id}, {"tokens", p.tokens}, {"reason", p.reason}});
  json measures = json::object();
  for (const auto& m : r.measures) measures[m.name] = m.value;
  return {{"trial_key", r.trial_key},
          {"label", r.config.label()},
          {"turns", turns},
          {"answer", r.answer},
          {"citations", r.citations},
          {"grades", grades},
          {"evidence_recall", opt(r.evidence_recall)},
          {"measures", measures},
          {"retrieved_ids", r.retrieved_ids},
          {"opened_ids", r.opened_ids},
          {"packed", packed},
          {"context_tokens", opt(r.context_tokens)},
          {"cost", opt(trial_cost(r, pricing).dollars)},
          {"timings", {{"total_ms", opt(r.timings.total_ms)}, {"model_ms", opt(r.timings.model_ms)},
                       {"retrieval_ms", opt(r.timings.retrieval_ms)}}},
          {"error", r.error},
          {"error_class", r.error_class},
          {"runs", r.runs}};
}

std::string deflate_base64(const std::string& text) {
  uLongf size = compressBound(static_cast<uLong>(text.size()));
  std::string packed(size, '\0');
  int rc = compress2(reinterpret_cast<Bytef*>(packed.data()), &size, reinterpret_cast<const Bytef*>(text.data()),
                     static_cast<uLong>(text.size()), Z_BEST_COMPRESSION);
  if (rc != Z_OK) throw InputError("report.html: zlib could not compress the trial details (out of memory?)");
  packed.resize(size);
  std::string encoded(4 * ((packed.size() + 2) / 3) + 1, '\0');
  int written = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(encoded.data()), reinterpret_cast<const unsigned char*>(packed.data()),
                                static_cast<int>(packed.size()));
  encoded.resize(static_cast<std::size_t>(written));
  return encoded;
}

ExplorerData explorer_data(const std::vector<TrialRecord>& records, const PricingTable& pricing,
                           const std::map<std::string, std::string>& names) {
  json configs = json::array();
  std::map<std::string, int> config_index;
  json rows = json::array();
  std::vector<json> details;
  for (const TrialRecord* record : table_order(records)) {
    const TrialRecord& r = *record;
    const std::string label = r.config.label();
    auto [it, added] = config_index.try_emplace(label, static_cast<int>(configs.size()));
    if (added) {
      auto name = names.find(label);
      configs.push_back({{"name", name == names.end() ? label : name->second}, {"label", label}, {"kind", to_string(r.config.kind)}});
    }
    rows.push_back({r.bundle, r.concept_count, r.question_set, r.question_id, to_string(r.config.kind), it->second, r.config.repeat,
                    r.turns.size(), opt(turn_sum(r, &TurnRecord::input_tokens)), opt(turn_sum(r, &TurnRecord::output_tokens)),
                    opt(trial_cost(r, pricing).dollars), facts_label(r), r.error, excerpt(r.answer, kAnswerExcerptBytes)});
    details.push_back(explorer_details(r, pricing));
  }
  ExplorerData data;
  data.table_json = json_text(json{{"configs", configs}, {"chunk_trials", kExplorerChunkTrials}, {"columns", explorer_columns()}, {"rows", rows}});
  for (std::size_t start = 0; start < details.size(); start += kExplorerChunkTrials) {
    json chunk = json::array();
    for (std::size_t i = start; i < std::min(details.size(), start + kExplorerChunkTrials); ++i) chunk.push_back(std::move(details[i]));
    data.detail_chunks.push_back(deflate_base64(json_text(chunk)));
  }
  return data;
}

}  // namespace okfbench::reports
