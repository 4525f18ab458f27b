#include "retrieval/computation.hpp"

#include <cmark-gfm.h>
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cctype>
#include <memory>

namespace okfbench::retrieval {
namespace {

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// The YAML text Concept::extra keeps for `key`, parsed; an undefined node when absent or unreadable.
YAML::Node extra_node(const Concept& item, const std::string& key) {
  auto it = item.extra.find(key);
  if (it == item.extra.end()) return YAML::Node(YAML::NodeType::Undefined);
  try {
    return YAML::Load(it->second);
  } catch (const YAML::Exception&) {
    return YAML::Node(YAML::NodeType::Undefined);
  }
}

std::string scalar(const YAML::Node& node) { return node && node.IsScalar() ? node.Scalar() : std::string(); }

void read_parameters(const YAML::Node& node, ComputationContract& out) {
  if (!node) return;
  if (!node.IsSequence()) {
    out.problems.push_back("`parameters` is not a list; write `parameters: [{ name, type, required }]`");
    return;
  }
  for (const YAML::Node& entry : node) {
    if (!entry.IsMap() || scalar(entry["name"]).empty()) {
      out.problems.push_back("a `parameters` entry has no `name`; it was left out");
      continue;
    }
    const std::string required = lower(scalar(entry["required"]));
    out.parameters.push_back({scalar(entry["name"]), scalar(entry["type"]), required == "true" || required == "yes",
                              scalar(entry["description"])});
  }
}

void read_executor(const YAML::Node& node, ComputationContract& out) {
  if (!node) return;
  if (!node.IsMap()) {
    out.problems.push_back("`executor` is not a mapping; write `executor: { resource, receipt: [...] }`");
    return;
  }
  out.executor = scalar(node["resource"]);
  const YAML::Node receipt = node["receipt"];
  if (receipt && receipt.IsSequence()) {
    for (const YAML::Node& field : receipt)
      if (field.IsScalar()) out.receipt.push_back(field.Scalar());
  } else if (receipt) {
    out.problems.push_back("`executor.receipt` is not a list of field names");
  }
}

struct NodeFree {
  void operator()(cmark_node* node) const { cmark_node_free(node); }
};

std::string heading_text(cmark_node* heading) {
  std::string text;
  for (cmark_node* child = cmark_node_first_child(heading); child; child = cmark_node_next(child))
    if (const char* literal = cmark_node_get_literal(child)) text += literal;
  return text;
}

// The first code block among the document's blocks after a heading that
// reads "Computation", before the next heading of the same or a higher level.
void read_code(const std::string& body, ComputationContract& out) {
  std::unique_ptr<cmark_node, NodeFree> document(cmark_parse_document(body.data(), body.size(), CMARK_OPT_DEFAULT));
  if (!document) return;
  int level = 0;  // of the Computation heading we are under; 0 = none
  for (cmark_node* node = cmark_node_first_child(document.get()); node; node = cmark_node_next(node)) {
    if (cmark_node_get_type(node) == CMARK_NODE_HEADING) {
      const int this_level = cmark_node_get_heading_level(node);
      if (lower(heading_text(node)) == "computation") {
        level = this_level;
      } else if (level > 0 && this_level <= level) {
        level = 0;
      }
    } else if (level > 0 && cmark_node_get_type(node) == CMARK_NODE_CODE_BLOCK) {
      out.code = cmark_node_get_literal(node) ? cmark_node_get_literal(node) : "";
      out.code_language = cmark_node_get_fence_info(node) ? cmark_node_get_fence_info(node) : "";
      return;
    }
  }
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

}  // namespace

std::string contract_lines(const ComputationContract& c) {
  std::vector<std::string> parameters;
  for (const ComputationParameter& p : c.parameters) {
    std::string detail = p.type;
    if (p.required) detail += detail.empty() ? "required" : ", required";
    parameters.push_back(detail.empty() ? p.name : fmt::format("{} ({})", p.name, detail));
  }
  std::string computation = !c.computation_file.empty() ? "the file " + c.computation_file
                            : c.code.empty()            ? "-"
                                                        : fmt::format("the {}block under # Computation",
                                                                      c.code_language.empty() ? "" : c.code_language + " ");
  std::string out = fmt::format("runtime: {}\nparameters: {}\ncomputation: {}\nexecutor: {}{}\nattester: {}\n",
                                c.runtime.empty() ? "-" : c.runtime, parameters.empty() ? "-" : joined(parameters),
                                computation, c.executor.empty() ? "-" : c.executor,
                                c.receipt.empty() ? "" : "; receipt: " + joined(c.receipt),
                                c.attester.empty() ? "-" : c.attester);
  for (const std::string& problem : c.problems) out += "contract problem: " + problem + "\n";
  return out;
}

std::string source_text(const Source& s) {
  std::vector<std::string> details;
  if (!s.resource.empty()) details.push_back(s.resource);
  if (!s.author.empty()) details.push_back("author " + s.author);
  if (!s.last_modified.empty()) details.push_back("last_modified " + s.last_modified);
  if (!s.usage_count.empty()) details.push_back("usage_count " + s.usage_count);
  std::string out = s.id;
  std::string inner;
  for (const std::string& d : details) inner += (inner.empty() ? "" : "; ") + d;
  if (!inner.empty()) out += out.empty() ? inner : " (" + inner + ")";
  return out;
}

bool is_attested_computation(const Concept& item) { return lower(item.type) == "attested computation"; }

std::optional<ComputationContract> computation_contract(const Concept& item) {
  if (!is_attested_computation(item)) return std::nullopt;
  ComputationContract out;
  out.runtime = scalar(extra_node(item, "runtime"));
  if (out.runtime.empty()) out.problems.push_back("no `runtime`; an Attested Computation must say how it runs");
  read_parameters(extra_node(item, "parameters"), out);
  out.computation_file = scalar(extra_node(item, "computation"));
  read_executor(extra_node(item, "executor"), out);
  const YAML::Node attester = extra_node(item, "attester");
  if (attester && attester.IsMap()) {
    out.attester = scalar(attester["resource"]);
  } else if (attester) {
    out.problems.push_back("`attester` is not a mapping; write `attester: { resource }`");
  }
  read_code(item.body, out);
  if (out.code.empty() && out.computation_file.empty())
    out.problems.push_back("no computation: neither a code block under `# Computation` nor a `computation:` file");
  return out;
}

}  // namespace okfbench::retrieval
