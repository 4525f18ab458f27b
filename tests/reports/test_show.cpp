#include "reports/show.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/reports/fixtures.hpp"

namespace okfbench::reports {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TrialRecord provider_trial() {
  TrialRecord r = fixtures::base("q1", PathKind::agent);
  TurnRecord t = fixtures::turn(1050, 0, 40);
  t.attribution = {{"tools", 700}, {"system", 200}, {"question", 100}, {"framing", 3}};
  t.tool_calls = {{"search", R"({"query":"é — the wide one"})", 812, "", false, std::nullopt}};
  r.turns = {t};
  r.answer = "Done.";
  return r;
}

TEST(Show, WithoutATranscriptTurnsShowTokensAndCallSizesAndTheProvidersDifference) {
  const std::string text = show_text(provider_trial(), nullptr, TranscriptSet{}, ShowOptions{});
  EXPECT_THAT(text, HasSubstr("(no transcript"));
  EXPECT_THAT(text, HasSubstr("turn 1: 1,050 in (1,050 new, 0 re-sent, 0 cached), 40 out"));
  EXPECT_THAT(text, HasSubstr("input: tools 700, system 200, question 100, framing 3 (okfbench counts 1,003, the provider 1,050: +47)"));
  EXPECT_THAT(text, HasSubstr("[812 bytes]"));
  EXPECT_THAT(text, HasSubstr("A: Done."));
}

TEST(Show, LongTextIsCutToTheWidthOnACharacterBoundaryUnlessFull) {
  TrialRecord r = provider_trial();
  r.answer = std::string(30, 'a') + "ééééééééééééééééééééééééé" + std::string(200, 'b');
  ShowOptions narrow;
  narrow.width = 40;
  const std::string cut = show_text(r, nullptr, TranscriptSet{}, narrow);
  const std::string line = cut.substr(cut.find("A: "), cut.find('\n', cut.find("A: ")) - cut.find("A: "));
  EXPECT_LE(line.size(), 45u);
  EXPECT_THAT(line, HasSubstr("... [280 bytes]"));
  EXPECT_NE(nlohmann::json::parse(nlohmann::json(line).dump()).get<std::string>(), "");  // still valid UTF-8
  narrow.full = true;
  EXPECT_THAT(show_text(r, nullptr, TranscriptSet{}, narrow), HasSubstr(r.answer));
  EXPECT_THAT(show_text(r, nullptr, TranscriptSet{}, narrow), Not(HasSubstr("bytes]\nA")));
}

TEST(Show, JsonCarriesThePerTurnSplit) {
  const nlohmann::json j = show_json(provider_trial(), nullptr, TranscriptSet{});
  EXPECT_EQ(j["transcript"], nullptr);
  EXPECT_EQ(j["turns"][0]["new_input_tokens"], 1050);
  EXPECT_EQ(j["turns"][0]["resent_input_tokens"], 0);
  EXPECT_EQ(j["turns"][0]["attribution"][0]["origin"], "tools");
  EXPECT_EQ(j["record"]["trial_key"], "a-q1");
}

}  // namespace
}  // namespace okfbench::reports
