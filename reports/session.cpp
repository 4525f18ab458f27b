#include "reports/session.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/regular_file.hpp"
#include "reports/format.hpp"

namespace okfbench::reports {
namespace {
using nlohmann::json;

// Counts in a log are bytes and tokens of single results; anything beyond
// this is a damaged or forged line, and bounding it keeps every sum in range.
constexpr std::int64_t kMaxCount = std::int64_t{1} << 50;

class Reader {
 public:
  Reader(const json& j, std::string_view where) : j_(j), where_(where) {}

  std::string text(const char* key) const {
    auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return {};
    if (!it->is_string()) fail(key, "must be a string");
    return it->get<std::string>();
  }
  std::int64_t count(const char* key) const { return count_in(j_, key, key); }
  std::vector<std::string> texts(const char* key) const {
    std::vector<std::string> out;
    auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return out;
    if (!it->is_array()) fail(key, "must be a list of strings");
    for (const json& item : *it) {
      if (!item.is_string()) fail(key, "must be a list of strings");
      out.push_back(item.get<std::string>());
    }
    return out;
  }
  SessionTokens tokens() const {
    auto it = j_.find("tokens");
    if (it == j_.end() || it->is_null()) return {};
    if (!it->is_object()) fail("tokens", "must be an object");
    return {count_in(*it, "o200k_base", "tokens.o200k_base"), count_in(*it, "cl100k_base", "tokens.cl100k_base")};
  }
  SessionAccess access() const {
    auto it = j_.find("access");
    if (it == j_.end() || it->is_null()) return {};
    if (!it->is_object()) fail("access", "must be an object");
    Reader inner(*it, where_);
    return {inner.text("kind"), inner.text("bundle"), inner.texts("concepts")};
  }
  std::string arguments() const {
    auto it = j_.find("arguments");
    if (it == j_.end() || it->is_null()) return "{}";
    return json_text(*it);
  }
  [[noreturn]] void fail(std::string_view key, std::string_view what) const {
    throw InputError(fmt::format("{}: '{}' {}; is this a session log of `okfbench mcp`?", where_, key, what));
  }

 private:
  std::int64_t count_in(const json& object, const char* key, std::string_view name) const {
    auto it = object.find(key);
    if (it == object.end() || it->is_null()) return 0;
    bool integer = it->is_number_integer() || it->is_number_unsigned();
    if (!integer) fail(name, "must be a whole number");
    if (it->is_number_unsigned() ? it->get<std::uint64_t>() > static_cast<std::uint64_t>(kMaxCount)
                                 : (it->get<std::int64_t>() < -kMaxCount || it->get<std::int64_t>() > kMaxCount))
      fail(name, fmt::format("is out of range (at most {} in magnitude)", kMaxCount));
    return it->get<std::int64_t>();
  }

  const json& j_;
  std::string_view where_;
};

json tokens_json(const SessionTokens& t) { return {{"o200k_base", t.o200k_base}, {"cl100k_base", t.cl100k_base}}; }

void add(SessionTokens& sum, const SessionTokens& t) {
  sum.o200k_base += t.o200k_base;
  sum.cl100k_base += t.cl100k_base;
}

}  // namespace

std::string to_jsonl_line(const SessionEvent& e) {
  json j = {{"event", e.event}, {"session", e.session}, {"time", e.time}};
  if (e.event == "session") {
    j.update({{"protocol_version", e.protocol_version}, {"client", e.client}, {"surface", e.surface},
              {"bundles", e.bundles}, {"tools", e.tools}});
  } else if (e.event == "tool_list") {
    j.update({{"tools", e.tool_count}, {"bytes", e.bytes}, {"tokens", tokens_json(e.tokens)}});
  } else if (e.event == "call") {
    json arguments = json::parse(e.arguments, nullptr, false);
    j.update({{"seq", e.seq}, {"method", e.method}, {"tool", e.tool},
              {"arguments", arguments.is_discarded() ? json(e.arguments) : arguments}, {"bytes", e.bytes},
              {"tokens", tokens_json(e.tokens)}, {"error", e.error},
              {"access", {{"kind", e.access.kind}, {"bundle", e.access.bundle}, {"concepts", e.access.concepts}}}});
  } else {
    j.update({{"method", e.method}, {"code", e.code}, {"message", e.message}});
  }
  return json_text(j);
}

SessionEvent session_event_from_json_text(std::string_view text, std::string_view where) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw InputError(fmt::format("{}: not a JSON object; the session log is damaged or was cut short", where));
  Reader r(j, where);
  SessionEvent e;
  e.event = r.text("event");
  e.session = r.text("session");
  e.time = r.text("time");
  if (e.event == "session") {
    e.protocol_version = r.text("protocol_version");
    e.client = r.text("client");
    e.surface = r.text("surface");
    e.bundles = r.texts("bundles");
    e.tools = r.texts("tools");
  } else if (e.event == "tool_list") {
    e.tool_count = r.count("tools");
    e.bytes = r.count("bytes");
    e.tokens = r.tokens();
  } else if (e.event == "call") {
    e.seq = r.count("seq");
    e.method = r.text("method");
    e.tool = r.text("tool");
    e.arguments = r.arguments();
    e.bytes = r.count("bytes");
    e.tokens = r.tokens();
    e.error = r.text("error");
    e.access = r.access();
  } else if (e.event == "error") {
    e.method = r.text("method");
    e.code = r.count("code");
    e.message = r.text("message");
  } else {
    r.fail("event", "must be one of session, tool_list, call, error");
  }
  return e;
}

std::vector<SessionEvent> read_session_log(const std::filesystem::path& path) {
  const RegularFile file(path);  // a FIFO is refused, never waited on
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot be read; check that the path exists", path.string()));
  std::vector<SessionEvent> events;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    events.push_back(session_event_from_json_text(line, fmt::format("{}:{}", path.string(), number)));
  }
  return events;
}

namespace {

// A search over several bundles at once (bundle "*") lists its hits as
// BUNDLE:ID already.
std::string concept_key(const SessionAccess& access, const std::string& id, bool several_bundles) {
  return several_bundles && access.bundle != "*" ? access.bundle + ":" + id : id;
}

bool spans_bundles(const std::vector<SessionEvent>& events) {
  std::set<std::string> bundles;
  for (const SessionEvent& e : events)
    if (e.event == "call" && !e.access.bundle.empty()) bundles.insert(e.access.bundle);
  return bundles.size() > 1 || bundles.count("*") > 0;
}

void count_call(SessionSummary& s, const SessionEvent& e, bool several_bundles, std::set<std::string>& listed) {
  ++s.calls;
  s.bytes += e.bytes;
  add(s.tokens, e.tokens);
  std::string tool = e.method == "resources/read" ? "(resource read)" : e.tool;
  ToolTotals& t = s.by_tool[tool];
  ++t.calls;
  t.bytes += e.bytes;
  add(t.tokens, e.tokens);
  if (!e.error.empty()) {
    ++s.errors;
    ++t.errors;
    return;
  }
  for (const std::string& id : e.access.concepts) {
    std::string key = concept_key(e.access, id, several_bundles);
    if (e.access.kind == "list") {
      listed.insert(key);
      continue;
    }
    if (e.access.kind != "read") continue;
    auto it = std::find_if(s.concepts_read.begin(), s.concepts_read.end(),
                           [&](const ConceptReads& c) { return c.concept_id == key; });
    if (it == s.concepts_read.end()) it = s.concepts_read.insert(s.concepts_read.end(), ConceptReads{key, 0, {}});
    ++it->reads;
    add(it->tokens, e.tokens);
  }
}

}  // namespace

SessionSummary summarize_session(const std::vector<SessionEvent>& events) {
  SessionSummary s;
  bool several_bundles = spans_bundles(events);
  std::set<std::string> listed;
  // Repeats are counted within a session: the same call in another session is new to that client.
  std::map<std::tuple<std::string, std::string, std::string>, RepeatedCall> same;
  for (const SessionEvent& e : events) {
    if (e.event == "session") {
      ++s.sessions;
      if (std::find(s.clients.begin(), s.clients.end(), e.client) == s.clients.end()) s.clients.push_back(e.client);
    } else if (e.event == "tool_list") {
      add(s.schema_tokens, e.tokens);
    } else if (e.event == "error") {
      ++s.protocol_errors;
    } else if (e.event == "call") {
      count_call(s, e, several_bundles, listed);
      RepeatedCall& r = same[{e.session, e.tool, e.arguments}];
      if (r.calls++ > 0) add(r.tokens, e.tokens);
      r.tool = e.tool;
      r.arguments = e.arguments;
    }
  }
  for (const ConceptReads& c : s.concepts_read) listed.erase(c.concept_id);
  s.concepts_listed = static_cast<std::int64_t>(listed.size());
  for (auto& [key, r] : same)
    if (r.calls > 1) s.repeated.push_back(r);
  std::stable_sort(s.repeated.begin(), s.repeated.end(),
                   [](const RepeatedCall& a, const RepeatedCall& b) { return a.calls > b.calls; });
  return s;
}

namespace {

std::string count(std::int64_t n) { return format_count(static_cast<double>(n)); }

std::string share(std::int64_t part, std::int64_t whole) {
  return whole > 0 ? format_share(static_cast<double>(part) / static_cast<double>(whole)) : "n/a";
}

// Long ids and arguments are cut (at a character boundary) before escaping.
std::string shortened(std::string_view text) {
  constexpr std::size_t kShown = 77;
  if (text.size() <= 80) return std::string(text);
  std::size_t end = kShown;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return std::string(text.substr(0, end)) + "...";
}

std::string cell(std::string_view text) { return markdown_text(shortened(text)); }

std::string code_cell(std::string_view text) { return markdown_code(shortened(text)); }

std::string delta(std::int64_t base, std::int64_t candidate) {
  std::int64_t d = candidate - base;
  std::string sign = d > 0 ? "+" : "";
  if (base <= 0 || d == 0) return fmt::format("{}{}", sign, count(d));
  return fmt::format("{}{} ({}{:.1f}%)", sign, count(d), sign, 100.0 * static_cast<double>(d) / static_cast<double>(base));
}

}  // namespace

std::string session_markdown(const SessionSummary& s, std::string_view title) {
  std::string out = fmt::format("# MCP session: {}\n\n", markdown_text(title));
  std::string clients;
  for (const std::string& c : s.clients) clients += (clients.empty() ? "" : ", ") + (c.empty() ? "(unnamed)" : markdown_text(c));
  std::int64_t pulled = s.tokens.o200k_base + s.schema_tokens.o200k_base;
  out += fmt::format(
      "{} session(s) ({}); {} call(s), {} with an error; {} protocol error(s).\n"
      "Results: {} bytes, {} tokens o200k_base, {} tokens cl100k_base.\n"
      "Tool lists (schema overhead, once per session): {} tokens o200k_base, {} cl100k_base; {} of all tokens "
      "(o200k_base), and a client sends them again with every model turn.\n\n",
      s.sessions, clients.empty() ? "no client named" : clients, s.calls, s.errors, s.protocol_errors, count(s.bytes),
      count(s.tokens.o200k_base), count(s.tokens.cl100k_base), count(s.schema_tokens.o200k_base),
      count(s.schema_tokens.cl100k_base), share(s.schema_tokens.o200k_base, pulled));
  out += "## Calls and tokens by tool\n\n| tool | calls | errors | bytes | tokens o200k_base | tokens cl100k_base | share of result tokens |\n"
         "|---|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& [tool, t] : s.by_tool)
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", cell(tool), t.calls, t.errors, count(t.bytes),
                       count(t.tokens.o200k_base), count(t.tokens.cl100k_base), share(t.tokens.o200k_base, s.tokens.o200k_base));
  out += fmt::format("\n## Concepts read ({}; {} more listed by metadata only)\n\n", s.concepts_read.size(),
                     s.concepts_listed);
  if (s.concepts_read.empty()) out += "None.\n";
  else out += "| concept | reads | tokens o200k_base |\n|---|---:|---:|\n";
  for (const ConceptReads& c : s.concepts_read)
    out += fmt::format("| {} | {} | {} |\n", cell(c.concept_id), c.reads, count(c.tokens.o200k_base));
  out += fmt::format("\n## Repeated calls ({})\n\n", s.repeated.size());
  if (s.repeated.empty()) out += "None: no call was made twice with the same arguments in one session.\n";
  else out += "| tool | arguments | calls | tokens of the repeats (o200k_base) |\n|---|---|---:|---:|\n";
  for (const RepeatedCall& r : s.repeated)
    out += fmt::format("| {} | {} | {} | {} |\n", cell(r.tool), code_cell(r.arguments), r.calls, count(r.tokens.o200k_base));
  return out;
}

std::string session_compare_markdown(const SessionSummary& base, const SessionSummary& candidate,
                                     std::string_view base_name, std::string_view candidate_name) {
  std::string out = fmt::format("# MCP sessions: {} -> {}\n\n| measure | base | candidate | change |\n|---|---:|---:|---:|\n",
                                markdown_text(base_name), markdown_text(candidate_name));
  auto row = [&](std::string_view name, std::int64_t b, std::int64_t c) {
    out += fmt::format("| {} | {} | {} | {} |\n", name, count(b), count(c), delta(b, c));
  };
  row("calls", base.calls, candidate.calls);
  row("calls with an error", base.errors, candidate.errors);
  row("result bytes", base.bytes, candidate.bytes);
  row("result tokens o200k_base", base.tokens.o200k_base, candidate.tokens.o200k_base);
  row("result tokens cl100k_base", base.tokens.cl100k_base, candidate.tokens.cl100k_base);
  row("tool-list tokens o200k_base", base.schema_tokens.o200k_base, candidate.schema_tokens.o200k_base);
  row("concepts read", static_cast<std::int64_t>(base.concepts_read.size()),
      static_cast<std::int64_t>(candidate.concepts_read.size()));
  row("repeated calls", static_cast<std::int64_t>(base.repeated.size()), static_cast<std::int64_t>(candidate.repeated.size()));
  out += "\n## Result tokens (o200k_base) by tool\n\n| tool | base calls | candidate calls | base tokens | candidate tokens | change |\n"
         "|---|---:|---:|---:|---:|---:|\n";
  std::set<std::string> tools;
  for (const auto& [tool, t] : base.by_tool) tools.insert(tool);
  for (const auto& [tool, t] : candidate.by_tool) tools.insert(tool);
  for (const std::string& tool : tools) {
    ToolTotals b = base.by_tool.count(tool) ? base.by_tool.at(tool) : ToolTotals{};
    ToolTotals c = candidate.by_tool.count(tool) ? candidate.by_tool.at(tool) : ToolTotals{};
    out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", cell(tool), b.calls, c.calls, count(b.tokens.o200k_base),
                       count(c.tokens.o200k_base), delta(b.tokens.o200k_base, c.tokens.o200k_base));
  }
  std::set<std::string> read_base, read_candidate;
  for (const ConceptReads& r : base.concepts_read) read_base.insert(r.concept_id);
  for (const ConceptReads& r : candidate.concepts_read) read_candidate.insert(r.concept_id);
  std::string only_base, only_candidate;
  for (const std::string& id : read_base)
    if (!read_candidate.count(id)) only_base += (only_base.empty() ? "" : ", ") + markdown_text(id);
  for (const std::string& id : read_candidate)
    if (!read_base.count(id)) only_candidate += (only_candidate.empty() ? "" : ", ") + markdown_text(id);
  out += fmt::format("\nRead only in the base: {}\nRead only in the candidate: {}\n", only_base.empty() ? "none" : only_base,
                     only_candidate.empty() ? "none" : only_candidate);
  return out;
}

}  // namespace okfbench::reports
