#include "agents/sim_model.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "agents/bundle_tools.hpp"
#include "agents/context_prompt.hpp"
#include "core/hash.hpp"
#include "agents/sim_answer.hpp"
#include "core/json_text.hpp"

namespace okfbench::agents {
namespace {
using nlohmann::json;

struct Candidate {
  std::string id;
  std::string title;
  std::string description;
  double score = 0.0;
  std::string bundle;  // with several bundles loaded, the one the result named
};

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

bool wants_note(std::string_view question) {
  for (const std::string& w : lower_words(question))
    if (w == "save" || w == "remember" || w == "note") return true;
  return false;
}

SimOptions varied(SimOptions o, std::string_view question) {
  if (o.seed == 0) return o;
  std::mt19937_64 rng(o.seed ^ fnv1a(question));
  constexpr std::size_t ks[] = {3, 5, 8};
  o.search_k = ks[rng() % 3];
  o.max_open = 1 + rng() % 3;
  o.open_ratio += (static_cast<double>(rng() % 301) - 150.0) / 1000.0;
  return o;
}

std::string str(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Candidate candidate_from(const json& item) {
  Candidate c{str(item, "id"), str(item, "title"), str(item, "description"), 0.0, str(item, "bundle")};
  if (c.id.empty()) c.id = str(item, "path");
  if (auto it = item.find("score"); it != item.end() && it->is_number()) c.score = it->get<double>();
  return c;
}

// Objects of a JSON array, or of the named arrays inside an object.
std::vector<Candidate> candidates_in(const json& doc, std::initializer_list<const char*> keys) {
  std::vector<Candidate> out;
  auto take = [&](const json& array) {
    if (!array.is_array()) return;
    for (const json& item : array)
      if (item.is_object()) out.push_back(candidate_from(item));
  };
  if (doc.is_array()) take(doc);
  if (doc.is_object())
    for (const char* key : keys)
      if (doc.contains(key)) take(doc[key]);
  return out;
}

// What the conversation since the question says has happened.
struct State {
  std::string question;
  int assistant_turns = 0;
  bool searched = false, browsed_root = false, browsed_layers = false, followed = false, remembered = false;
  int opens_after_follow = 0;
  int rereads = 0;  // opens of a concept opened before
  int tool_turns = 0;                          // assistant messages with tool calls
  std::vector<std::string> queries;            // search queries in order
  int opens_since_search = 0;                  // open calls after the latest search
  std::set<std::string> attempted_before_search;  // ids open was called on before the latest search
  std::vector<ToolCall> last_calls;            // the latest assistant message's calls
  int repeats = 0;                             // deliberate repeats (profile `repeats`)
  bool last_turn_repeated = false;
  std::vector<Candidate> candidates;
  std::vector<std::string> subdirs;
  std::vector<std::string> opened;  // ids whose open succeeded, in order
  std::set<std::string> attempted;  // ids open was called on
  std::string opened_text;          // lower-cased open results
  std::vector<SimSource> read;      // what the opens returned, in order
  std::vector<Candidate> neighbours;
  std::map<std::string, Candidate> known;  // id -> title/description seen anywhere
  // Several bundles: id -> the bundle a result first named it in (sim keeps
  // one bundle per id, the first it saw).
  std::map<std::string, std::string> bundle_of;
};

std::string concept_arg(const json& args) {
  std::string id = str(args, "concept_id");
  return id.empty() ? str(args, "path") : id;
}

// An open result as the model reads it: JSON from `open` (title, description,
// body) or the text of `read_concept` ("# title", header lines, "---", body).
SimSource source_from_open(const std::string& id, const std::string& result, const json& doc,
                           const std::map<std::string, Candidate>& known) {
  SimSource source{id, "", "", ""};
  const auto seen = known.find(id);
  if (seen != known.end()) source.description = seen->second.description;
  if (doc.is_object()) {
    source.title = str(doc, "title");
    if (!str(doc, "description").empty()) source.description = str(doc, "description");
    source.text = str(doc, "body");
  } else {
    if (result.starts_with("# ")) source.title = result.substr(2, result.find('\n') - 2);
    const auto rule = result.find("\n---\n");
    source.text = rule == std::string::npos ? result : result.substr(rule + 5);
  }
  if (source.title.empty() && seen != known.end()) source.title = seen->second.title;
  return source;
}

void absorb(State& s, const OfferedTools& roles, const ToolCall& call, const std::string& result) {
  json args = json::parse(call.arguments, nullptr, false);
  json doc = json::parse(result, nullptr, false);
  bool failed = doc.is_object() && doc.contains("error");
  auto remember_all = [&](const std::vector<Candidate>& list) {
    for (const Candidate& c : list) {
      s.known.emplace(c.id, c);
      if (!c.bundle.empty()) s.bundle_of.emplace(c.id, c.bundle);
    }
  };
  if (call.name == roles.search) {
    s.searched = true;
    s.queries.push_back(args.is_object() ? str(args, "query") : std::string());
    s.opens_since_search = 0;
    s.attempted_before_search = s.attempted;
    s.candidates = candidates_in(doc, {"hits", "results"});
    remember_all(s.candidates);
  } else if (call.name == roles.browse) {
    bool root = !args.is_object() || str(args, "layer").empty();
    (root ? s.browsed_root : s.browsed_layers) = true;
    std::vector<Candidate> listed = candidates_in(doc, {"concepts"});
    s.candidates.insert(s.candidates.end(), listed.begin(), listed.end());
    remember_all(listed);
    if (root && doc.is_object() && doc.contains("subdirs")) {
      const json& subdirs = doc["subdirs"];
      if (subdirs.is_array())
        for (const json& d : subdirs)
          if (d.is_string()) s.subdirs.push_back(d.get<std::string>());
      if (subdirs.is_object())
        for (auto it = subdirs.begin(); it != subdirs.end(); ++it) s.subdirs.push_back(it.key());
    }
  } else if (call.name == roles.open) {
    std::string id = args.is_object() ? concept_arg(args) : std::string();
    const bool again = s.attempted.count(id) > 0;
    s.attempted.insert(id);
    ++s.opens_since_search;
    if (s.followed) ++s.opens_after_follow;
    if (!failed && again) ++s.rereads;
    if (!failed && !again) {
      s.opened.push_back(id);
      s.opened_text += lower(result);
      s.read.push_back(source_from_open(id, result, doc, s.known));
    }
  } else if (call.name == roles.follow) {
    s.followed = true;
    const std::vector<Candidate> listed = candidates_in(doc, {"outbound", "backlinks", "neighbors"});
    s.neighbours.insert(s.neighbours.end(), listed.begin(), listed.end());  // several follows add up
    remember_all(listed);
  } else if (call.name == roles.remember) {
    s.remembered = true;
  }
}

// Calls a profile asks to repeat carry ids starting with this, so that reading
// the conversation back tells them from calls the policy meant.
constexpr std::string_view kRepeatPrefix = "simr_";

State read_state(const ChatRequest& request, const OfferedTools& roles) {
  State s;
  std::size_t start = 0;
  for (std::size_t i = 0; i < request.messages.size(); ++i)
    if (request.messages[i].role == Role::user) start = i;
  if (start < request.messages.size()) s.question = request.messages[start].content;
  std::map<std::string, ToolCall> calls;
  for (std::size_t i = start + 1; i < request.messages.size(); ++i) {
    const Message& m = request.messages[i];
    if (m.role == Role::assistant) {
      ++s.assistant_turns;
      if (!m.tool_calls.empty()) ++s.tool_turns;
      s.last_calls = m.tool_calls;
      s.last_turn_repeated = false;
      for (const ToolCall& c : m.tool_calls) {
        calls[c.id] = c;
        if (c.id.starts_with(kRepeatPrefix)) {
          ++s.repeats;
          s.last_turn_repeated = true;
        }
      }
    } else if (m.role == Role::tool) {
      auto it = calls.find(m.tool_call_id);
      if (it != calls.end() && !it->first.starts_with(kRepeatPrefix)) absorb(s, roles, it->second, m.content);
    }
  }
  return s;
}

std::vector<std::string> uncovered(const State& s, const std::vector<std::string>& terms) {
  std::vector<std::string> out;
  for (const std::string& t : terms)
    if (s.opened_text.find(t) == std::string::npos) out.push_back(t);
  return out;
}

std::size_t overlap(const Candidate& c, const std::vector<std::string>& terms) {
  std::string text = lower(c.title + " " + c.description + " " + c.id);
  return static_cast<std::size_t>(
      std::count_if(terms.begin(), terms.end(), [&](const std::string& t) { return text.find(t) != std::string::npos; }));
}

std::vector<Candidate> ranked(const State& s, const std::vector<std::string>& terms, const OfferedTools& roles) {
  std::vector<Candidate> list = s.candidates;
  if (!roles.search.empty()) return list;  // search results come ranked
  for (Candidate& c : list) c.score = static_cast<double>(overlap(c, terms));
  std::erase_if(list, [](const Candidate& c) { return c.score <= 0.0; });
  std::stable_sort(list.begin(), list.end(), [](const Candidate& a, const Candidate& b) {
    return a.score != b.score ? a.score > b.score : a.id < b.id;
  });
  return list;
}

class Reply {
 public:
  explicit Reply(int turn) : turn_(turn) {}
  void call(const std::string& name, const json& args) {
    message_.tool_calls.push_back(
        ToolCall{fmt::format("sim_{}_{}", turn_, message_.tool_calls.size() + 1), name, json_text(args)});
  }
  void repeat(const ToolCall& earlier) {
    message_.tool_calls.push_back(ToolCall{fmt::format("{}{}_{}", kRepeatPrefix, turn_, message_.tool_calls.size() + 1),
                                           earlier.name, earlier.arguments});
  }
  bool empty() const { return message_.tool_calls.empty(); }
  Message take() { return std::move(message_); }

 private:
  int turn_;
  Message message_{Role::assistant, "", {}, {}, {}};
};

// The arguments naming concept `id`, with its bundle when a result named one.
json concept_args(const OfferedTools& roles, const std::string& id, const State& s) {
  json args{{concept_key(roles.surface), id}};
  if (auto it = s.bundle_of.find(id); it != s.bundle_of.end()) args["bundle"] = it->second;
  return args;
}

std::string slug(const std::vector<std::string>& terms) {
  std::string out;
  for (std::size_t i = 0; i < terms.size() && i < 6; ++i) out += (out.empty() ? "" : "-") + terms[i];
  return out.empty() ? "note" : out;
}

std::string answer_text(const State& s, const SimOptions& o, const retrieval::TokenCounter& counter) {
  const std::size_t target = answer_target(o.answer_tokens, o.answer_tokens_spread, o.seed, s.question);
  return compose_answer(s.question, s.read, target, counter);
}

// What the profile draws for one question (the same on every call).
struct Plan {
  int searches = 1;
  bool follow = true;
  int follow_concepts = 1;
  int neighbour_opens = 1;
  int rereads = 0;
  int repeats = 0;
  bool browse_first = false;
};

double draw(const SimOptions& o, const State& s, std::string_view what, std::uint64_t index = 0) {
  return profile_draw(o.seed, s.question, what, index);
}

Plan plan_for(const SimOptions& o, const State& s) {
  const SimProfile& p = o.profile;
  Plan plan;
  plan.searches = p.searches.draw(draw(o, s, "searches"));
  plan.follow = draw(o, s, "follow") < p.follow_rate;
  plan.follow_concepts = p.follow_concepts.draw(draw(o, s, "follow-concepts"));
  plan.neighbour_opens = p.neighbour_opens.draw(draw(o, s, "neighbour-opens"));
  plan.rereads = p.rereads.draw(draw(o, s, "rereads"));
  plan.repeats = p.repeats.draw(draw(o, s, "repeats"));
  plan.browse_first = draw(o, s, "browse") < p.browse_rate;
  return plan;
}

// Repeats the first call of the turn before, once after each turn the policy meant.
bool repeat_call(Reply& reply, const State& s, const Plan& plan) {
  if (s.repeats >= plan.repeats || s.last_calls.empty() || s.last_turn_repeated) return false;
  reply.repeat(s.last_calls.front());
  return true;
}

bool browse_first(Reply& reply, const State& s, const OfferedTools& roles, const Plan& plan) {
  if (!plan.browse_first || roles.search.empty() || roles.browse.empty() || s.browsed_root || s.searched) return false;
  reply.call(roles.browse, json::object());
  return true;
}

bool first_steps(Reply& reply, const State& s, const OfferedTools& roles, const SimOptions& o, const Plan& plan) {
  if (!roles.search.empty() && !s.searched && plan.searches > 0) {
    reply.call(roles.search, {{"query", s.question}, {limit_key(roles.surface), o.search_k}});
    return true;
  }
  if (!roles.search.empty() || roles.browse.empty()) return false;
  if (!s.browsed_root) {
    reply.call(roles.browse, json::object());
    return true;
  }
  if (!s.browsed_layers && !s.subdirs.empty()) {
    for (std::size_t i = 0; i < s.subdirs.size() && i < 3; ++i) reply.call(roles.browse, {{"layer", s.subdirs[i]}});
    return true;
  }
  return false;
}

// The candidates of the latest search (or browse) to open, in order: the
// open_ratio rule, or the profile's drawn count of the best ones.
std::vector<Candidate> chosen_opens(const std::vector<Candidate>& list, const State& s, const SimOptions& o) {
  std::vector<Candidate> out;
  if (list.empty()) return out;
  if (o.profile.opens_per_search) {
    const auto n = static_cast<std::size_t>(o.profile.opens_per_search->draw(draw(o, s, "opens", s.queries.size())));
    for (std::size_t i = 0; i < list.size() && i < n; ++i) out.push_back(list[i]);
    return out;
  }
  const double top = list.front().score;
  for (const Candidate& c : list) {
    if (out.size() >= o.max_open) break;
    if (!out.empty() && c.score < o.open_ratio * top) break;
    out.push_back(c);
  }
  return out;
}

bool open_candidates(Reply& reply, const State& s, const OfferedTools& roles, const SimOptions& o,
                     const std::vector<std::string>& terms) {
  if (roles.open.empty()) return false;
  std::vector<Candidate> list = ranked(s, terms, roles);
  std::erase_if(list, [&](const Candidate& c) { return s.attempted_before_search.count(c.id) > 0; });
  if (list.empty()) return false;
  const std::vector<Candidate> chosen = chosen_opens(list, s, o);
  const bool parallel = draw(o, s, "parallel", s.queries.size()) < o.profile.parallel_opens;
  if (parallel) {
    if (s.opens_since_search > 0) return false;
    for (const Candidate& c : chosen) reply.call(roles.open, concept_args(roles, c.id, s));
    // With the ratio rule an empty choice still ends the turn, as the policy always did.
    return !o.profile.opens_per_search || !reply.empty();
  }
  if (static_cast<std::size_t>(s.opens_since_search) >= chosen.size()) return false;
  for (const Candidate& c : chosen) {
    if (s.attempted.count(c.id)) continue;
    reply.call(roles.open, concept_args(roles, c.id, s));
    return true;
  }
  return false;
}

// A later search: the question's terms less some, plus words of titles seen
// in results that were not opened.
std::string reformulated(const State& s, const SimOptions& o, const std::vector<std::string>& terms) {
  const std::uint64_t i = s.queries.size();
  std::vector<std::string> kept = terms;
  int drop = o.profile.drop_terms.draw(draw(o, s, "drop", i));
  for (int j = 0; j < drop && kept.size() > 1; ++j) {
    const double u = draw(o, s, "drop-which", i * 64 + static_cast<std::uint64_t>(j));
    kept.erase(kept.begin() + static_cast<std::ptrdiff_t>(u * static_cast<double>(kept.size())));
  }
  const auto add = static_cast<std::size_t>(o.profile.add_terms.draw(draw(o, s, "add", i)));
  std::vector<std::string> added;
  for (const Candidate& c : s.candidates) {
    if (added.size() >= add) break;
    if (s.attempted.count(c.id)) continue;
    for (const std::string& w : question_terms(c.title)) {
      if (added.size() >= add) break;
      const bool known = std::find(terms.begin(), terms.end(), w) != terms.end() ||
                         std::find(added.begin(), added.end(), w) != added.end();
      if (!known) added.push_back(w);
    }
  }
  std::string query;
  for (const auto* list : {&kept, &added})
    for (const std::string& w : *list) query += (query.empty() ? "" : " ") + w;
  return query.empty() ? s.question : query;
}

bool next_search(Reply& reply, const State& s, const OfferedTools& roles, const SimOptions& o, const Plan& plan,
                 const std::vector<std::string>& terms) {
  if (roles.search.empty() || s.queries.empty() || s.queries.size() >= static_cast<std::size_t>(plan.searches))
    return false;
  reply.call(roles.search, {{"query", reformulated(s, o, terms)}, {limit_key(roles.surface), o.search_k}});
  return true;
}

// Neighbours to open after a follow, at most `want`: those whose titles hold
// an uncovered term, then (when the profile follows whatever is covered)
// those holding any question term.
std::vector<std::string> neighbours_to_open(const State& s, const SimOptions& o, std::size_t want,
                                            const std::vector<std::string>& missing, const std::vector<std::string>& terms) {
  std::vector<std::string> chosen;
  const auto titled = [](const Candidate& n, const std::vector<std::string>& words) {
    const std::string title = lower(n.title);
    return std::any_of(words.begin(), words.end(), [&](const std::string& t) { return title.find(t) != std::string::npos; });
  };
  std::vector<const std::vector<std::string>*> passes = {&missing};
  if (o.profile.follow_when_covered) passes.push_back(&terms);
  for (const auto* words : passes) {
    for (const Candidate& n : s.neighbours) {
      if (chosen.size() >= want) return chosen;
      if (s.attempted.count(n.id) || std::find(chosen.begin(), chosen.end(), n.id) != chosen.end()) continue;
      if (titled(n, *words)) chosen.push_back(n.id);
    }
  }
  return chosen;
}

bool follow_links(Reply& reply, const State& s, const OfferedTools& roles, const SimOptions& o, const Plan& plan,
                  const std::vector<std::string>& terms) {
  if (o.follow_links == FollowLinks::no || !plan.follow || roles.follow.empty() || s.opened.empty()) return false;
  const std::vector<std::string> missing = uncovered(s, terms);
  if (!s.followed) {
    if (missing.empty() && !o.profile.follow_when_covered) return false;
    for (std::size_t i = 0; i < s.opened.size() && i < static_cast<std::size_t>(plan.follow_concepts); ++i) {
      json args = concept_args(roles, s.opened[i], s);
      if (roles.surface == Surface::grafito) args["direction"] = "out";
      reply.call(roles.follow, args);
    }
    return !reply.empty();
  }
  if (s.opens_after_follow > 0 || roles.open.empty()) return false;
  const auto chosen = neighbours_to_open(s, o, static_cast<std::size_t>(plan.neighbour_opens), missing, terms);
  for (const std::string& id : chosen) reply.call(roles.open, concept_args(roles, id, s));
  return !chosen.empty();
}

// Opens the first concepts it read again, in one turn, just before answering.
bool reread(Reply& reply, const State& s, const OfferedTools& roles, const Plan& plan) {
  if (roles.open.empty() || s.rereads > 0 || plan.rereads <= 0) return false;
  for (std::size_t i = 0; i < s.opened.size() && i < static_cast<std::size_t>(plan.rereads); ++i)
    reply.call(roles.open, concept_args(roles, s.opened[i], s));
  return !reply.empty();
}

bool save_note(Reply& reply, const State& s, const OfferedTools& roles, const std::vector<std::string>& terms,
               const SimOptions& o, const retrieval::TokenCounter& counter) {
  if (roles.remember.empty() || s.remembered || !wants_note(s.question)) return false;
  json args = {{"concept_id", "notes/" + slug(terms)},
               {"title", "Note: " + s.question.substr(0, 80)},
               {"description", "Saved by the sim agent"},
               {"body", answer_text(s, o, counter)},
               {"links", s.opened}};
  // Several bundles: the note goes into the bundle of the first concept it read.
  if (!s.opened.empty())
    if (auto it = s.bundle_of.find(s.opened.front()); it != s.bundle_of.end()) args["bundle"] = it->second;
  reply.call(roles.remember, args);
  return true;
}

// Tokens of one tool per the OpenAI cookbook's num_tokens_for_tools (gpt-4o constants).
std::int64_t tool_tokens(const ToolSpec& tool, const retrieval::TokenCounter& counter, const TokenOverheads& overheads) {
  auto strip_dot = [](std::string text) {
    if (!text.empty() && text.back() == '.') text.pop_back();
    return text;
  };
  auto count = [&](const std::string& text) { return overheads.billed(static_cast<std::int64_t>(counter.count(text))); };
  std::int64_t tokens = overheads.per_tool + count(tool.name + ":" + strip_dot(tool.description));
  json schema = json::parse(tool.parameters, nullptr, false);
  if (!schema.is_object() || !schema.contains("properties") || !schema["properties"].is_object() ||
      schema["properties"].empty())
    return tokens;
  tokens += 3;
  for (auto it = schema["properties"].begin(); it != schema["properties"].end(); ++it) {
    tokens += 3;
    const json& p = it.value();
    std::string type = p.contains("type") ? (p["type"].is_string() ? p["type"].get<std::string>() : p["type"].dump())
                                          : std::string();
    if (p.contains("enum") && p["enum"].is_array()) {
      tokens -= 3;
      for (const json& item : p["enum"]) tokens += 3 + count(item.is_string() ? item.get<std::string>() : item.dump());
    }
    tokens += count(it.key() + ":" + type + ":" + strip_dot(str(p, "description")));
  }
  return tokens;
}

std::uint64_t message_hash(const Message& m) {
  std::uint64_t h = fnv1a(to_string(m.role));
  h = fnv1a(std::string_view("\0", 1), fnv1a(m.content, h));
  for (const ToolCall& c : m.tool_calls) h = fnv1a(c.arguments, fnv1a(c.name, fnv1a(c.id, h)));
  return fnv1a(m.tool_call_id, h);
}

// The context path: answer from the packed blocks, as one call.
Message answer_from_context(const ContextPrompt& prompt, const SimOptions& o, const retrieval::TokenCounter& counter) {
  std::vector<SimSource> read;
  for (const ContextBlock& b : prompt.blocks) read.push_back({b.id, b.title, b.description, b.text});
  const AnswerLength length = o.profile.context_answer.value_or(AnswerLength{o.answer_tokens, o.answer_tokens_spread});
  const std::size_t target = answer_target(length.mean, length.spread, o.seed, prompt.question);
  return Message{Role::assistant, compose_answer(prompt.question, read, target, counter), {}, {}, {}};
}
}  // namespace

Message sim_decide(const ChatRequest& request, const SimOptions& options, const retrieval::TokenCounter& counter) {
  const OfferedTools roles = offered_tools(request.tools);
  State s = read_state(request, roles);
  if (ContextPrompt prompt; read_context_user_message(s.question, prompt))
    return answer_from_context(prompt, options, counter);
  SimOptions o = options.profile.seed_variation ? varied(options, s.question) : options;
  std::vector<std::string> terms = question_terms(s.question);
  const Plan plan = plan_for(o, s);
  const int cap = o.profile.max_tool_turns;
  Reply reply(s.assistant_turns + 1);
  if (cap > 0 && s.tool_turns >= cap) return Message{Role::assistant, answer_text(s, o, counter), {}, {}, {}};
  if (repeat_call(reply, s, plan) || browse_first(reply, s, roles, plan) || first_steps(reply, s, roles, o, plan) ||
      open_candidates(reply, s, roles, o, terms) || next_search(reply, s, roles, o, plan, terms) ||
      follow_links(reply, s, roles, o, plan, terms) || reread(reply, s, roles, plan) ||
      save_note(reply, s, roles, terms, o, counter))
    return reply.take();
  return Message{Role::assistant, answer_text(s, o, counter), {}, {}, {}};
}

SimModel::SimModel(SimOptions options, const retrieval::TokenCounter& counter)
    : options_(std::move(options)), counter_(counter), cache_(make_cache_model(options_.cache, options_.model)) {}

std::int64_t SimModel::block_tokens(std::uint64_t hash, const std::function<std::int64_t()>& count) {
  auto it = block_tokens_.find(hash);
  if (it != block_tokens_.end()) return it->second;
  std::int64_t tokens = count();
  block_tokens_.emplace(hash, tokens);
  return tokens;
}

const TokenOverheads& SimModel::overheads_of(const ChatRequest& request) const {
  const SimProfile& p = options_.profile;
  return request.tools.empty() && p.context_overheads ? *p.context_overheads : p.overheads;
}

std::vector<PromptBlock> SimModel::blocks(const ChatRequest& request) {
  auto count = [&](std::string_view text) { return static_cast<std::int64_t>(counter_.count(text)); };
  const TokenOverheads& o = overheads_of(request);
  // Counts are cached by block hash: a message billed at other overheads is another block.
  const bool other_overheads = &o != &options_.profile.overheads;
  bool marks = request.breakpoints != CacheBreakpoints::none;
  std::vector<PromptBlock> out;
  for (std::size_t i = 0; i < request.tools.size(); ++i) {
    const ToolSpec& t = request.tools[i];
    bool last = i + 1 == request.tools.size();
    std::uint64_t h = fnv1a(t.parameters, fnv1a(t.description, fnv1a(t.name, fnv1a(last ? "tool-last" : "tool"))));
    out.push_back(PromptBlock{h, block_tokens(h, [&] { return tool_tokens(t, counter_, o) + (last ? o.tools_end : 0); }),
                              marks && last});
  }
  for (std::size_t i = 0; i < request.messages.size(); ++i) {
    const Message& m = request.messages[i];
    std::uint64_t h = other_overheads ? fnv1a("context-overheads", message_hash(m)) : message_hash(m);
    std::int64_t tokens = block_tokens(h, [&] {
      std::int64_t n = o.per_message + o.billed(count(to_string(m.role)) + count(m.content));
      for (const ToolCall& c : m.tool_calls) n += o.per_tool_call + o.billed(count(c.name) + count(c.arguments));
      return n;
    });
    bool last = i + 1 == request.messages.size();
    bool mark = (marks && m.role == Role::system) ||
                (last && request.breakpoints == CacheBreakpoints::tools_system_and_last_message);
    out.push_back(PromptBlock{h, tokens, mark});
  }
  out.push_back(PromptBlock{fnv1a("reply-priming"), o.reply_priming, false});
  return out;
}

std::int64_t SimModel::output_tokens(const ChatRequest& request, const Message& message) const {
  return overheads_of(request).billed(text_tokens(message, counter_));
}

ChatResponse SimModel::chat(const ChatRequest& request) {
  std::optional<Message> first = options_.reply_first ? options_.reply_first(request) : std::nullopt;
  Message message = first ? std::move(*first) : sim_decide(request, options_, counter_);
  std::lock_guard lock(mutex_);
  CacheOutcome cache = cache_->apply(blocks(request), static_cast<double>(calls_++) * options_.seconds_per_call);
  ChatResponse response;
  response.usage = Usage{cache.input, cache.cached, cache.written, output_tokens(request, message)};
  response.stop = message.tool_calls.empty() ? StopReason::end_turn : StopReason::tool_calls;
  response.message = std::move(message);
  response.model = options_.model;
  return response;
}

}  // namespace okfbench::agents
