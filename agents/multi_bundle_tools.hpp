#pragma once
// The tools over several bundles at once (harnessx's KnowledgeManager with
// more than one bundle): the tools of one surface, as BundleTools has them,
// each with a `bundle` argument naming one of the loaded bundles.
//
//   search / search_concepts without `bundle`: one combined BM25F index over
//     every bundle with shared statistics (document frequencies and average
//     field lengths over all of them), so scores compare across bundles;
//     with `bundle`: that bundle's own index, the harnessx tool's scope.
//   every other tool: `bundle` is required; a missing or unknown one is an
//     error that lists the loaded bundles.
//   Results name their bundle: an object a tool returns (an opened concept,
//     a listing, get_neighbors' answer) and each object of a list it returns
//     (hits, follow's concepts) carry "bundle"; read_concept's text has a
//     "bundle: NAME" line after its first line.
// The system prompt lists the bundles and says that the tools take `bundle`
// (agents::system_prompt). Knowledge-access events name the bundle of the
// call, "*" for a search over all of them.
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "agents/bundle_tools.hpp"
#include "retrieval/search.hpp"

namespace okfbench::agents {

class MultiBundleTools : public Toolbox {
 public:
  // Throws UsageError for fewer than two bundles, two with one name, or an
  // `options.include` the surface does not have. options.retriever must be
  // nullptr (a retrieval method other than BM25F takes one bundle), and so
  // must options.selection (a policy's ids are one bundle's).
  MultiBundleTools(std::vector<ToolBundle> bundles, ToolsOptions options);
  ~MultiBundleTools() override;

  std::vector<ToolSpec> specs() const override;
  ToolResult call(std::string_view name, std::string_view arguments) override;
  std::string default_system_prompt() const override;
  std::optional<KnowledgeAccess> access(std::string_view name, std::string_view arguments,
                                        const ToolResult& result) const override;

  // The concepts the run opened successfully, as {bundle, canonical id}, in
  // first-open order.
  std::vector<std::pair<std::string, std::string>> opened(const AgentRun& run) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace okfbench::agents
