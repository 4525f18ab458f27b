#include "mcp/http_checks.hpp"

#include <gtest/gtest.h>

namespace okfbench::mcp {
namespace {

// DNS rebinding: a page of evil.example whose name now resolves to
// 127.0.0.1 sends its own name as Host.
TEST(HttpChecks, HostMustBeALoopbackNameWithThisPortOrNone) {
  for (const char* host : {"127.0.0.1:8765", "127.0.0.1", "localhost:8765", "localhost", "LocalHost:8765", "[::1]:8765",
                           "[::1]"})
    EXPECT_TRUE(loopback_host(host, 8765)) << host;
  for (const char* host : {"", "evil.example", "evil.example:8765", "127.0.0.1:8766", "localhost:80", "localhost:",
                           "localhost.", "localhost.evil.example", "127.0.0.1.nip.io:8765", "user@localhost:8765",
                           "localhost:8765@evil.example", "127.0.0.2:8765", "[::1", "[::1]x", "localhost:08765",
                           "localhost:+8765", "localhost:8765:8765", " localhost", "0.0.0.0:8765"})
    EXPECT_FALSE(loopback_host(host, 8765)) << host;
}

TEST(HttpChecks, OriginIsParsedStrictly) {
  for (const char* origin : {"http://localhost", "http://localhost:3000", "https://127.0.0.1", "http://127.0.0.1:65535",
                             "http://[::1]:8080", "HTTP://LOCALHOST"})
    EXPECT_TRUE(loopback_origin(origin)) << origin;
  for (const char* origin :
       {"", "null", "http://localhost:80@evil.example", "http://user@localhost", "http://evil.example",
        "http://localhost.evil.example:80", "ftp://localhost", "file://", "localhost", "//localhost",
        "http://localhost/", "http://localhost/path", "http://localhost?x", "http://localhost#x", "http://localhost:",
        "http://localhost:0", "http://localhost:65536", "http://localhost:abc", "http://localhost:80:80",
        "http://localhost\\@evil.example", "http://", "http://127.0.0.1.evil.example", "http:// localhost"})
    EXPECT_FALSE(loopback_origin(origin)) << origin;
}

TEST(HttpChecks, ContentTypeMediaTypeMustBeExactlyJson) {
  for (const char* type : {"application/json", "application/json; charset=utf-8", "Application/JSON",
                           " application/json ;charset=utf-8", "application/json;"})
    EXPECT_TRUE(json_content_type(type)) << type;
  for (const char* type : {"", "text/plain", "text/plain; x=application/json", "application/jsonx",
                           "application/json-patch+json", "xapplication/json", "application/ json", "multipart/form-data"})
    EXPECT_FALSE(json_content_type(type)) << type;
}

TEST(HttpChecks, AcceptMustAdmitJsonAsAMediaRange) {
  for (const char* accept : {"", "application/json", "application/json, text/event-stream", "*/*", "application/*",
                             "text/html, application/json;q=0.5", "text/event-stream,application/json"})
    EXPECT_TRUE(accepts_json(accept)) << accept;
  for (const char* accept : {"text/html", "text/html; x=application/json", "application/json;q=0",
                             "application/json; q=0.000", "*/*;q=0", "application/jsonx", "text/*"})
    EXPECT_FALSE(accepts_json(accept)) << accept;
}

TEST(HttpChecks, AHeaderIsFoundInTheHeadAsSentEvenWithAnEmptyValue) {
  std::string head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\norigin:\r\n\r\nOrigin-Body: x";
  EXPECT_TRUE(header_sent(head, "Origin"));
  EXPECT_TRUE(header_sent(head, "host"));
  EXPECT_FALSE(header_sent(head, "Origin-Body"));  // past the end of the head
  EXPECT_FALSE(header_sent("POST /mcp HTTP/1.1\r\nX-Origin: a\r\n\r\n", "Origin"));
}

}  // namespace
}  // namespace okfbench::mcp
