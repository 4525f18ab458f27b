#include "mcp/access.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace okfbench::mcp {
namespace {
using nlohmann::json;

std::string string_at(const json& object, const char* key) {
  if (!object.is_object()) return {};
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

class Collect {
 public:
  explicit Collect(const retrieval::Bundle& bundle) : bundle_(bundle) {}
  // `reference` in any form the tools write (id, "/x.md"); unknown ones are skipped.
  void add(const std::string& reference) {
    const retrieval::Concept* c = bundle_.lookup(reference);
    if (c && std::find(ids_.begin(), ids_.end(), c->id) == ids_.end()) ids_.push_back(c->id);
  }
  void add_each(const json& items, const char* key) {
    if (!items.is_array()) return;
    for (const json& item : items) add(string_at(item, key));
  }
  std::vector<std::string> ids() && { return std::move(ids_); }

 private:
  const retrieval::Bundle& bundle_;
  std::vector<std::string> ids_;
};

}  // namespace

reports::SessionAccess tool_access(std::string_view tool, std::string_view arguments, const agents::ToolResult& result,
                                   const retrieval::Bundle& bundle, std::string_view bundle_name) {
  reports::SessionAccess access{"", std::string(bundle_name), {}};
  if (!result.error.empty()) return access;
  json args = json::parse(arguments, nullptr, false);
  json out = json::parse(result.content, nullptr, false);  // read_concept's text is not JSON: discarded
  Collect ids(bundle);
  if (tool == "open" || tool == "read_concept") {
    access.kind = "read";
    ids.add(tool == "open" ? string_at(out, "id") : string_at(args, "path"));
  } else if (tool == "history") {
    access.kind = "history";
    ids.add(string_at(args, "concept_id"));
  } else if (tool == "remember") {
    access.kind = "write";
    ids.add(string_at(out, "saved"));
  } else {
    access.kind = "list";
    if (tool == "browse" && out.is_object()) ids.add_each(out["concepts"], "id");
    if (tool == "search" || tool == "follow") ids.add_each(out, "id");
    if (tool == "search_concepts") ids.add_each(out, "path");
    if (tool == "get_neighbors" && out.is_object()) {
      ids.add_each(out["outbound"], "path");
      ids.add_each(out["backlinks"], "path");
    }
  }
  access.concepts = std::move(ids).ids();
  return access;
}

}  // namespace okfbench::mcp
