#include "engine/calibrate.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <fstream>
#include <map>
#include <set>

#include "agents/agent.hpp"
#include "agents/bundle_tools.hpp"
#include "agents/context_prompt.hpp"
#include "agents/json_util.hpp"
#include "agents/sim_answer.hpp"
#include "agents/sim_profile_file.hpp"
#include "agents/wire_json.hpp"
#include "engine/spec.hpp"
#include "reports/record.hpp"
#include "reports/transcript.hpp"
#include "core/error.hpp"

namespace okfbench::engine {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

std::vector<fs::path> cassettes_in(const fs::path& path) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return {path};
  if (!fs::is_directory(path, ec)) throw InputError(fmt::format("{}: no such cassette or folder of cassettes", path.string()));
  std::vector<fs::path> out;
  for (const auto& entry : fs::directory_iterator(path, ec))
    if (entry.is_regular_file() && entry.path().extension() == ".jsonl") out.push_back(entry.path());
  std::sort(out.begin(), out.end());
  if (out.empty()) {
    throw InputError(fmt::format("{}: holds no .jsonl cassette; record one with okfbench run --record {}", path.string(),
                                 path.string()));
  }
  return out;
}

std::size_t last_user(const std::vector<agents::Message>& messages) {
  std::size_t at = messages.size();
  for (std::size_t i = 0; i < messages.size(); ++i)
    if (messages[i].role == agents::Role::user) at = i;
  return at;
}

std::string system_of(const agents::ChatRequest& r) {
  for (const auto& m : r.messages)
    if (m.role == agents::Role::system) return m.content;
  return "";
}

// The conversations of one cassette: exchanges grouped by question, system prompt and tools.
bool same_model(const std::string& recorded, const std::string& wanted) {
  if (wanted.empty() || recorded == wanted) return true;
  auto bare = [](const std::string& name) { return name.substr(name.find(':') + 1); };
  return bare(recorded) == bare(wanted);
}

// The calls of a conversation without tools that answer a context prompt
// (each request with its reply appended), as context answers.
void add_context_answers(const std::string& source, std::vector<CallSample> calls, Recordings& out) {
  for (CallSample& c : calls) {
    std::vector<agents::Message>& messages = c.request.messages;
    if (messages.empty() || messages.back().role != agents::Role::assistant) continue;
    const std::size_t user = last_user(messages);
    agents::ContextPrompt prompt;
    if (user == messages.size() || !agents::read_context_user_message(messages[user].content, prompt)) continue;
    std::string answer = std::move(messages.back().content);
    messages.pop_back();
    out.context_answers.push_back({source, prompt.question, std::move(c), std::move(answer)});
  }
}

// One conversation from its calls, each request with its reply appended; a
// conversation without tools (a context trial) gives context answers.
void add_conversation(const std::string& source, std::vector<CallSample> calls, Recordings& out) {
  if (calls.front().request.tools.empty()) {
    add_context_answers(source, std::move(calls), out);
    return;
  }
  std::stable_sort(calls.begin(), calls.end(), [](const CallSample& a, const CallSample& b) {
    return a.request.messages.size() < b.request.messages.size();
  });
  Recording r;
  r.source = source;
  const std::vector<agents::Message>& whole = calls.back().request.messages;
  const std::size_t user = last_user(whole);
  if (user == whole.size()) throw InputError(fmt::format("{}: a conversation without a user message (the question)", source));
  r.question = whole[user].content;
  r.system_prompt = system_of(calls.back().request);
  r.tools = calls.back().request.tools;
  r.after_question.assign(whole.begin() + static_cast<std::ptrdiff_t>(user) + 1, whole.end());
  for (CallSample& c : calls) c.request.messages.pop_back();  // back to the request as sent
  r.calls = std::move(calls);
  out.conversations.push_back(std::move(r));
}

agents::Message message_of(const reports::TranscriptMessage& m) {
  agents::Message out;
  out.role = m.role == "assistant" ? agents::Role::assistant : m.role == "tool" ? agents::Role::tool : agents::Role::user;
  out.content = m.content;
  for (const auto& c : m.tool_calls) out.tool_calls.push_back({c.id, c.name, c.arguments});
  out.tool_call_id = m.tool_call_id;
  out.name = m.name;
  return out;
}

void read_cassette(const fs::path& file, const std::string& model, Recordings& out) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(fmt::format("cannot read cassette {}", file.string()));
  std::map<std::string, std::vector<CallSample>> groups;
  std::vector<std::string> order;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    const std::string where = fmt::format("{}:{}", file.string(), number);
    const json entry = agents::json_util::parse(line, where);
    if (!same_model(agents::json_util::optional_string(entry, "model", where).value_or(""), model)) continue;
    CallSample s;
    agents::ChatResponse response;
    try {
      s.request = agents::wire_json::request_from_json(agents::json_util::require(entry, "request", where).dump());
      response = agents::wire_json::response_from_json(agents::json_util::require(entry, "response", where).dump());
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}: {}; is this a cassette (run --record DIR, agent --record FILE)?", where, e.what()));
    }
    s.usage = response.usage;
    if (!s.usage.input_tokens) throw InputError(fmt::format("{}: the response reports no input tokens; calibrate needs them", where));
    const std::size_t user = last_user(s.request.messages);
    if (user == s.request.messages.size()) throw InputError(fmt::format("{}: the request has no user message", where));
    std::string key = s.request.messages[user].content + '\0' + system_of(s.request);
    for (const auto& t : s.request.tools) key += '\0' + t.name;
    out.samples.push_back(s);
    s.request.messages.push_back(response.message);  // the whole conversation so far
    if (!groups.count(key)) order.push_back(key);
    groups[key].push_back(std::move(s));
  }
  for (const std::string& key : order) add_conversation(file.string(), std::move(groups[key]), out);
}

// A run folder: its records say which model answered each trial, its
// transcripts what was sent and answered, turn by turn.
void read_run_folder(const fs::path& dir, const std::string& model, Recordings& out) {
  std::map<std::string, const reports::TrialRecord*> by_key;
  const std::vector<reports::TrialRecord> records = reports::read_results_jsonl(dir / "results.jsonl");
  for (const auto& r : records) by_key[r.trial_key] = &r;
  const fs::path file = dir / reports::kTranscriptsFile;
  const reports::TranscriptSet set = reports::read_transcripts(file);
  for (const reports::Transcript& t : set.trials) {
    const auto record = by_key.find(t.trial_key);
    if (record == by_key.end() || !record->second->error.empty()) continue;  // superseded or failed
    if (!same_model(record->second->config.model, model)) continue;
    std::vector<CallSample> calls;
    std::vector<agents::Message> history;  // after the system prompt
    for (const reports::TranscriptTurn& turn : t.turns) {
      const reports::TranscriptPrompt* prompt = set.prompt(turn.prompt_hash);
      const std::string where = fmt::format("{}: trial {}", file.string(), t.trial_key);
      if (!prompt) throw InputError(fmt::format("{} names prompt {}, which the file does not hold", where, turn.prompt_hash));
      if (turn.restart) history.clear();
      for (const auto& m : turn.added) history.push_back(message_of(m));
      if (!turn.reply) continue;  // a failed call: nothing was billed that we know of
      if (!turn.input_tokens) throw InputError(fmt::format("{}: a call reports no input tokens; calibrate needs them", where));
      CallSample s;
      if (!prompt->system.empty()) s.request.messages.push_back({agents::Role::system, prompt->system, {}, {}, {}});
      s.request.messages.insert(s.request.messages.end(), history.begin(), history.end());
      for (const auto& tool : prompt->tools) s.request.tools.push_back({tool.name, tool.description, tool.parameters});
      s.usage = {turn.input_tokens, turn.cached_tokens, turn.cache_write_tokens, turn.output_tokens};
      out.samples.push_back(s);
      history.push_back(message_of(*turn.reply));
      s.request.messages.push_back(history.back());
      calls.push_back(std::move(s));
    }
    if (!calls.empty()) add_conversation(fmt::format("{} trial {}", dir.string(), t.trial_key), std::move(calls), out);
  }
}

std::string normalised(const std::string& arguments) {
  const json j = json::parse(arguments, nullptr, false);
  return j.is_discarded() ? arguments : j.dump();
}

std::string lowered(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// Question terms that no opened body holds, as sim decides whether to follow.
std::size_t uncovered_terms(const std::vector<std::string>& terms, const std::string& opened_text) {
  return static_cast<std::size_t>(std::count_if(terms.begin(), terms.end(), [&](const std::string& t) {
    return opened_text.find(t) == std::string::npos;
  }));
}

void observe_search(Observed& o, const json& args, const std::vector<std::string>& terms) {
  ++o.searches;
  o.opens_per_search.push_back(0);
  for (const char* key : {"k", "limit"})
    if (args.is_object() && args.contains(key) && args[key].is_number_integer()) o.search_k.push_back(args[key].get<int>());
  if (o.searches == 1 || !args.is_object() || !args.contains("query") || !args["query"].is_string()) return;
  const std::vector<std::string> words = agents::question_terms(args["query"].get<std::string>());
  int dropped = 0, added = 0;
  for (const auto& t : terms) dropped += std::find(words.begin(), words.end(), t) == words.end();
  for (const auto& w : words) added += std::find(terms.begin(), terms.end(), w) == terms.end();
  o.dropped.push_back(dropped);
  o.added.push_back(added);
}

double round4(double v) { return std::round(v * 10000) / 10000; }

// count -> share of the observations (4 decimals) from observed counts, at
// most 50 (the profile's bound); one count observed throughout is "always".
agents::CountDistribution empirical(const std::vector<int>& counts) {
  std::map<int, double> weights;
  for (int c : counts) weights[std::clamp(c, 0, 50)] += 1;
  agents::CountDistribution d;
  for (const auto& [count, weight] : weights)
    d.weights.emplace_back(count, round4(weight / static_cast<double>(counts.size())));
  return d;
}

double mean_of(const std::vector<double>& values) {
  if (values.empty()) return 0;
  double sum = 0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

// Per-measure means over a set of observations.
struct Means {
  double searches = 0, opens = 0, parallel = 0, dropped = 0, added = 0, follow = 0, repeats = 0, browse = 0, k = 0,
         answer = 0, turns = 0, rereads = 0, follows = 0, neighbour_opens = 0, covered = 0;
  bool any_follow_offer = false, any_browse_offer = false, any_multi = false, any_later = false, any_k = false;
};

Means means_of(const std::vector<Observed>& all) {
  Means m;
  std::vector<double> searches, opens, dropped, added, follow, repeats, browse, k, answer, turns, rereads, follows,
      neighbour_opens, covered;
  double multi = 0, parallel = 0;
  for (const Observed& o : all) {
    searches.push_back(o.searches);
    for (int n : o.opens_per_search) opens.push_back(n);
    multi += o.multi_open_searches;
    parallel += o.parallel_searches;
    for (int n : o.dropped) dropped.push_back(n);
    for (int n : o.added) added.push_back(n);
    if (o.offered_follow) follow.push_back(o.followed ? 1 : 0);
    if (o.followed) {
      follows.push_back(o.follows);
      neighbour_opens.push_back(o.neighbour_opens);
      covered.push_back(o.followed_covered ? 1 : 0);
    }
    rereads.push_back(o.rereads);
    if (o.offered_browse) browse.push_back(o.browsed_first ? 1 : 0);
    repeats.push_back(o.repeats);
    for (int n : o.search_k) k.push_back(n);
    answer.push_back(static_cast<double>(o.answer_tokens));
    turns.push_back(o.tool_turns);
  }
  m.searches = mean_of(searches);
  m.opens = mean_of(opens);
  m.any_multi = multi > 0;
  m.parallel = multi > 0 ? parallel / multi : 1.0;
  m.any_later = !dropped.empty();
  m.dropped = mean_of(dropped);
  m.added = mean_of(added);
  m.any_follow_offer = !follow.empty();
  m.follow = follow.empty() ? 1.0 : mean_of(follow);
  m.any_browse_offer = !browse.empty();
  m.browse = mean_of(browse);
  m.repeats = mean_of(repeats);
  m.any_k = !k.empty();
  m.k = mean_of(k);
  m.answer = mean_of(answer);
  m.turns = mean_of(turns);
  m.rereads = mean_of(rereads);
  m.follows = follows.empty() ? 1.0 : mean_of(follows);
  m.neighbour_opens = neighbour_opens.empty() ? 1.0 : mean_of(neighbour_opens);
  m.covered = mean_of(covered);
  return m;
}

constexpr const char* kContextAnswerRow = "context answer tokens";

// Mean and standard deviation of answer lengths, in the profile's bounds.
agents::AnswerLength answer_length(const std::vector<double>& tokens) {
  const double mean = mean_of(tokens);
  double var = 0;
  for (double t : tokens) var += (t - mean) * (t - mean);
  const double sd = std::sqrt(var / static_cast<double>(tokens.size()));
  const auto within = [](double v, IntegerRange<int> range) {
    return static_cast<std::size_t>(std::clamp<double>(std::llround(v), range.min, range.max));
  };
  return {within(mean, agents::kProfileAnswerTokens), within(sd, agents::kProfileAnswerSpread)};
}

int most_frequent(const std::vector<int>& values, int fallback) {
  std::map<int, int> n;
  for (int v : values) ++n[v];
  int best = fallback, best_n = 0;
  for (const auto& [v, c] : n)
    if (c > best_n) best = v, best_n = c;
  return best;
}

// Solves A x = b (n x n) by Gaussian elimination with partial pivoting.
template <std::size_t N>
std::array<double, N> solve(std::array<std::array<double, N>, N> a, std::array<double, N> b) {
  for (std::size_t col = 0; col < N; ++col) {
    std::size_t pivot = col;
    for (std::size_t r = col + 1; r < N; ++r)
      if (std::abs(a[r][col]) > std::abs(a[pivot][col])) pivot = r;
    std::swap(a[col], a[pivot]);
    std::swap(b[col], b[pivot]);
    if (a[col][col] == 0) continue;
    for (std::size_t r = col + 1; r < N; ++r) {
      const double f = a[r][col] / a[col][col];
      for (std::size_t c = col; c < N; ++c) a[r][c] -= f * a[col][c];
      b[r] -= f * b[col];
    }
  }
  std::array<double, N> x{};
  for (std::size_t i = N; i-- > 0;) {
    double s = b[i];
    for (std::size_t c = i + 1; c < N; ++c) s -= a[i][c] * x[c];
    x[i] = a[i][i] == 0 ? 0 : s / a[i][i];
  }
  return x;
}

std::int64_t billed_input(agents::SimModel& sim, const agents::ChatRequest& r) {
  std::int64_t n = 0;
  for (const auto& b : sim.blocks(r)) n += b.tokens;
  return n;
}

std::int64_t messages_calls(const agents::ChatRequest& r) {
  std::int64_t n = 0;
  for (const auto& m : r.messages) n += static_cast<std::int64_t>(m.tool_calls.size());
  return n;
}

double mean_abs_error(const std::vector<CallSample>& samples, const agents::TokenOverheads& o,
                      const retrieval::TokenCounter& counter) {
  agents::SimOptions options;
  options.profile.overheads = o;
  agents::SimModel sim(options, counter);
  std::vector<double> errors;
  for (const auto& s : samples) {
    const double reported = static_cast<double>(*s.usage.input_tokens);
    if (reported > 0) errors.push_back(std::abs(static_cast<double>(billed_input(sim, s.request)) - reported) / reported);
  }
  return mean_of(errors);
}

OverheadFit fit_overheads(const std::vector<CallSample>& samples, const retrieval::TokenCounter& counter) {
  constexpr std::size_t n = 6;  // content ratio, per message, per tool call, per tool, tools end, priming
  agents::SimOptions text_only;
  text_only.profile.overheads = {0, 0, 0, 0, 0, 1.0};
  agents::SimModel sim(text_only, counter);
  const agents::TokenOverheads d;
  const std::array<double, n> prior = {1.0, double(d.per_message), double(d.per_tool_call), double(d.per_tool),
                                       double(d.tools_end), double(d.reply_priming)};
  std::array<std::array<double, n>, n> a{};
  std::array<double, n> b{};
  for (const auto& s : samples) {
    const auto& r = s.request;
    const std::array<double, n> x = {static_cast<double>(billed_input(sim, r)), double(r.messages.size()),
                                     double(messages_calls(r)), double(r.tools.size()), r.tools.empty() ? 0.0 : 1.0, 1.0};
    const double y = static_cast<double>(*s.usage.input_tokens);
    for (std::size_t i = 0; i < n; ++i) {
      b[i] += x[i] * y;
      for (std::size_t j = 0; j < n; ++j) a[i][j] += x[i] * x[j];
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    const double pull = 1e-6 * a[i][i] + 1e-9;
    a[i][i] += pull;
    b[i] += pull * prior[i];
  }
  const std::array<double, n> beta = solve(a, b);
  auto whole = [](double v) { return static_cast<int>(std::clamp<double>(std::llround(v), 0, 10000)); };
  OverheadFit fit;
  fit.samples = samples.size();
  fit.overheads = {whole(beta[1]), whole(beta[2]), whole(beta[5]), whole(beta[3]), whole(beta[4]),
                   std::clamp(round4(beta[0]), 0.1, 10.0)};
  if (samples.empty()) fit.overheads = d;
  fit.mean_abs_error_default = mean_abs_error(samples, d, counter);
  fit.mean_abs_error_fitted = mean_abs_error(samples, fit.overheads, counter);
  return fit;
}

// Context prompts all have two messages and a packed context of about the
// budget's size, so a constant and the content ratio cannot be told apart
// from them: the per-message constants are the chat format's, taken from
// the calls with tools (`base`), and only the content ratio is fitted, by
// least squares through the origin on what those constants leave.
OverheadFit fit_context_overheads(const std::vector<CallSample>& samples, const agents::TokenOverheads& base,
                                  const retrieval::TokenCounter& counter) {
  agents::SimOptions text_only;
  text_only.profile.overheads = {0, 0, 0, 0, 0, 1.0};
  agents::SimModel sim(text_only, counter);
  double xy = 0, xx = 0;
  for (const auto& s : samples) {
    const auto& r = s.request;
    const double fixed = double(base.per_message) * double(r.messages.size()) +
                         double(base.per_tool_call) * double(messages_calls(r)) + double(base.reply_priming);
    const double x = static_cast<double>(billed_input(sim, r));
    xy += x * (static_cast<double>(*s.usage.input_tokens) - fixed);
    xx += x * x;
  }
  OverheadFit fit;
  fit.samples = samples.size();
  fit.overheads = base;
  if (xx > 0) fit.overheads.content_ratio = std::clamp(round4(xy / xx), 0.1, 10.0);
  fit.mean_abs_error_default = mean_abs_error(samples, agents::TokenOverheads{}, counter);
  fit.mean_abs_error_fitted = mean_abs_error(samples, fit.overheads, counter);
  return fit;
}

// The tools of a replayed question: the recorded specs, the bundle behind them, remember refused.
class ReplayTools : public agents::Toolbox {
 public:
  ReplayTools(agents::BundleTools& tools, std::vector<agents::ToolSpec> specs) : tools_(tools), specs_(std::move(specs)) {}
  std::vector<agents::ToolSpec> specs() const override { return specs_; }
  std::string default_system_prompt() const override { return tools_.default_system_prompt(); }
  agents::ToolResult call(std::string_view name, std::string_view arguments) override {
    if (name == "remember") return agents::tool_error("remember is disabled while calibrating: nothing is written");
    return tools_.call(name, arguments);
  }

 private:
  agents::BundleTools& tools_;
  std::vector<agents::ToolSpec> specs_;
};

// The first concept id the recording opened or saw that `bundle` has.
bool mentions(const Recording& r, const retrieval::Bundle& bundle) {
  for (const auto& m : r.after_question) {
    for (const auto& c : m.tool_calls) {
      const json args = json::parse(c.arguments, nullptr, false);
      if (!args.is_object()) continue;
      for (const char* key : {"concept_id", "path"})
        if (args.contains(key) && args[key].is_string() && bundle.lookup(args[key].get<std::string>())) return true;
    }
  }
  return false;
}

std::int64_t sum(const std::vector<CallSample>& calls, bool output) {
  std::int64_t n = 0;
  for (const auto& c : calls) n += (output ? c.usage.output_tokens : c.usage.input_tokens).value_or(0);
  return n;
}
}  // namespace

Recordings read_recordings(const std::vector<fs::path>& paths, const std::string& model) {
  Recordings out;
  for (const fs::path& path : paths) {
    std::error_code ec;
    if (fs::is_regular_file(path / reports::kTranscriptsFile, ec)) {
      read_run_folder(path, model, out);
      ++out.files;
      continue;
    }
    for (const fs::path& file : cassettes_in(path)) {
      read_cassette(file, model, out);
      ++out.files;
    }
  }
  return out;
}

Observed observe(const std::string& question, const std::vector<agents::ToolSpec>& tools,
                 const std::vector<agents::Message>& after_question, const retrieval::TokenCounter& counter) {
  Observed o;
  const agents::OfferedTools roles = agents::offered_tools(tools);
  const std::vector<std::string> terms = agents::question_terms(question);
  o.offered_follow = !roles.follow.empty();
  o.offered_browse = !roles.browse.empty() && !roles.search.empty();
  std::set<std::string> seen, previous_turn;  // calls (name and arguments): all so far, the turn before's
  std::set<std::string> open_call_ids;
  std::string opened_text;                  // lower-cased open results so far
  std::vector<std::set<int>> open_turns;    // per search, the turns of its opens
  bool after_follow = false;
  int turn = 0;
  for (const auto& m : after_question) {
    if (m.role == agents::Role::tool) {
      if (open_call_ids.count(m.tool_call_id)) opened_text += lowered(m.content);
      continue;
    }
    if (m.role != agents::Role::assistant) continue;
    ++turn;
    if (m.tool_calls.empty()) {
      o.answer_tokens = static_cast<std::int64_t>(counter.count(m.content));
      continue;
    }
    ++o.tool_turns;
    std::set<std::string> this_turn;
    for (const auto& c : m.tool_calls) {
      const std::string key = c.name + '\0' + normalised(c.arguments);
      const bool again = !seen.insert(key).second;
      const bool repeat = again && (previous_turn.count(key) || this_turn.count(key));
      this_turn.insert(key);
      if (repeat || (again && c.name != roles.search && c.name != roles.open)) {
        ++o.repeats;
        continue;
      }
      if (again && c.name == roles.open) {
        ++o.rereads;
        continue;
      }
      const json args = json::parse(c.arguments, nullptr, false);
      if (c.name == roles.search) {
        observe_search(o, args, terms);
        open_turns.emplace_back();
        after_follow = false;
      } else if (c.name == roles.open) {
        open_call_ids.insert(c.id);
        if (after_follow) {
          ++o.neighbour_opens;
        } else if (!o.opens_per_search.empty()) {
          ++o.opens_per_search.back();
          open_turns.back().insert(turn);
        }
      } else if (c.name == roles.follow) {
        if (!o.followed) o.followed_covered = uncovered_terms(terms, opened_text) == 0;
        o.followed = true;
        ++o.follows;
        after_follow = true;
      } else if (c.name == roles.browse && o.searches == 0 && !roles.search.empty()) {
        o.browsed_first = true;
      }
    }
    previous_turn = std::move(this_turn);
  }
  for (std::size_t i = 0; i < open_turns.size(); ++i) {
    if (o.opens_per_search[i] < 2) continue;
    ++o.multi_open_searches;
    if (open_turns[i].size() == 1) ++o.parallel_searches;
  }
  return o;
}

Fit fit_profile(const std::vector<Recording>& fit_set, const std::vector<CallSample>& samples,
                const retrieval::TokenCounter& counter, const std::vector<ContextAnswer>& context_answers) {
  std::vector<Observed> all;
  std::vector<int> searches, opens, dropped, added, repeats, k, rereads, follows, neighbour_opens;
  bool followed_covered = false;
  std::vector<double> answers, calls;
  bool offered_search = false;
  for (const Recording& r : fit_set) {
    all.push_back(observe(r.question, r.tools, r.after_question, counter));
    const Observed& o = all.back();
    offered_search = offered_search || !agents::offered_tools(r.tools).search.empty();
    searches.push_back(o.searches);
    opens.insert(opens.end(), o.opens_per_search.begin(), o.opens_per_search.end());
    dropped.insert(dropped.end(), o.dropped.begin(), o.dropped.end());
    added.insert(added.end(), o.added.begin(), o.added.end());
    repeats.push_back(o.repeats);
    rereads.push_back(o.rereads);
    if (o.followed) {
      follows.push_back(o.follows);
      neighbour_opens.push_back(o.neighbour_opens);
      followed_covered = followed_covered || o.followed_covered;
    }
    k.insert(k.end(), o.search_k.begin(), o.search_k.end());
    answers.push_back(static_cast<double>(o.answer_tokens));
    calls.push_back(static_cast<double>(r.calls.size()));
  }
  const Means m = means_of(all);
  Fit fit;
  agents::SimOptions& o = fit.options;
  agents::SimProfile& p = o.profile;
  p.seed_variation = false;
  if (offered_search && !searches.empty()) p.searches = empirical(searches);
  if (!opens.empty()) p.opens_per_search = empirical(opens);
  if (!dropped.empty()) p.drop_terms = empirical(dropped);
  if (!added.empty()) p.add_terms = empirical(added);
  if (!repeats.empty()) p.repeats = empirical(repeats);
  if (!rereads.empty()) p.rereads = empirical(rereads);
  if (!follows.empty()) p.follow_concepts = empirical(follows);
  if (!neighbour_opens.empty()) p.neighbour_opens = empirical(neighbour_opens);
  p.follow_when_covered = followed_covered;
  p.parallel_opens = round4(m.parallel);
  p.follow_rate = round4(m.follow);
  p.browse_rate = round4(m.browse);
  o.search_k = static_cast<std::size_t>(std::clamp(most_frequent(k, static_cast<int>(o.search_k)), 1, 50));
  if (!answers.empty()) {
    const agents::AnswerLength length = answer_length(answers);
    o.answer_tokens = length.mean;
    o.answer_tokens_spread = length.spread;
  }
  std::vector<double> context_lengths;
  for (const ContextAnswer& c : context_answers) context_lengths.push_back(static_cast<double>(counter.count(c.answer)));
  if (!context_lengths.empty()) p.context_answer = answer_length(context_lengths);
  std::vector<CallSample> with_tools, without_tools;
  for (const CallSample& s : samples) (s.request.tools.empty() ? without_tools : with_tools).push_back(s);
  if (with_tools.empty() || without_tools.empty()) {
    fit.overheads = fit_overheads(samples, counter);
  } else {
    fit.overheads = fit_overheads(with_tools, counter);
    fit.context_overheads = fit_context_overheads(without_tools, fit.overheads.overheads, counter);
    p.context_overheads = fit.context_overheads->overheads;
  }
  p.overheads = fit.overheads.overheads;
  fit.parameters = {
      {"searches per question", m.searches, p.searches.mean(), {}, {}},
      {"opens per search", m.opens, p.opens_per_search ? p.opens_per_search->mean() : 0, {}, {}},
      {"share of opens in one turn", m.parallel, p.parallel_opens, {}, {}},
      {"terms dropped per later search", m.dropped, p.drop_terms.mean(), {}, {}},
      {"terms added per later search", m.added, p.add_terms.mean(), {}, {}},
      {"follow rate", m.follow, p.follow_rate, {}, {}},
      {"repeated calls per question", m.repeats, p.repeats.mean(), {}, {}},
      {"browse before searching", m.browse, p.browse_rate, {}, {}},
      {"rereads per question", m.rereads, p.rereads.mean(), {}, {}},
      {"concepts listed per follow turn", m.follows, p.follow_concepts.mean(), {}, {}},
      {"neighbours opened after following", m.neighbour_opens, p.neighbour_opens.mean(), {}, {}},
      {"followed with all terms covered", m.covered, p.follow_when_covered ? 1.0 : 0.0, {}, {}},
      {"search k", m.k, static_cast<double>(o.search_k), {}, {}},
      {"answer tokens", m.answer, static_cast<double>(o.answer_tokens), {}, {}},
      {"tool turns per question", m.turns, std::nan(""), {}, {}},
      {"model calls per question", mean_of(calls), std::nan(""), {}, {}},
      // Last: add_check_columns fills the rows above by position, add_context_check this one.
      {kContextAnswerRow, context_lengths.empty() ? std::nan("") : mean_of(context_lengths),
       p.context_answer ? static_cast<double>(p.context_answer->mean) : std::nan(""), {}, {}},
  };
  return fit;
}

std::vector<CheckRow> check_profile(const agents::SimOptions& fitted, const std::vector<Recording>& check_set,
                                    std::vector<retrieval::Bundle*> bundles, const std::vector<std::string>& bundle_names,
                                    const retrieval::TokenCounter& counter, std::uint64_t seed) {
  std::vector<CheckRow> rows;
  if (bundles.empty()) return rows;
  for (const Recording& r : check_set) {
    std::size_t which = 0;
    for (std::size_t i = 0; i < bundles.size(); ++i)
      if (mentions(r, *bundles[i])) {
        which = i;
        break;
      }
    agents::ToolsOptions tools_options;
    std::vector<std::string> names;
    for (const auto& t : r.tools) names.push_back(t.name);
    tools_options.surface = agents::offered_tools(r.tools).surface;
    tools_options.include = names;
    agents::BundleTools bundle_tools(*bundles[which], tools_options);
    ReplayTools tools(bundle_tools, r.tools);
    agents::SimOptions options = fitted;
    options.seed = seed;
    agents::SimModel sim(options, counter);
    agents::AgentOptions run_options;
    run_options.system_prompt = r.system_prompt;
    run_options.counter = &counter;
    run_options.max_turns = std::max(12, static_cast<int>(r.calls.size()) + 2);
    const agents::AgentRun run = agents::run_agent(sim, tools, r.question, run_options);
    CheckRow row;
    row.question = r.question;
    row.bundle = bundle_names[which];
    row.real_input = sum(r.calls, false);
    row.real_output = sum(r.calls, true);
    row.real_calls = static_cast<std::int64_t>(r.calls.size());
    for (const auto& t : run.turns) {
      row.sim_input += t.usage.input_tokens.value_or(0);
      row.sim_output += t.usage.output_tokens.value_or(0);
    }
    row.sim_calls = static_cast<std::int64_t>(run.turns.size());
    row.real = observe(r.question, r.tools, r.after_question, counter);
    const std::size_t user = last_user(run.messages);
    const std::vector<agents::Message> after(run.messages.begin() + static_cast<std::ptrdiff_t>(std::min(user + 1, run.messages.size())),
                                             run.messages.end());
    row.sim = observe(r.question, r.tools, after, counter);
    rows.push_back(std::move(row));
  }
  return rows;
}

void add_check_columns(Fit& fit, const std::vector<CheckRow>& rows) {
  if (rows.empty()) return;
  std::vector<Observed> real, sim;
  std::vector<double> real_calls, sim_calls;
  for (const auto& r : rows) {
    real.push_back(r.real);
    sim.push_back(r.sim);
    real_calls.push_back(static_cast<double>(r.real_calls));
    sim_calls.push_back(static_cast<double>(r.sim_calls));
  }
  const Means a = means_of(real), b = means_of(sim);
  const std::vector<std::pair<double, double>> columns = {
      {a.searches, b.searches}, {a.opens, b.opens},     {a.parallel, b.parallel}, {a.dropped, b.dropped},
      {a.added, b.added},       {a.follow, b.follow},   {a.repeats, b.repeats},   {a.browse, b.browse},
      {a.rereads, b.rereads},   {a.follows, b.follows}, {a.neighbour_opens, b.neighbour_opens}, {a.covered, b.covered},
      {a.k, b.k},               {a.answer, b.answer},   {a.turns, b.turns},       {mean_of(real_calls), mean_of(sim_calls)}};
  for (std::size_t i = 0; i < fit.parameters.size() && i < columns.size(); ++i) {
    fit.parameters[i].check_real = columns[i].first;
    fit.parameters[i].check_sim = columns[i].second;
  }
}

void add_context_check(Fit& fit, const agents::SimOptions& fitted, const std::vector<ContextAnswer>& check_set,
                       const retrieval::TokenCounter& counter, std::uint64_t seed) {
  if (check_set.empty()) return;
  agents::SimOptions options = fitted;
  options.seed = seed;
  std::vector<double> real, sim;
  for (const ContextAnswer& c : check_set) {
    real.push_back(static_cast<double>(counter.count(c.answer)));
    sim.push_back(static_cast<double>(counter.count(agents::sim_decide(c.call.request, options, counter).content)));
  }
  for (ParameterFit& row : fit.parameters) {
    if (row.name != kContextAnswerRow) continue;
    row.check_real = mean_of(real);
    row.check_sim = mean_of(sim);
  }
}

}  // namespace okfbench::engine
