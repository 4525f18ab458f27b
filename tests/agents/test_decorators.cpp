#include "agents/decorators.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "agents/agent.hpp"
#include "agents/mock_server.hpp"
#include "agents/provider_models.hpp"
#include "agents/sim_model.hpp"
#include "agents/wire_json.hpp"
#include "core/error.hpp"
#include "tests/agents/fake_kb.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::agents {
namespace {
namespace fs = std::filesystem;

constexpr const char* kQuestion = "A Cypher query got slow after a replica change. What should I do?";

// Counts calls so tests can tell a cache hit from a pass-through.
class CountingModel : public ChatModel {
 public:
  explicit CountingModel(std::unique_ptr<ChatModel> inner, int* calls) : inner_(std::move(inner)), calls_(calls) {}
  ChatResponse chat(const ChatRequest& r) override {
    ++*calls_;
    return inner_->chat(r);
  }
  std::string name() const override { return inner_->name(); }

 private:
  std::unique_ptr<ChatModel> inner_;
  int* calls_;
};

TEST(WireJson, RoundTripsRequestsAndResponsesWithUnknownCounts) {
  ChatRequest r;
  r.model = "m";
  r.messages = {{Role::system, "s", {}, {}, {}}, {Role::assistant, "", {{"c1", "open", "{}"}}, {}, {}},
                {Role::tool, "res", {}, "c1", "open"}};
  r.tools = {{"open", "Open.", R"({"type":"object"})"}};
  r.breakpoints = CacheBreakpoints::tools_system_and_last_message;
  EXPECT_EQ(wire_json::request_from_json(wire_json::request_to_json(r)), r);
  ChatResponse resp{{Role::assistant, "a", {}, {}, {}}, Usage{10, std::nullopt, 0, 3}, StopReason::end_turn, "m"};
  EXPECT_EQ(wire_json::response_from_json(wire_json::response_to_json(resp)), resp);
  ChatRequest other = r;
  other.messages[2].content = "res2";
  EXPECT_NE(wire_json::request_hash(r), wire_json::request_hash(other));
}

TEST(Cassette, RecordThenReplayGivesTheSameRunAndMissesFailLoudly) {
  ByteCounter counter;
  fs::path cassette = test::fresh_dir("cassette") / "run.jsonl";
  FakeKb kb(FakeKb::Style::grafito, kGrafito);
  RecordingModel recorder(std::make_unique<SimModel>(SimOptions{}, counter), cassette, {});
  AgentRun recorded = run_agent(recorder, kb, kQuestion);
  run_agent(recorder, kb, kQuestion);  // same requests: no new lines
  std::string text = test::read_file(cassette);
  EXPECT_EQ(static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')), recorded.turns.size());

  ReplayModel replay(cassette);
  EXPECT_EQ(replay.name(), "replay:sim");
  AgentRun replayed = run_agent(replay, kb, kQuestion);
  EXPECT_EQ(replayed.answer, recorded.answer);
  EXPECT_EQ(replayed.tool_calls, recorded.tool_calls);
  EXPECT_EQ(replayed.turns, recorded.turns);

  AgentRun diverged = run_agent(replay, kb, "a different question");
  EXPECT_EQ(diverged.stop, AgentStop::model_error);
  EXPECT_NE(diverged.error.find("is not in cassette"), std::string::npos) << diverged.error;
  EXPECT_EQ(diverged.failure, Failure::permanent);  // replaying again gives the same miss
}

// A cassette is read under the limits of a live reply: its counts are range-checked.
TEST(Cassette, ReplayedCountsAreCheckedLikeALiveReply) {
  ByteCounter counter;
  fs::path cassette = test::fresh_dir("cassette-counts") / "run.jsonl";
  FakeKb kb(FakeKb::Style::grafito, kGrafito);
  RecordingModel recorder(std::make_unique<SimModel>(SimOptions{}, counter), cassette, {});
  run_agent(recorder, kb, kQuestion);
  std::string text = test::read_file(cassette);
  std::string line = text.substr(0, text.find('\n'));
  nlohmann::json entry = nlohmann::json::parse(line);
  entry["response"]["usage"]["input_tokens"] = 9223372036854775807LL;
  test::write_file(cassette, entry.dump() + "\n");
  ReplayModel replay(cassette);
  AgentRun run = run_agent(replay, kb, kQuestion);
  EXPECT_EQ(run.stop, AgentStop::model_error);
  EXPECT_NE(run.error.find("'input_tokens' must be an integer from 0 to 1000000000"), std::string::npos) << run.error;
}

TEST(Cassette, MissingAndMalformedCassettesNameTheFileAndLine) {
  fs::path dir = test::fresh_dir("cassette-bad");
  EXPECT_THROW(ReplayModel(dir / "absent.jsonl"), InputError);
  test::write_file(dir / "bad.jsonl", "{\"hash\":\"0000000000000001\",\"response\":{}}\n{oops\n");
  try {
    ReplayModel replay(dir / "bad.jsonl");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.jsonl:2"), std::string::npos) << e.what();
  }
}

TEST(CachingModel, KeyedByEndpointModelRequestAndRepeat) {
  ByteCounter counter;
  fs::path db = test::fresh_dir("cache") / "responses.sqlite";
  FakeKb kb(FakeKb::Style::grafito, kGrafito);
  int calls = 0;
  auto make = [&](std::string endpoint, int repeat) {
    return CachingModel(std::make_unique<CountingModel>(std::make_unique<SimModel>(SimOptions{}, counter), &calls), db,
                        std::move(endpoint), repeat);
  };
  AgentRun first;
  {
    CachingModel model = make("http://a", 0);
    first = run_agent(model, kb, kQuestion);
    EXPECT_EQ(model.misses(), first.turns.size());
  }
  int after_first = calls;
  {
    CachingModel again = make("http://a", 0);  // a new process would see the same database
    AgentRun second = run_agent(again, kb, kQuestion);
    EXPECT_EQ(calls, after_first);  // every turn from the cache
    EXPECT_EQ(again.hits(), first.turns.size());
    EXPECT_EQ(second.answer, first.answer);
    EXPECT_EQ(second.turns, first.turns);
  }
  {
    CachingModel repeat = make("http://a", 1);
    run_agent(repeat, kb, kQuestion);
    EXPECT_EQ(repeat.hits(), 0u);
    CachingModel elsewhere = make("http://b", 0);
    run_agent(elsewhere, kb, kQuestion);
    EXPECT_EQ(elsewhere.hits(), 0u);
  }
}

// Every file a recorded, cached run over HTTP writes is free of the API key,
// even when the key leaks into the conversation itself.
TEST(KeyRedaction, NoFileARunWritesContainsTheKey) {
  const std::string key = "sk-test-SECRET-0123456789abcdef";
  ByteCounter counter;
  MockServer server({}, counter);
  server.start();
  fs::path dir = test::fresh_dir("redaction");
  RetryPolicy policy;
  auto http = std::make_unique<OpenAIModel>(Endpoint{server.base_url() + "/v1", key, "gpt-4o", policy});
  auto recorded = std::make_unique<RecordingModel>(std::move(http), dir / "cassette.jsonl", std::vector<std::string>{key});
  CachingModel model(std::move(recorded), dir / "cache.sqlite", server.base_url(), 0, {key});
  FakeKb kb(FakeKb::Style::grafito, kGrafito);
  AgentRun run = run_agent(model, kb, std::string("slow query; my key is ") + key);
  ASSERT_EQ(run.stop, AgentStop::answered) << run.error;
  std::size_t files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    ++files;
    std::string bytes = test::read_file(entry.path());
    EXPECT_EQ(bytes.find(key), std::string::npos) << entry.path();
    EXPECT_EQ(bytes.find("SECRET-0123"), std::string::npos) << entry.path();
  }
  EXPECT_GE(files, 2u);
  EXPECT_NE(test::read_file(dir / "cassette.jsonl").find("[REDACTED]"), std::string::npos);
}

// A question with bytes that are not UTF-8 records as U+FFFD, and the replay
// of the same run finds every request (the hash is of the repaired text).
TEST(Cassette, InvalidUtf8IsRecordedRepairedAndReplays) {
  ByteCounter counter;
  fs::path cassette = test::fresh_dir("cassette-utf8") / "run.jsonl";
  FakeKb kb(FakeKb::Style::grafito, kGrafito);
  RecordingModel recorder(std::make_unique<SimModel>(SimOptions{}, counter), cassette, {});
  const std::string question = "slow caf\xE9 query \xFF";
  AgentRun recorded = run_agent(recorder, kb, question);
  ASSERT_EQ(recorded.stop, AgentStop::answered) << recorded.error;
  std::string text = test::read_file(cassette);
  EXPECT_NE(text.find("caf\xEF\xBF\xBD"), std::string::npos);
  EXPECT_EQ(text.find("\xFF"), std::string::npos);
  ReplayModel replay(cassette);
  AgentRun replayed = run_agent(replay, kb, question);
  EXPECT_EQ(replayed.stop, AgentStop::answered) << replayed.error;
  EXPECT_EQ(replayed.turns, recorded.turns);
}

// A key with a quote in it is escaped inside JSON: the cassette line stays
// valid JSON and the escaped form is redacted too.
TEST(KeyRedaction, CassetteLinesStayValidJsonWhateverTheKey) {
  const std::string key = "sk-\"quoted\\key-0042";
  ByteCounter counter;
  fs::path cassette = test::fresh_dir("redaction-quoted") / "run.jsonl";
  RecordingModel recorder(std::make_unique<SimModel>(SimOptions{}, counter), cassette, {key});
  FakeKb kb(FakeKb::Style::grafito, kGrafito);
  run_agent(recorder, kb, "slow query " + key);
  std::string text = test::read_file(cassette);
  EXPECT_EQ(text.find("quoted"), std::string::npos);
  std::size_t lines = 0;
  for (std::size_t at = 0, end; (end = text.find('\n', at)) != std::string::npos; at = end + 1, ++lines)
    EXPECT_TRUE(nlohmann::json::accept(text.substr(at, end - at))) << text.substr(at, end - at);
  EXPECT_GE(lines, 2u);
  EXPECT_EQ(ReplayModel(cassette).size(), lines);
}

}  // namespace
}  // namespace okfbench::agents
