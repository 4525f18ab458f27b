#pragma once
// okfbench calibrate: fits a sim behaviour profile (agents/sim_profile.hpp)
// to what a real model did, and checks it by replaying recorded questions
// with the fitted sim.
//
// Recordings are run folders and cassettes. A run folder (one holding
// transcripts.jsonl.zst, as `okfbench run` leaves it) gives one conversation
// per trial that finished, rebuilt request by request from its transcript,
// with the model its record names. Cassettes (`run --record DIR` writes
// DIR/<trial key>.jsonl, `agent --record FILE` appends to FILE): any other
// folder stands for its *.jsonl files; exchanges of one cassette that share a
// question, a system prompt and tools are one conversation, whose longest
// request plus its reply is the whole of it. Every exchange is a sample for
// the token overheads; conversations without tools (context-path trials)
// only feed the overheads.
//
// What is measured per conversation (observe()), and how a profile is fitted
// from it (fit_profile()):
//   searches      search calls that repeat no earlier call -> `searches`, the empirical distribution
//   opens/search  open calls after a search, before the next search or a
//                 follow, not repeats -> `opens_per_search`
//   parallel      of searches with 2+ opens, the share whose opens were one turn -> `parallel_opens`
//   drop / add    per later search, question terms (sim's question_terms)
//                 its query leaves out, and terms it has that the question has not
//                 -> `drop_terms`, `add_terms`
//   follow        a follow call, among conversations offering one -> `follow_rate`
//   repeats       calls with the name and arguments (as JSON) of one in the
//                 same or the turn before (and any other repeated call that is
//                 neither a search nor an open) -> `repeats`
//   rereads       an open of a concept opened earlier (not the turn before) -> `rereads`
//                 (a search repeated later counts as a search, with its opens)
//   follows       follow calls of a conversation that followed -> `follow_concepts`;
//                 opens after them -> `neighbour_opens`; a first follow when every
//                 question term was already in an opened body -> `follow_when_covered`
//   browse        a browse call before the first search, among conversations
//                 offering browse and search -> `browse_rate`
//   search k      the most frequent k / limit -> `search_k`
//   answer        the final answer's o200k_base tokens: mean and standard
//                 deviation -> `answer_tokens`, `answer_tokens_spread`
// Context-path trials (a one-shot prompt, agents/context_prompt.hpp) are
// answers of their own: their replies' o200k_base tokens, mean and standard
// deviation -> `context_answer_tokens`, `context_answer_tokens_spread`, since
// a real model often answers a packed context far shorter (or longer) than it
// ends a tool loop, and that length is the one-shot side of every
// agent/one-shot cost ratio.
// Token overheads: per exchange, the provider-reported input tokens against
// okfbench's exact o200k_base count of the same request's text (tools,
// messages, tool calls) and its numbers of messages, tool calls and tools,
// by least squares with a ridge pull (1e-6 of each column's scale) towards
// the default overheads, so a column that does not vary (the same tools in
// every request) keeps its default instead of an arbitrary value. Calls
// without tools (context-path prompts: one long prose message) get a content
// ratio of their own -> `context_overheads` when calls with tools were
// recorded too: a provider's tokenizer may count prose and tool-call JSON at
// different ratios to o200k_base, and one ratio for both bills the agent
// path wrong. Their per-message constants are the calls with tools' (every
// context prompt has two messages and about the budget's size, so a constant
// and a ratio cannot be told apart from them alone).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "agents/sim_model.hpp"
#include "agents/wire.hpp"
#include "retrieval/bundle.hpp"
#include "retrieval/token_counter.hpp"

namespace okfbench::engine {

// One recorded model call.
struct CallSample {
  agents::ChatRequest request;
  agents::Usage usage;
};

// One recorded agent conversation.
struct Recording {
  std::string source;  // the cassette
  std::string question;
  std::string system_prompt;
  std::vector<agents::ToolSpec> tools;
  std::vector<agents::Message> after_question;  // assistant and tool messages, the answer last
  std::vector<CallSample> calls;                // in conversation order
};

// One recorded answer to a context-path prompt.
struct ContextAnswer {
  std::string source;
  std::string question;  // the question inside the prompt
  CallSample call;       // the request as sent
  std::string answer;    // the reply's text
};

struct Recordings {
  std::vector<Recording> conversations;
  std::vector<ContextAnswer> context_answers;
  std::vector<CallSample> samples;  // every exchange, conversations' and context trials'
  std::size_t files = 0;
};

// Reads run folders, cassettes and folders of cassettes; with `model` set,
// only the exchanges a model of that name answered ("openai:gpt-4o" or
// "gpt-4o"). Throws InputError naming FILE:LINE for a malformed cassette
// line, the file and trial for a transcript that cannot be rebuilt, the path
// when it holds no recording, and any call whose usage has no input tokens.
Recordings read_recordings(const std::vector<std::filesystem::path>& paths, const std::string& model = "");

// What one conversation shows (see above).
struct Observed {
  int searches = 0;
  std::vector<int> opens_per_search;
  int multi_open_searches = 0, parallel_searches = 0;
  std::vector<int> dropped, added;  // per later search
  bool offered_follow = false, followed = false;
  bool followed_covered = false;  // the first follow came when every question term was in an opened body
  int follows = 0;                // follow calls (the concepts whose neighbours were listed)
  int neighbour_opens = 0;        // opens after a follow, before any later search
  int rereads = 0;                // opens of a concept opened before, not the turn before's
  bool offered_browse = false, browsed_first = false;
  int repeats = 0;
  int tool_turns = 0;
  std::vector<int> search_k;
  std::int64_t answer_tokens = 0;
};
Observed observe(const std::string& question, const std::vector<agents::ToolSpec>& tools,
                 const std::vector<agents::Message>& after_question, const retrieval::TokenCounter& counter);

// One row of the fit table: a parameter's mean over the fit set, the
// profile's value, and the same measure on the check set, real and replayed.
struct ParameterFit {
  std::string name;
  double observed = 0, fitted = 0;
  std::optional<double> check_real, check_sim;
};

struct OverheadFit {
  agents::TokenOverheads overheads;
  std::size_t samples = 0;
  double mean_abs_error_default = 0;  // |reported - sim's count| / reported, default overheads
  double mean_abs_error_fitted = 0;   // the same with the fitted ones
};

struct Fit {
  agents::SimOptions options;  // the fitted profile (with the defaults it does not fit)
  std::vector<ParameterFit> parameters;
  OverheadFit overheads;  // of the calls with tools, or of every call when all or none have tools
  std::optional<OverheadFit> context_overheads;  // of the calls without tools, when both kinds were recorded
};

// `context_answers` fit the context-path answer length; with none the
// profile answers context prompts at `answer_tokens`.
Fit fit_profile(const std::vector<Recording>& fit_set, const std::vector<CallSample>& samples,
                const retrieval::TokenCounter& counter, const std::vector<ContextAnswer>& context_answers = {});

// A recorded question replayed with the fitted sim.
struct CheckRow {
  std::string question;
  std::string bundle;
  std::int64_t real_input = 0, sim_input = 0;
  std::int64_t real_calls = 0, sim_calls = 0;
  std::int64_t real_output = 0, sim_output = 0;
  Observed real, sim;
};

// Replays each recording on the bundle whose concepts it opened (the first
// bundle with the first id it opened or searched up; else the first bundle)
// with the recorded system prompt and tools. `seed` seeds the sim.
std::vector<CheckRow> check_profile(const agents::SimOptions& fitted, const std::vector<Recording>& check_set,
                                    std::vector<retrieval::Bundle*> bundles, const std::vector<std::string>& bundle_names,
                                    const retrieval::TokenCounter& counter, std::uint64_t seed);

// Adds the check columns of `rows` to `fit.parameters`.
void add_check_columns(Fit& fit, const std::vector<CheckRow>& rows);

// Answers each recorded context prompt of `check_set` with `fitted` (seeded
// with `seed`) and fills the "context answer tokens" row's check columns:
// the recorded answers' mean length against sim's.
void add_context_check(Fit& fit, const agents::SimOptions& fitted, const std::vector<ContextAnswer>& check_set,
                       const retrieval::TokenCounter& counter, std::uint64_t seed);

}  // namespace okfbench::engine
