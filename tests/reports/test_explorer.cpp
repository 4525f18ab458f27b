#include "reports/explorer.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <zlib.h>

#include <nlohmann/json.hpp>

#include "reports/config_names.hpp"
#include "tests/reports/fixtures.hpp"

namespace okfbench::reports {
namespace {

using nlohmann::json;

// What the page does with a chunk: base64, then zlib inflate.
std::string inflate_base64(const std::string& encoded) {
  std::string packed(encoded.size(), '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(packed.data()), reinterpret_cast<const unsigned char*>(encoded.data()),
                          static_cast<int>(encoded.size()));
  EXPECT_GE(n, 0);
  // EVP_DecodeBlock counts the padding bytes as data; drop one per '='.
  std::size_t pad = 0;
  for (auto it = encoded.rbegin(); it != encoded.rend() && *it == '='; ++it) ++pad;
  packed.resize(static_cast<std::size_t>(n) - pad);
  std::string text(1 << 20, '\0');
  uLongf size = static_cast<uLongf>(text.size());
  EXPECT_EQ(uncompress(reinterpret_cast<Bytef*>(text.data()), &size, reinterpret_cast<const Bytef*>(packed.data()),
                       static_cast<uLong>(packed.size())),
            Z_OK);
  text.resize(size);
  return text;
}

ExplorerData data_of(const std::vector<TrialRecord>& records, const TranscriptSet* transcripts = nullptr) {
  std::vector<PathConfig> configs;
  for (const auto& r : records) configs.push_back(r.config);
  return explorer_data(records, transcripts, fixtures::pricing(), short_config_names(configs));
}

json details_of(const TrialRecord& r, const TranscriptSet* transcripts) { return explorer_details(r, transcripts, fixtures::pricing()); }

TEST(Explorer, DeflateBase64RoundTrips) {
  for (const std::string& text : {std::string(""), std::string("a"), std::string("ab"), std::string(5000, 'x') + "é"}) {
    EXPECT_EQ(inflate_base64(deflate_base64(text)), text);
  }
}

TEST(Explorer, RowsAreInTableOrderWithShortNames) {
  auto table = json::parse(data_of(fixtures::small_run()).table_json);
  ASSERT_EQ(table["columns"].size(), explorer_columns().size());
  ASSERT_EQ(table["configs"].size(), 2u);
  EXPECT_EQ(table["configs"][0]["name"], "one-shot");
  EXPECT_EQ(table["configs"][1]["name"], "agent");
  EXPECT_EQ(table["configs"][1]["label"], "agent surface=okf tools=search+open max_turns=12 model=sim cache=openai");
  const auto& rows = table["rows"];
  ASSERT_EQ(rows.size(), 5u);
  // Context first, then the agent's q1, q2 and the failed q3.
  std::vector<std::string> questions;
  for (const auto& row : rows) questions.push_back(row[3].get<std::string>() + "/" + row[4].get<std::string>());
  EXPECT_EQ(questions, (std::vector<std::string>{"q1/context", "q2/context", "q1/agent", "q2/agent", "q3/agent"}));
  // Agent q1: 4 turns, 7,961 input and 200 output tokens, $0.013682, facts correct.
  EXPECT_EQ(rows[2][7], 4);
  EXPECT_EQ(rows[2][8], 7961);
  EXPECT_EQ(rows[2][9], 200);
  EXPECT_NEAR(rows[2][10].get<double>(), 0.013682, 1e-12);
  EXPECT_EQ(rows[2][11], "correct");
  EXPECT_EQ(rows[1][11], "partial");                        // context q2: half the facts
  EXPECT_EQ(rows[4][11], "");                               // failed: no grade
  EXPECT_EQ(rows[4][12], "model timeout after 3 retries");  // and its error
}

TEST(Explorer, DetailsDecodeToEachTrialsTurnsInRowOrder) {
  auto records = fixtures::small_run();
  auto data = data_of(records);
  ASSERT_EQ(data.detail_chunks.size(), 1u);
  auto details = json::parse(inflate_base64(data.detail_chunks[0]));
  ASSERT_EQ(details.size(), 5u);
  const auto& agent = details[2];
  EXPECT_EQ(agent["trial_key"], "a-q1");
  ASSERT_EQ(agent["turns"].size(), 4u);
  // Turn 3: 2,187 input, 1,024 of it cached; new = 2187 - 1582 = 605 (not recorded, from the previous turn).
  EXPECT_EQ(agent["turns"][2]["new"], 605.0);
  EXPECT_EQ(agent["turns"][2]["cached_part"], 1024.0);
  EXPECT_EQ(agent["turns"][2]["resent"], 2187.0 - 605 - 1024);
  EXPECT_EQ(agent["turns"][1]["tool_calls"][0]["name"], "open");
  EXPECT_EQ(agent["turns"][1]["tool_calls"][0]["result_bytes"], 3000);
  EXPECT_EQ(agent["answer"], "See the runbook.");
  EXPECT_EQ(agent["grades"][0]["grader"], "facts");
  EXPECT_EQ(details[0]["packed"][1]["reason"], "via LINKS_TO from glossary/graph");
}

TEST(Explorer, DetailsAreChunked) {
  std::vector<TrialRecord> records;
  for (std::size_t i = 0; i < kExplorerChunkTrials * 2 + 1; ++i) {
    auto r = fixtures::context_trial(fmt::format("q{}", 1000 + i), 100, 1, 1);
    r.trial_key = fmt::format("k{}", 1000 + i);
    records.push_back(r);
  }
  auto data = data_of(records);
  ASSERT_EQ(data.detail_chunks.size(), 3u);
  EXPECT_EQ(json::parse(inflate_base64(data.detail_chunks[0])).size(), kExplorerChunkTrials);
  auto last = json::parse(inflate_base64(data.detail_chunks[2]));
  ASSERT_EQ(last.size(), 1u);
  EXPECT_EQ(last[0]["trial_key"], fmt::format("k{}", 1000 + kExplorerChunkTrials * 2));
}

TEST(Explorer, DetailsCarryTheWholeConversationFromTheTranscript) {
  const TranscriptSet transcripts = fixtures::agent_transcripts({"q1"});
  const json d = details_of(fixtures::agent_trial("q1", true, 1.0), &transcripts);
  EXPECT_EQ(d["transcript"], "kept");
  EXPECT_EQ(d["prompts"], json::array({"prompt-okf"}));
  EXPECT_EQ(d["failed_call"], "");
  const json& turns = d["turns"];
  ASSERT_EQ(turns.size(), 4u);
  // Turn 1 sent the question and asked for a search, whose full result is with the call.
  ASSERT_EQ(turns[0]["sent"].size(), 1u);
  EXPECT_EQ(turns[0]["sent"][0]["role"], "user");
  EXPECT_EQ(turns[0]["sent"][0]["content"], "How do I speed up a slow query? (q1)");
  EXPECT_EQ(turns[0]["reply"], "");
  EXPECT_EQ(turns[0]["tool_calls"][0]["result"], R"({"results":[{"id":"runbooks/slow-queries","score":7.5}]})");
  // Later requests added only tool results, each shown with its call, not again as a message.
  EXPECT_EQ(turns[1]["sent"], json::array());
  EXPECT_EQ(turns[1]["tool_calls"][0]["result"], "# Slow queries\n\nAdd an index on the filtered column.\nRUNBOOK-END");
  EXPECT_EQ(turns[2]["tool_calls"][0]["result"], "# Graph\n\nNodes and edges.");
  EXPECT_EQ(turns[3]["reply"], "See the runbook.");
  EXPECT_EQ(turns[3]["ms"], 25.0);  // the call's own time, from the transcript
  EXPECT_FALSE(turns[3]["restart"].get<bool>());
}

TEST(Explorer, AToolResultNoShownCallAnswersStaysAMessage) {
  TranscriptSet transcripts = fixtures::agent_transcripts({"q1"});
  // The model asked for two calls in turn 1; the record kept one (the other was dropped).
  auto& turns = transcripts.trials[0].turns;
  turns[0].reply->tool_calls.push_back({"extra", "search", R"({"query":"index"})"});
  turns[1].added.push_back({"tool", "not run: over the per-turn cap", {}, "extra", "search"});
  const json d = details_of(fixtures::agent_trial("q1", true, 1.0), &transcripts);
  ASSERT_EQ(d["turns"][1]["sent"].size(), 1u);
  EXPECT_EQ(d["turns"][1]["sent"][0]["content"], "not run: over the per-turn cap");
  EXPECT_EQ(d["turns"][1]["sent"][0]["name"], "search");
}

TEST(Explorer, ATrialWithoutATranscriptSaysWhy) {
  const TranscriptSet transcripts = fixtures::agent_transcripts({"q1"});
  const json other = details_of(fixtures::agent_trial("q2", true, 1.0), &transcripts);
  EXPECT_EQ(other["transcript"], "not_kept");  // the run kept some transcripts, not this one
  EXPECT_FALSE(other["turns"][0]["tool_calls"][0].contains("result"));
  EXPECT_FALSE(other.contains("prompts"));
  EXPECT_EQ(details_of(fixtures::agent_trial("q1", true, 1.0), nullptr)["transcript"], "none");  // no transcripts file
}

TEST(Explorer, ALastCallThatFailedIsShown) {
  TranscriptSet transcripts = fixtures::agent_transcripts({"q1"});
  TranscriptTurn failed;
  failed.prompt_hash = "prompt-okf";
  failed.error = "HTTP 529: overloaded";
  transcripts.trials[0].turns.push_back(failed);
  EXPECT_EQ(details_of(fixtures::agent_trial("q1", true, 1.0), &transcripts)["failed_call"], "HTTP 529: overloaded");
}

TEST(Explorer, PromptsAreStoredOnceByHash) {
  const TranscriptSet transcripts = fixtures::agent_transcripts({"q1", "q2"});
  auto data = data_of(fixtures::small_run(), &transcripts);
  EXPECT_TRUE(json::parse(data.table_json)["transcripts"].get<bool>());
  const json prompts = json::parse(inflate_base64(data.prompts));
  ASSERT_EQ(prompts.size(), 1u);
  EXPECT_EQ(prompts["prompt-okf"]["system"], "Answer from the OKF bundle; cite concept ids.");
  ASSERT_EQ(prompts["prompt-okf"]["tools"].size(), 2u);
  EXPECT_EQ(prompts["prompt-okf"]["tools"][1]["name"], "open");
  EXPECT_EQ(prompts["prompt-okf"]["tools"][1]["parameters"], R"({"type":"object","properties":{"concept_id":{"type":"string"}}})");
  auto without = data_of(fixtures::small_run());
  EXPECT_FALSE(json::parse(without.table_json)["transcripts"].get<bool>());
  EXPECT_EQ(json::parse(inflate_base64(without.prompts)), json::object());
}

}  // namespace
}  // namespace okfbench::reports
