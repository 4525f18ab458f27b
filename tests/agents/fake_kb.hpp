#pragma once
// Test helpers for tests/agents: a byte-per-token counter and a four-concept
// fake knowledge base behind grafito or harnessx tool names.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "agents/toolbox.hpp"
#include "retrieval/token_counter.hpp"

namespace okfbench::agents {
using nlohmann::json;

// One token per byte, so expected counts can be worked out by hand.
class ByteCounter : public retrieval::TokenCounter {
 public:
  std::size_t count(std::string_view text) const override { return text.size(); }
  std::string name() const override { return "bytes"; }
};

// A four-concept knowledge base behind grafito or harnessx tool names, with
// the result shapes BundleTools produces.
class FakeKb : public Toolbox {
 public:
  enum class Style { grafito, harnessx };
  FakeKb(Style style, std::vector<std::string> names) : style_(style), names_(std::move(names)) {}
  std::vector<ToolSpec> specs() const override {
    std::vector<ToolSpec> out;
    for (const auto& n : names_) out.push_back({n, n + " tool.", R"({"type":"object","properties":{}})"});
    return out;
  }
  ToolResult call(std::string_view name, std::string_view arguments) override {
    calls.push_back(std::string(name) + " " + std::string(arguments));
    json args = json::parse(arguments);
    std::string key = style_ == Style::grafito ? "id" : "path";
    if (name == "search" || name == "search_concepts")
      return ok(json::array({{{key, "runbooks/slow"}, {"title", "Slow queries"}, {"description", "Triage"}, {"score", 10.0}},
                             {{key, "glossary/index"}, {"title", "Index"}, {"description", "B-tree"}, {"score", 8.5}},
                             {{key, "glossary/cache"}, {"title", "Cache"}, {"description", "LRU"}, {"score", 4.0}}}));
    if (name == "open" || name == "read_concept") {
      std::string id = args.value(style_ == Style::grafito ? "concept_id" : "path", "");
      if (id == "decisions/replica") return ok(json{{"id", id}, {"body", "Replica lag explained"}});
      return ok(json{{"id", id}, {"body", "Cypher query slow: check the index"}});
    }
    if (name == "follow" || name == "get_neighbors") {
      json list = json::array({{{key, "glossary/cache"}, {"title", "Cache"}, {"description", "LRU"}},
                               {{key, "decisions/replica"}, {"title", "Replica reads"}, {"description", "Lag"}}});
      return ok(style_ == Style::grafito ? list : json{{"outbound", list}, {"backlinks", json::array()}});
    }
    if (name == "browse") {
      if (args.contains("layer"))
        return ok(json{{"layer", args["layer"]},
                       {"subdirs", json::array()},
                       {"concepts", json::array({{{"id", args["layer"].get<std::string>() + "/slow-query"},
                                                  {"title", "Slow query triage"},
                                                  {"description", "What to do"}}})}});
      return ok(json{{"layer", ""}, {"subdirs", json::array({"decisions", "runbooks"})}, {"concepts", json::array()}});
    }
    if (name == "remember") return ok(json{{"saved", args["concept_id"]}});
    return tool_error("unknown");
  }
  std::string default_system_prompt() const override { return "Use the tools."; }
  std::vector<std::string> calls;

 private:
  static ToolResult ok(const json& j) { return {j.dump(), ""}; }
  Style style_;
  std::vector<std::string> names_;
};

inline const std::vector<std::string> kGrafito{"browse", "search", "open", "follow", "history", "remember"};
inline const std::vector<std::string> kHarnessx{"search_concepts", "read_concept", "get_neighbors"};
}  // namespace okfbench::agents
