#include "reports/explorer.hpp"

#include <openssl/evp.h>
#include <zlib.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>
#include <unordered_map>

#include "reports/summary.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"

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
  json attribution = json::array();
  for (const auto& a : t.attribution) attribution.push_back({{"origin", a.origin}, {"tokens", a.tokens}});
  json j = {{"input", opt(t.input_tokens)},    {"cached", opt(t.cached_tokens)},   {"cache_write", opt(t.cache_write_tokens)},
            {"output", opt(t.output_tokens)},  {"tool_calls", calls},              {"dropped_tool_calls", t.dropped_tool_calls},
            {"attribution", attribution},      {"new", nullptr},                   {"resent", nullptr}};
  if (split) {
    j["new"] = split->new_tokens;
    j["resent"] = split->resent_uncached_tokens;
    j["cached_part"] = split->cached_tokens;
  }
  return j;
}

// The ids of the calls the view shows with their result: record turn i's
// calls, matched by position to the i-th answered call's reply.
std::set<std::string> shown_call_ids(const TrialRecord& r, const std::vector<const TranscriptTurn*>& answered) {
  std::set<std::string> ids;
  for (std::size_t i = 0; i < std::min(r.turns.size(), answered.size()); ++i) {
    const auto& calls = answered[i]->reply->tool_calls;
    for (std::size_t c = 0; c < std::min(r.turns[i].tool_calls.size(), calls.size()); ++c) ids.insert(calls[c].id);
  }
  return ids;
}

json message_json(const TranscriptMessage& m) {
  json j = {{"role", m.role}, {"content", m.content}};
  if (!m.name.empty()) j["name"] = m.name;
  return j;
}

// Adds transcript turn `tt` (what the request sent, the reply, each shown
// call's result) to record turn `turn` of `r`.
void add_turn_conversation(json& turn, const TurnRecord& r, const TranscriptTurn& tt,
                           const std::map<std::string, const TranscriptMessage*>& results, const std::set<std::string>& shown) {
  for (const auto& m : tt.added) {
    if (m.role != "tool" || !shown.contains(m.tool_call_id)) turn["sent"].push_back(message_json(m));
  }
  turn["restart"] = tt.restart;
  turn["reply"] = tt.reply->content;
  turn["ms"] = tt.ms;
  const auto& calls = tt.reply->tool_calls;
  for (std::size_t c = 0; c < std::min(r.tool_calls.size(), calls.size()); ++c) {
    auto it = results.find(calls[c].id);
    if (it != results.end()) turn["tool_calls"][c]["result"] = it->second->content;
  }
}

// Adds the conversation of `t` to the record's turns in `details`.
void add_conversation(json& details, const TrialRecord& r, const Transcript& t) {
  const auto answered = answered_turns(t);
  const auto results = tool_results_by_call(t);
  const auto shown = shown_call_ids(r, answered);
  json prompts = json::array();
  for (const auto& turn : t.turns) {
    if (prompts.empty() || prompts.back() != turn.prompt_hash) prompts.push_back(turn.prompt_hash);
  }
  details["prompts"] = prompts;
  for (std::size_t i = 0; i < r.turns.size(); ++i) {
    json& turn = details["turns"][i];
    turn["sent"] = json::array();
    turn["restart"] = false;
    turn["reply"] = nullptr;
    if (i < answered.size()) add_turn_conversation(turn, r.turns[i], *answered[i], results, shown);
  }
  details["failed_call"] = !t.turns.empty() && !t.turns.back().reply ? t.turns.back().error : "";
}

std::string transcript_state(const TranscriptSet* transcripts, const Transcript* t) {
  if (t) return "kept";
  return transcripts ? "not_kept" : "none";
}

// The transcript of each trial key (the last one written, as TranscriptSet::find),
// so a run of many trials is not searched once per trial.
using TranscriptIndex = std::unordered_map<std::string_view, const Transcript*>;
TranscriptIndex index_transcripts(const TranscriptSet* transcripts) {
  TranscriptIndex index;
  if (transcripts) {
    for (const auto& t : transcripts->trials) index[t.trial_key] = &t;
  }
  return index;
}

const Transcript* find_in(const TranscriptIndex& index, const std::string& key) {
  auto it = index.find(key);
  return it == index.end() ? nullptr : it->second;
}

// The prompts the trials' transcripts name, each once, by hash.
json prompts_json(const std::vector<TrialRecord>& records, const TranscriptSet* transcripts, const TranscriptIndex& index) {
  json out = json::object();
  if (!transcripts) return out;
  for (const auto& r : records) {
    const Transcript* t = find_in(index, r.trial_key);
    if (!t) continue;
    for (const auto& turn : t->turns) {
      const TranscriptPrompt* p = transcripts->prompt(turn.prompt_hash);
      if (!p || out.contains(p->hash)) continue;
      json tools = json::array();
      for (const auto& tool : p->tools) {
        tools.push_back({{"name", tool.name}, {"description", tool.description}, {"parameters", tool.parameters}});
      }
      out[p->hash] = {{"system", p->system}, {"tools", tools}};
    }
  }
  return out;
}

// The details of `r`, whose transcript is `t` (null when `transcripts` holds none for it).
json details_json(const TrialRecord& r, const TranscriptSet* transcripts, const Transcript* t, const PricingTable& pricing) {
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
  json details = {{"trial_key", r.trial_key},
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
                  {"runs", r.runs},
                  {"transcript", transcript_state(transcripts, t)}};
  if (t) add_conversation(details, r, *t);
  return details;
}

}  // namespace

json explorer_details(const TrialRecord& r, const TranscriptSet* transcripts, const PricingTable& pricing) {
  return details_json(r, transcripts, transcripts ? transcripts->find(r.trial_key) : nullptr, pricing);
}

const std::vector<std::string>& explorer_columns() {
  static const std::vector<std::string> columns = {"bundle", "concepts", "question_set", "question", "path", "config", "repeat",
                                                   "turns", "input_tokens", "output_tokens", "cost", "facts", "error", "answer"};
  return columns;
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

ExplorerData explorer_data(const std::vector<TrialRecord>& records, const TranscriptSet* transcripts, const PricingTable& pricing,
                           const std::map<std::string, std::string>& names) {
  json configs = json::array();
  std::map<std::string, int> config_index;
  json rows = json::array();
  std::vector<json> details;
  const TranscriptIndex index = index_transcripts(transcripts);
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
    details.push_back(details_json(r, transcripts, find_in(index, r.trial_key), pricing));
  }
  ExplorerData data;
  data.table_json = json_text(json{{"configs", configs}, {"chunk_trials", kExplorerChunkTrials}, {"transcripts", transcripts != nullptr},
                                   {"columns", explorer_columns()}, {"rows", rows}});
  data.prompts = deflate_base64(json_text(prompts_json(records, transcripts, index)));
  for (std::size_t start = 0; start < details.size(); start += kExplorerChunkTrials) {
    json chunk = json::array();
    for (std::size_t i = start; i < std::min(details.size(), start + kExplorerChunkTrials); ++i) chunk.push_back(std::move(details[i]));
    data.detail_chunks.push_back(deflate_base64(json_text(chunk)));
  }
  return data;
}

}  // namespace okfbench::reports
