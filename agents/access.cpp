#include "agents/access.hpp"

#include <nlohmann/json.hpp>

#include "agents/bundle_tools.hpp"

namespace okfbench::agents {
namespace {
using nlohmann::json;

std::string text_of(const json& object, const char* key) {
  if (!object.is_object()) return {};
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::int64_t size_of(const json& value) { return value.is_array() ? static_cast<std::int64_t>(value.size()) : 0; }

// The size of the list object[key]; 0 when there is none.
std::int64_t size_of(const json& object, const char* key) {
  if (!object.is_object()) return 0;
  auto it = object.find(key);
  return it == object.end() ? 0 : size_of(*it);
}

std::int64_t characters(std::string_view text) {
  std::int64_t n = 0;
  for (unsigned char c : text) n += (c & 0xC0) != 0x80 ? 1 : 0;  // count UTF-8 lead bytes
  return n;
}

// read_concept answers text: a header, "---", then the body.
std::int64_t read_concept_body_chars(std::string_view content) {
  const auto cut = content.find("\n---\n");
  return cut == std::string_view::npos ? 0 : characters(content.substr(cut + 5));
}

}  // namespace

KnowledgeAccess knowledge_access(std::string_view tool, std::string_view arguments, std::string_view content,
                                 std::string_view error, std::string_view bundle) {
  KnowledgeAccess out;
  out.tool = std::string(tool);
  out.bundle = std::string(bundle);
  out.found = error.empty();
  const json args = json::parse(arguments, nullptr, false);
  const bool text_result = tool == "read_concept";
  const json result = out.found && !text_result ? json::parse(content, nullptr, false) : json();
  const ToolRole role = tool_role(tool);
  const char* id_key = concept_key(surface_of(tool));
  if (role == ToolRole::search) {
    out.query = text_of(args, "query");
    out.hits = out.found ? size_of(result) : 0;
  } else if (role == ToolRole::open) {
    out.path = text_of(args, id_key);
    out.body_chars = !out.found ? 0 : text_result ? read_concept_body_chars(content) : characters(text_of(result, "body"));
  } else if (role == ToolRole::follow) {
    out.path = text_of(args, id_key);
    out.hits = !out.found                ? 0
               : tool == "get_neighbors" ? size_of(result, "outbound") + size_of(result, "backlinks")
                                         : size_of(result);
  } else if (role == ToolRole::browse) {
    out.path = text_of(args, "layer");
    out.hits = out.found ? size_of(result, "concepts") : 0;
  } else if (role == ToolRole::history) {
    out.path = text_of(args, "concept_id");
    out.hits = out.found ? size_of(result) : 0;
  } else if (role == ToolRole::remember) {
    out.path = text_of(args, "concept_id");
  }
  return out;
}

}  // namespace okfbench::agents
