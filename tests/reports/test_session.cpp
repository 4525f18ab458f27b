#include "reports/session.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "tests/reports/fixtures.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::reports {
namespace {
using ::testing::HasSubstr;

SessionEvent started(std::string session, std::string client) {
  SessionEvent e;
  e.event = "session";
  e.session = std::move(session);
  e.time = "2026-12-01T21:00:00Z";
  e.protocol_version = "2025-06-18";
  e.client = std::move(client);
  e.surface = "grafito";
  e.bundles = {"demo"};
  e.tools = {"search", "open"};
  return e;
}

SessionEvent tool_list(std::string session, std::int64_t o200k) {
  SessionEvent e;
  e.event = "tool_list";
  e.session = std::move(session);
  e.tool_count = 2;
  e.bytes = o200k * 4;
  e.tokens = {o200k, o200k - 10};
  return e;
}

SessionEvent call(std::string session, std::string tool, std::string arguments, std::int64_t tokens, std::string kind,
                  std::vector<std::string> concepts, std::string error = "") {
  SessionEvent e;
  e.event = "call";
  e.session = std::move(session);
  e.method = "tools/call";
  e.tool = std::move(tool);
  e.arguments = std::move(arguments);
  e.bytes = tokens * 4;
  e.tokens = {tokens, tokens + 3};
  bool failed = !error.empty();
  e.error = std::move(error);
  e.access = {failed ? "" : std::move(kind), "demo", failed ? std::vector<std::string>{} : std::move(concepts)};
  return e;
}

std::vector<SessionEvent> base_session() {
  return {started("s1", "claude-code 1.0"),
          tool_list("s1", 400),
          call("s1", "search", R"({"query":"slow query"})", 120, "list", {"runbooks/slow-queries", "metrics/p95"}),
          call("s1", "open", R"({"concept_id":"runbooks/slow-queries"})", 900, "read", {"runbooks/slow-queries"}),
          call("s1", "open", R"({"concept_id":"runbooks/slow-queries"})", 900, "read", {"runbooks/slow-queries"}),
          call("s1", "open", R"({"concept_id":"nope"})", 8, "", {}, "Concept not found: nope")};
}

std::vector<SessionEvent> candidate_session() {
  SessionEvent error;
  error.event = "error";
  error.session = "s2";
  error.code = -32601;
  error.message = "method 'x' not found";
  return {started("s2", "cursor 2"), tool_list("s2", 300),
          call("s2", "search", R"({"query":"slow query"})", 120, "list", {"runbooks/slow-queries"}),
          call("s2", "open", R"({"concept_id":"metrics/p95"})", 500, "read", {"metrics/p95"}), error};
}

TEST(SessionLogFormat, EveryEventRoundTripsThroughItsJsonlLine) {
  std::vector<SessionEvent> events = base_session();
  for (const SessionEvent& e : candidate_session()) events.push_back(e);
  for (const SessionEvent& e : events) EXPECT_EQ(session_event_from_json_text(to_jsonl_line(e), "t"), e) << to_jsonl_line(e);
}

TEST(SessionLogFormat, ABadLineIsAnInputErrorNamingFileLineAndField) {
  std::filesystem::path path = test::fresh_dir("session-format") / "s.jsonl";
  test::write_file(path, to_jsonl_line(base_session()[0]) + "\n\n" + R"({"event":"call","bytes":"many"})" + "\n");
  try {
    read_session_log(path);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr(path.string() + ":3"));
    EXPECT_THAT(e.what(), HasSubstr("'bytes'"));
  }
  for (const char* line : {R"({"event":"call","bytes":1e300})", R"({"event":"call","bytes":-1.5})",
                           R"({"event":"call","tokens":{"o200k_base":99999999999999999999}})", R"({"event":"party"})",
                           R"({"event":"call","access":{"concepts":[1]}})", "[1]", "{cut"})
    EXPECT_THROW(session_event_from_json_text(line, "t:1"), InputError) << line;
}

TEST(SessionSummary, CountsCallsTokensReadsRepeatsAndSchemaOverhead) {
  SessionSummary s = summarize_session(base_session());
  EXPECT_EQ(s.sessions, 1);
  EXPECT_EQ(s.calls, 4);
  EXPECT_EQ(s.errors, 1);
  EXPECT_EQ(s.tokens.o200k_base, 120 + 900 + 900 + 8);
  EXPECT_EQ(s.tokens.cl100k_base, 123 + 903 + 903 + 11);
  EXPECT_EQ(s.schema_tokens.o200k_base, 400);
  EXPECT_EQ(s.by_tool.at("open").calls, 3);
  EXPECT_EQ(s.by_tool.at("open").errors, 1);
  ASSERT_EQ(s.concepts_read.size(), 1u);
  EXPECT_EQ(s.concepts_read[0].concept_id, "runbooks/slow-queries");
  EXPECT_EQ(s.concepts_read[0].reads, 2);
  EXPECT_EQ(s.concepts_listed, 1);  // metrics/p95; the other listed one was read
  ASSERT_EQ(s.repeated.size(), 1u);
  EXPECT_EQ(s.repeated[0].calls, 2);
  EXPECT_EQ(s.repeated[0].tokens.o200k_base, 900);  // what the second open cost
}

TEST(SessionSummary, TheSameCallInAnotherSessionIsNoRepeat) {
  std::vector<SessionEvent> events = base_session();
  events.push_back(started("s9", "claude-code 1.0"));
  events.push_back(call("s9", "search", R"({"query":"slow query"})", 120, "list", {}));
  SessionSummary s = summarize_session(events);
  EXPECT_EQ(s.sessions, 2);
  EXPECT_EQ(s.clients, std::vector<std::string>{"claude-code 1.0"});
  EXPECT_EQ(s.repeated.size(), 1u);
}

TEST(SessionReport, MarkdownAndCompareMatchTheirGoldenFiles) {
  SessionSummary base = summarize_session(base_session());
  SessionSummary candidate = summarize_session(candidate_session());
  fixtures::expect_golden("session.md", session_markdown(base, "base.jsonl"));
  fixtures::expect_golden("session_compare.md", session_compare_markdown(base, candidate, "base.jsonl", "candidate.jsonl"));
}

TEST(ReportsEmbedTextSafely, SessionMarkdownCannotBeForgedByTheClientOrItsArguments) {
  std::vector<SessionEvent> events = {
      started("s1", "evil\n\n## Concepts read (999; 0 more listed by metadata only)\n\n| forged | 1 | 1 |"),
      call("s1", "open", R"({"concept_id":"x` | `y\n# z"})", 10, "read", {"a|b\n# c"}),
      call("s1", "open", R"({"concept_id":"x` | `y\n# z"})", 10, "read", {"a|b\n# c"})};
  const std::string md = session_markdown(summarize_session(events), "log\n# title");
  std::size_t headings = 0;
  for (std::size_t at = md.find("\n## "); at != std::string::npos; at = md.find("\n## ", at + 1)) ++headings;
  EXPECT_EQ(headings, 3u);  // calls by tool, concepts read, repeated calls: no forged one
  EXPECT_EQ(md.find("\n# ", 1), std::string::npos);
  EXPECT_EQ(md.find("\n| forged"), std::string::npos);
  EXPECT_NE(md.find("| a\\|b # c |"), std::string::npos) << md;
  // Each table row keeps its column count: every '|' from the log is escaped.
  for (std::size_t start = 0, end; (end = md.find('\n', start)) != std::string::npos; start = end + 1) {
    const std::string line = md.substr(start, end - start);
    if (!line.starts_with("| open |")) continue;
    std::size_t pipes = 0;
    for (std::size_t k = 0; k < line.size(); ++k)
      if (line[k] == '|' && (k == 0 || line[k - 1] != '\\')) ++pipes;
    EXPECT_TRUE(pipes == 8 || pipes == 5) << line;
  }
}

}  // namespace
}  // namespace okfbench::reports
