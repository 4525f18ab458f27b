// End-to-end tests of `okfbench agent` and `okfbench mock-server` (the built program).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "agents/mock_server.hpp"
#include "retrieval/tokens.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::agents {
namespace {
namespace fs = std::filesystem;

std::string okfbench() { return test::okfbench_binary().string(); }
std::string demo() { return (test::source_dir() / "datasets" / "bundles" / "demo").string(); }
constexpr const char* kQuestion = "\"A production Cypher query got slow after a data load. What should I do, step by step?\"";

TEST(CliAgent, PrintsToolCallsSummaryAndAnswer) {
  test::CommandResult r = test::run_command(fmt::format("{} agent {} {}", okfbench(), demo(), kQuestion));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("  -> search({\"k\": 5, \"query\": "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  -> open({\"concept_id\": \"runbooks/slow-queries\"})\n     runbooks/slow-queries - "
                       "Triaging a slow graph query ("),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("turn(s), 3 tool call(s), "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("A: **Triaging a slow graph query** [runbooks/slow-queries]\n- "), std::string::npos) << r.out;
}

// A plain markdown tree loads only in the repo profile, wikilinks included.
TEST(CliAgent, RepoProfileLoadsAPlainMarkdownTree) {
  const std::string vault = (test::source_dir() / "tests" / "data" / "vault").string();
  test::CommandResult okf = test::run_command(fmt::format("{} agent '{}' 'Why are builds slow?'", okfbench(), vault));
  EXPECT_EQ(okf.exit_code, 1);
  EXPECT_NE(okf.err.find("no concepts loaded"), std::string::npos) << okf.err;
  // The other profile loads it: the message names the flag.
  EXPECT_NE(okf.err.find("10 concept(s) load with --profile repo"), std::string::npos) << okf.err;
  for (const char* command : {"mcp", "validate"}) {
    test::CommandResult hinted = test::run_command(fmt::format("{} {} '{}' </dev/null", okfbench(), command, vault));
    EXPECT_NE((hinted.out + hinted.err).find("add --profile repo"), std::string::npos) << command << hinted.err;
  }
  test::CommandResult served = test::run_command(fmt::format("{} mcp '{}' --profile repo </dev/null", okfbench(), vault));
  EXPECT_EQ(served.exit_code, 0) << served.err;
  test::CommandResult repo =
      test::run_command(fmt::format("{} agent '{}' 'Why are builds slow?' --profile repo --json", okfbench(), vault));
  ASSERT_EQ(repo.exit_code, 0) << repo.err;
  nlohmann::json j = nlohmann::json::parse(repo.out);
  EXPECT_EQ(j["opened"][0], "Guides/Troubleshooting");
  test::CommandResult bad = test::run_command(fmt::format("{} agent '{}' q --profile wiki", okfbench(), vault));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("unknown --profile \"wiki\": use okf, repo, lessons or expertise"), std::string::npos) << bad.err;
}

// The search tool answers with the method's hits: its first call returns
// what `okfbench search` ranks with the same method.
TEST(CliAgent, RetrievalMethodIsTheSearchTools) {
  for (auto [method, flags] : {std::pair{"hybrid", " --hybrid sim"}, std::pair{"hybrid+rerank", " --hybrid sim --rerank sim"}}) {
    test::CommandResult r = test::run_command(
        fmt::format("{} agent {} {} --json --tools search,open --retrieval {}", okfbench(), demo(), kQuestion, method));
    ASSERT_EQ(r.exit_code, 0) << method << r.err;
    nlohmann::json run = nlohmann::json::parse(r.out);
    test::CommandResult search = test::run_command(fmt::format("{} search {} {} --k 5 --json{}", okfbench(), demo(), kQuestion, flags));
    ASSERT_EQ(search.exit_code, 0) << search.err;
    nlohmann::json hits = nlohmann::json::parse(search.out)["hits"];
    ASSERT_FALSE(run["opened"].empty()) << method;
    EXPECT_EQ(run["opened"][0], hits[0]["id"]) << method;  // sim opens the top hit
  }
  EXPECT_EQ(test::run_command(fmt::format("{} agent {} q --retrieval magic", okfbench(), demo())).exit_code, 2);
}

TEST(CliAgent, JsonOutputAndSubsets) {
  test::CommandResult r = test::run_command(
      fmt::format("{} agent {} {} --tools search,open --json --cache-model openai", okfbench(), demo(), kQuestion));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["tools"], nlohmann::json::array({"search", "open"}));
  EXPECT_EQ(j["stop"], "answered");
  EXPECT_EQ(j["opened"][0], "runbooks/slow-queries");
  EXPECT_EQ(j["summary"]["turns"], j["turns"].size());
  EXPECT_TRUE(j["summary"]["resent_input_tokens"].is_number());
  EXPECT_EQ(j["summary"]["schema_tokens"], j["schema_tokens_per_call"].get<int>() * j["turns"].size());
}

TEST(CliAgent, SimKnobsChangeItsPolicy) {
  auto run = [](const std::string& flags) {
    test::CommandResult r = test::run_command(fmt::format("{} agent {} {} --json {}", okfbench(), demo(), kQuestion, flags));
    EXPECT_EQ(r.exit_code, 0) << flags << r.err;
    return nlohmann::json::parse(r.out, nullptr, false);
  };
  nlohmann::json plain = run("--sim-open-ratio 0");  // every hit is close enough: opens max_open (2)
  nlohmann::json one = run("--sim-open-ratio 0 --sim-max-open 1 --sim-search-k 3 --sim-no-follow");
  EXPECT_EQ(plain["opened"].size(), 2u);
  EXPECT_EQ(one["opened"].size(), 1u);
  EXPECT_EQ(one["opened"][0], plain["opened"][0]);
  EXPECT_NE(one.dump().find(R"({\"k\":3,)"), std::string::npos) << one.dump();  // the search call asked for 3
  EXPECT_EQ(run("--sim-max-open 0")["opened"].size(), 0u);
  // The answer length knob: the answer restates less of what it opened.
  const auto output_tokens = [](const nlohmann::json& j) { return j["turns"].back()["output_tokens"].get<int>(); };
  EXPECT_LT(output_tokens(run("--sim-answer-tokens 60")), output_tokens(run("--sim-answer-tokens 250")));
  for (const char* bad : {"--sim-open-ratio 2", "--sim-search-k 0", "--sim-max-open -1", "--sim-answer-tokens 0",
                          "--sim-answer-spread -1"})
    EXPECT_EQ(test::run_command(fmt::format("{} agent {} q {}", okfbench(), demo(), bad)).exit_code, 2) << bad;
}

// The lessons policy reaches every tool: the run never sees an excluded
// lesson, and --json lists what was kept out and why.
TEST(CliAgent, LessonsProfileAppliesThePolicyToTheTools) {
  const std::string payments = (test::source_dir() / "tests/data/lessons/payments").string();
  test::CommandResult r = test::run_command(fmt::format(
      "{} agent {} 'How should I retry payment calls?' --profile lessons --as-of 2026-12-02 --json", okfbench(), payments));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["policy"], "lessons as of 2026-12-02: rejected and deprecated excluded, candidates excluded");
  EXPECT_EQ(j["excluded"], nlohmann::json::parse(R"([{"id":"api/old-page-size","reason":"status:deprecated"},
      {"id":"api/retry-forever","reason":"status:rejected"},{"id":"build/cache-warmup","reason":"status:candidate"},
      {"id":"build/freeze-window","reason":"expired"}])"));
  EXPECT_EQ(j["opened"], nlohmann::json({"api/retry-idempotency"}));
  for (const auto& call : j["tool_calls"]) EXPECT_EQ(call.dump().find("retry-forever"), std::string::npos) << call.dump();

  test::CommandResult text = test::run_command(fmt::format(
      "{} agent {} 'How should I retry payment calls?' --profile lessons --as-of 2026-12-02 --surface harnessx",
      okfbench(), payments));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("  policy: lessons as of 2026-12-02: rejected and deprecated excluded, candidates excluded\n"
                          "  excluded: api/old-page-size (status:deprecated)\n"),
            std::string::npos)
      << text.out;
  EXPECT_EQ(text.out.find("-> read_concept({\"path\": \"/api/retry-forever.md\"})"), std::string::npos) << text.out;
}

TEST(CliAgent, ExpertiseProfileAndPolicyUsageErrors) {
  const std::string pack = (test::source_dir() / "tests/data/expertise/python-pack").string();
  test::CommandResult r = test::run_command(fmt::format(
      "{} agent {} 'How do I run the tests?' --profile expertise --as-of 2026-06-01 --task-tag python-library --json",
      okfbench(), pack));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["excluded"].size(), 4u);
  EXPECT_EQ(j["excluded"][2], nlohmann::json::parse(R"({"id":"verification/test-command-old","reason":"expired"})"));
  for (const auto& id : j["opened"]) EXPECT_NE(id, "verification/test-command-old");
  // A policy names one bundle's concepts; flags of another profile are refused.
  const std::string payments = (test::source_dir() / "tests/data/lessons/payments").string();
  test::CommandResult several =
      test::run_command(fmt::format("{} agent {} {} q --profile lessons", okfbench(), payments, payments));
  EXPECT_EQ(several.exit_code, 2);
  EXPECT_NE(several.err.find("--profile lessons takes one bundle"), std::string::npos) << several.err;
  EXPECT_EQ(test::run_command(fmt::format("{} agent {} q --prefer-scope x", okfbench(), demo())).exit_code, 2);
  EXPECT_EQ(test::run_command(fmt::format("{} agent {} q --profile lessons --as-of soon", okfbench(), payments)).exit_code, 2);
}

TEST(CliAgent, UsageErrorsExitTwo) {
  EXPECT_EQ(test::run_command(fmt::format("{} agent {} q --surface nope", okfbench(), demo())).exit_code, 2);
  EXPECT_EQ(test::run_command(fmt::format("{} agent {} q --cache-model redis", okfbench(), demo())).exit_code, 2);
  EXPECT_EQ(test::run_command(fmt::format("{} agent {} q --model gemini:x", okfbench(), demo())).exit_code, 2);
  test::CommandResult missing = test::run_command(fmt::format("{} agent /nonexistent/bundle q", okfbench()));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("/nonexistent/bundle"), std::string::npos);
}

// A server that accepts and never answers held `agent` for 10-15 minutes: it
// now has a spec's deadlines, and the flags to shorten them.
TEST(NumbersAndWrites, AgentStopsAtItsTrialDeadlineOnAStalledServer) {
  auto counter = retrieval::make_counter("o200k_base");
  MockServer server({}, *counter, parse_faults("stall:20:30"));
  server.start();
  const auto start = std::chrono::steady_clock::now();
  const test::CommandResult r = test::run_command(
      fmt::format("OPENAI_API_KEY=sk-x {} agent {} {} --model openai:m --base-url {}/v1 --timeout-s 0.3 --trial-timeout-s 1.5",
                  okfbench(), demo(), kQuestion, server.base_url()));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  server.stop();
  EXPECT_LT(seconds, 10.0) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("deadline"), std::string::npos) << r.out << r.err;
  EXPECT_EQ(test::run_command(fmt::format("{} agent {} q --timeout-s 0", okfbench(), demo())).exit_code, 2);
  EXPECT_EQ(test::run_command(fmt::format("{} agent {} q --trial-timeout-s 1e-300", okfbench(), demo())).exit_code, 2);
}

// The CLI's OpenAI client against the mock server, recording a cassette and a
// response cache: the key from the environment appears in no file.
TEST(CliAgent, OverHttpWithRecordingAndCacheNeverWritesTheKey) {
  auto counter = retrieval::make_counter("o200k_base");
  MockServer server({}, *counter);
  server.start();
  fs::path dir = test::fresh_dir("cli-agent-http");
  const std::string key = "sk-cli-SECRET-9f8e7d6c5b4a";
  std::string command =
      fmt::format("OPENAI_API_KEY={} {} agent {} {} --model openai:gpt-4o-mini --base-url {}/v1 --record {} --cache-db {}",
                  key, okfbench(), demo(), kQuestion, server.base_url(), (dir / "run.jsonl").string(),
                  (dir / "cache.sqlite").string());
  test::CommandResult first = test::run_command(command);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  std::size_t served = server.requests();
  EXPECT_GE(served, 2u);
  test::CommandResult second = test::run_command(command);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(server.requests(), served);  // all from the response cache
  EXPECT_EQ(second.out, first.out);
  test::CommandResult replay = test::run_command(
      fmt::format("{} agent {} {} --model replay:{}", okfbench(), demo(), kQuestion, (dir / "run.jsonl").string()));
  ASSERT_EQ(replay.exit_code, 0) << replay.err;
  EXPECT_EQ(replay.out, first.out);
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    EXPECT_EQ(test::read_file(entry.path()).find(key), std::string::npos) << entry.path();
  }
  EXPECT_EQ(first.out.find(key), std::string::npos);
  EXPECT_EQ(first.err.find(key), std::string::npos);
}

TEST(CliAgent, HeaderValuesWithControlCharactersAreAUsageErrorNamingTheFlag) {
  auto counter = retrieval::make_counter("o200k_base");
  MockServer server({}, *counter);
  server.start();
  test::CommandResult flag = test::run_command(
      fmt::format("{} agent {} q --model openai:m --base-url {}/v1 --api-key \"$(printf 'sk-abc\\r\\nX-Injected: pwned')\"",
                  okfbench(), demo(), server.base_url()));
  EXPECT_EQ(flag.exit_code, 2) << flag.err;
  EXPECT_NE(flag.err.find("--api-key: contains the control character 0x0D at byte 6"), std::string::npos) << flag.err;
  test::CommandResult url = test::run_command(fmt::format(
      "{} agent {} q --model openai:m --base-url \"$(printf '{}/v1\\001')\"", okfbench(), demo(), server.base_url()));
  EXPECT_EQ(url.exit_code, 2) << url.err;
  EXPECT_NE(url.err.find("--base-url: contains the control character 0x01"), std::string::npos) << url.err;
  EXPECT_EQ(server.requests(), 0u);
}

// 100,000 levels of nesting in tool-call arguments: from a live endpoint, from
// a cassette entry, and as a whole cassette line. Each is a clean exit 1.
TEST(CliAgent, DeeplyNestedArgumentsFailCleanlyLiveAndInReplay) {
  auto counter = retrieval::make_counter("o200k_base");
  MockServer deep({}, *counter, parse_faults("deep:1:100000"));
  deep.start();
  test::CommandResult live = test::run_command(fmt::format("OPENAI_API_KEY=sk-x {} agent {} {} --model openai:m --base-url {}/v1",
                                                           okfbench(), demo(), kQuestion, deep.base_url()));
  EXPECT_EQ(live.exit_code, 1) << live.err;
  EXPECT_NE(live.err.find("nest deeper than 128 levels"), std::string::npos) << live.err;

  MockServer normal({}, *counter);
  normal.start();
  fs::path dir = test::fresh_dir("cli-agent-deep-replay");
  fs::path cassette = dir / "run.jsonl";
  ASSERT_EQ(test::run_command(fmt::format("OPENAI_API_KEY=sk-x {} agent {} {} --model openai:m --base-url {}/v1 --record {}",
                                          okfbench(), demo(), kQuestion, normal.base_url(), cassette.string()))
                .exit_code,
            0);
  std::string first_line = test::read_file(cassette).substr(0, test::read_file(cassette).find('\n'));
  nlohmann::json entry = nlohmann::json::parse(first_line);
  ASSERT_FALSE(entry["response"]["message"]["tool_calls"].empty());
  entry["response"]["message"]["tool_calls"][0]["arguments"] = std::string(100000, '[') + std::string(100000, ']');
  test::write_file(dir / "deep-arguments.jsonl", entry.dump() + "\n");
  test::CommandResult replay = test::run_command(
      fmt::format("{} agent {} {} --model replay:{}", okfbench(), demo(), kQuestion, (dir / "deep-arguments.jsonl").string()));
  EXPECT_EQ(replay.exit_code, 1) << replay.err;
  EXPECT_NE(replay.err.find("nest deeper than 128 levels"), std::string::npos) << replay.err;

  test::write_file(dir / "deep-line.jsonl", R"({"hash": "0000000000000000", "response": )" + std::string(100000, '[') +
                                                std::string(100000, ']') + "}\n");
  test::CommandResult line = test::run_command(
      fmt::format("{} agent {} {} --model replay:{}", okfbench(), demo(), kQuestion, (dir / "deep-line.jsonl").string()));
  EXPECT_EQ(line.exit_code, 1) << line.err;
  EXPECT_NE(line.err.find("deep-line.jsonl:1: JSON nests deeper than 128 levels"), std::string::npos) << line.err;
}

TEST(CliAgent, A0xFFByteInAReplyIsReplacedInTheJsonOutput) {
  auto counter = retrieval::make_counter("o200k_base");
  MockServer server({}, *counter, parse_faults("badutf8"));
  server.start();
  test::CommandResult r = test::run_command(fmt::format("OPENAI_API_KEY=sk-x {} agent {} {} --model openai:m --base-url {}/v1 --json",
                                                        okfbench(), demo(), kQuestion, server.base_url()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json out = nlohmann::json::parse(r.out);  // valid UTF-8, or this throws
  EXPECT_NE(out["tool_calls"][0]["arguments"].get<std::string>().find("\xEF\xBF\xBD"), std::string::npos);
}

TEST(CliMockServer, StartsOnAnEphemeralPortAndStopsOnSignal) {
  test::CommandResult r = test::run_command(fmt::format("timeout --preserve-status -s INT 1 {} mock-server --port 0", okfbench()));
  EXPECT_EQ(r.exit_code, 0) << r.err;  // SIGINT stops it cleanly
  EXPECT_GT(std::stoi(r.out), 0);
  EXPECT_NE(r.err.find("OPENAI_BASE_URL=http://127.0.0.1:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("stopped after 0 request(s)"), std::string::npos) << r.err;
  EXPECT_EQ(test::run_command(fmt::format("{} mock-server --fault teapot", okfbench())).exit_code, 2);
}

}  // namespace
}  // namespace okfbench::agents
