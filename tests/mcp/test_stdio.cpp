#include "mcp/stdio.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "mcp/jsonrpc.hpp"
#include "tests/mcp/mcp_fixture.hpp"

namespace okfbench::mcp {
namespace {
using namespace test_fixture;

std::vector<json> replies(const std::string& input) {
  retrieval::Bundle bundle = retrieval::Bundle::load(demo());
  Server server({{"demo", &bundle}}, {});
  std::istringstream in(input);
  std::ostringstream out;
  serve_stdio(server, in, out);
  std::vector<json> lines;
  std::istringstream text(out.str());
  for (std::string line; std::getline(text, line);) lines.push_back(json::parse(line));
  return lines;
}

std::string line(const json& message) { return message.dump() + "\n"; }

TEST(StdioTransport, OneReplyLinePerRequestLine) {
  std::string input = line(request(1, "initialize", initialize_params())) +
                      line({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}) + "\n   \n" +
                      request(2, "tools/call", {{"name", "search"}, {"arguments", {{"query", "slow\nquery"}}}}).dump() + "\r\n" +
                      line(request(3, "ping"));
  std::vector<json> out = replies(input);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0]["id"], 1);
  EXPECT_EQ(out[1]["id"], 2);
  EXPECT_EQ(out[1]["result"]["isError"], false);
  EXPECT_EQ(out[2]["id"], 3);
}

TEST(StdioTransport, AnOversizedLineIsRefusedAndTheSessionGoesOn) {
  std::string input = line(request(1, "initialize", initialize_params())) + std::string(jsonrpc::kMaxMessageBytes + 10, 'x') +
                      "\n" + line(request(2, "ping"));
  std::vector<json> out = replies(input);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(error_code(out[1]), jsonrpc::code::invalid_request);
  EXPECT_NE(out[1]["error"]["message"].get<std::string>().find(std::to_string(jsonrpc::kMaxMessageBytes + 10)),
            std::string::npos);
  EXPECT_EQ(out[2]["result"], json::object());
}

TEST(StdioTransport, EndsAtTheEndOfInputEvenWithoutAFinalNewline) {
  std::vector<json> out = replies(line(request(1, "initialize", initialize_params())) + request(2, "ping").dump());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1]["id"], 2);
  EXPECT_TRUE(replies("").empty());
}

}  // namespace
}  // namespace okfbench::mcp
