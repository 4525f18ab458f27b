#include "agents/bundle_tools.hpp"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>

#include "agents/sim_model.hpp"
#include "core/error.hpp"
#include "retrieval/tokens.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::agents {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

fs::path demo() { return test::source_dir() / "datasets" / "bundles" / "demo"; }

// A writable copy of the demo bundle, for remember().
fs::path demo_copy() {
  fs::path dir = test::fresh_dir("demo-copy") / "demo";
  fs::copy(demo(), dir, fs::copy_options::recursive);
  return dir;
}

struct Demo {
  explicit Demo(ToolsOptions options = {}, fs::path root = demo())
      : bundle(retrieval::Bundle::load(root)), tools(bundle, std::move(options)) {}
  json call(std::string_view name, const json& args) {
    ToolResult r = tools.call(name, args.dump());
    last_error = r.error;
    return json::parse(r.content, nullptr, false);
  }
  std::string text(std::string_view name, const json& args) {
    ToolResult r = tools.call(name, args.dump());
    last_error = r.error;
    return r.content;
  }
  retrieval::Bundle bundle;
  BundleTools tools;
  std::string last_error;
};

std::vector<std::string> names(const std::vector<ToolSpec>& specs) {
  std::vector<std::string> out;
  for (const auto& s : specs) out.push_back(s.name);
  return out;
}

TEST(BundleTools, SurfacesAndSubsets) {
  Demo all;
  EXPECT_EQ(names(all.tools.specs()), surface_tools(Surface::grafito));
  for (const ToolSpec& s : all.tools.specs()) EXPECT_TRUE(json::parse(s.parameters).is_object()) << s.name;
  ToolsOptions two;
  two.include = {"open", "search"};
  Demo subset(two);
  EXPECT_EQ(names(subset.tools.specs()), (std::vector<std::string>{"search", "open"}));
  EXPECT_EQ(subset.text("browse", json::object()),
            R"({"error":"tool 'browse' is not enabled; enabled tools: search, open"})");
  ToolsOptions harnessx;
  harnessx.surface = Surface::harnessx;
  EXPECT_EQ(names(Demo(harnessx).tools.specs()),
            (std::vector<std::string>{"search_concepts", "read_concept", "get_neighbors"}));
  ToolsOptions wrong;
  wrong.include = {"read_concept"};
  retrieval::Bundle bundle = retrieval::Bundle::load(demo());
  EXPECT_THROW(BundleTools(bundle, wrong), UsageError);
}

TEST(BundleTools, SearchReturnsMetadataNeverBodies) {
  Demo d;
  json hits = d.call("search", {{"query", "slow query after a data load"}});
  ASSERT_TRUE(hits.is_array());
  ASSERT_EQ(hits.size(), 5u);
  bool found = false;  // exact ranking is the search engine's business (tests/retrieval)
  for (const json& h : hits) {
    found = found || h["id"] == "runbooks/slow-queries";
    EXPECT_EQ(h.size(), 4u) << h.dump();  // id, title, description, score
    EXPECT_TRUE(h["score"].is_number());
  }
  EXPECT_TRUE(found) << hits.dump();
  EXPECT_GE(hits[0]["score"].get<double>(), hits[1]["score"].get<double>());
  EXPECT_EQ(d.call("search", {{"query", "query"}, {"k", 0}}).size(), 1u);  // clamped to 1..50
  EXPECT_LE(d.call("search", {{"query", "query"}, {"k", 1e300}}).size(), 50u);
  EXPECT_EQ(d.call("search", {{"query", "zzzzqx"}}), json::array());
  d.call("search", {{"k", 3}});
  EXPECT_EQ(d.last_error, "search: 'query' is required");
  d.call("search", {{"query", 7}});
  EXPECT_EQ(d.last_error, "search: 'query' must be a string");
  EXPECT_EQ(d.tools.call("search", "not json").error, "search: arguments must be a JSON object, got: not json");
}

TEST(BundleTools, OpenReturnsBodyLinksAndCitesAndNeverEscapesTheBundle) {
  Demo d;
  json c = d.call("open", {{"concept_id", "runbooks/slow-queries"}});
  EXPECT_EQ(c["title"], "Triaging a slow graph query");
  EXPECT_EQ(c["type"], "Playbook");
  EXPECT_NE(c["body"].get<std::string>().find("# Steps"), std::string::npos);
  bool links_bulk_load = false;
  for (const json& l : c["links"]) {
    EXPECT_NE(l["rel"], "CITES");
    links_bulk_load = links_bulk_load || l["id"] == "runbooks/bulk-load";
  }
  EXPECT_TRUE(links_bulk_load);
  EXPECT_EQ(d.call("open", {{"concept_id", "/runbooks/slow-queries.md"}})["id"], "runbooks/slow-queries");
  for (const char* evil : {"../../etc/passwd", "/../etc/passwd", "runbooks/../../../etc/passwd", "/etc/passwd"}) {
    json e = d.call("open", {{"concept_id", evil}});
    EXPECT_EQ(e, (json{{"error", std::string("Concept not found: ") + evil}}));
  }
}

// A 100,000-character concept id came back whole in the error, to be sent to
// the model again with every later turn.
TEST(ResourceBounds, ToolErrorsEchoAtMostAFewHundredCharactersOfAnArgument) {
  Demo d;
  const std::string id(100'000, 'x');
  for (const char* tool : {"open", "follow"}) {
    const std::string text = d.text(tool, {{"concept_id", id}, {"direction", id}});
    EXPECT_LT(text.size(), 400u) << tool;
    EXPECT_NE(text.find("(100000 bytes)"), std::string::npos) << text;
  }
  EXPECT_LT(d.text("browse", {{"layer", id}}).size(), 1000u);
  const std::string nul = d.text("open", {{"concept_id", std::string("a\0b", 3)}});
  EXPECT_EQ(nul.find('\0'), std::string::npos);  // no raw control character goes back either
  EXPECT_NE(nul.find("a\xEF\xBF\xBD" "b"), std::string::npos) << nul;
}

// The concept lists its `sources` entry and the footnote that marks it in the
// text ("[^dashboard]"); open shows that citation once.
TEST(BundleTools, OpenListsEachCitationOnce) {
  Demo d;
  ASSERT_EQ(d.bundle.find("metrics/query-latency-p95")->citations.size(), 2u);
  EXPECT_EQ(d.call("open", {{"concept_id", "metrics/query-latency-p95"}})["cites"],
            (json{"dashboard: Query performance dashboard"}));
  fs::path dir = test::fresh_dir("open-cites");
  test::write_file(dir / "a.md",
                   "---\ntype: Note\nsources:\n  - {id: s1, title: Spec}\n---\nSee[^s1] and[^n2].\n\n"
                   "# Citations\n\n- Book\n- Book\n- Paper\n\n[^s1]: The spec\n[^n2]: A note\n");
  Demo mine({}, dir);
  EXPECT_EQ(mine.call("open", {{"concept_id", "a"}})["cites"],
            (json{"s1: Spec", "n2: A note", "Book", "Paper"}));
}

TEST(BundleTools, BodiesAreCutWithAMarker) {
  ToolsOptions small;
  small.max_body_chars = 100;
  Demo d(small);
  std::string body = d.call("open", {{"concept_id", "runbooks/slow-queries"}})["body"];
  const retrieval::Concept* c = d.bundle.find("runbooks/slow-queries");
  std::size_t total = c->body.size();  // ASCII body: bytes == characters
  EXPECT_EQ(body, c->body.substr(0, 100) +
                      fmt::format("\n[... truncated: {} of {} characters not shown; the rest is not available through "
                                  "open]",
                                  total - 100, total));
  EXPECT_EQ(cut_text("héllo wörld", 4, "h"), "héll\n[... truncated: 7 of 11 characters not shown; h]");
  EXPECT_EQ(cut_text("short", 5, "h"), "short");
}

TEST(BundleTools, FollowBrowseAndHistory) {
  Demo d;
  json out = d.call("follow", {{"concept_id", "runbooks/slow-queries"}});
  ASSERT_TRUE(out.is_array());
  ASSERT_FALSE(out.empty());
  for (const json& n : out) EXPECT_FALSE(n.contains("body"));
  json in = d.call("follow", {{"concept_id", "runbooks/bulk-load"}, {"direction", "in"}});
  bool from_slow = false;
  for (const json& n : in) from_slow = from_slow || n["id"] == "runbooks/slow-queries";
  EXPECT_TRUE(from_slow);
  d.call("follow", {{"concept_id", "runbooks/slow-queries"}, {"direction", "sideways"}});
  EXPECT_EQ(d.last_error, "follow: direction must be \"out\" or \"in\", got \"sideways\"");

  json root = d.call("browse", json::object());
  EXPECT_NE(std::find(root["subdirs"].begin(), root["subdirs"].end(), "runbooks"), root["subdirs"].end());
  json runbooks = d.call("browse", {{"layer", "runbooks"}});
  EXPECT_EQ(runbooks["layer"], "runbooks");
  EXPECT_GE(runbooks["concepts"].size(), 8u);
  d.call("browse", {{"layer", "../.."}});
  EXPECT_NE(d.last_error.find("no directory '../..'"), std::string::npos);

  json log = d.call("history", json::object());
  ASSERT_FALSE(log.empty());
  EXPECT_EQ(log[0]["date"], "2026-11-20");
  json about = d.call("history", {{"concept_id", "decisions/0003-nightly-statistics"}});
  ASSERT_FALSE(about.empty());
  EXPECT_EQ(about[0]["kind"], "Deprecation");
}

TEST(BundleTools, RememberWritesInsideTheBundleAndIsSearchable) {
  fs::path root = demo_copy();
  Demo d({}, root);
  json saved = d.call("remember", {{"concept_id", "notes/zebra-checklist"},
                                   {"title", "Zebra checklist"},
                                   {"body", "Quagga steps for zebra incidents."},
                                   {"links", {"runbooks/slow-queries"}}});
  EXPECT_EQ(saved["saved"], "notes/zebra-checklist") << saved.dump();
  EXPECT_TRUE(fs::exists(root / "notes" / "zebra-checklist.md"));
  EXPECT_EQ(d.call("search", {{"query", "zebra quagga"}})[0]["id"], "notes/zebra-checklist");
  d.call("remember", {{"concept_id", "../escaped"}, {"title", "x"}, {"body", "y"}});
  EXPECT_FALSE(d.last_error.empty());
  EXPECT_FALSE(fs::exists(root.parent_path() / "escaped.md"));
  d.call("remember", {{"concept_id", "notes/x"}, {"title", "x"}});
  EXPECT_EQ(d.last_error, "remember: 'body' is required");
}

// A leading '/' names the bundle root in OKF: "/abs/path" is saved as
// abs/path, and the answer says so, so open() with it finds the concept.
TEST(BundleTools, RememberAnswersTheIdItWrote) {
  fs::path root = demo_copy();
  Demo d({}, root);
  json saved = d.call("remember", {{"concept_id", "/abs/path"},
                                   {"title", "Abs"},
                                   {"body", "b"},
                                   {"links", {"/runbooks/slow-queries.md"}}});
  EXPECT_EQ(saved, (json{{"saved", "abs/path"}, {"links", {"runbooks/slow-queries"}}})) << d.last_error;
  EXPECT_TRUE(fs::is_regular_file(root / "abs" / "path.md"));
  EXPECT_EQ(d.call("open", {{"concept_id", saved["saved"]}})["id"], "abs/path");
}

// Refusals and errors of the system are {"error": ...} results; nothing is
// made outside the bundle on the way.
TEST(BundleTools, RememberFailuresAreToolErrors) {
  fs::path root = demo_copy();
  fs::path outside = test::fresh_dir("tools-outside");
  fs::create_directory_symlink(outside, root / "out");
  Demo d({}, root);
  const std::map<std::string, std::string> cases = {
      {std::string(300, 'x'), "ids are at most 240 bytes"},
      {"notes/" + std::string(230, 'y'), "each '/'-separated part is at most 100 bytes"},
      {"out/deep/x", "is a symbolic link or a file"},
      {"a\nb", "control characters"},
  };
  for (const auto& [id, why] : cases) {
    ToolResult r = d.tools.call("remember", json{{"concept_id", id}, {"title", "t"}, {"body", "b"}}.dump());
    EXPECT_THAT(r.error, ::testing::HasSubstr(why)) << id;
    EXPECT_EQ(json::parse(r.content), (json{{"error", r.error}}));
  }
  EXPECT_TRUE(fs::is_empty(outside));
}

// Replies with the scripted responses in order.
class ScriptedModel : public ChatModel {
 public:
  explicit ScriptedModel(std::vector<ChatResponse> script) : script_(std::move(script)) {}
  ChatResponse chat(const ChatRequest&) override {
    if (next_ >= script_.size()) throw InputError("script exhausted");
    return script_[next_++];
  }
  std::string name() const override { return "scripted"; }

 private:
  std::vector<ChatResponse> script_;
  std::size_t next_ = 0;
};

// A remember that fails (a 300-character id) is one failed tool call: the
// run goes on, answers, and keeps every turn's usage and every call.
TEST(BundleTools, AFailedRememberKeepsTheAgentRunAndItsAccounting) {
  fs::path root = demo_copy();
  retrieval::Bundle bundle = retrieval::Bundle::load(root);
  BundleTools tools(bundle);
  std::string remember_args = json{{"concept_id", std::string(300, 'n')}, {"title", "t"}, {"body", "b"}}.dump();
  ScriptedModel model({
      ChatResponse{Message{Role::assistant, "", {{"c1", "remember", remember_args}, {"c2", "search", R"({"query":"slow"})"}}, {}, {}},
                   Usage{500, 0, std::nullopt, 20}, StopReason::tool_calls, "m"},
      ChatResponse{Message{Role::assistant, "Could not save it.", {}, {}, {}}, Usage{700, 0, std::nullopt, 5},
                   StopReason::end_turn, "m"},
  });
  AgentRun run = run_agent(model, tools, "save a note");
  EXPECT_EQ(run.stop, AgentStop::answered);
  EXPECT_EQ(run.answer, "Could not save it.");
  ASSERT_EQ(run.turns.size(), 2u);
  EXPECT_EQ(run.turns[1].usage.input_tokens, 700);
  ASSERT_EQ(run.tool_calls.size(), 2u);
  EXPECT_THAT(run.tool_calls[0].error, ::testing::HasSubstr("ids are at most 240 bytes"));
  EXPECT_EQ(run.tool_calls[1].error, "");
  RunSummary s = summary(run);
  EXPECT_EQ(s.errors, 1u);
  EXPECT_EQ(s.input_per_turn[0], 500);  // the first call's input is what the second re-sent
  EXPECT_EQ(std::distance(fs::directory_iterator(root), fs::directory_iterator()),
            std::distance(fs::directory_iterator(demo()), fs::directory_iterator()));
}

// The runner shares the bundle's one index with every tool configuration.
TEST(BundleTools, SharedIndexGivesTheSameHitsAndStaysUntouchedByRemember) {
  fs::path root = demo_copy();
  retrieval::Bundle bundle = retrieval::Bundle::load(root);
  const retrieval::SearchIndex shared = retrieval::SearchIndex::build(bundle);
  const std::size_t documents = shared.stats().documents;
  BundleTools own(bundle);
  BundleTools borrowed(bundle, {}, &shared);
  for (const char* query : {"slow cypher query", "deprecated policy", "zebra"}) {
    std::string args = json{{"query", query}, {"k", 10}}.dump();
    EXPECT_EQ(borrowed.call("search", args).content, own.call("search", args).content) << query;
  }
  ToolResult saved = borrowed.call("remember", json{{"concept_id", "notes/zebra-checklist"},
                                                    {"title", "Zebra checklist"},
                                                    {"body", "Quagga steps for zebra incidents."}}
                                                   .dump());
  ASSERT_TRUE(saved.error.empty()) << saved.error;
  json hits = json::parse(borrowed.call("search", json{{"query", "zebra quagga"}}.dump()).content);
  EXPECT_EQ(hits[0]["id"], "notes/zebra-checklist");  // the tools now search their own index
  EXPECT_EQ(shared.stats().documents, documents);  // the shared one is never written
}

TEST(BundleTools, HarnessxSurface) {
  ToolsOptions o;
  o.surface = Surface::harnessx;
  o.now = "2026-12-01T00:00:00Z";
  Demo d(o);
  json hits = d.call("search_concepts", {{"query", "slow query"}, {"type", "playbook"}, {"limit", 3}});
  ASSERT_FALSE(hits.empty());
  for (const json& h : hits) EXPECT_EQ(h["type"], "Playbook");
  EXPECT_EQ(hits[0]["path"], "/runbooks/slow-queries.md");
  EXPECT_EQ(hits[0]["status"], "stable");

  std::string text = d.text("read_concept", {{"path", "/runbooks/slow-queries.md"}});
  EXPECT_EQ(text.rfind("# Triaging a slow graph query\npath: /runbooks/slow-queries.md\ntype: Playbook\nstatus: stable\n"
                       "trust: human-reviewed\nfreshness: current (stale_after 2027-06-30T00:00:00Z)\n"
                       "tags: oncall, performance, query, slow-query\nsources: incident-231 "
                       "(https://tickets.larkspur.example/INC-231; author human:mara.okafor); planner-notes (/architecture/query-planner.md)\n---\n",
                       0),
            0u)
      << text.substr(0, 400);
  std::string cut = d.text("read_concept", {{"path", "runbooks/slow-queries"}, {"max_chars", 10}});
  EXPECT_NE(cut.find("call read_concept with a larger max_chars (now 10) to read more"), std::string::npos);
  EXPECT_NE(d.text("read_concept", {{"path", "runbooks"}}).find("# Index of /runbooks"), std::string::npos);
  EXPECT_NE(d.text("read_concept", {{"path", "/log.md"}}).find("2026-11-20 Verified:"), std::string::npos);
  EXPECT_EQ(d.text("read_concept", {{"path", "/../etc/passwd"}}), R"({"error":"Concept not found: /../etc/passwd"})");
  EXPECT_EQ(d.text("read_concept", {{"path", "../log.md"}}), R"({"error":"Concept not found: ../log.md"})");

  json n = d.call("get_neighbors", {{"path", "/runbooks/slow-queries.md"}});
  EXPECT_EQ(n["path"], "/runbooks/slow-queries.md");
  EXPECT_FALSE(n["outbound"].empty());
  EXPECT_TRUE(n["backlinks"].is_array());
  EXPECT_TRUE(n["unresolved"].is_array());
  EXPECT_EQ(n["outbound"][0]["path"].get<std::string>().front(), '/');
}

// ".." inside a name is an ordinary name; only a part that is ".." climbs.
TEST(BundleTools, NamesWithDotsInsideAreOrdinary) {
  const fs::path root = test::fresh_dir("dots") / "kb";
  test::write_file(root / "v1..v2" / "notes..md", "---\ntype: Note\ntitle: Release notes\n---\nWhat changed.\n");
  test::write_file(root / "v1..v2" / "log.md", "# Log\n\n## 2026-11-01\n* **Creation**: Wrote the notes.\n");
  ToolsOptions o;
  o.surface = Surface::harnessx;
  Demo d(o, root);
  EXPECT_NE(d.text("read_concept", {{"path", "/v1..v2/notes..md"}}).find("# Release notes\n"), std::string::npos);
  EXPECT_EQ(d.text("read_concept", {{"path", "/v1..v2/log.md"}}), "# Log of /v1..v2/\n---\n2026-11-01 Creation: Wrote the notes.\n");
  EXPECT_EQ(d.text("read_concept", {{"path", "/v1../log.md"}}), R"({"error":"Concept not found: /v1../log.md"})");
}

TEST(BundleTools, DefaultSystemPrompts) {
  Demo grafito;
  std::string g = grafito.tools.default_system_prompt();
  EXPECT_NE(g.find(R"("runbooks":)"), std::string::npos) << g;
  EXPECT_NE(g.find("remember"), std::string::npos);
  ToolsOptions two;
  two.include = {"search", "open"};
  std::string small = Demo(two).tools.default_system_prompt();
  EXPECT_EQ(small.find("follow"), std::string::npos) << small;
  EXPECT_EQ(small.find("remember"), std::string::npos) << small;
  ToolsOptions h;
  h.surface = Surface::harnessx;
  h.index_char_budget = 50;
  std::string x = Demo(h).tools.default_system_prompt();
  EXPECT_NE(x.find("<knowledge>"), std::string::npos);
  EXPECT_NE(x.find("# Larkspur operations bundle"), std::string::npos);
  EXPECT_NE(x.find("[... truncated:"), std::string::npos);
}

TEST(BundleTools, SimAnswersTheSeedQuestionOnTheDemoBundle) {
  auto counter = retrieval::make_counter("o200k_base");
  Demo d;
  SimModel sim({}, *counter);
  AgentOptions options;
  options.counter = counter.get();
  AgentRun run = run_agent(sim, d.tools,
                           "A production Cypher query got slow after a data load. What should I do, step by step?",
                           options);
  EXPECT_EQ(run.stop, AgentStop::answered);
  EXPECT_NE(run.answer.find("[runbooks/slow-queries]"), std::string::npos) << run.answer;
  std::vector<std::string> opened = opened_concepts(run, d.bundle);
  ASSERT_FALSE(opened.empty());
  EXPECT_EQ(opened[0], "runbooks/slow-queries");
  RunSummary s = summary(run);
  EXPECT_EQ(s.errors, 0u);
  EXPECT_GT(*s.usage.input_tokens, 0);
  EXPECT_EQ(s.input_per_turn.size(), run.turns.size());
  // Same inputs, same run, token for token.
  SimModel again({}, *counter);
  AgentRun second = run_agent(again, d.tools,
                              "A production Cypher query got slow after a data load. What should I do, step by step?",
                              options);
  EXPECT_EQ(second.turns, run.turns);
  EXPECT_EQ(second.tool_calls, run.tool_calls);
}

TEST(BundleTools, ToolListsMapBetweenSurfaces) {
  EXPECT_EQ(tools_for_surface({"search", "open", "follow"}, Surface::harnessx),
            (std::vector<std::string>{"search_concepts", "read_concept", "get_neighbors"}));
  EXPECT_EQ(tools_for_surface({"read_concept", "search_concepts"}, Surface::grafito),
            (std::vector<std::string>{"open", "search"}));
  EXPECT_EQ(tools_for_surface({"search", "read_concept"}, Surface::grafito), (std::vector<std::string>{"search", "open"}));
  std::vector<std::string> missing;
  EXPECT_EQ(tools_for_surface({"browse", "search", "remember"}, Surface::harnessx, &missing), std::nullopt);
  EXPECT_EQ(missing, (std::vector<std::string>{"browse", "remember"}));
}

TEST(BundleTools, EveryToolNameHasOneRoleAndOneSurface) {
  EXPECT_EQ(tool_role("search"), ToolRole::search);
  EXPECT_EQ(tool_role("search_concepts"), ToolRole::search);
  EXPECT_EQ(tool_role("read_concept"), ToolRole::open);
  EXPECT_EQ(tool_role("get_neighbors"), ToolRole::follow);
  EXPECT_EQ(tool_role("history"), ToolRole::history);
  EXPECT_EQ(tool_role("Search"), ToolRole::none);
  EXPECT_EQ(tool_role("read"), ToolRole::none);
  EXPECT_EQ(surface_of("get_neighbors"), Surface::harnessx);
  EXPECT_EQ(surface_of("follow"), Surface::grafito);
  EXPECT_STREQ(concept_key(Surface::harnessx), "path");
  EXPECT_STREQ(limit_key(Surface::grafito), "k");
  for (Surface s : {Surface::grafito, Surface::harnessx})
    for (const std::string& name : surface_tools(s)) {
      EXPECT_NE(tool_role(name), ToolRole::none) << name;
      EXPECT_EQ(surface_of(name), s) << name;
    }
}

TEST(BundleTools, OfferedToolsSayWhichToolPlaysWhichPart) {
  const OfferedTools harnessx = offered_tools({{"read_concept", "", "{}"}, {"get_neighbors", "", "{}"}, {"other", "", "{}"}});
  EXPECT_EQ(harnessx.surface, Surface::harnessx);
  EXPECT_EQ(harnessx.open, "read_concept");
  EXPECT_EQ(harnessx.follow, "get_neighbors");
  EXPECT_EQ(harnessx.search, "");
  const OfferedTools grafito = offered_tools({{"browse", "", "{}"}, {"remember", "", "{}"}});
  EXPECT_EQ(grafito.surface, Surface::grafito);
  EXPECT_EQ(grafito.browse, "browse");
  EXPECT_EQ(grafito.remember, "remember");
  EXPECT_EQ(grafito.open, "");
}

TEST(BundleTools, AttestedComputationContractsInOpenAndReadConcept) {
  const fs::path sales = test::source_dir() / "tests/data/kb/sales";
  ToolsOptions harnessx;
  harnessx.surface = Surface::harnessx;
  harnessx.now = "2026-11-29T00:00:00Z";
  Demo x(harnessx, sales);
  EXPECT_EQ(x.text("read_concept", {{"path", "/computations/revenue-year.md"}, {"max_chars", 20}}),
            "# Revenue for a year\npath: /computations/revenue-year.md\ntype: Attested Computation\nstatus: stable\n"
            "trust: unverified\nfreshness: no stale_after\ntags: finance, attested\n"
            "sources: policy (policies/revenue.md; author human:finance-lead; last_modified 2026-06-15T00:00:00Z; "
            "usage_count 42)\nruntime: bigquery\nparameters: year (integer, required)\n"
            "computation: the sql block under # Computation\n"
            "executor: skills/run-on-bq.md; receipt: job_id, executed_sql, result\nattester: attesters/sql_equality.py\n"
            "---\n\n# Computation\n\n```s\n[... truncated: 217 of 237 characters not shown; call read_concept with a "
            "larger max_chars (now 20) to read more]");
  // A concept of another type has no contract lines.
  EXPECT_EQ(x.text("read_concept", {{"path", "metrics/revenue"}}).find("runtime:"), std::string::npos);
  Demo g(ToolsOptions{}, sales);
  const json opened = g.call("open", {{"concept_id", "computations/revenue-year"}});
  EXPECT_EQ(opened["computation"]["runtime"], "bigquery");
  EXPECT_EQ(opened["computation"]["parameters"],
            json::parse(R"([{"name":"year","type":"integer","required":true,"description":""}])"));
  EXPECT_EQ(opened["computation"]["executor"], json::parse(R"({"resource":"skills/run-on-bq.md","receipt":["job_id","executed_sql","result"]})"));
  EXPECT_EQ(opened["computation"]["attester"]["resource"], "attesters/sql_equality.py");
  EXPECT_EQ(opened["computation"]["code_language"], "sql");
  EXPECT_FALSE(g.call("open", {{"concept_id", "metrics/revenue"}}).contains("computation"));
}

}  // namespace
}  // namespace okfbench::agents
