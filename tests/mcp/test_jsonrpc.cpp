#include "mcp/jsonrpc.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/mcp/mcp_fixture.hpp"

namespace okfbench::mcp {
namespace {
using namespace test_fixture;
namespace code = jsonrpc::code;

// The error code the server answers `text` with, after initialize; 0 when it answered with a result.
int answer_code(const std::string& text) {
  static Demo d({}, demo(), false);
  if (d.session.protocol_version.empty()) d.initialize();
  json reply = d.send_text(text);
  return reply.contains("error") ? error_code(reply) : 0;
}

json answer_id(const std::string& text) {
  Demo d({}, demo(), false);
  d.initialize();
  return d.send_text(text)["id"];
}

TEST(JsonRpc, TextThatIsNotJsonIsAParseError) {
  EXPECT_EQ(answer_code("garbage"), code::parse_error);
  EXPECT_EQ(answer_code("{\"jsonrpc\": \"2.0\", \"id\": 1,"), code::parse_error);  // cut short
  EXPECT_EQ(answer_code(""), code::parse_error);
  EXPECT_EQ(answer_code("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x\":\"\xff\"}"), code::parse_error);  // not UTF-8
  EXPECT_TRUE(answer_id("garbage").is_null());
}

TEST(JsonRpc, WrongVersionOrShapeIsAnInvalidRequest) {
  EXPECT_EQ(answer_code(R"({"jsonrpc":"1.0","id":1,"method":"ping"})"), code::invalid_request);
  EXPECT_EQ(answer_code(R"({"id":1,"method":"ping"})"), code::invalid_request);
  EXPECT_EQ(answer_code(R"({"jsonrpc":2.0,"id":1,"method":"ping"})"), code::invalid_request);
  EXPECT_EQ(answer_code(R"({"jsonrpc":"2.0","id":1,"method":7})"), code::invalid_request);
  EXPECT_EQ(answer_code(R"({"jsonrpc":"2.0","id":1})"), code::invalid_request);
  EXPECT_EQ(answer_code(R"({"jsonrpc":"2.0","id":1,"method":"ping","params":"x"})"), code::invalid_request);
  EXPECT_EQ(answer_code("42"), code::invalid_request);
  EXPECT_EQ(answer_code("\"ping\""), code::invalid_request);
  EXPECT_EQ(answer_id(R"({"jsonrpc":"1.0","id":"keep","method":"ping"})"), "keep");  // a usable id is answered
}

TEST(JsonRpc, UnknownMethodIsMethodNotFoundAndPositionalParamsAreInvalidParams) {
  EXPECT_EQ(answer_code(R"({"jsonrpc":"2.0","id":1,"method":"tools/delete"})"), code::method_not_found);
  EXPECT_EQ(answer_code(R"({"jsonrpc":"2.0","id":1,"method":"PING"})"), code::method_not_found);
  EXPECT_EQ(answer_code(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":["search"]})"), code::invalid_params);
  EXPECT_EQ(answer_code(R"({"jsonrpc":"2.0","id":1,"method":"ping","params":null})"), 0);
}

TEST(JsonRpc, IdsMustBeShortStringsOrIntegersWithin64Bits) {
  EXPECT_EQ(answer_code(R"({"jsonrpc":"2.0","id":9223372036854775807,"method":"ping"})"), 0);
  EXPECT_EQ(answer_code(R"({"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"})"), 0);
  EXPECT_EQ(answer_code(R"({"jsonrpc":"2.0","id":-9223372036854775808,"method":"ping"})"), 0);
  for (const char* id : {"18446744073709551616", "123456789012345678901234567890", "1e400", "-1e400", "1.5", "null", "true",
                         "{}", "[1]"})
    EXPECT_EQ(answer_code(std::string(R"({"jsonrpc":"2.0","method":"ping","id":)") + id + "}"), code::invalid_request) << id;
  std::string long_id(jsonrpc::kMaxIdBytes + 1, 'x');
  EXPECT_EQ(answer_code(R"({"jsonrpc":"2.0","method":"ping","id":")" + long_id + "\"}"), code::invalid_request);
  EXPECT_TRUE(answer_id(R"({"jsonrpc":"2.0","method":"ping","id":123456789012345678901234567890})").is_null());
  EXPECT_EQ(answer_id(R"({"jsonrpc":"2.0","method":"ping","id":18446744073709551615})").get<std::uint64_t>(),
            18446744073709551615ULL);  // echoed exactly
}

TEST(JsonRpc, OversizedAndDeeplyNestedMessagesAreRefusedWithoutParsing) {
  std::string big = R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":")" +
                    std::string(jsonrpc::kMaxMessageBytes, 'x') + "\"}}";
  EXPECT_EQ(answer_code(big), code::invalid_request);
  std::string deep = R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":)" + std::string(100000, '[') +
                     std::string(100000, ']') + "}}";
  EXPECT_EQ(answer_code(deep), code::invalid_request);
  auto parsed = jsonrpc::parse(std::string(jsonrpc::kMaxDepth, '[') + std::string(jsonrpc::kMaxDepth, ']'));
  EXPECT_TRUE(std::holds_alternative<json>(parsed));  // the limit itself is fine
}

TEST(JsonRpc, CheckTellsRequestsNotificationsAndResponsesApart) {
  auto request = jsonrpc::check(json::parse(R"({"jsonrpc":"2.0","id":"a","method":"ping"})"));
  ASSERT_TRUE(std::holds_alternative<jsonrpc::Message>(request));
  EXPECT_EQ(std::get<jsonrpc::Message>(request).kind, jsonrpc::Kind::request);
  auto note = jsonrpc::check(json::parse(R"({"jsonrpc":"2.0","method":"notifications/initialized"})"));
  EXPECT_EQ(std::get<jsonrpc::Message>(note).kind, jsonrpc::Kind::notification);
  auto response = jsonrpc::check(json::parse(R"({"jsonrpc":"2.0","id":3,"result":{}})"));
  EXPECT_EQ(std::get<jsonrpc::Message>(response).kind, jsonrpc::Kind::response);
  EXPECT_EQ(jsonrpc::error(5, {code::invalid_params, "bad"}),
            json({{"jsonrpc", "2.0"}, {"id", 5}, {"error", {{"code", -32602}, {"message", "bad"}}}}));
}

}  // namespace
}  // namespace okfbench::mcp
