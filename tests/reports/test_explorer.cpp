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

ExplorerData data_of(const std::vector<TrialRecord>& records) {
  std::vector<PathConfig> configs;
  for (const auto& r : records) configs.push_back(r.config);
  return explorer_data(records, fixtures::pricing(), short_config_names(configs));
}

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

}  // namespace
}  // namespace okfbench::reports
