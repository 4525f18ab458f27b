#include "engine/external_trial.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "agents/bundle_tools.hpp"
#include "agents/secrets.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "engine/child_process.hpp"
#include "mcp/http_server.hpp"
#include "mcp/session_log.hpp"
#include "proxy/server.hpp"
#include "retrieval/utf8.hpp"

extern char** environ;

namespace okfbench::engine {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The trial's logs, removed when the trial is done.
class TrialFolder {
 public:
  TrialFolder() {
    std::string pattern = (fs::temp_directory_path() / "okfbench-external-XXXXXX").string();
    if (!::mkdtemp(pattern.data()))
      throw InputError(fmt::format("cannot create a temporary folder {} for an external trial's logs", pattern));
    path_ = pattern;
  }
  ~TrialFolder() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TrialFolder(const TrialFolder&) = delete;
  TrialFolder& operator=(const TrialFolder&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::optional<std::int64_t> count_of(const json& object, const char* key) {
  if (!object.is_object()) return std::nullopt;
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<std::int64_t>();
}

std::string text_of(const json& object, const char* key) {
  if (!object.is_object()) return {};
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The knowledge-access event of an MCP call as its session log describes it:
// the tool, the bundle, whether it found anything, the query or concept it
// named and the concepts it listed (the log keeps no body lengths).
KnowledgeAccess access_of(const reports::SessionEvent& e) {
  KnowledgeAccess a;
  a.tool = e.tool;
  a.bundle = e.access.bundle;
  a.found = e.error.empty();
  const json args = json::parse(e.arguments, nullptr, false);
  a.query = text_of(args, "query");
  for (const char* key : {"concept_id", "path", "id", "layer"}) {
    if (a.path.empty()) a.path = text_of(args, key);
  }
  if (e.access.kind == "list" || e.access.kind == "history")
    a.hits = static_cast<std::int64_t>(e.access.concepts.size());
  return a;
}

struct Exchange {
  json record;
  std::string conversation;
  int turn = 1;
};

// The parent exchange (same conversation, the turn before) of each exchange, by index.
std::vector<std::optional<std::size_t>> parents(const std::vector<Exchange>& xs) {
  std::vector<std::optional<std::size_t>> out(xs.size());
  std::map<std::pair<std::string, int>, std::size_t> at;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    if (xs[i].conversation.empty()) continue;
    if (const auto p = at.find({xs[i].conversation, xs[i].turn - 1}); p != at.end()) out[i] = p->second;
    at[{xs[i].conversation, xs[i].turn}] = i;
  }
  return out;
}

void add_evidence(ExternalTrialResult& out, const reports::SessionEvent& e) {
  const auto add = [](std::vector<std::string>& ids, const std::string& id) {
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  };
  if (e.access.kind == "read")
    for (const std::string& id : e.access.concepts) add(out.opened, id);
  if (e.access.kind == "list" && agents::tool_role(e.tool) == agents::ToolRole::search)
    for (const std::string& id : e.access.concepts) out.retrieved.push_back(id);
}

std::string tail_text(const std::string& tail) {
  std::string text = tail;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\r')) text.pop_back();
  return text;
}

// Every variable of this process but those holding a key the run knows and
// those the trial sets itself.
std::vector<std::string> child_environment(const std::vector<std::string>& secrets, const std::set<std::string>& set) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string entry(*e);
    const auto eq = entry.find('=');
    if (eq == std::string::npos) continue;
    const std::string name = entry.substr(0, eq), value = entry.substr(eq + 1);
    if (set.count(name)) continue;
    const bool secret = value.size() >= agents::kMinSecretLength &&
                        std::any_of(secrets.begin(), secrets.end(), [&](const std::string& s) { return !s.empty() && value.find(s) != std::string::npos; });
    if (!secret) env.push_back(entry);
  }
  return env;
}

std::vector<std::string> lines_of(const fs::path& file) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::exists(file, ec)) return out;
  std::stringstream text(read_file(file, "cannot read an external trial's log"));
  for (std::string line; std::getline(text, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

// A failure of the upstream the agent met (it may go away on a resume).
bool upstream_failed(const ExternalTrialResult& r, const std::vector<std::string>& proxy_lines) {
  (void)r;
  for (const std::string& line : proxy_lines) {
    const json x = json::parse(line, nullptr, false);
    const auto status = count_of(x, "status");
    if (status && (*status == 429 || *status >= 500)) return true;
    if (x.is_object() && x.contains("errors") && x["errors"].is_array()) {
      for (const json& e : x["errors"]) {
        const std::string text = e.is_string() ? e.get<std::string>() : "";
        if (text.find("stream") != std::string::npos || text.find("timed out") != std::string::npos ||
            text.find("upstream") != std::string::npos)
          return true;
      }
    }
  }
  return false;
}

}  // namespace

ExternalTrialResult read_external_logs(const std::vector<std::string>& proxy_lines,
                                       const std::vector<reports::SessionEvent>& mcp_events) {
  ExternalTrialResult out;
  std::vector<Exchange> xs;
  for (const std::string& line : proxy_lines) {
    json record = json::parse(line, nullptr, false);
    if (!record.is_object()) continue;
    Exchange x;
    x.conversation = text_of(record, "conversation");
    x.turn = static_cast<int>(count_of(record, "turn").value_or(1));
    x.record = std::move(record);
    xs.push_back(std::move(x));
  }
  std::stable_sort(xs.begin(), xs.end(), [](const Exchange& a, const Exchange& b) {
    return count_of(a.record, "seq").value_or(0) < count_of(b.record, "seq").value_or(0);
  });
  const auto parent = parents(xs);
  for (const Exchange& x : xs) {
    const json usage = x.record.contains("usage") ? x.record["usage"] : json();
    reports::TurnRecord t;
    t.input_tokens = count_of(usage, "input_tokens");
    t.cached_tokens = count_of(usage, "cached_input_tokens");
    t.cache_write_tokens = count_of(usage, "cache_write_tokens");
    t.output_tokens = count_of(usage, "output_tokens");
    out.turns.push_back(std::move(t));
    const auto latency = x.record.contains("latency_ms") && x.record["latency_ms"].is_number() ? x.record["latency_ms"].get<double>() : 0.0;
    out.turn_ms.push_back(latency);
    out.model_ms += latency;
    const auto first = x.record.contains("first_token_ms") && x.record["first_token_ms"].is_number()
                           ? std::optional<double>(x.record["first_token_ms"].get<double>())
                           : std::nullopt;
    out.first_token_ms.push_back(first);
  }
  for (std::size_t i = 0; i < xs.size(); ++i) {
    auto& t = out.turns[i];
    if (!t.input_tokens) continue;
    if (!parent[i]) {
      t.new_input_tokens = *t.input_tokens;
    } else if (const auto& before = out.turns[*parent[i]].input_tokens) {
      t.new_input_tokens = std::clamp<std::int64_t>(*t.input_tokens - *before, 0, *t.input_tokens);
    }
  }
  // MCP calls in order, each used once.
  std::vector<const reports::SessionEvent*> calls;
  for (const auto& e : mcp_events) {
    if (e.event != "call") continue;
    calls.push_back(&e);
    add_evidence(out, e);
  }
  std::vector<bool> used(calls.size(), false);
  const auto take = [&](const std::string& tool) -> const reports::SessionEvent* {
    for (std::size_t i = 0; i < calls.size(); ++i)
      if (!used[i] && calls[i]->tool == tool) return used[i] = true, calls[i];
    return nullptr;
  };
  const auto record_of = [](const std::string& tool, std::int64_t bytes, const reports::SessionEvent* call) {
    reports::ToolCallRecord c;
    c.name = tool;
    c.result_bytes = bytes;
    if (call) {
      c.arguments = call->arguments;
      c.error = call->error;
      c.access = access_of(*call);
    }
    return c;
  };
  for (std::size_t i = 0; i < xs.size(); ++i) {
    if (!parent[i] || !xs[i].record.contains("tool_results") || !xs[i].record["tool_results"].is_array()) continue;
    for (const json& result : xs[i].record["tool_results"]) {
      const std::string tool = text_of(result, "tool");
      out.turns[*parent[i]].tool_calls.push_back(record_of(tool, count_of(result, "bytes").value_or(0), take(tool)));
    }
  }
  if (!out.turns.empty()) {
    for (std::size_t i = 0; i < calls.size(); ++i)
      if (!used[i]) out.turns.back().tool_calls.push_back(record_of(calls[i]->tool, calls[i]->bytes, calls[i]));
  }
  // As the agent loop marks them: the same tool and arguments as an earlier call.
  std::set<std::pair<std::string, std::string>> seen;
  for (auto& t : out.turns)
    for (auto& c : t.tool_calls) c.repeated = !c.arguments.empty() && !seen.insert({c.name, c.arguments}).second;
  return out;
}

std::optional<std::string> external_answer(const std::string& output, bool as_json, std::string& problem) {
  const auto first = output.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) {
    problem = "printed nothing on stdout (the answer goes there)";
    return std::nullopt;
  }
  const std::string text = output.substr(first, output.find_last_not_of(" \t\r\n") - first + 1);
  if (!as_json) return text;
  const json parsed = json::parse(text, nullptr, false);
  if (!parsed.is_object() || !parsed.contains("answer") || !parsed["answer"].is_string()) {
    problem = fmt::format("answer: json: stdout is not a JSON object with an \"answer\" string (it begins \"{}\")",
                          retrieval::escape_invalid_utf8(text.substr(0, 60)));
    return std::nullopt;
  }
  return parsed["answer"].get<std::string>();
}

ExternalTrialResult run_external_trial(const ExternalTrialInput& in) {
  const TrialFolder folder;
  proxy::ProxyOptions po;
  po.upstream = in.agent.upstream.empty() ? in.endpoint.base_url : in.agent.upstream;
  po.log_path = (folder.path() / "proxy.jsonl").string();
  po.connect_timeout_seconds = in.model.connect_timeout_seconds;
  po.timeout_seconds = std::max(in.model.request_timeout_seconds, 1.0);
  po.idle_timeout_seconds = std::max(1L, static_cast<long>(in.model.request_timeout_seconds));
  po.workers = 8;
  const bool anthropic = in.model.name.starts_with("anthropic:");
  if (!in.endpoint.api_key.empty()) {
    if (anthropic) {
      po.upstream_headers.emplace_back("x-api-key", in.endpoint.api_key);
    } else {
      po.upstream_headers.emplace_back("Authorization", "Bearer " + in.endpoint.api_key);
    }
  }
  for (const auto& header : in.endpoint.extra_headers) po.upstream_headers.push_back(header);
  proxy::ProxyServer gateway(po, in.counter);
  gateway.start(0);

  mcp::SessionLog session_log(folder.path() / "mcp.jsonl");
  mcp::ServerOptions so;
  mcp::Server tools(in.bundles, so, &session_log);
  mcp::HttpOptions ho;
  ho.workers = 8;
  ho.max_sessions = 16;
  mcp::HttpServer mcp_http(tools, ho);
  mcp_http.start(0);

  ChildOptions co;
  co.argv = in.agent.command;
  co.working_dir = in.agent.working_dir;
  co.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(in.agent.timeout_s * 1000));
  co.max_output = kMaxAgentOutput;
  co.stderr_tail = kStderrTail;
  const std::string model = in.model.name.substr(in.model.name.find(':') + 1);
  const std::map<std::string, std::string> set = {
      {"OPENAI_BASE_URL", gateway.url() + "/v1"}, {"ANTHROPIC_BASE_URL", gateway.url()},
      {"OPENAI_API_KEY", kPlaceholderKey},       {"ANTHROPIC_API_KEY", kPlaceholderKey},
      {"OKFBENCH_MCP_URL", mcp_http.url()},      {"OKFBENCH_MODEL", model},
      {"OKFBENCH_PROVIDER", anthropic ? "anthropic" : "openai"},
      {"OKFBENCH_QUESTION_ID", in.question_id},  {"OKFBENCH_BUNDLE", in.bundle_name},
      {"OKFBENCH_TRIAL_KEY", in.trial_key}};
  std::set<std::string> names;
  for (const auto& [name, value] : set) names.insert(name);
  if (!in.model.api_key_env.empty()) names.insert(in.model.api_key_env);
  co.environment = child_environment(in.secrets, names);
  for (const auto& [name, value] : set) co.environment.push_back(name + "=" + value);
  co.input = json{{"id", in.question_id}, {"text", in.question}, {"bundle", in.bundle_name}, {"model", model},
                  {"trial_key", in.trial_key}}
                 .dump() +
             "\n";
  const ChildResult ran = run_child(co);
  mcp_http.stop();
  gateway.stop();

  const std::vector<std::string> proxy_lines = lines_of(po.log_path);
  std::vector<reports::SessionEvent> events;
  std::error_code ec;
  if (fs::exists(session_log.path(), ec)) events = reports::read_session_log(session_log.path());
  ExternalTrialResult out = read_external_logs(proxy_lines, events);
  std::string failure = child_failure(ran, co);
  if (failure.empty()) {
    std::string problem;
    if (auto answer = external_answer(ran.output, in.agent.answer_json, problem)) {
      out.answer = std::move(*answer);
    } else {
      failure = problem;
    }
  }
  if (failure.empty()) return out;
  const std::string tail = tail_text(ran.stderr_tail);
  out.error = agents::redact(fmt::format("external agent {}: {}{}", in.agent.label, failure,
                                         tail.empty() ? "; stderr was empty" : "; stderr ends: " + tail),
                             in.secrets);
  out.error_class = ran.timed_out || upstream_failed(out, proxy_lines) ? "transient" : "permanent";
  return out;
}

}  // namespace okfbench::engine
