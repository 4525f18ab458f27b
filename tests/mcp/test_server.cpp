#include "mcp/server.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "core/error.hpp"
#include "mcp/jsonrpc.hpp"
#include "retrieval/search.hpp"
#include "retrieval/tokens.hpp"
#include "tests/mcp/mcp_fixture.hpp"

namespace okfbench::mcp {
namespace {
using namespace test_fixture;
using ::testing::HasSubstr;
namespace code = jsonrpc::code;

std::vector<std::string> names_of(const json& tools) {
  std::vector<std::string> out;
  for (const json& t : tools) out.push_back(t["name"]);
  return out;
}

TEST(McpServer, InitializeNegotiatesTheAskedRevisionOrTheLatest) {
  for (const std::string asked : {"2025-06-18", "2025-03-26", "2024-11-05"}) {
    Demo d;
    json reply = d.initialize(asked);
    EXPECT_EQ(reply["result"]["protocolVersion"], asked);
    EXPECT_EQ(d.session.protocol_version, asked);
  }
  ServerOptions o;
  o.version = "9.8.7";
  Demo d(o);
  json reply = d.initialize("2099-01-01");
  EXPECT_EQ(reply["result"]["serverInfo"]["version"], "9.8.7");
  EXPECT_EQ(reply["result"]["protocolVersion"], "2025-06-18");
  EXPECT_EQ(reply["result"]["serverInfo"]["name"], "okfbench");
  EXPECT_TRUE(reply["result"]["capabilities"].contains("tools"));
  EXPECT_TRUE(reply["result"]["capabilities"].contains("resources"));
  EXPECT_THAT(reply["result"]["instructions"].get<std::string>(), HasSubstr("Layers"));
}

TEST(McpServer, InitializeWithWrongParamsIsInvalidParamsAndTwiceIsInvalidRequest) {
  Demo d;
  EXPECT_EQ(error_code(d.call("initialize", {{"capabilities", json::object()}})), code::invalid_params);
  EXPECT_EQ(error_code(d.call("initialize", {{"protocolVersion", 20250618}})), code::invalid_params);
  EXPECT_EQ(error_code(d.call("initialize", {{"protocolVersion", "2025-06-18"}, {"capabilities", "all"}})),
            code::invalid_params);
  EXPECT_TRUE(d.session.protocol_version.empty());
  ASSERT_TRUE(d.initialize().contains("result"));
  EXPECT_EQ(error_code(d.initialize()), code::invalid_request);
}

TEST(McpServer, BeforeInitializeOnlyPingIsServed) {
  Demo d;
  EXPECT_EQ(d.call("ping")["result"], json::object());
  json reply = d.call("tools/list");
  EXPECT_EQ(error_code(reply), code::invalid_request);
  EXPECT_THAT(reply["error"]["message"].get<std::string>(), HasSubstr("initialize"));
  EXPECT_EQ(error_code(d.call("resources/read", {{"uri", "okf://demo/runbooks/slow-queries"}})), code::invalid_request);
}

TEST(McpServer, ToolsListHasJsonSchemasAndRememberOnlyWithAllowWrite) {
  Demo d;
  d.initialize();
  json tools = d.call("tools/list")["result"]["tools"];
  EXPECT_EQ(names_of(tools), (std::vector<std::string>{"browse", "search", "open", "follow", "history"}));
  for (const json& t : tools) {
    EXPECT_EQ(t["inputSchema"]["type"], "object") << t["name"];
    EXPECT_FALSE(t["description"].get<std::string>().empty());
  }
  EXPECT_EQ(tools[1]["inputSchema"]["required"], json::array({"query"}));
  EXPECT_EQ(error_code(d.call("tools/list", {{"cursor", "1"}})), code::invalid_params);

  ServerOptions writable;
  writable.allow_write = true;
  Demo w(writable, demo_copy());
  w.initialize();
  EXPECT_EQ(names_of(w.call("tools/list")["result"]["tools"]).back(), "remember");

  ServerOptions harnessx;
  harnessx.surface = agents::Surface::harnessx;
  Demo h(harnessx);
  h.initialize();
  EXPECT_EQ(names_of(h.call("tools/list")["result"]["tools"]),
            (std::vector<std::string>{"search_concepts", "read_concept", "get_neighbors"}));
}

TEST(McpServer, ToolSubsetsAreCheckedAndRememberNeedsAllowWrite) {
  retrieval::Bundle bundle = retrieval::Bundle::load(demo());
  ServerOptions o;
  o.tools = {"search", "open"};
  Server subset({{"demo", &bundle}}, o);
  EXPECT_EQ(subset.tool_names(), (std::vector<std::string>{"search", "open"}));
  o.tools = {"remember"};
  EXPECT_THROW(Server({{"demo", &bundle}}, o), UsageError);
  o.tools = {"read_concept"};  // a harnessx tool on the grafito surface
  EXPECT_THROW(Server({{"demo", &bundle}}, o), UsageError);
  EXPECT_THROW(Server({}, ServerOptions{}), UsageError);
  EXPECT_THROW(Server({{"demo", &bundle}, {"demo", &bundle}}, ServerOptions{}), UsageError);
}

TEST(McpServer, ToolsCallReturnsTheToolResultAsText) {
  Demo d;
  d.initialize();
  json search = d.tool("search", {{"query", "slow query"}, {"k", 3}});
  EXPECT_EQ(search["isError"], false);
  json hits = json::parse(search["content"][0]["text"].get<std::string>());
  ASSERT_EQ(hits.size(), 3u);
  json opened = d.tool("open", {{"concept_id", hits[0]["id"]}});
  EXPECT_EQ(json::parse(opened["content"][0]["text"].get<std::string>())["id"], hits[0]["id"]);
  EXPECT_EQ(opened["content"][0]["type"], "text");
}

// A server given the bundle's index (okfbench mcp passes the one the index
// cache restored) searches with it and builds none; an index of another
// config would rank differently, so it is refused.
TEST(McpServer, AGivenIndexIsTheOneSearchedAndMustHaveTheDefaultConfig) {
  retrieval::Bundle bundle = retrieval::Bundle::load(demo());
  const retrieval::SearchIndex index = retrieval::SearchIndex::build(bundle);
  Server given({{"demo", &bundle, &index}}, {}, nullptr);
  Demo built;
  built.initialize();
  Session session;
  ASSERT_TRUE(given.handle(request(1, "initialize", initialize_params()).dump(), session));
  const json call = request(2, "tools/call", {{"name", "search"}, {"arguments", {{"query", "slow query"}, {"k", 5}}}});
  const json answer = json::parse(*given.handle(call.dump(), session));
  EXPECT_EQ(answer["result"], built.tool("search", {{"query", "slow query"}, {"k", 5}}));
  const retrieval::SearchIndex flat = retrieval::SearchIndex::build(bundle, retrieval::lucene_flat_config());
  EXPECT_THROW(Server({{"demo", &bundle, &flat}}, {}, nullptr), UsageError);
}

TEST(McpServer, ToolFailuresAreResultsWithIsErrorAndNeverReadOutsideTheBundle) {
  Demo d;
  d.initialize();
  json escape = d.tool("open", {{"concept_id", "../../../../etc/passwd"}});
  EXPECT_EQ(escape["isError"], true);
  EXPECT_THAT(escape["content"][0]["text"].get<std::string>(), HasSubstr("not found"));
  EXPECT_EQ(d.tool("search", json::object())["isError"], true);  // query is required
  EXPECT_EQ(d.tool("browse", {{"layer", "../.."}})["isError"], true);
}

TEST(McpServer, ToolsCallWithWrongParamsIsInvalidParams) {
  Demo d;
  d.initialize();
  EXPECT_EQ(error_code(d.call("tools/call", {{"arguments", json::object()}})), code::invalid_params);
  EXPECT_EQ(error_code(d.call("tools/call", {{"name", "nope"}})), code::invalid_params);
  EXPECT_EQ(error_code(d.call("tools/call", {{"name", "remember"}, {"arguments", json::object()}})), code::invalid_params);
  EXPECT_EQ(error_code(d.call("tools/call", {{"name", "search"}, {"arguments", "slow"}})), code::invalid_params);
  EXPECT_EQ(error_code(d.call("tools/call", {{"name", 7}})), code::invalid_params);
}

TEST(McpServer, RememberWritesInsideTheBundleOnlyWithAllowWrite) {
  ServerOptions o;
  o.allow_write = true;
  std::filesystem::path root = demo_copy();
  Demo d(o, root);
  d.initialize();
  json saved = d.tool("remember", {{"concept_id", "notes/mcp-note"}, {"title", "MCP note"}, {"body", "Written over MCP."}});
  ASSERT_EQ(saved["isError"], false) << saved;
  EXPECT_TRUE(std::filesystem::exists(root / "notes" / "mcp-note.md"));
  json outside = d.tool("remember", {{"concept_id", "../escaped"}, {"title", "x"}, {"body", "y"}});
  EXPECT_EQ(outside["isError"], true);
  EXPECT_FALSE(std::filesystem::exists(root.parent_path() / "escaped.md"));
  // The new concept is searchable and readable as a resource.
  EXPECT_THAT(d.tool("search", {{"query", "MCP note"}})["content"][0]["text"].get<std::string>(), HasSubstr("notes/mcp-note"));
  EXPECT_TRUE(d.call("resources/read", {{"uri", "okf://demo/notes/mcp-note"}}).contains("result"));
}

TEST(McpServer, ResourcesListEveryConceptAndReadOne) {
  Demo d;
  d.initialize();
  json list = d.call("resources/list")["result"];
  ASSERT_EQ(list["resources"].size(), d.bundle.concepts().size());
  EXPECT_FALSE(list.contains("nextCursor"));
  const retrieval::Concept& first = d.bundle.concepts().front();
  EXPECT_EQ(list["resources"][0]["uri"], "okf://demo/" + first.id);
  EXPECT_EQ(list["resources"][0]["mimeType"], "text/markdown");
  json read = d.call("resources/read", {{"uri", list["resources"][0]["uri"]}})["result"];
  std::string text = read["contents"][0]["text"];
  EXPECT_THAT(text, HasSubstr("# " + first.title));
  EXPECT_THAT(text, HasSubstr(first.body.substr(0, 60)));
  EXPECT_EQ(read["contents"][0]["uri"], list["resources"][0]["uri"]);
  json templates = d.call("resources/templates/list")["result"]["resourceTemplates"];
  EXPECT_EQ(templates[0]["uriTemplate"], "okf://demo/{+concept_id}");
}

TEST(McpServer, ResourcesReadOfAnUnknownOrEscapingUriIsResourceNotFound) {
  Demo d;
  d.initialize();
  for (const char* uri : {"okf://demo/nope", "okf://demo/../../etc/passwd", "okf://demo/%2E%2E/x", "okf://other/runbooks/slow-queries",
                          "file:///etc/passwd", "okf://demo/", "okf://demo/a%zz"})
    EXPECT_EQ(error_code(d.call("resources/read", {{"uri", uri}})), code::resource_not_found) << uri;
  EXPECT_EQ(error_code(d.call("resources/read", json::object())), code::invalid_params);
}

TEST(McpServer, ResourcesListPagesThroughLargeBundles) {
  std::filesystem::path root = test::fresh_dir("mcp-many") / "many";
  std::filesystem::create_directories(root / "notes");
  for (int i = 0; i < 230; ++i)
    test::write_file(root / "notes" / (std::to_string(1000 + i) + ".md"),
                     "---\ntype: Note\ntitle: Note " + std::to_string(i) + "\n---\nBody " + std::to_string(i) + ".\n");
  Demo d({}, root, false);
  d.initialize();
  std::vector<std::string> uris;
  json params = json::object();
  for (int page = 0; page < 10; ++page) {
    json result = d.call("resources/list", params)["result"];
    for (const json& r : result["resources"]) uris.push_back(r["uri"]);
    if (!result.contains("nextCursor")) break;
    EXPECT_EQ(result["resources"].size(), kResourcePage);
    params = {{"cursor", result["nextCursor"]}};
  }
  EXPECT_EQ(uris.size(), 230u);
  EXPECT_EQ(std::set<std::string>(uris.begin(), uris.end()).size(), 230u);
  for (const char* cursor : {"0", "230", "x", "-1", "99999999999999999999999"})
    EXPECT_EQ(error_code(d.call("resources/list", {{"cursor", cursor}})), code::invalid_params) << cursor;
}

TEST(McpServer, NotificationsAndResponsesGetNoReply) {
  Demo d;
  d.initialize();
  EXPECT_TRUE(d.send({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}).is_null());
  EXPECT_TRUE(d.send({{"jsonrpc", "2.0"}, {"method", "notifications/cancelled"}, {"params", {{"requestId", 1}}}}).is_null());
  EXPECT_TRUE(d.send({{"jsonrpc", "2.0"}, {"method", "notifications/unknown"}}).is_null());
  EXPECT_TRUE(d.send({{"jsonrpc", "2.0"}, {"id", 9}, {"result", json::object()}}).is_null());
}

TEST(McpServer, BatchesOnlyInRevisionsThatHaveThem) {
  json batch = json::array({request(1, "ping"), {{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}},
                            request("two", "tools/list")});
  Demo latest;
  EXPECT_EQ(error_code(latest.send(batch)), code::invalid_request);  // before initialize
  latest.initialize();
  json refused = latest.send(batch);
  EXPECT_EQ(error_code(refused), code::invalid_request);
  EXPECT_TRUE(refused["id"].is_null());

  Demo old;
  old.initialize("2025-03-26");
  json replies = old.send(batch);
  ASSERT_TRUE(replies.is_array());
  ASSERT_EQ(replies.size(), 2u);  // the notification gets none
  EXPECT_EQ(replies[0]["id"], 1);
  EXPECT_EQ(replies[1]["id"], "two");
  EXPECT_TRUE(replies[1]["result"].contains("tools"));
}

TEST(McpServer, BatchAbuseIsRefused) {
  Demo d;
  d.initialize("2024-11-05");
  EXPECT_EQ(error_code(d.send_text("[]")), code::invalid_request);
  json big = json::array();
  for (std::size_t i = 0; i <= jsonrpc::kMaxBatch; ++i) big.push_back(request(static_cast<int>(i), "ping"));
  EXPECT_EQ(error_code(d.send(big)), code::invalid_request);
  json mixed = d.send(json::array({request(1, "initialize", initialize_params()), json::array(), 42, request(2, "ping")}));
  ASSERT_EQ(mixed.size(), 4u);
  EXPECT_EQ(error_code(mixed[0]), code::invalid_request);  // initialize must not be batched
  EXPECT_EQ(error_code(mixed[1]), code::invalid_request);
  EXPECT_EQ(error_code(mixed[2]), code::invalid_request);
  EXPECT_EQ(mixed[3]["result"], json::object());
  EXPECT_TRUE(d.send(json::array({{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}})).is_null());
}

// A few kilobytes of batch asked for 32 whole concepts: 105 MB of reply.
TEST(McpServer, ABatchReplyIsBoundedAndTheCallsPastTheBoundGetErrors) {
  std::filesystem::path root = demo_copy();
  std::string body;
  while (body.size() < (std::size_t{1} << 20)) body += "a long runbook line of words\n";
  std::ofstream(root / "runbooks" / "huge.md") << "---\ntype: Playbook\ntitle: Huge\ndescription: A long one.\n---\n"
                                               << body;
  Demo d({}, root, false);
  d.initialize("2025-03-26");
  json batch = json::array();
  for (std::size_t i = 0; i < jsonrpc::kMaxBatch; ++i)
    batch.push_back(request(static_cast<int>(i), "resources/read", {{"uri", "okf://demo/runbooks/huge"}}));
  std::optional<std::string> text = d.server->handle(batch.dump(), d.session);
  ASSERT_TRUE(text);
  EXPECT_LE(text->size(), jsonrpc::kMaxBatchReplyBytes + jsonrpc::kMaxBatch * 512);
  json replies = json::parse(*text);
  ASSERT_EQ(replies.size(), jsonrpc::kMaxBatch);
  std::size_t answered = 0;
  while (answered < replies.size() && replies[answered].contains("result")) ++answered;
  EXPECT_GE(answered, 4u);  // each reply is a little over 1 MiB
  EXPECT_LT(answered, 8u);
  for (std::size_t i = answered; i < replies.size(); ++i) {
    EXPECT_EQ(replies[i]["id"], static_cast<int>(i));
    EXPECT_EQ(error_code(replies[i]), jsonrpc::code::reply_too_large) << i;
  }
  EXPECT_NE(replies[answered]["error"]["message"].get<std::string>().find("it ran"), std::string::npos);
  EXPECT_EQ(d.call("ping")["result"], json::object());  // the session goes on
}

// Several bundles: the tools are MultiBundleTools' (search takes `bundle`
// optionally and otherwise searches one index over both; every other tool
// requires it; results name their bundle), and the instructions say so.
TEST(McpServer, SeveralBundlesAreToldApartByABundleArgument) {
  retrieval::Bundle a = retrieval::Bundle::load(demo());
  retrieval::Bundle b = retrieval::Bundle::load(demo_copy("copy"));
  Server server({{"demo", &a}, {"copy", &b}}, {});
  Session s;
  auto send = [&](const json& m) { return json::parse(*server.handle(m.dump(), s)); };
  const std::string instructions = send(request(1, "initialize", initialize_params()))["result"]["instructions"];
  EXPECT_THAT(instructions, HasSubstr("demo"));
  EXPECT_THAT(instructions, HasSubstr("copy"));
  json tools = send(request(2, "tools/list"))["result"]["tools"];
  EXPECT_EQ(tools[0]["inputSchema"]["properties"]["bundle"]["enum"], json::array({"demo", "copy"}));
  EXPECT_EQ(tools[1]["name"], "search");
  EXPECT_EQ(tools[1]["inputSchema"]["required"], json::array({"query"}));
  EXPECT_EQ(tools[2]["inputSchema"]["required"], json::array({"concept_id", "bundle"}));
  // Over both: the two copies of the top concept score alike (shared
  // statistics), tied by id and then bundle name.
  json both = send(request(8, "tools/call", {{"name", "search"}, {"arguments", {{"query", "slow graph query"}, {"k", 2}}}}));
  const json hits = json::parse(both["result"]["content"][0]["text"].get<std::string>());
  ASSERT_EQ(hits.size(), 2u);
  EXPECT_EQ(hits[0]["id"], hits[1]["id"]);
  EXPECT_EQ(hits[0]["bundle"], "copy");
  EXPECT_EQ(hits[1]["bundle"], "demo");
  EXPECT_EQ(hits[0]["score"], hits[1]["score"]);
  json hit = send(request(3, "tools/call", {{"name", "open"}, {"arguments", {{"bundle", "copy"}, {"concept_id", "runbooks/slow-queries"}}}}));
  EXPECT_EQ(hit["result"]["isError"], false);
  EXPECT_EQ(json::parse(hit["result"]["content"][0]["text"].get<std::string>())["bundle"], "copy");
  json missing = send(request(4, "tools/call", {{"name", "open"}, {"arguments", {{"concept_id", "runbooks/slow-queries"}}}}));
  EXPECT_EQ(missing["result"]["isError"], true);
  EXPECT_THAT(missing["result"]["content"][0]["text"].get<std::string>(),
              HasSubstr("'bundle' is required when several bundles are loaded; one of: demo, copy"));
  json wrong = send(request(5, "tools/call", {{"name", "open"}, {"arguments", {{"bundle", "x"}, {"concept_id", "runbooks/slow-queries"}}}}));
  EXPECT_THAT(wrong["result"]["content"][0]["text"].get<std::string>(), HasSubstr("Unknown bundle 'x'; loaded bundles: demo, copy"));
  json list = send(request(6, "resources/list"))["result"]["resources"];
  EXPECT_EQ(list.size(), a.concepts().size() + b.concepts().size());
  EXPECT_TRUE(send(request(7, "resources/read", {{"uri", "okf://copy/runbooks/slow-queries"}})).contains("result"));
}

TEST(McpServer, SessionLogAccountsEveryCallWithExactTokens) {
  Demo d;
  d.initialize();
  d.call("tools/list");
  d.call("tools/list");  // the tool list is accounted once per session
  json opened = d.tool("open", {{"concept_id", "runbooks/slow-queries"}});
  d.tool("open", {{"concept_id", "nope"}});
  d.call("resources/read", {{"uri", "okf://demo/metrics/query-latency-p95"}});
  d.call("nope");
  std::vector<reports::SessionEvent> events = d.events();
  ASSERT_EQ(events.size(), 6u);
  EXPECT_EQ(events[0].event, "session");
  EXPECT_EQ(events[0].client, "gtest 1.0");
  EXPECT_EQ(events[0].protocol_version, "2025-06-18");
  EXPECT_EQ(events[1].event, "tool_list");
  EXPECT_EQ(events[1].tool_count, 5);
  auto o200k = retrieval::make_counter("o200k_base");
  auto cl100k = retrieval::make_counter("cl100k_base");
  std::string text = opened["content"][0]["text"];
  const reports::SessionEvent& call = events[2];
  EXPECT_EQ(call.tool, "open");
  EXPECT_EQ(call.seq, 1);
  EXPECT_EQ(call.bytes, static_cast<std::int64_t>(text.size()));
  EXPECT_EQ(call.tokens.o200k_base, static_cast<std::int64_t>(o200k->count(text)));
  EXPECT_EQ(call.tokens.cl100k_base, static_cast<std::int64_t>(cl100k->count(text)));
  EXPECT_NE(call.tokens.o200k_base, call.tokens.cl100k_base);  // two tokenizers, two counts
  EXPECT_EQ(call.access.kind, "read");
  EXPECT_EQ(call.access.concepts, std::vector<std::string>{"runbooks/slow-queries"});
  EXPECT_EQ(json::parse(call.arguments), json({{"concept_id", "runbooks/slow-queries"}}));
  EXPECT_THAT(events[3].error, HasSubstr("not found"));
  EXPECT_TRUE(events[3].access.concepts.empty());
  EXPECT_EQ(events[4].method, "resources/read");
  EXPECT_EQ(events[4].access.concepts, std::vector<std::string>{"metrics/query-latency-p95"});
  EXPECT_EQ(events[5].event, "error");
  EXPECT_EQ(events[5].code, code::method_not_found);
  for (const reports::SessionEvent& e : events) EXPECT_EQ(e.session, d.session.id);
}

}  // namespace
}  // namespace okfbench::mcp
