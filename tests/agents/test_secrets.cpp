#include "agents/secrets.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>

#include "core/error.hpp"

namespace okfbench::agents {
namespace {

TEST(Secrets, RedactsEveryOccurrenceAsWrittenAndAsJsonEscapes) {
  EXPECT_EQ(redact("a sk-1234 b sk-1234", {"sk-1234"}), "a [REDACTED] b [REDACTED]");
  EXPECT_EQ(redact(R"({"e":"key k\"ey-1 here"})", {"k\"ey-1"}), R"({"e":"key [REDACTED] here"})");
  EXPECT_EQ(redact("abc", {""}), "abc");
  EXPECT_EQ(redact("a b c", {"b"}), "a b c");  // shorter than kMinSecretLength: ordinary text
  // A secret that is part of the marker itself does not loop.
  EXPECT_EQ(redact("REDACTED", {"REDACTED"}), "[REDACTED]");
}

TEST(Secrets, RedactJsonKeepsTheDocumentValid) {
  const std::string secret = "s\"ec\\ret-99";  // quote and backslash: escaped inside JSON strings
  nlohmann::json doc = {{"error", "HTTP 401: bad key " + secret}, {"nested", {{"k" + secret, {secret, 3}}}}};
  std::string out = redact_json(doc.dump(), {secret});
  nlohmann::json back = nlohmann::json::parse(out);
  EXPECT_EQ(back["error"], "HTTP 401: bad key [REDACTED]");
  EXPECT_EQ(back["nested"]["k[REDACTED]"][0], "[REDACTED]");
  EXPECT_EQ(back["nested"]["k[REDACTED]"][1], 3);
  EXPECT_EQ(redact_json("not json sk-abcd", {"sk-abcd"}), "not json [REDACTED]");
}

TEST(Secrets, RememberedKeysAndTheProviderVariablesAreKnown) {
  remember_secret("remembered-key-4242");
  remember_secret("xy");  // too short to be one
  ::setenv("ANTHROPIC_API_KEY", "sk-ant-env-7777", 1);
  std::string text = redact("remembered-key-4242 sk-ant-env-7777 xy");
  ::unsetenv("ANTHROPIC_API_KEY");
  EXPECT_EQ(text, "[REDACTED] [REDACTED] xy");
}

TEST(Secrets, DisplayUrlDropsUserInfo) {
  EXPECT_EQ(display_url("http://user:sk-KEY@host:8080/v1"), "http://host:8080/v1");
  EXPECT_EQ(display_url("https://sk-only@host/v1?x=@y"), "https://host/v1?x=@y");
  EXPECT_EQ(display_url("http://host/v1/p@th"), "http://host/v1/p@th");  // an '@' in the path is not user-info
  EXPECT_EQ(display_url("https://api.openai.com/v1"), "https://api.openai.com/v1");
  EXPECT_EQ(url_password("http://user:sk%2DKEY@host/v1"), "sk-KEY");
  EXPECT_EQ(url_password("http://host/v1"), "");
}

TEST(Secrets, HeaderChecksNameTheFieldAndTheByte) {
  EXPECT_NO_THROW(check_header_value("sk-abc.DEF_123", "--api-key"));
  for (const std::string& bad : {std::string("sk\r\nX: y"), std::string("sk\nX"), std::string("sk\0x", 4),
                                std::string("a\tb"), std::string("a\x7f")}) {
    try {
      check_header_value(bad, "--api-key");
      ADD_FAILURE() << "accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("--api-key: contains the control character"), std::string::npos) << e.what();
    }
  }
  EXPECT_NO_THROW(check_header_name("X-Gateway-Key", "headers"));
  EXPECT_THROW(check_header_name("X Bad", "headers"), UsageError);
  EXPECT_THROW(check_header_name("X:Bad", "headers"), UsageError);
  EXPECT_THROW(check_header_name("", "headers"), UsageError);
}

}  // namespace
}  // namespace okfbench::agents
