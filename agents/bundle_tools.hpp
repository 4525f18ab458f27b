#pragma once
// The tools an agent gets over one bundle, in two namings.
//
// grafito surface (grafito.okf BundleTools):
//   browse(layer?)                          {"layer","subdirs":[..],"concepts":[{"id","title","description","type"}]}
//   search(query, k=5)                      [{"id","title","description","score"}]   (k clamped to 1..50)
//   open(concept_id)                        {"id","type","title","description","tags","body","links":[{"id","rel"}],"cites":[..]}
//                                           plus "computation" (contract_json) for an Attested Computation
//   follow(concept_id, direction=out|in, type?)  [{"id","title","description","rel"}]
//   history(concept_id?)                    [{"date","kind","text","scope"}]
//   remember(concept_id, title, body, description?, links?)  {"saved","links"}   (writes into the bundle;
//                                           "saved" is the id as written, "links" the targets as ids)
// harnessx surface (harnessx knowledge tools):
//   search_concepts(query, limit=5, type?, tags?)  [{"path","type","title","description","status","score"}]
//   read_concept(path, max_chars?)          text: a metadata header (title, path, type, status, trust,
//                                           staleness, tags, sources with their credibility signals, and for an
//                                           Attested Computation the contract_lines), "---", then the body; directories
//                                           read their index, ".../log.md" its entries
//   get_neighbors(path)                     {"path","outbound":[{"path","title","rel"}],"backlinks":[..],"unresolved":[{"href","text"}]}
//
// Only open/read_concept return bodies, cut at max_body_chars characters (or
// max_chars) with a marker saying how many were cut and how to get more.
// Every lookup goes through Bundle::lookup / Bundle::index, in memory, so a
// path like "../../etc/passwd" is "not found", never a file. Bad arguments,
// unknown concepts and disabled tools come back as {"error": "..."}.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "agents/agent.hpp"
#include "agents/toolbox.hpp"
#include "retrieval/bundle.hpp"
#include "retrieval/computation.hpp"
#include "retrieval/rerank.hpp"
#include "retrieval/search.hpp"

namespace okfbench::agents {

enum class Surface { grafito, harnessx };

std::optional<Surface> parse_surface(std::string_view name);
const char* to_string(Surface surface);
// All tool names of a surface, in the order they are offered.
std::vector<std::string> surface_tools(Surface surface);

// The part a tool plays in the protocol, whichever surface names it.
enum class ToolRole { none, browse, search, open, follow, history, remember };
// The role of a tool name of either surface; none for any other name.
ToolRole tool_role(std::string_view name);
// The surface whose naming `name` is in; grafito for a name of neither.
Surface surface_of(std::string_view name);
// The argument naming a concept ("concept_id" on grafito, "path" on
// harnessx) and the one bounding a search's hits ("k", "limit").
const char* concept_key(Surface surface);
const char* limit_key(Surface surface);

// Which offered tool plays which part ("" when none does). `surface` is
// harnessx when any offered tool is in harnessx naming.
struct OfferedTools {
  std::string browse, search, open, follow, history, remember;
  Surface surface = Surface::grafito;
};
OfferedTools offered_tools(const std::vector<ToolSpec>& tools);

// A tool list in `surface`'s naming: search <-> search_concepts, open <->
// read_concept, follow <-> get_neighbors; a name already in that naming
// stays. browse, history and remember exist only on grafito: a list with any
// of them has no harnessx form, and `missing` (when given) gets them.
std::optional<std::vector<std::string>> tools_for_surface(const std::vector<std::string>& tools, Surface surface,
                                                          std::vector<std::string>* missing = nullptr);

struct ToolsOptions {
  Surface surface = Surface::grafito;
  std::vector<std::string> include;  // subset of surface_tools(surface); empty = all
  std::size_t max_body_chars = 8000;
  std::size_t index_char_budget = 4000;  // root index.md characters in the harnessx prompt
  std::string now;                       // ISO-8601 time for staleness; "" = the current time
  // The retrieval method of search / search_concepts (retrieval/rerank.hpp);
  // nullptr = BM25F. It must outlive the tools. After a remember() the tools
  // search their own BM25F index, which knows the new concept.
  const retrieval::Retriever* retriever = nullptr;
  std::string bundle_name;               // names the bundle in knowledge-access events
  // A selection policy's verdict over the bundle (lessons, expertise packs;
  // retrieval/selection.hpp); nullptr = none. An excluded concept is never
  // a search hit, open/read_concept/follow/get_neighbors/history of it is an
  // error that says it is excluded and why ({"error": "Concept X is
  // excluded: status:rejected ..."}), and browse, follow, get_neighbors and
  // a synthesized directory listing leave it out. Preferred concepts rank
  // first among search hits. Concepts remember() adds are eligible.
  std::shared_ptr<const retrieval::Selection> selection;
};

class BundleTools : public Toolbox {
 public:
  // Throws UsageError when `include` names a tool the surface does not have.
  // The bundle must outlive the tools; remember() adds to it.
  // `index`: an index built from `bundle` with the default IndexConfig to
  // search instead of building one (it must outlive the tools and is only
  // read; after a remember() the tools search an index of their own).
  BundleTools(retrieval::Bundle& bundle, ToolsOptions options = {}, const retrieval::SearchIndex* index = nullptr);
  ~BundleTools() override;

  std::vector<ToolSpec> specs() const override;
  ToolResult call(std::string_view name, std::string_view arguments) override;
  // grafito: the exploration protocol plus layers(); harnessx: the workflow
  // plus the root index.md cut to index_char_budget.
  std::string default_system_prompt() const override;
  // Every call's event (agents/access.hpp), a failed one included.
  std::optional<KnowledgeAccess> access(std::string_view name, std::string_view arguments,
                                        const ToolResult& result) const override;

  const ToolsOptions& options() const { return options_; }

  struct Impl;

 private:
  retrieval::Bundle& bundle_;
  ToolsOptions options_;
  std::unique_ptr<Impl> impl_;
};

// A bundle and the name the tools, results and events call it by.
struct ToolBundle {
  std::string name;
  retrieval::Bundle* bundle = nullptr;  // must outlive the tools; remember() adds to it
};

// The default system prompt over `bundles` with the `enabled` tools. One
// bundle: grafito's exploration protocol plus layers(), or harnessx's
// workflow plus the root index.md cut to index_char_budget. Several: the
// same, with every bundle's layers (grafito) or root index (harnessx), and
// a line that names the bundles and says every tool takes `bundle`
// (agents/multi_bundle_tools.hpp).
std::string system_prompt(const std::vector<ToolBundle>& bundles, const std::vector<ToolSpec>& enabled,
                          const ToolsOptions& options);

// Concept ids (canonical, as Bundle::concepts() names them) that the run
// opened successfully with open / read_concept, in first-open order.
std::vector<std::string> opened_concepts(const AgentRun& run, const retrieval::Bundle& bundle);

// An Attested Computation's contract as `open` (the tool and the command)
// returns it: {"runtime", "parameters": [{"name","type","required","description"}],
// "computation_file", "code", "code_language", "executor": {"resource","receipt"},
// "attester": {"resource"}, "problems"}.
nlohmann::ordered_json contract_json(const retrieval::ComputationContract& contract);

// Cuts `text` to at most `max_chars` UTF-8 characters; when it cuts, appends
// "\n[... truncated: N of M characters not shown; <hint>]".
std::string cut_text(std::string_view text, std::size_t max_chars, std::string_view hint);

}  // namespace okfbench::agents
