#include "agents/bundle_tools.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "core/error.hpp"
#include "core/json_text.hpp"
#include "retrieval/computation.hpp"
#include "retrieval/utf8.hpp"

namespace okfbench::agents {
namespace {
using nlohmann::json;
using retrieval::Bundle;
using retrieval::Concept;

// Thrown inside a tool, caught in BundleTools::call, returned as {"error": ...}.
struct ToolFailure {
  std::string message;
};

// Typed access to a tool's JSON arguments.
class Args {
 public:
  Args(std::string_view tool, std::string_view text) : tool_(tool) {
    json_ = json::parse(text.empty() ? std::string_view("{}") : text, nullptr, false);
    if (json_.is_discarded() || !json_.is_object())
      throw ToolFailure{fmt::format("{}: arguments must be a JSON object, got: {}", tool, retrieval::echoed(text))};
  }
  std::optional<std::string> text(const char* key) const {
    auto it = json_.find(key);
    if (it == json_.end() || it->is_null()) return std::nullopt;
    if (!it->is_string()) throw ToolFailure{fmt::format("{}: '{}' must be a string", tool_, key)};
    return it->get<std::string>();
  }
  std::string required(const char* key) const {
    std::optional<std::string> value = text(key);
    if (!value || value->empty()) throw ToolFailure{fmt::format("{}: '{}' is required", tool_, key)};
    return *value;
  }
  std::optional<long long> integer(const char* key) const {
    auto it = json_.find(key);
    if (it == json_.end() || it->is_null()) return std::nullopt;
    if (!it->is_number()) throw ToolFailure{fmt::format("{}: '{}' must be a number", tool_, key)};
    // Clamped before the cast: a model may send 1e300.
    return static_cast<long long>(std::clamp(it->get<double>(), -1e9, 1e9));
  }
  std::vector<std::string> strings(const char* key) const {
    std::vector<std::string> out;
    auto it = json_.find(key);
    if (it == json_.end() || it->is_null()) return out;
    if (it->is_string()) return {it->get<std::string>()};
    if (!it->is_array()) throw ToolFailure{fmt::format("{}: '{}' must be a list of strings", tool_, key)};
    for (const json& item : *it) {
      if (!item.is_string()) throw ToolFailure{fmt::format("{}: '{}' must be a list of strings", tool_, key)};
      out.push_back(item.get<std::string>());
    }
    return out;
  }

 private:
  std::string tool_;
  json json_;
};

double rounded(double score) { return std::round(score * 1000.0) / 1000.0; }

std::string path_of(const Concept& c) { return "/" + c.path; }

const Concept& concept_or_fail(const Bundle& bundle, const std::string& reference) {
  const Concept* c = bundle.lookup(reference);
  if (!c) throw ToolFailure{fmt::format("Concept not found: {}", retrieval::echoed(reference))};
  return *c;
}

json spec_schema(json properties, std::vector<std::string> required) {
  return {{"type", "object"}, {"properties", std::move(properties)}, {"required", std::move(required)}};
}

ToolSpec spec(std::string name, std::string description, const json& schema) {
  return ToolSpec{std::move(name), std::move(description), schema.dump()};
}

const std::map<std::string, ToolSpec>& all_specs() {
  static const std::map<std::string, ToolSpec> specs = [] {
    json str = {{"type", "string"}};
    std::map<std::string, ToolSpec> m;
    m["browse"] = spec("browse",
                       "List a directory of the bundle: its subdirectories and the concepts directly in it (id, title, "
                       "description, type). The root when layer is omitted. Never returns bodies.",
                       spec_schema({{"layer", {{"type", "string"}, {"description", "Directory, e.g. runbooks"}}}}, {}));
    m["search"] = spec("search",
                       "Ranked search over titles, tags, descriptions and bodies. Returns id, title, description and "
                       "score for each hit; never bodies.",
                       spec_schema({{"query", str}, {"k", {{"type", "integer"}, {"description", "Hits, 1 to 50 (default 5)"}}}},
                                   {"query"}));
    m["open"] = spec("open",
                     "Read one concept: type, title, description, tags, the markdown body, typed links and citations. "
                     "The only tool that returns a body; open only what is worth reading.",
                     spec_schema({{"concept_id", str}}, {"concept_id"}));
    m["follow"] = spec("follow",
                       "Concepts linked from (direction out) or to (direction in) a concept, optionally only one relation "
                       "type such as JOINS_WITH. Returns id, title, description, relation; never bodies.",
                       spec_schema({{"concept_id", str},
                                    {"direction", {{"type", "string"}, {"enum", {"out", "in"}}}},
                                    {"type", {{"type", "string"}, {"description", "Relation, e.g. LINKS_TO"}}}},
                                   {"concept_id"}));
    m["history"] = spec("history",
                        "Changelog entries (date, kind, text, scope), newest first; only those about one concept when "
                        "concept_id is given.",
                        spec_schema({{"concept_id", str}}, {}));
    m["remember"] = spec("remember",
                         "Save a new concept into the bundle (and log it) so later questions can find it.",
                         spec_schema({{"concept_id", {{"type", "string"}, {"description", "New id, e.g. notes/my-note"}}},
                                      {"title", str},
                                      {"body", str},
                                      {"description", str},
                                      {"links", {{"type", "array"}, {"items", str}}}},
                                     {"concept_id", "title", "body"}));
    m["search_concepts"] = spec(
        "search_concepts",
        "Search the knowledge bundle (BM25F over title, tags, description, body). Returns path, type, title, "
        "description, status and score for each hit.",
        spec_schema({{"query", str},
                     {"limit", {{"type", "integer"}, {"description", "1 to 50 (default 5)"}}},
                     {"type", {{"type", "string"}, {"description", "Only concepts of this type"}}},
                     {"tags", {{"type", "array"}, {"items", str}, {"description", "All must match"}}}},
                    {"query"}));
    m["read_concept"] = spec(
        "read_concept",
        "Read a concept by path (with or without .md): a metadata header (type, status, trust tier, staleness, tags, "
        "sources) and the body. A directory path reads its index; .../log.md reads the change log.",
        spec_schema({{"path", str}, {"max_chars", {{"type", "integer"}, {"description", "Body budget"}}}}, {"path"}));
    m["get_neighbors"] = spec("get_neighbors",
                              "Outbound links, backlinks and unresolved links of a concept, with titles.",
                              spec_schema({{"path", str}}, {"path"}));
    return m;
  }();
  return specs;
}

std::size_t utf8_chars(std::string_view text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

// Byte offset of the start of character `n` (or text.size()).
std::size_t utf8_offset(std::string_view text, std::size_t n) {
  std::size_t chars = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;
    if (chars++ == n) return i;
  }
  return text.size();
}
}  // namespace

std::string cut_text(std::string_view text, std::size_t max_chars, std::string_view hint) {
  std::size_t total = utf8_chars(text);
  if (total <= max_chars) return std::string(text);
  std::string out(text.substr(0, utf8_offset(text, max_chars)));
  return out + fmt::format("\n[... truncated: {} of {} characters not shown; {}]", total - max_chars, total, hint);
}

std::optional<Surface> parse_surface(std::string_view name) {
  if (name == "grafito") return Surface::grafito;
  if (name == "harnessx") return Surface::harnessx;
  return std::nullopt;
}

const char* to_string(Surface surface) { return surface == Surface::grafito ? "grafito" : "harnessx"; }

namespace {

// The one table of tool names: each role's name on grafito and on harnessx
// (nullptr where that surface has no such tool), in the order offered.
struct SurfaceName {
  ToolRole role;
  const char* grafito;
  const char* harnessx;
};
constexpr SurfaceName kSurfaceNames[] = {
    {ToolRole::browse, "browse", nullptr},           {ToolRole::search, "search", "search_concepts"},
    {ToolRole::open, "open", "read_concept"},        {ToolRole::follow, "follow", "get_neighbors"},
    {ToolRole::history, "history", nullptr},         {ToolRole::remember, "remember", nullptr},
};

const char* name_on(const SurfaceName& n, Surface surface) { return surface == Surface::grafito ? n.grafito : n.harnessx; }

const SurfaceName* surface_name(std::string_view name) {
  for (const SurfaceName& n : kSurfaceNames)
    if (name == n.grafito || (n.harnessx && name == n.harnessx)) return &n;
  return nullptr;
}

}  // namespace

std::vector<std::string> surface_tools(Surface surface) {
  std::vector<std::string> out;
  for (const SurfaceName& n : kSurfaceNames)
    if (const char* name = name_on(n, surface)) out.emplace_back(name);
  return out;
}

ToolRole tool_role(std::string_view name) {
  const SurfaceName* n = surface_name(name);
  return n ? n->role : ToolRole::none;
}

Surface surface_of(std::string_view name) {
  const SurfaceName* n = surface_name(name);
  return n && n->harnessx && name == n->harnessx ? Surface::harnessx : Surface::grafito;
}

const char* concept_key(Surface surface) { return surface == Surface::grafito ? "concept_id" : "path"; }
const char* limit_key(Surface surface) { return surface == Surface::grafito ? "k" : "limit"; }

OfferedTools offered_tools(const std::vector<ToolSpec>& tools) {
  OfferedTools out;
  for (const ToolSpec& t : tools) {
    const ToolRole role = tool_role(t.name);
    std::string* slot = role == ToolRole::browse     ? &out.browse
                        : role == ToolRole::search   ? &out.search
                        : role == ToolRole::open     ? &out.open
                        : role == ToolRole::follow   ? &out.follow
                        : role == ToolRole::history  ? &out.history
                        : role == ToolRole::remember ? &out.remember
                                                     : nullptr;
    if (!slot) continue;
    *slot = t.name;
    if (surface_of(t.name) == Surface::harnessx) out.surface = Surface::harnessx;
  }
  return out;
}

namespace {

// bundle.index(layer) without the concepts `selection` excludes; a
// synthesized listing is written again without them (a hand-written
// index.md stays as written: it is the author's text).
std::optional<retrieval::LayerIndex> index_without_excluded(const Bundle& bundle, std::string_view layer,
                                                            const retrieval::Selection* selection) {
  std::optional<retrieval::LayerIndex> listing = bundle.index(layer);
  if (!listing || !selection) return listing;
  std::erase_if(listing->concepts, [&](const retrieval::IndexEntry& e) { return selection->excludes(e.id); });
  if (listing->synthesized) listing->text = retrieval::synthesized_index_text(*listing);
  return listing;
}

// bundle.layers() counting only the concepts `selection` keeps, so the
// grafito prompt does not announce what the tools will not show.
std::map<std::string, std::size_t> layers_without_excluded(const Bundle& bundle, const retrieval::Selection* selection) {
  if (!selection) return bundle.layers();
  std::map<std::string, std::size_t> out;
  for (const Concept& c : bundle.concepts())
    if (!c.layer.empty() && !selection->excludes(c.id)) ++out[c.layer];
  return out;
}

}  // namespace

struct BundleTools::Impl {
  Impl(Bundle& b, const ToolsOptions& o, const retrieval::SearchIndex* shared) : bundle(b), options(o), index(shared) {
    if (!index) index = &own_index.emplace(retrieval::SearchIndex::build(b));
    now = o.now.empty() ? retrieval::now_utc() : o.now;
    retriever = o.retriever;
  }

  const retrieval::Exclusion* excluded(std::string_view id) const {
    return options.selection ? options.selection->find(id) : nullptr;
  }

  // concept_or_fail, and an error saying why when the policy excludes it.
  const Concept& eligible_or_fail(const std::string& reference) const {
    const Concept& c = concept_or_fail(bundle, reference);
    if (const retrieval::Exclusion* e = excluded(c.id))
      throw ToolFailure{fmt::format("Concept {} is excluded: {} (the selection policy keeps it out of this task)",
                                    c.id, e->reason)};
    return c;
  }

  std::optional<retrieval::LayerIndex> visible_index(std::string_view layer) const {
    return index_without_excluded(bundle, layer, options.selection.get());
  }

  json concept_meta(const Concept& c) const {
    return {{"id", c.id}, {"title", c.title}, {"description", c.description}};
  }

  std::string browse(const Args& a) const {
    std::string layer = a.text("layer").value_or("");
    std::optional<retrieval::LayerIndex> listing = visible_index(layer);
    if (!listing) {
      std::string layers;
      for (const auto& [name, count] : bundle.layers()) layers += (layers.empty() ? "" : ", ") + name;
      throw ToolFailure{fmt::format("no directory '{}' in the bundle; top-level layers: {}", retrieval::echoed(layer), layers)};
    }
    json concepts = json::array();
    for (const retrieval::IndexEntry& e : listing->concepts)
      concepts.push_back({{"id", e.id}, {"title", e.title}, {"description", e.description}, {"type", e.type}});
    return json_text(json{{"layer", listing->layer}, {"subdirs", listing->subdirs}, {"concepts", concepts}});
  }

  std::vector<retrieval::Hit> run_search(const std::string& query, long long limit, retrieval::SearchOptions o) const {
    o.limit = retrieval::clamp_tool_limit(limit);
    o.selection = options.selection;
    std::vector<retrieval::Hit> hits = retriever ? retriever->search(query, o) : index->search(query, o);
    if (options.selection)  // the policy's preferred concepts first, each group in rank order
      std::stable_partition(hits.begin(), hits.end(), [&](const retrieval::Hit& h) { return options.selection->prefers(h.id); });
    return hits;
  }

  std::string search(const Args& a) const {
    json hits = json::array();
    for (const retrieval::Hit& h : run_search(a.required("query"), a.integer("k").value_or(5), {})) {
      json hit = concept_meta(*h.concept_ptr);
      hit["score"] = rounded(h.score);
      if (!h.bundle.empty()) hit["bundle"] = h.bundle;  // a search over several bundles
      hits.push_back(std::move(hit));
    }
    return json_text(hits);
  }

  // One line per citation, each once (retrieval::distinct_citations).
  static std::vector<std::string> distinct_cites(const Concept& c) {
    std::vector<std::string> lines;
    for (const retrieval::Citation& citation : retrieval::distinct_citations(c)) {
      if (citation.label.empty() || citation.text.empty())
        lines.push_back(citation.label.empty() ? citation.text : citation.label);
      else
        lines.push_back(citation.label + ": " + citation.text);
    }
    return lines;
  }

  std::string open(const Args& a) const {
    const Concept& c = eligible_or_fail(a.required("concept_id"));
    json links = json::array();
    std::set<std::pair<std::string, std::string>> seen;
    for (const retrieval::Link& l : c.links)
      if (l.resolved && l.relation != "CITES" && seen.emplace(l.target, l.relation).second)
        links.push_back({{"id", l.target}, {"rel", l.relation}});
    json cites = json::array();
    for (const std::string& cite : distinct_cites(c)) cites.push_back(cite);
    std::string body = cut_text(c.body, options.max_body_chars, "the rest is not available through open");
    json out{{"id", c.id},     {"type", c.type}, {"title", c.title}, {"description", c.description},
             {"tags", c.tags}, {"body", body},   {"links", links},   {"cites", cites}};
    if (std::optional<retrieval::ComputationContract> contract = retrieval::computation_contract(c))
      out["computation"] = contract_json(*contract);
    return json_text(out);
  }

  std::string follow(const Args& a) const {
    const Concept& c = eligible_or_fail(a.required("concept_id"));
    std::string direction = a.text("direction").value_or("out");
    if (direction != "out" && direction != "in")
      throw ToolFailure{fmt::format("follow: direction must be \"out\" or \"in\", got \"{}\"", retrieval::echoed(direction))};
    auto neighbors = bundle.neighbors(c.id, direction == "out" ? retrieval::Direction::out : retrieval::Direction::in,
                                      a.text("type").value_or(""));
    json out = json::array();
    for (const retrieval::Neighbor& n : neighbors) {
      if (excluded(n.id)) continue;
      const Concept* other = bundle.find(n.id);
      json item = other ? concept_meta(*other) : json{{"id", n.id}};
      item["rel"] = n.relation;
      out.push_back(std::move(item));
    }
    return json_text(out);
  }

  std::string history(const Args& a) const {
    std::optional<std::string> id = a.text("concept_id");
    std::string canonical;
    if (id && !id->empty()) canonical = eligible_or_fail(*id).id;
    json out = json::array();
    for (const retrieval::LogEntry& e : bundle.history(canonical))
      out.push_back({{"date", e.date}, {"kind", e.kind}, {"text", e.text}, {"scope", e.scope}});
    return json_text(out);
  }

  std::string remember(const Args& a) {
    Bundle::RememberRequest r;
    r.concept_id = a.required("concept_id");
    r.title = a.required("title");
    r.body = a.required("body");
    r.description = a.text("description").value_or("");
    r.links = a.strings("links");
    Bundle::Remembered saved = bundle.remember(r);
    if (!saved.error.empty()) throw ToolFailure{"remember: " + saved.error};
    // The new concept must be searchable (and old hits pointed into the
    // bundle), so from now on the tools search an index of their own.
    index = &own_index.emplace(retrieval::SearchIndex::build(bundle));
    retriever = nullptr;  // its indexes point into the bundle as it was
    // The id as written (a leading '/' dropped), which open() finds.
    return json_text(json{{"saved", saved.id}, {"links", saved.links}});
  }

  std::string search_concepts(const Args& a) const {
    retrieval::SearchOptions o;
    o.type = a.text("type").value_or("");
    o.tags = a.strings("tags");
    json hits = json::array();
    for (const retrieval::Hit& h : run_search(a.required("query"), a.integer("limit").value_or(5), o)) {
      const Concept& c = *h.concept_ptr;
      json hit = {{"path", path_of(c)},
                  {"type", c.type},
                  {"title", c.title},
                  {"description", c.description},
                  {"status", retrieval::to_string(c.status)},
                  {"score", rounded(h.score)}};
      if (!h.bundle.empty()) hit["bundle"] = h.bundle;  // a search over several bundles
      hits.push_back(std::move(hit));
    }
    return json_text(hits);
  }

  std::string header(const Concept& c) const {
    std::string tags, sources;
    for (const std::string& t : c.tags) tags += (tags.empty() ? "" : ", ") + t;
    for (const retrieval::Source& s : c.sources) sources += (sources.empty() ? "" : "; ") + retrieval::source_text(s);
    std::string stale = c.stale_after.empty() ? "no stale_after"
                                              : fmt::format("{} (stale_after {})", c.is_stale(now) ? "STALE" : "current",
                                                            c.stale_after);
    std::optional<retrieval::ComputationContract> contract = retrieval::computation_contract(c);
    return fmt::format("# {}\npath: {}\ntype: {}\nstatus: {}\ntrust: {}\nfreshness: {}\ntags: {}\nsources: {}\n{}---\n",
                       c.title, path_of(c), c.type, retrieval::to_string(c.status), retrieval::to_string(c.trust), stale,
                       tags.empty() ? "-" : tags, sources.empty() ? "-" : sources,
                       contract ? retrieval::contract_lines(*contract) : "");
  }

  std::string read_log(const std::string& path) const {
    std::string scope = path.substr(0, path.size() - std::string_view("log.md").size());
    while (!scope.empty() && (scope.back() == '/')) scope.pop_back();
    while (!scope.empty() && scope.front() == '/') scope.erase(0, 1);
    // Matched against the scopes loaded with the bundle, never read from disk,
    // so "../log.md" finds nothing and "v1..v2/log.md" is an ordinary folder.
    std::string text;
    for (const retrieval::LogEntry& e : bundle.history())
      if (e.scope == scope) text += fmt::format("{} {}: {}\n", e.date, e.kind, e.text);
    if (text.empty()) throw ToolFailure{fmt::format("Concept not found: {}", retrieval::echoed(path))};
    return fmt::format("# Log of /{}\n---\n{}", scope.empty() ? "" : scope + "/", text);
  }

  std::string read_concept(const Args& a) const {
    std::string path = a.required("path");
    long long max = a.integer("max_chars").value_or(static_cast<long long>(options.max_body_chars));
    std::size_t budget = static_cast<std::size_t>(std::max(1LL, max));
    std::string hint = fmt::format("call read_concept with a larger max_chars (now {}) to read more", budget);
    if (const Concept* c = bundle.lookup(path)) return header(eligible_or_fail(c->id)) + cut_text(c->body, budget, hint);
    if (path.ends_with("log.md")) return read_log(path);
    if (std::optional<retrieval::LayerIndex> listing = visible_index(path))
      return fmt::format("# Index of /{}\n---\n", listing->layer) + cut_text(listing->text, budget, hint);
    throw ToolFailure{fmt::format("Concept not found: {}", retrieval::echoed(path))};
  }

  std::string get_neighbors(const Args& a) const {
    const Concept& c = eligible_or_fail(a.required("path"));
    auto list = [&](retrieval::Direction d) {
      json out = json::array();
      for (const retrieval::Neighbor& n : bundle.neighbors(c.id, d)) {
        if (excluded(n.id)) continue;
        const Concept* other = bundle.find(n.id);
        out.push_back({{"path", other ? path_of(*other) : "/" + n.id + ".md"},
                       {"title", other ? other->title : std::string()},
                       {"rel", n.relation}});
      }
      return out;
    };
    json unresolved = json::array();
    for (const retrieval::Link* l : bundle.unresolved(c.id)) unresolved.push_back({{"href", l->raw}, {"text", l->text}});
    return json_text(json{{"path", path_of(c)},
                          {"outbound", list(retrieval::Direction::out)},
                          {"backlinks", list(retrieval::Direction::in)},
                          {"unresolved", unresolved}});
  }

  std::string dispatch(std::string_view name, const Args& a) {
    if (name == "browse") return browse(a);
    if (name == "search") return search(a);
    if (name == "open") return open(a);
    if (name == "follow") return follow(a);
    if (name == "history") return history(a);
    if (name == "remember") return remember(a);
    if (name == "search_concepts") return search_concepts(a);
    if (name == "read_concept") return read_concept(a);
    if (name == "get_neighbors") return get_neighbors(a);
    throw ToolFailure{fmt::format("unknown tool '{}'", retrieval::echoed(name))};
  }

  Bundle& bundle;
  const ToolsOptions& options;
  std::optional<retrieval::SearchIndex> own_index;  // built here unless one was shared
  const retrieval::SearchIndex* index;
  const retrieval::Retriever* retriever = nullptr;  // ToolsOptions::retriever until a remember()
  std::string now;
};

BundleTools::BundleTools(Bundle& bundle, ToolsOptions options, const retrieval::SearchIndex* index)
    : bundle_(bundle), options_(std::move(options)) {
  std::vector<std::string> names = surface_tools(options_.surface);
  for (const std::string& name : options_.include)
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      std::string all;
      for (const std::string& n : names) all += (all.empty() ? "" : ",") + n;
      throw UsageError(fmt::format("tool '{}' is not on the {} surface; choose from {}", name,
                                   to_string(options_.surface), all));
    }
  impl_ = std::make_unique<Impl>(bundle_, options_, index);
}

BundleTools::~BundleTools() = default;

std::vector<ToolSpec> BundleTools::specs() const {
  std::vector<ToolSpec> out;
  for (const std::string& name : surface_tools(options_.surface))
    if (options_.include.empty() ||
        std::find(options_.include.begin(), options_.include.end(), name) != options_.include.end())
      out.push_back(all_specs().at(name));
  return out;
}

std::optional<KnowledgeAccess> BundleTools::access(std::string_view name, std::string_view arguments,
                                                   const ToolResult& result) const {
  return knowledge_access(name, arguments, result.content, result.error, options_.bundle_name);
}

ToolResult BundleTools::call(std::string_view name, std::string_view arguments) {
  std::vector<ToolSpec> enabled = specs();
  bool on = std::any_of(enabled.begin(), enabled.end(), [&](const ToolSpec& s) { return s.name == name; });
  if (!on) {
    std::string names;
    for (const ToolSpec& s : enabled) names += (names.empty() ? "" : ", ") + s.name;
    return tool_error(fmt::format("tool '{}' is not enabled; enabled tools: {}", retrieval::echoed(name), names));
  }
  try {
    Args args(name, arguments);
    return ToolResult{retrieval::printable(impl_->dispatch(name, args)), ""};
  } catch (const ToolFailure& f) {
    return tool_error(f.message);
  } catch (const std::exception& e) {  // last line of defence: a tool call never ends the agent's run
    return tool_error(fmt::format("{}: {}", name, retrieval::echoed(e.what(), 2000)));
  }
}

std::string BundleTools::default_system_prompt() const {
  // One bundle is named after its folder here, as the prompt always named it.
  return system_prompt({{bundle_.root().filename().string(), &bundle_}}, specs(), options_);
}

namespace {

// Several bundles: the line that names them and says how the tools address them.
std::string several_line(const std::vector<ToolBundle>& bundles, std::string_view search) {
  if (bundles.size() < 2) return {};
  std::string names;
  for (const ToolBundle& b : bundles) names += (names.empty() ? "" : ", ") + retrieval::escape_invalid_utf8(b.name);
  return fmt::format("Several bundles are loaded: {}. Every tool takes a `bundle` argument naming one of them; {} "
                     "without it searches them all, and every result names its bundle.\n",
                     names, search);
}

std::string harnessx_prompt(const std::vector<ToolBundle>& bundles, const ToolsOptions& options) {
  std::string blocks;
  for (const ToolBundle& b : bundles) {
    std::optional<retrieval::LayerIndex> root = index_without_excluded(*b.bundle, "", options.selection.get());
    std::string index =
        root ? cut_text(root->text, options.index_char_budget, "use read_concept on a directory for more") : std::string();
    blocks += fmt::format("<bundle name=\"{}\">\n{}\n</bundle>\n", retrieval::escape_invalid_utf8(b.name), index);
  }
  return fmt::format(
      "<knowledge>\nAnswer from the knowledge bundle{} and cite concept paths and sources.\n{}Workflow: "
      "search_concepts to find candidates, read_concept to read one (a metadata header, then the body), "
      "get_neighbors to see what links to and from it. Prefer stable, human-reviewed, current concepts and say "
      "when you rely on something else.\n{}</knowledge>",
      bundles.size() > 1 ? "s" : "", several_line(bundles, "search_concepts"), blocks);
}

}  // namespace

std::string system_prompt(const std::vector<ToolBundle>& bundles, const std::vector<ToolSpec>& enabled,
                          const ToolsOptions& options) {
  auto has = [&](const char* n) {
    return std::any_of(enabled.begin(), enabled.end(), [&](const ToolSpec& s) { return s.name == n; });
  };
  if (options.surface == Surface::harnessx) return harnessx_prompt(bundles, options);
  json layers = json::object();
  for (const ToolBundle& b : bundles)
    for (const auto& [name, count] : layers_without_excluded(*b.bundle, options.selection.get())) {
      if (bundles.size() == 1) layers[name] = count;
      else layers[retrieval::escape_invalid_utf8(b.name)][name] = count;
    }
  std::string protocol;
  int step = 1;
  auto line = [&](bool on, std::string_view text) {
    if (on) protocol += fmt::format("{}. {}\n", step++, text);
  };
  line(has("browse") || has("search"),
       "Triage: browse lists a directory, search ranks concepts; both return metadata only, never bodies.");
  line(has("open"), "Read: open returns one concept's body. Open only the concepts worth reading.");
  line(has("follow"), "Traverse: follow lists the concepts linked from or to one you read, before you open them.");
  line(has("history"), "Provenance: history gives changelog entries when the question is about when or why.");
  protocol += fmt::format("{}. Answer with citations: the ids of the concepts you used, in brackets.\n", step++);
  line(has("remember"), "Optionally remember a conclusion worth keeping as a new concept.");
  if (bundles.size() > 1)
    return fmt::format("You answer questions from OKF knowledge bundles: markdown concepts with metadata, "
                       "organised in layers.\n{}Layers (concepts per layer, by bundle): {}\nProtocol:\n{}",
                       several_line(bundles, "search"), json_text(layers), protocol);
  return fmt::format("You answer questions from an OKF knowledge bundle: markdown concepts with metadata, "
                     "organised in layers.\nLayers (concepts per layer): {}\nProtocol:\n{}",
                     json_text(layers), protocol);
}

std::vector<std::string> opened_concepts(const AgentRun& run, const retrieval::Bundle& bundle) {
  std::vector<std::string> out;
  for (const AgentToolCall& call : run.tool_calls) {
    if (!call.error.empty() || tool_role(call.name) != ToolRole::open) continue;
    json args = json::parse(call.arguments, nullptr, false);
    if (!args.is_object()) continue;
    auto it = args.find(concept_key(surface_of(call.name)));
    if (it == args.end() || !it->is_string()) continue;
    if (const Concept* c = bundle.lookup(it->get<std::string>()))
      if (std::find(out.begin(), out.end(), c->id) == out.end()) out.push_back(c->id);
  }
  return out;
}

std::optional<std::vector<std::string>> tools_for_surface(const std::vector<std::string>& tools, Surface surface,
                                                          std::vector<std::string>* missing) {
  std::vector<std::string> out;
  bool complete = true;
  for (const std::string& tool : tools) {
    const SurfaceName* n = surface_name(tool);
    const char* name = n ? name_on(*n, surface) : nullptr;
    if (!name) {
      complete = false;
      if (missing) missing->push_back(tool);
      continue;
    }
    out.emplace_back(name);
  }
  if (!complete) return std::nullopt;
  return out;
}

nlohmann::ordered_json contract_json(const retrieval::ComputationContract& c) {
  nlohmann::ordered_json parameters = nlohmann::ordered_json::array();
  for (const retrieval::ComputationParameter& p : c.parameters)
    parameters.push_back({{"name", p.name}, {"type", p.type}, {"required", p.required}, {"description", p.description}});
  return {{"runtime", c.runtime},
          {"parameters", parameters},
          {"computation_file", c.computation_file},
          {"code", c.code},
          {"code_language", c.code_language},
          {"executor", {{"resource", c.executor}, {"receipt", c.receipt}}},
          {"attester", {{"resource", c.attester}}},
          {"problems", c.problems}};
}

}  // namespace okfbench::agents
