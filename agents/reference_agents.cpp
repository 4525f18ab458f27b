#include "agents/reference_agents.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "agents/bundle_tools.hpp"
#include "agents/context_prompt.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"

namespace okfbench::agents {
namespace {
using nlohmann::json;

const std::set<std::string> kStop = {"what", "which", "where", "when", "does", "should", "would", "could", "about",
                                     "after", "before", "there", "their", "with", "from", "into", "that", "this",
                                     "have", "will", "your", "step", "need", "mean", "means", "tell", "explain"};

// Lower-cased ASCII letter/digit runs.
std::vector<std::string> words_of(std::string_view text) {
  std::vector<std::string> out;
  std::string w;
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c)) {
      w += static_cast<char>(std::tolower(c));
    } else if (!w.empty()) {
      out.push_back(std::move(w));
      w.clear();
    }
  }
  if (!w.empty()) out.push_back(std::move(w));
  return out;
}

std::vector<std::string> keywords(std::string_view text) {
  std::vector<std::string> out;
  for (std::string& w : words_of(text))
    if (w.size() >= 4 && !kStop.count(w) && std::find(out.begin(), out.end(), w) == out.end()) out.push_back(std::move(w));
  return out;
}

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

std::string field(const json& j, const std::string& key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The tool names an agent may call, by part, and their argument names.
struct Tools : OfferedTools {
  std::string id_key, k_key;
};

Tools tools_of(const ChatRequest& r) {
  Tools t{offered_tools(r.tools), {}, {}};
  t.id_key = concept_key(t.surface);
  t.k_key = limit_key(t.surface);
  return t;
}

struct Hit {
  std::string id, title;
};

// What the conversation since the question shows.
struct Seen {
  std::string question;
  std::vector<ToolCall> calls;  // in order
  std::vector<std::vector<Hit>> searches;
  std::vector<std::string> opened;           // ids, in order (first time)
  std::map<std::string, std::string> bodies;  // id -> what open returned
  std::map<std::string, std::string> titles;
  std::vector<Hit> neighbours;
  bool browsed = false, followed = false;
  int turns = 0;
};

std::vector<Hit> hits_in(const json& doc) {
  std::vector<Hit> out;
  auto take = [&](const json& list) {
    if (!list.is_array()) return;
    for (const json& h : list)
      if (h.is_object()) out.push_back({field(h, "id").empty() ? field(h, "path") : field(h, "id"), field(h, "title")});
  };
  if (doc.is_array()) take(doc);
  if (doc.is_object())
    for (const char* key : {"outbound", "backlinks", "hits", "results"})
      if (doc.contains(key)) take(doc[key]);
  return out;
}

Seen read_conversation(const ChatRequest& r, const Tools& t) {
  Seen s;
  std::size_t start = 0;
  for (std::size_t i = 0; i < r.messages.size(); ++i)
    if (r.messages[i].role == Role::user) start = i;
  if (start < r.messages.size()) s.question = r.messages[start].content;
  std::map<std::string, ToolCall> by_id;
  for (std::size_t i = start + 1; i < r.messages.size(); ++i) {
    const Message& m = r.messages[i];
    if (m.role == Role::assistant) {
      ++s.turns;
      for (const ToolCall& c : m.tool_calls) {
        by_id[c.id] = c;
        s.calls.push_back(c);
      }
      continue;
    }
    if (m.role != Role::tool || !by_id.count(m.tool_call_id)) continue;
    const ToolCall& c = by_id[m.tool_call_id];
    const json args = json::parse(c.arguments, nullptr, false);
    const json doc = json::parse(m.content, nullptr, false);
    if (c.name == t.search) {
      s.searches.push_back(hits_in(doc));
      for (const Hit& h : s.searches.back()) s.titles.emplace(h.id, h.title);
    } else if (c.name == t.open && args.is_object()) {
      const std::string id = field(args, t.id_key);
      if (!s.bodies.count(id)) s.opened.push_back(id);
      s.bodies[id] = m.content;
    } else if (c.name == t.follow) {
      s.followed = true;
      for (Hit& h : hits_in(doc)) {
        s.titles.emplace(h.id, h.title);
        s.neighbours.push_back(std::move(h));
      }
    } else if (c.name == t.browse) {
      s.browsed = true;
    }
  }
  return s;
}

bool called(const Seen& s, const std::string& name, const std::string& args) {
  return std::any_of(s.calls.begin(), s.calls.end(), [&](const ToolCall& c) { return c.name == name && c.arguments == args; });
}

// The body text of an open result: the JSON "body" or the text after "---".
std::string body_of(const std::string& result) {
  const json doc = json::parse(result, nullptr, false);
  if (doc.is_object()) return field(doc, "body");
  const auto rule = result.find("\n---\n");
  return rule == std::string::npos ? result : result.substr(rule + 5);
}

// Sentences of plain prose: split at ". ", "! ", "? " and new lines; markdown marks dropped.
std::vector<std::string> sentences(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  auto flush = [&] {
    const auto b = cur.find_first_not_of(" #*->|`");
    if (b != std::string::npos && cur.size() - b > 12) out.push_back(cur.substr(b));
    cur.clear();
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      flush();
      continue;
    }
    cur += c;
    if ((c == '.' || c == '!' || c == '?') && (i + 1 == text.size() || text[i + 1] == ' ')) flush();
  }
  flush();
  return out;
}

struct Billing {
  int per_message, per_tool_call, per_tool, per_request;
  bool bytes_over_four;  // else the given counter
};

// The first keyword of a title of a hit seen and not opened that is not a question keyword yet.
std::string unseen_title_word(const Seen& s, const std::vector<std::string>& keys, const std::vector<std::string>& missing) {
  for (const auto& list : s.searches)
    for (const Hit& h : list) {
      if (s.bodies.count(h.id)) continue;
      for (const std::string& w : keywords(h.title))
        if (std::find(missing.begin(), missing.end(), w) == missing.end() && std::find(keys.begin(), keys.end(), w) == keys.end())
          return w;
    }
  return "";
}

class ReferenceAgent : public ChatModel {
 public:
  ReferenceAgent(std::string name, Billing billing, const retrieval::TokenCounter& counter)
      : name_(std::move(name)), billing_(billing), counter_(counter) {}

  ChatResponse chat(const ChatRequest& request) override {
    const Tools t = tools_of(request);
    const Seen s = read_conversation(request, t);
    ContextPrompt prompt;
    Message m;
    if (request.tools.empty() && read_context_user_message(s.question, prompt)) {
      m = name_ == "scout" ? answer_context(prompt, 1, 1) : answer_context(prompt, 3, 2);
    } else {
      m = name_ == "scout" ? scout(s, t) : diver(s, t);
    }
    ChatResponse r;
    r.usage.input_tokens = input_tokens(request);
    r.usage.cached_input_tokens = 0;
    std::int64_t out = tokens(m.content);
    for (const ToolCall& c : m.tool_calls) out += tokens(c.name) + tokens(c.arguments);
    r.usage.output_tokens = out;
    r.stop = m.tool_calls.empty() ? StopReason::end_turn : StopReason::tool_calls;
    r.message = std::move(m);
    r.model = name_;
    return r;
  }
  std::string name() const override { return name_; }

 private:
  std::int64_t tokens(std::string_view text) const {
    if (billing_.bytes_over_four) return static_cast<std::int64_t>((text.size() + 3) / 4);
    return static_cast<std::int64_t>(counter_.count(text));
  }

  std::int64_t input_tokens(const ChatRequest& r) const {
    std::int64_t n = billing_.per_request;
    for (const ToolSpec& t : r.tools) n += billing_.per_tool + tokens(t.name) + tokens(t.description) + tokens(t.parameters);
    for (const Message& m : r.messages) {
      n += billing_.per_message + tokens(m.content);
      for (const ToolCall& c : m.tool_calls) n += billing_.per_tool_call + tokens(c.name) + tokens(c.arguments);
    }
    return n;
  }

  Message call(const Seen& s, std::vector<std::pair<std::string, json>> calls) const {
    Message m{Role::assistant, "", {}, {}, {}};
    for (auto& [name, args] : calls)
      m.tool_calls.push_back({fmt::format("{}_{}_{}", name_, s.turns + 1, m.tool_calls.size() + 1), name, json_text(args)});
    return m;
  }

  Message answer(const Seen& s, std::size_t per_concept, std::size_t max_bytes) const {
    std::string text;
    std::vector<std::string> cited;
    for (const std::string& id : s.opened) {
      const std::vector<std::string> lines = sentences(body_of(s.bodies.at(id)));
      if (lines.empty()) continue;
      const auto title = s.titles.find(id);
      text += fmt::format("{} ({}):\n", title != s.titles.end() && !title->second.empty() ? title->second : id, id);
      for (std::size_t i = 0; i < lines.size() && i < per_concept && text.size() < max_bytes; ++i) text += "- " + lines[i] + "\n";
      cited.push_back("[" + id + "]");
      if (text.size() >= max_bytes) break;
    }
    if (cited.empty()) return Message{Role::assistant, "I could not find this in the knowledge base.", {}, {}, {}};
    return Message{Role::assistant, text + "\nSources: " + joined(cited), {}, {}, {}};
  }

  // A one-shot prompt: the first `blocks` packed blocks that share a keyword
  // with the question, each by its title and first `per_block` sentences.
  static Message answer_context(const ContextPrompt& p, std::size_t blocks, std::size_t per_block) {
    const std::vector<std::string> keys = keywords(p.question);
    std::string text;
    std::vector<std::string> cited;
    for (const ContextBlock& b : p.blocks) {
      if (cited.size() >= blocks) break;
      const std::vector<std::string> words = keywords(b.title + " " + b.description + " " + b.text);
      const bool shares = std::any_of(keys.begin(), keys.end(), [&](const std::string& k) {
        return std::find(words.begin(), words.end(), k) != words.end();
      });
      const std::vector<std::string> lines = sentences(b.text);
      if (!shares || lines.empty()) continue;
      text += fmt::format("{} ({}):", b.title.empty() ? b.id : b.title, b.id);
      for (std::size_t i = 0; i < lines.size() && i < per_block; ++i) text += " " + lines[i];
      text += "\n";
      cited.push_back("[" + b.id + "]");
    }
    if (cited.empty()) return Message{Role::assistant, "The context does not answer this.", {}, {}, {}};
    return Message{Role::assistant, text + "Sources: " + joined(cited), {}, {}, {}};
  }

  Message scout(const Seen& s, const Tools& t) const {
    const std::vector<std::string> keys = keywords(s.question);
    if (t.search.empty() || t.open.empty()) return answer(s, 2, 100000);
    const json first = {{"query", joined(keys)}, {t.k_key, 8}};
    if (s.searches.empty()) return call(s, {{t.search, first}});
    // Open the best hit of the latest search not opened yet, one per turn, once per search.
    const std::size_t opens_since = [&] {
      std::size_t n = 0;
      for (auto it = s.calls.rbegin(); it != s.calls.rend() && it->name != t.search; ++it) n += it->name == t.open;
      return n;
    }();
    if (opens_since == 0)
      for (const Hit& h : s.searches.back())
        if (!s.bodies.count(h.id)) return call(s, {{t.open, {{t.id_key, h.id}}}});
    std::vector<std::string> missing;
    std::string read;
    for (const auto& [id, body] : s.bodies) read += " " + joined(words_of(body)) + " ";
    for (const std::string& k : keys)
      if (read.find(" " + k) == std::string::npos) missing.push_back(k);
    if (!missing.empty() && s.searches.size() < 4) {
      if (std::string extra = unseen_title_word(s, keys, missing); !extra.empty()) missing.push_back(std::move(extra));
      const json again = {{"query", joined(missing)}, {t.k_key, 8}};
      if (!called(s, t.search, json_text(again))) return call(s, {{t.search, again}});
    }
    const std::size_t question_words = words_of(s.question).size();
    const int first_searches = static_cast<int>(std::count_if(s.calls.begin(), s.calls.end(), [&](const ToolCall& c) {
      return c.name == t.search && c.arguments == json_text(first);
    }));
    if (question_words > 9 && first_searches < 2) return call(s, {{t.search, first}});
    return answer(s, 2, 100000);
  }

  Message diver(const Seen& s, const Tools& t) const {
    if (!t.browse.empty() && !s.browsed) return call(s, {{t.browse, json::object()}});
    if (t.search.empty() || t.open.empty()) return answer(s, 1000, 3000);
    if (s.searches.empty()) return call(s, {{t.search, {{"query", s.question}, {t.k_key, 3}}}});
    if (s.opened.empty()) {
      std::vector<std::pair<std::string, json>> opens;
      for (const Hit& h : s.searches.front()) opens.push_back({t.open, {{t.id_key, h.id}}});
      if (!opens.empty()) return call(s, std::move(opens));
      return answer(s, 1000, 3000);
    }
    if (!t.follow.empty() && !s.followed) {
      std::vector<std::pair<std::string, json>> follows;
      for (std::size_t i = 0; i < s.opened.size() && i < 2; ++i) follows.push_back({t.follow, {{t.id_key, s.opened[i]}}});
      return call(s, std::move(follows));
    }
    const std::vector<std::string> keys = keywords(s.question);
    const bool opened_neighbours = std::any_of(s.neighbours.begin(), s.neighbours.end(), [&](const Hit& h) {
      return called(s, t.open, json_text(json{{t.id_key, h.id}}));
    });
    if (s.followed && !opened_neighbours) {
      std::vector<std::pair<std::string, json>> opens;
      std::set<std::string> chosen;
      for (const Hit& h : s.neighbours) {
        if (opens.size() >= 2 || s.bodies.count(h.id) || chosen.count(h.id)) continue;
        const std::vector<std::string> title = keywords(h.title);
        if (std::any_of(title.begin(), title.end(), [&](const std::string& w) {
              return std::find(keys.begin(), keys.end(), w) != keys.end();
            })) {
          opens.push_back({t.open, {{t.id_key, h.id}}});
          chosen.insert(h.id);
        }
      }
      if (!opens.empty()) return call(s, std::move(opens));
    }
    const json reread = {{t.id_key, s.opened.front()}};
    const auto opens_of_first = std::count_if(s.calls.begin(), s.calls.end(), [&](const ToolCall& c) {
      return c.name == t.open && c.arguments == json_text(reread);
    });
    if (opens_of_first < 2) return call(s, {{t.open, reread}});
    return answer(s, 1000, 3000);
  }

  std::string name_;
  Billing billing_;
  const retrieval::TokenCounter& counter_;
};
}  // namespace

std::vector<std::string> reference_agent_names() { return {"scout", "diver"}; }

std::unique_ptr<ChatModel> make_reference_agent(std::string_view name, const retrieval::TokenCounter& counter) {
  if (name == "scout") return std::make_unique<ReferenceAgent>("scout", Billing{4, 2, 10, 25, true}, counter);
  if (name == "diver") return std::make_unique<ReferenceAgent>("diver", Billing{7, 5, 15, 40, false}, counter);
  throw UsageError(fmt::format("unknown reference agent '{}': use scout or diver", name));
}

}  // namespace okfbench::agents
