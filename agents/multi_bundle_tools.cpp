#include "agents/multi_bundle_tools.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/error.hpp"
#include "core/json_text.hpp"
#include "retrieval/utf8.hpp"

namespace okfbench::agents {
namespace {
using nlohmann::json;

bool is_search(std::string_view tool) { return tool_role(tool) == ToolRole::search; }

// Adds "bundle" to a tool's JSON answer: to an object (an opened concept, a
// listing, neighbours), or to each object of a list (hits, follow's
// concepts). read_concept answers text: "bundle: NAME" goes after its first
// line (the title, or a listing's heading).
std::string name_bundle(std::string_view tool, const std::string& content, const std::string& bundle) {
  if (tool == "read_concept") {
    const auto eol = content.find('\n');
    if (eol == std::string::npos) return content + "\nbundle: " + bundle;
    return content.substr(0, eol + 1) + "bundle: " + bundle + "\n" + content.substr(eol + 1);
  }
  json doc = json::parse(content, nullptr, false);
  if (doc.is_discarded()) return content;
  if (doc.is_object()) doc["bundle"] = bundle;
  if (doc.is_array())
    for (json& item : doc)
      if (item.is_object()) item["bundle"] = bundle;
  return json_text(doc);
}

}  // namespace

struct MultiBundleTools::Impl {
  Impl(std::vector<ToolBundle> given, ToolsOptions o) : bundles(std::move(given)), options(std::move(o)) {
    if (bundles.size() < 2) throw UsageError("several-bundle tools need at least two bundles");
    if (options.retriever) throw UsageError("a retrieval method other than bm25f takes one bundle, not several");
    if (options.selection)  // its ids are one bundle's, and one combined index holds them all
      throw UsageError("a selection policy (lessons, expertise) takes one bundle, not several");
    std::vector<retrieval::NamedBundle> named;
    for (const ToolBundle& b : bundles) named.push_back({b.name, b.bundle});
    retrieval::check_bundle_names(named);  // two with one name: UsageError
    for (const ToolBundle& b : bundles) {
      ToolsOptions own = options;
      own.bundle_name = b.name;
      tools.push_back(std::make_unique<BundleTools>(*b.bundle, own));
    }
    index_all();
  }

  // The combined index and the tools that search it: BundleTools formats
  // each hit from its concept, and names its bundle from the hit.
  void index_all() {
    std::vector<retrieval::NamedBundle> named;
    for (const ToolBundle& b : bundles) named.push_back({b.name, b.bundle});
    all_tools.reset();
    all_index.emplace(retrieval::SearchIndex::build(named));
    ToolsOptions own = options;
    own.bundle_name = "*";
    all_tools = std::make_unique<BundleTools>(*bundles.front().bundle, own, &*all_index);
  }

  std::string names() const {
    std::string out;
    for (const ToolBundle& b : bundles) out += (out.empty() ? "" : ", ") + b.name;
    return out;
  }

  std::optional<std::size_t> find(std::string_view name) const {
    for (std::size_t i = 0; i < bundles.size(); ++i)
      if (bundles[i].name == name) return i;
    return std::nullopt;
  }

  ToolResult call(std::string_view name, std::string_view arguments) {
    json args = json::parse(arguments.empty() ? std::string_view("{}") : arguments, nullptr, false);
    if (args.is_discarded() || !args.is_object())
      return tool_error(fmt::format("{}: arguments must be a JSON object, got: {}", name, retrieval::echoed(arguments)));
    auto it = args.find("bundle");
    if (it != args.end() && !it->is_null() && !it->is_string())
      return tool_error(fmt::format("{}: 'bundle' must be a string, one of: {}", name, names()));
    const std::string bundle = it != args.end() && it->is_string() ? it->get<std::string>() : std::string();
    if (it != args.end()) args.erase(it);
    if (bundle.empty() && is_search(name)) return all_tools->call(name, args.dump());
    if (bundle.empty())
      return tool_error(
          fmt::format("{}: 'bundle' is required when several bundles are loaded; one of: {}", name, names()));
    const std::optional<std::size_t> at = find(bundle);
    if (!at) return tool_error(fmt::format("Unknown bundle '{}'; loaded bundles: {}", retrieval::echoed(bundle), names()));
    ToolResult result = tools[*at]->call(name, args.dump());
    if (!result.error.empty()) return result;
    if (name == "remember") index_all();  // the combined index must know the new concept
    result.content = name_bundle(name, result.content, bundle);
    return result;
  }

  std::vector<ToolBundle> bundles;
  ToolsOptions options;
  std::vector<std::unique_ptr<BundleTools>> tools;  // one per bundle, each searching its own index
  std::optional<retrieval::SearchIndex> all_index;
  std::unique_ptr<BundleTools> all_tools;  // searches all_index
};

MultiBundleTools::MultiBundleTools(std::vector<ToolBundle> bundles, ToolsOptions options)
    : impl_(std::make_unique<Impl>(std::move(bundles), std::move(options))) {}

MultiBundleTools::~MultiBundleTools() = default;

std::vector<ToolSpec> MultiBundleTools::specs() const {
  std::vector<std::string> names;
  for (const ToolBundle& b : impl_->bundles) names.push_back(b.name);
  std::vector<ToolSpec> out = impl_->tools.front()->specs();
  for (ToolSpec& spec : out) {
    json schema = json::parse(spec.parameters);
    const bool search = is_search(spec.name);
    schema["properties"]["bundle"] = {
        {"type", "string"},
        {"enum", names},
        {"description", search ? "The bundle to search; omit it to search every bundle" : "The bundle to read from"}};
    if (!search) schema["required"].push_back("bundle");
    spec.description += search ? " Each hit names its bundle." : " Name the bundle in `bundle`.";
    spec.parameters = schema.dump();
  }
  return out;
}

ToolResult MultiBundleTools::call(std::string_view name, std::string_view arguments) {
  return impl_->call(name, arguments);
}

std::string MultiBundleTools::default_system_prompt() const {
  return system_prompt(impl_->bundles, specs(), impl_->options);
}

std::optional<KnowledgeAccess> MultiBundleTools::access(std::string_view name, std::string_view arguments,
                                                        const ToolResult& result) const {
  const json args = json::parse(arguments, nullptr, false);
  std::string bundle;
  if (args.is_object() && args.contains("bundle") && args["bundle"].is_string()) bundle = args["bundle"].get<std::string>();
  if (bundle.empty() && is_search(name)) bundle = "*";
  return knowledge_access(name, arguments, result.content, result.error, bundle);
}

std::vector<std::pair<std::string, std::string>> MultiBundleTools::opened(const AgentRun& run) const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const AgentToolCall& call : run.tool_calls) {
    if (!call.error.empty() || tool_role(call.name) != ToolRole::open) continue;
    const json args = json::parse(call.arguments, nullptr, false);
    if (!args.is_object() || !args.contains("bundle") || !args["bundle"].is_string()) continue;
    const std::string bundle = args["bundle"].get<std::string>();
    const auto at = impl_->find(bundle);
    auto id = args.find(concept_key(surface_of(call.name)));
    if (!at || id == args.end() || !id->is_string()) continue;
    const retrieval::Concept* c = impl_->bundles[*at].bundle->lookup(id->get<std::string>());
    if (!c) continue;
    std::pair<std::string, std::string> key{bundle, c->id};
    if (std::find(out.begin(), out.end(), key) == out.end()) out.push_back(std::move(key));
  }
  return out;
}

}  // namespace okfbench::agents
