#include "mcp/server.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <mutex>
#include <random>

#include "agents/json_util.hpp"
#include "agents/multi_bundle_tools.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "mcp/access.hpp"
#include "mcp/jsonrpc.hpp"
#include "mcp/session_log.hpp"
#include "mcp/uri.hpp"
#include "retrieval/qualified_id.hpp"
#include "retrieval/search.hpp"
#include "retrieval/tokens.hpp"

namespace okfbench::mcp {
namespace {
using jsonrpc::Error;
using nlohmann::json;
namespace code = jsonrpc::code;

// resources/read returns a concept whole; read_concept clamps its budget to this.
constexpr long long kWholeBody = 1'000'000'000;

const std::vector<std::string> kMethods = {"initialize", "ping", "tools/list", "tools/call", "resources/list",
                                           "resources/read", "resources/templates/list"};

bool batches_allowed(std::string_view protocol_version) {
  return protocol_version == "2025-03-26" || protocol_version == "2024-11-05";
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

// A string member of params: absent -> nullopt; present and not a string -> invalid_params.
std::optional<std::string> string_param(const json& params, const char* key) {
  auto it = params.find(key);
  if (it == params.end() || it->is_null()) return std::nullopt;
  if (!it->is_string()) throw Error{code::invalid_params, fmt::format("params.{} must be a string", key)};
  return it->get<std::string>();
}

std::string required_param(const json& params, const char* key) {
  std::optional<std::string> value = string_param(params, key);
  if (!value) throw Error{code::invalid_params, fmt::format("params.{} is required (a string)", key)};
  return *value;
}

void object_param(const json& params, const char* key) {
  auto it = params.find(key);
  if (it != params.end() && !it->is_null() && !it->is_object())
    throw Error{code::invalid_params, fmt::format("params.{} must be an object", key)};
}

// "name version" from initialize's clientInfo, for the log.
std::string client_name(const json& params) {
  auto info = params.find("clientInfo");
  if (info == params.end() || !info->is_object()) return {};
  auto text = [&](const char* key) {
    auto it = info->find(key);
    return it != info->end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  std::string name = text("name"), version = text("version");
  return version.empty() ? name : name + " " + version;
}

std::vector<std::string> offered_tools(const ServerOptions& o) {
  std::vector<std::string> all = agents::surface_tools(o.surface);
  for (const std::string& name : o.tools)
    if (name == "remember" && !o.allow_write)
      throw UsageError("--tools remember: remember writes into the bundle; add --allow-write to offer it");
  if (!o.tools.empty()) return o.tools;  // BundleTools checks them against the surface
  std::erase_if(all, [&](const std::string& n) { return n == "remember" && !o.allow_write; });
  return all;
}

}  // namespace

const std::vector<std::string>& protocol_versions() {
  static const std::vector<std::string> versions = {std::string(kLatestProtocol), "2025-03-26", "2024-11-05"};
  return versions;
}

std::string Session::new_id() {
  std::random_device device;
  return fmt::format("{:08x}{:08x}{:08x}{:08x}", device(), device(), device(), device());
}

struct Server::Impl {
  struct Served {
    std::string name;
    retrieval::Bundle* bundle = nullptr;
    const retrieval::SearchIndex* index = nullptr;  // the one given, or own_index
    std::unique_ptr<retrieval::SearchIndex> own_index;  // on the heap: the tools keep its address
    std::unique_ptr<agents::BundleTools> tools;
    std::unique_ptr<agents::BundleTools> reader;  // harnessx read_concept, for resources/read
  };

  Impl(std::vector<ServedBundle> bundles, ServerOptions o, SessionLog* session_log) : options(std::move(o)), log(session_log) {
    if (bundles.empty()) throw UsageError("mcp: give at least one bundle");
    names = offered_tools(options);
    for (ServedBundle& b : bundles) {
      if (std::any_of(served.begin(), served.end(), [&](const Served& s) { return s.name == b.name; }))
        throw UsageError(fmt::format("two bundles are named '{}'; bundles are told apart by folder name, so rename one",
                                     b.name));
      Served& s = served.emplace_back();
      s.name = b.name;
      s.bundle = b.bundle;
      if (b.index && !(b.index->config() == retrieval::IndexConfig{}))
        throw UsageError(fmt::format("mcp: the index given for bundle '{}' is not built with the default config",
                                     b.name));
      s.index = b.index;
      if (!s.index) {
        s.own_index = std::make_unique<retrieval::SearchIndex>(retrieval::SearchIndex::build(*b.bundle));
        s.index = s.own_index.get();
      }
      agents::ToolsOptions t;
      t.surface = options.surface;
      t.include = names;
      t.max_body_chars = options.max_body_chars;
      s.tools = std::make_unique<agents::BundleTools>(*b.bundle, t, s.index);
      t.surface = agents::Surface::harnessx;
      t.include = {"read_concept"};
      s.reader = std::make_unique<agents::BundleTools>(*b.bundle, t, s.index);
    }
    if (served.size() > 1) make_several();
    tool_list = make_tool_list();
    if (log) {
      o200k = retrieval::make_counter("o200k_base");
      cl100k = retrieval::make_counter("cl100k_base");
    }
  }

  // Several bundles: the tools as agents::MultiBundleTools has them (search
  // without `bundle` is one index over all, shared statistics; every result
  // names its bundle), over the same bundles.
  void make_several() {
    std::vector<agents::ToolBundle> bundles;
    for (const Served& s : served) bundles.push_back({s.name, s.bundle});
    agents::ToolsOptions t;
    t.surface = options.surface;
    t.include = names;
    t.max_body_chars = options.max_body_chars;
    several = std::make_unique<agents::MultiBundleTools>(std::move(bundles), t);
  }

  std::vector<std::string> bundle_names() const {
    std::vector<std::string> out;
    for (const Served& s : served) out.push_back(s.name);
    return out;
  }

  json make_tool_list() const {
    json tools = json::array();
    for (const agents::ToolSpec& spec : several ? several->specs() : served.front().tools->specs())
      tools.push_back({{"name", spec.name}, {"description", spec.description}, {"inputSchema", json::parse(spec.parameters)}});
    return tools;
  }

  reports::SessionTokens tokens_of(std::string_view text) const {
    return {static_cast<std::int64_t>(o200k->count(text)), static_cast<std::int64_t>(cl100k->count(text))};
  }

  reports::SessionEvent event(const char* kind, const Session& session) const {
    reports::SessionEvent e;
    e.event = kind;
    e.session = session.id;
    e.time = retrieval::now_utc();
    return e;
  }

  // --- lifecycle --------------------------------------------------------

  json initialize(const json& params, Session& session, bool in_batch) {
    if (in_batch) throw Error{code::invalid_request, "initialize must not be part of a batch"};
    if (!session.protocol_version.empty())
      throw Error{code::invalid_request, "this session is already initialized; start a new session to initialize again"};
    std::string asked = required_param(params, "protocolVersion");
    object_param(params, "capabilities");
    object_param(params, "clientInfo");
    const auto& known = protocol_versions();
    session.protocol_version = std::find(known.begin(), known.end(), asked) != known.end() ? asked : std::string(kLatestProtocol);
    if (log) {
      reports::SessionEvent e = event("session", session);
      e.protocol_version = session.protocol_version;
      e.client = client_name(params);
      e.surface = agents::to_string(options.surface);
      e.bundles = bundle_names();
      e.tools = names;
      log->write(e);
    }
    // Several bundles: the prompt lists them and says which tools take `bundle`.
    const std::string instructions = several ? several->default_system_prompt() : served.front().tools->default_system_prompt();
    return {{"protocolVersion", session.protocol_version},
            {"capabilities", {{"tools", {{"listChanged", false}}}, {"resources", {{"listChanged", false}, {"subscribe", false}}}}},
            {"serverInfo", {{"name", "okfbench"}, {"title", "okfbench OKF bundle tools"}, {"version", options.version}}},
            {"instructions", instructions}};
  }

  // --- tools ------------------------------------------------------------

  json list_tools(const json& params, Session& session) {
    if (string_param(params, "cursor")) throw Error{code::invalid_params, "unknown cursor: the tool list is one page"};
    if (log && !session.tools_listed) {
      std::string text = json_text(tool_list);
      reports::SessionEvent e = event("tool_list", session);
      e.tool_count = static_cast<std::int64_t>(tool_list.size());
      e.bytes = static_cast<std::int64_t>(text.size());
      e.tokens = tokens_of(text);
      log->write(e);
    }
    session.tools_listed = true;
    return {{"tools", tool_list}};
  }

  // The bundle a call names: the only one, or arguments.bundle (taken out of the arguments).
  Served* target(json& arguments, std::string& problem) {
    auto it = arguments.find("bundle");
    if (served.size() == 1 && it == arguments.end()) return &served.front();
    if (it == arguments.end() || !it->is_string()) {
      problem = fmt::format("'bundle' is required and must be one of: {}", joined(bundle_names()));
      return nullptr;
    }
    std::string name = it->get<std::string>();
    arguments.erase("bundle");
    for (Served& s : served)
      if (s.name == name) return &s;
    problem = fmt::format("no bundle named '{}'; bundles: {}", name, joined(bundle_names()));
    return nullptr;
  }

  // A call over several bundles: MultiBundleTools answers it; the access is
  // the named bundle's, or, for a search over all of them, "*" with the hits
  // as BUNDLE:ID.
  agents::ToolResult call_several(const std::string& name, json arguments, reports::SessionAccess& access) {
    agents::ToolResult result = several->call(name, json_text(arguments));
    if (!log || !result.error.empty()) return result;
    std::string problem;
    if (!arguments.contains("bundle") && agents::tool_role(name) == agents::ToolRole::search) {
      access = search_access_all(result);
    } else if (Served* s = target(arguments, problem)) {
      access = tool_access(name, json_text(arguments), result, *s->bundle, s->name);
    }
    return result;
  }

  reports::SessionAccess search_access_all(const agents::ToolResult& result) const {
    reports::SessionAccess access{"list", "*", {}};
    const json hits = json::parse(result.content, nullptr, false);
    if (!hits.is_array()) return access;
    for (const json& hit : hits) {
      const char* field = hit.contains("id") ? "id" : "path";
      if (!hit.contains(field) || !hit[field].is_string() || !hit.contains("bundle") || !hit["bundle"].is_string()) continue;
      for (const Served& s : served)
        if (s.name == hit["bundle"].get<std::string>())
          if (const retrieval::Concept* c = s.bundle->lookup(hit[field].get<std::string>()))
            access.concepts.push_back(retrieval::qualified_id(s.name, c->id));
    }
    return access;
  }

  json call_tool(const json& params, Session& session) {
    std::string name = required_param(params, "name");
    object_param(params, "arguments");
    if (std::find(names.begin(), names.end(), name) == names.end())
      throw Error{code::invalid_params, fmt::format("unknown tool '{}'; tools: {}", name, joined(names))};
    json arguments = params.contains("arguments") && params["arguments"].is_object() ? params["arguments"] : json::object();
    std::string logged_arguments = json_text(arguments);
    reports::SessionAccess access;
    agents::ToolResult result;
    if (several) {
      result = call_several(name, std::move(arguments), access);
    } else {
      std::string problem;
      Served* s = target(arguments, problem);
      result = s ? s->tools->call(name, json_text(arguments)) : agents::tool_error(problem);
      if (log && s) access = tool_access(name, json_text(arguments), result, *s->bundle, s->name);
    }
    if (log) account(session, "tools/call", name, logged_arguments, result, std::move(access));
    return {{"content", json::array({{{"type", "text"}, {"text", result.content}}})}, {"isError", !result.error.empty()}};
  }

  void account(Session& session, const char* method, const std::string& tool, const std::string& arguments,
               const agents::ToolResult& result, reports::SessionAccess access) {
    reports::SessionEvent e = event("call", session);
    e.seq = ++session.calls;
    e.method = method;
    e.tool = tool;
    e.arguments = arguments;
    e.bytes = static_cast<std::int64_t>(result.content.size());
    e.tokens = tokens_of(result.content);
    e.error = result.error;
    e.access = std::move(access);
    log->write(e);
  }

  // --- resources --------------------------------------------------------

  std::size_t resource_count() const {
    std::size_t n = 0;
    for (const Served& s : served) n += s.bundle->concepts().size();
    return n;
  }

  std::size_t cursor_offset(const json& params) const {
    std::optional<std::string> cursor = string_param(params, "cursor");
    if (!cursor) return 0;
    std::size_t offset = 0;
    auto [end, ec] = std::from_chars(cursor->data(), cursor->data() + cursor->size(), offset);
    if (ec != std::errc() || end != cursor->data() + cursor->size() || offset == 0 || offset >= resource_count())
      throw Error{code::invalid_params, fmt::format("unknown cursor '{}': pass a nextCursor this server sent",
                                                    cursor->substr(0, 40))};
    return offset;
  }

  json list_resources(const json& params) const {
    std::size_t offset = cursor_offset(params), index = 0;
    json resources = json::array();
    for (const Served& s : served)
      for (const retrieval::Concept& c : s.bundle->concepts()) {
        if (index++ < offset) continue;
        if (resources.size() == kResourcePage) return {{"resources", resources}, {"nextCursor", std::to_string(index - 1)}};
        resources.push_back({{"uri", concept_uri(s.name, c.id)}, {"name", c.id}, {"title", c.title},
                             {"description", c.description}, {"mimeType", "text/markdown"}});
      }
    return {{"resources", resources}};
  }

  json read_resource(const json& params, Session& session) {
    std::string uri = required_param(params, "uri");
    std::optional<ConceptUri> parsed = parse_concept_uri(uri);
    Served* s = nullptr;
    if (parsed)
      for (Served& candidate : served)
        if (candidate.name == parsed->bundle) s = &candidate;
    const retrieval::Concept* c = s ? s->bundle->lookup(parsed->concept_id) : nullptr;
    if (!c)
      throw Error{code::resource_not_found,
                  fmt::format("resource not found: {} (URIs are okf://BUNDLE/CONCEPT_ID; resources/list names them)",
                              uri.substr(0, 300))};
    agents::ToolResult result =
        s->reader->call("read_concept", json_text(json{{"path", c->id}, {"max_chars", kWholeBody}}));
    if (log) account(session, "resources/read", uri, json_text(json{{"uri", uri}}), result, {"read", s->name, {c->id}});
    if (!result.error.empty()) throw Error{code::internal_error, result.error};
    return {{"contents", json::array({{{"uri", uri}, {"mimeType", "text/markdown"}, {"text", result.content}}})}};
  }

  json resource_templates() const {
    json templates = json::array();
    for (const Served& s : served)
      templates.push_back({{"uriTemplate", concept_uri(s.name, "") + "{+concept_id}"},
                           {"name", s.name},
                           {"description", fmt::format("A concept of the bundle {} by id", s.name)},
                           {"mimeType", "text/markdown"}});
    return {{"resourceTemplates", templates}};
  }

  // --- dispatch ---------------------------------------------------------

  json dispatch(const jsonrpc::Message& m, Session& session, bool in_batch) {
    if (std::find(kMethods.begin(), kMethods.end(), m.method) == kMethods.end())
      throw Error{code::method_not_found, fmt::format("method '{}' not found; this server answers {}",
                                                      m.method.substr(0, 100), joined(kMethods))};
    if (m.method == "initialize") return initialize(m.params, session, in_batch);
    if (m.method == "ping") return json::object();
    if (session.protocol_version.empty())
      throw Error{code::invalid_request, fmt::format("{} before initialize: initialize the session first", m.method)};
    if (m.method == "tools/list") return list_tools(m.params, session);
    if (m.method == "tools/call") return call_tool(m.params, session);
    if (m.method == "resources/list") return list_resources(m.params);
    if (m.method == "resources/read") return read_resource(m.params, session);
    return resource_templates();
  }

  json failure(const json& id, const std::string& method, const Error& e, const Session& session) const {
    if (log) {
      reports::SessionEvent ev = event("error", session);
      ev.method = method;
      ev.code = e.code;
      ev.message = e.message;
      log->write(ev);
    }
    return jsonrpc::error(id, e);
  }

  std::optional<json> one(const json& value, Session& session, bool in_batch) {
    auto checked = jsonrpc::check(value);
    if (auto* bad = std::get_if<jsonrpc::Invalid>(&checked)) return failure(bad->id, "", bad->error, session);
    const jsonrpc::Message& m = std::get<jsonrpc::Message>(checked);
    if (m.kind != jsonrpc::Kind::request) return std::nullopt;  // notifications and responses get no answer
    try {
      return jsonrpc::result(m.id, dispatch(m, session, in_batch));
    } catch (const Error& e) {
      return failure(m.id, m.method, e, session);
    } catch (const std::exception& e) {  // last line of defence: a method's failure never ends the server
      return failure(m.id, m.method, Error{code::internal_error, agents::json_util::valid_utf8(e.what())}, session);
    }
  }

  std::optional<std::string> handle(std::string_view text, Session& session) {
    auto parsed = jsonrpc::parse(text);
    if (auto* e = std::get_if<Error>(&parsed)) return json_text(failure(nullptr, "", *e, session));
    const json& value = std::get<json>(parsed);
    if (!value.is_array()) {
      std::optional<json> reply = one(value, session, false);
      if (!reply) return std::nullopt;
      return json_text(*reply);
    }
    if (value.empty()) return json_text(failure(nullptr, "", Error{code::invalid_request, "an empty batch"}, session));
    if (!batches_allowed(session.protocol_version))
      return json_text(failure(nullptr, "",
                     Error{code::invalid_request,
                           session.protocol_version.empty()
                               ? std::string("a batch before initialize: send initialize on its own")
                               : fmt::format("protocol {} has no JSON-RPC batches: send one message at a time",
                                             session.protocol_version)},
                     session));
    if (value.size() > jsonrpc::kMaxBatch)
      return json_text(failure(nullptr, "",
                               Error{code::invalid_request,
                                     fmt::format("a batch of {} messages: at most {}", value.size(), jsonrpc::kMaxBatch)},
                               session));
    return batch(value, session);
  }

  // A batch's replies, in order, while they stay within kMaxBatchReplyBytes.
  // The element whose reply would pass the bound ran, but is answered with
  // reply_too_large instead; the elements after it are not run and get the
  // same error (notifications, as ever, nothing).
  std::optional<std::string> batch(const json& items, Session& session) {
    std::string out;
    bool full = false;
    for (const json& item : items) {
      std::optional<json> reply =
          full ? beyond_bound(item, session, fmt::format("not run: the batch's replies reached {} bytes; send it again "
                                                         "on its own or in a smaller batch",
                                                         jsonrpc::kMaxBatchReplyBytes))
               : one(item, session, true);
      if (!reply) continue;
      std::string text = json_text(*reply);
      if (!full && out.size() + text.size() + 2 > jsonrpc::kMaxBatchReplyBytes) {
        full = true;
        text = json_text(*beyond_bound(item, session,
                                       fmt::format("it ran, but its reply of {} bytes would take the batch's replies "
                                                   "past {} bytes; send it again on its own to read its result",
                                                   text.size(), jsonrpc::kMaxBatchReplyBytes)));
      }
      out += (out.empty() ? "[" : ",") + text;
    }
    if (out.empty()) return std::nullopt;
    return out + "]";
  }

  // reply_too_large for a request of a batch past its bound; nothing for a
  // notification; an invalid element's own error.
  std::optional<json> beyond_bound(const json& item, Session& session, const std::string& why) {
    auto checked = jsonrpc::check(item);
    if (auto* bad = std::get_if<jsonrpc::Invalid>(&checked)) return failure(bad->id, "", bad->error, session);
    const jsonrpc::Message& m = std::get<jsonrpc::Message>(checked);
    if (m.kind != jsonrpc::Kind::request) return std::nullopt;
    return failure(m.id, m.method, Error{code::reply_too_large, why}, session);
  }

  ServerOptions options;
  SessionLog* log;
  std::vector<std::string> names;  // tools offered
  std::vector<Served> served;
  std::unique_ptr<agents::MultiBundleTools> several;  // two or more bundles
  json tool_list;
  std::unique_ptr<retrieval::TokenCounter> o200k, cl100k;
  std::mutex mutex;
};

Server::Server(std::vector<ServedBundle> bundles, ServerOptions options, SessionLog* log)
    : impl_(std::make_unique<Impl>(std::move(bundles), std::move(options), log)) {}

Server::~Server() = default;

std::optional<std::string> Server::handle(std::string_view text, Session& session) {
  std::lock_guard lock(impl_->mutex);
  return impl_->handle(text, session);
}

std::vector<std::string> Server::tool_names() const { return impl_->names; }

}  // namespace okfbench::mcp
