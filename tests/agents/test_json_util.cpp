#include "agents/json_util.hpp"

#include <gtest/gtest.h>

#include "agents/anthropic_json.hpp"
#include "agents/openai_json.hpp"
#include "core/error.hpp"

namespace okfbench::agents::json_util {
namespace {

TEST(JsonUtil, NestingDepthIgnoresBracketsInStrings) {
  EXPECT_EQ(nesting_depth(R"({"a":[1,{"b":[]}]})"), 4u);
  EXPECT_EQ(nesting_depth(R"({"a":"[[[[[\"[[[["})"), 1u);
  EXPECT_EQ(nesting_depth("plain text"), 0u);
  EXPECT_EQ(nesting_depth(std::string(100000, '['), 10), 11u);  // stops counting past the limit
}

TEST(JsonUtil, ParseRefusesDeepDocumentsAndNamesThem) {
  EXPECT_NO_THROW(parse(std::string(kMaxDepth, '[') + std::string(kMaxDepth, ']'), "doc"));
  try {
    parse(std::string(100000, '[') + std::string(100000, ']'), "OpenAI response");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "OpenAI response: JSON nests deeper than 128 levels; refused (a hostile or broken document)");
  }
}

TEST(JsonUtil, ParseErrorsAreValidUtf8) {
  try {
    parse("{\"a\": \"\xFF\"}", "reply");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(valid_utf8(e.what()), e.what());
  }
}

// Found by tests/fuzz (fuzz_openai, fuzz_anthropic): nlohmann reports a
// number too big for a double as out_of_range, not parse_error, and it
// escaped every reply parser.
TEST(JsonUtil, ANumberTooBigForADoubleIsAnInputError) {
  try {
    parse(R"({"max_tokens":12E444})", "OpenAI response");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("OpenAI response: malformed or truncated JSON"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("number overflow"), std::string::npos) << e.what();
  }
  EXPECT_THROW(openai::response_from_json(R"({"choices":[],"usage":{"prompt_tokens":1e999}})"), InputError);
  EXPECT_THROW(anthropic::response_from_json(R"({"content":[],"usage":{"input_tokens":-1E400}})"), InputError);
}

TEST(JsonUtil, ValidUtf8ReplacesEachBadByte) {
  EXPECT_EQ(valid_utf8("plain"), "plain");
  EXPECT_EQ(valid_utf8("caf\xC3\xA9"), "caf\xC3\xA9");
  EXPECT_EQ(valid_utf8("caf\xE9"), "caf\xEF\xBF\xBD");                   // Latin-1
  EXPECT_EQ(valid_utf8("\xFF\xFE"), "\xEF\xBF\xBD\xEF\xBF\xBD");         // two bad bytes, two replacements
  EXPECT_EQ(valid_utf8("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate
  EXPECT_EQ(valid_utf8("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");         // overlong
  EXPECT_EQ(valid_utf8(std::string("a\0b", 3)), std::string("a\0b", 3));  // NUL is valid UTF-8
  EXPECT_EQ(valid_utf8("\xE2\x82"), "\xEF\xBF\xBD\xEF\xBF\xBD");         // cut short
}

}  // namespace
}  // namespace okfbench::agents::json_util
