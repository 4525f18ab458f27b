#include "engine/transcripts.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <deque>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>

#include "agents/call_error.hpp"
#include "agents/sim_model.hpp"
#include "engine/spec.hpp"
#include "reports/transcript.hpp"
#include "core/error.hpp"
#include "retrieval/tokens.hpp"
#include "tests/engine/run_fixture.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::engine {
namespace {

namespace fs = std::filesystem;
using agents::Message;
using agents::Role;

class Scripted : public agents::ChatModel {
 public:
  explicit Scripted(std::deque<agents::ChatResponse> replies) : replies_(std::move(replies)) {}
  agents::ChatResponse chat(const agents::ChatRequest&) override {
    if (replies_.empty()) throw agents::CallError(agents::Failure::transient, "HTTP 503 from the provider");
    auto r = replies_.front();
    replies_.pop_front();
    return r;
  }
  std::string name() const override { return "scripted"; }

 private:
  std::deque<agents::ChatResponse> replies_;
};

agents::ChatResponse reply(Message m, std::int64_t input) {
  agents::ChatResponse r;
  r.message = std::move(m);
  r.usage = agents::Usage{input, 0, std::nullopt, 5};
  r.stop = r.message.tool_calls.empty() ? agents::StopReason::end_turn : agents::StopReason::tool_calls;
  return r;
}

const Message kSystem{Role::system, "Use the tools.", {}, {}, {}};
const Message kQuestion{Role::user, "Where is the key sk-secret-4242 kept?", {}, {}, {}};
const Message kCall{Role::assistant, "", {{"c1", "search", R"({"query":"key"})"}}, {}, {}};
const Message kResult{Role::tool, R"([{"id":"vault","note":"sk-secret-4242"}])", {}, "c1", "search"};

agents::ChatRequest request(std::vector<Message> messages) {
  agents::ChatRequest r;
  r.messages = std::move(messages);
  r.tools = {{"search", "Find concepts", R"({"type":"object","properties":{"query":{"type":"string"}}})"}};
  return r;
}

TEST(TranscriptRecorder, EachTurnKeepsOnlyWhatItAddedAndKeysAreRedacted) {
  const auto counter = retrieval::make_counter("o200k_base");
  Scripted inner({reply(kCall, 100), reply({Role::assistant, "In the vault.", {}, {}, {}}, 150)});
  TranscriptRecorder recorder(inner, {"sk-secret-4242"}, *counter);
  recorder.chat(request({kSystem, kQuestion}));
  recorder.chat(request({kSystem, kQuestion, kCall, kResult}));
  const reports::Transcript t = recorder.transcript("k1", "In the vault.", "");
  ASSERT_EQ(t.turns.size(), 2u);
  ASSERT_EQ(t.turns[0].added.size(), 1u);
  EXPECT_EQ(t.turns[0].added[0].content, "Where is the key [REDACTED] kept?");
  ASSERT_EQ(t.turns[1].added.size(), 1u);  // the question and the first reply are not stored again
  EXPECT_EQ(t.turns[1].added[0].role, "tool");
  EXPECT_EQ(t.turns[1].added[0].name, "search");
  EXPECT_EQ(t.turns[1].added[0].content, R"([{"id":"vault","note":"[REDACTED]"}])");
  EXPECT_FALSE(t.turns[1].restart);
  ASSERT_TRUE(t.turns[0].reply);
  EXPECT_EQ(t.turns[0].reply->tool_calls[0].name, "search");
  EXPECT_EQ(t.turns[0].stop, "tool_calls");
  EXPECT_EQ(t.turns[1].input_tokens, 150);
  ASSERT_EQ(recorder.prompts().size(), 1u);
  EXPECT_EQ(recorder.prompts()[0].system, "Use the tools.");
  EXPECT_EQ(recorder.prompts()[0].hash, t.turns[0].prompt_hash);
  EXPECT_EQ(t.turns[1].prompt_hash, t.turns[0].prompt_hash);
  EXPECT_EQ(nlohmann::json(t).dump().find("sk-secret-4242"), std::string::npos);
}

TEST(TranscriptRecorder, ARequestThatRewritesTheHistoryIsARestartAndAFailedCallIsKept) {
  const auto counter = retrieval::make_counter("o200k_base");
  Scripted inner({reply(kCall, 100)});
  TranscriptRecorder recorder(inner, {}, *counter);
  recorder.chat(request({kSystem, kQuestion}));
  const Message other{Role::user, "Another question", {}, {}, {}};
  EXPECT_THROW(recorder.chat(request({kSystem, other})), agents::CallError);
  const reports::Transcript t = recorder.transcript("k1", "", "model error: HTTP 503 from the provider");
  ASSERT_EQ(t.turns.size(), 2u);
  EXPECT_TRUE(t.turns[1].restart);
  ASSERT_EQ(t.turns[1].added.size(), 1u);
  EXPECT_EQ(t.turns[1].added[0].content, "Another question");
  EXPECT_FALSE(t.turns[1].reply);
  EXPECT_EQ(t.turns[1].error, "HTTP 503 from the provider");
  EXPECT_EQ(t.error, "model error: HTTP 503 from the provider");
}

TEST(TranscriptRecorder, ToolResultsNoRequestCarriedAreUnsent) {
  const auto counter = retrieval::make_counter("o200k_base");
  Scripted inner({reply(kCall, 100)});
  TranscriptRecorder recorder(inner, {}, *counter);
  recorder.chat(request({kSystem, kQuestion}));
  recorder.note_conversation({kSystem, kQuestion, kCall, kResult});
  const reports::Transcript t = recorder.transcript("k1", "", "");
  ASSERT_EQ(t.unsent.size(), 1u);
  EXPECT_EQ(t.unsent[0].tool_call_id, "c1");
}

TEST(TranscriptRecorder, OnSimTheAttributionSumsToEachTurnsInputTokens) {
  const auto counter = retrieval::make_counter("o200k_base");
  agents::SimModel sim({}, *counter);
  TranscriptRecorder recorder(sim, {}, *counter);
  const auto first = recorder.chat(request({kSystem, kQuestion}));
  const auto second = recorder.chat(request({kSystem, kQuestion, kCall, kResult}));
  std::vector<reports::TurnRecord> turns(2);
  recorder.attribute(turns);
  const std::vector<std::int64_t> inputs = {*first.usage.input_tokens, *second.usage.input_tokens};
  for (std::size_t i = 0; i < 2; ++i) {
    std::int64_t sum = 0;
    for (const auto& part : turns[i].attribution) sum += part.tokens;
    EXPECT_EQ(sum, inputs[i]) << "turn " << i + 1;
  }
  std::set<std::string> second_origins;
  for (const auto& part : turns[1].attribution) second_origins.insert(part.origin);
  EXPECT_EQ(second_origins, (std::set<std::string>{"tools", "system", "question", "history:assistant", "new:tool:search", "framing"}));
  std::vector<reports::TurnRecord> three(3);
  recorder.attribute(three);  // not one turn per answered call: left alone
  EXPECT_TRUE(three[0].attribution.empty());
}

TEST(TranscriptMode, ParsesTheThreeModes) {
  EXPECT_EQ(parse_transcript_mode("all"), TranscriptMode::all);
  EXPECT_EQ(parse_transcript_mode("errors"), TranscriptMode::errors);
  EXPECT_EQ(parse_transcript_mode("none"), TranscriptMode::none);
  EXPECT_THROW(parse_transcript_mode("some"), UsageError);
}

// ---- through the runner

std::int64_t sum_of(const std::vector<reports::InputShare>& parts) {
  return std::accumulate(parts.begin(), parts.end(), std::int64_t{0}, [](std::int64_t s, const auto& p) { return s + p.tokens; });
}

TEST(RunTranscripts, EveryTrialHasItsTranscriptAndEveryTurnsAttributionSumsToItsInput) {
  const fs::path dir = test::fresh_dir("run-transcripts");
  const RunResult result = run_experiment(load_spec(write_spec(dir, 30, 4)), quiet(dir / "out"));
  ASSERT_EQ(result.failed, 0u);
  const auto records = reports::read_run_dir(dir / "out").records;
  const reports::TranscriptSet set = reports::read_transcripts(dir / "out" / reports::kTranscriptsFile);
  ASSERT_EQ(set.trials.size(), records.size());
  EXPECT_EQ(set.trial_lines, records.size());
  EXPECT_EQ(set.prompt_lines, set.prompts.size());
  EXPECT_LE(set.prompts.size(), 3u);  // one per distinct system prompt and tool list: context, two agent surfaces
  std::size_t packed_parts = 0;
  for (const auto& r : records) {
    const reports::Transcript* t = set.find(r.trial_key);
    ASSERT_NE(t, nullptr) << r.trial_key;
    ASSERT_EQ(t->turns.size(), r.turns.size()) << r.trial_key;
    EXPECT_EQ(t->answer, r.answer);
    for (std::size_t i = 0; i < r.turns.size(); ++i) {
      ASSERT_FALSE(r.turns[i].attribution.empty());
      EXPECT_EQ(sum_of(r.turns[i].attribution), *r.turns[i].input_tokens) << r.trial_key << " turn " << i + 1;
      EXPECT_EQ(t->turns[i].input_tokens, r.turns[i].input_tokens);
      EXPECT_NE(set.prompt(t->turns[i].prompt_hash), nullptr);
      for (const auto& part : r.turns[i].attribution) packed_parts += part.origin.starts_with("pack:") ? 1 : 0;
    }
  }
  EXPECT_GT(packed_parts, 0u);
}

TEST(RunTranscripts, ErrorsKeepsOnlyFailedTrialsAndNoneWritesNoFile) {
  const fs::path dir = test::fresh_dir("run-transcripts-modes");
  const fs::path spec = write_spec(dir, 30, 2);
  RunOptions none = quiet(dir / "none");
  none.transcripts = TranscriptMode::none;
  run_experiment(load_spec(spec), none);
  EXPECT_FALSE(fs::exists(dir / "none" / reports::kTranscriptsFile));
  RunOptions errors = quiet(dir / "errors");
  errors.transcripts = TranscriptMode::errors;
  const RunResult ran = run_experiment(load_spec(spec), errors);
  ASSERT_EQ(ran.failed, 0u);
  EXPECT_TRUE(reports::read_transcripts(dir / "errors" / reports::kTranscriptsFile).trials.empty());
}

}  // namespace
}  // namespace okfbench::engine
