// The MCP server (mcp/server.hpp) over a two-concept bundle, fed what a
// client sends: each input line is one message or batch of one session,
// after an initialize this target sends first (so tools/call and
// resources/read are reached); and the HTTP transport's header rules
// (mcp/http_checks.hpp) on each line as a header value.
//
// Invariants: handle() never throws; every reply is one JSON-RPC 2.0 object
// or a batch of them; a loopback Origin starts with http:// or https://.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>

#include "mcp/http_checks.hpp"
#include "mcp/server.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

namespace fs = std::filesystem;
using namespace okfbench;
using fuzz::check;
using nlohmann::json;

mcp::Server& server() {
  static const fs::path root = [] {
    const fs::path r = fuzz::scratch_dir() / "bundle";
    fs::create_directories(r / "metrics");
    std::ofstream(r / "metrics" / "margin.md") << "---\ntype: Metric\ntitle: Gross margin\n---\nRevenue less cost. "
                                                  "See [the standard](margin-standard.md).\n";
    std::ofstream(r / "metrics" / "margin-standard.md") << "---\ntype: Standard\ntitle: Margin standard\n---\nHow.\n";
    return r;
  }();
  static retrieval::Bundle bundle = retrieval::Bundle::load(root);
  static mcp::Server instance({{"b", &bundle, nullptr}}, mcp::ServerOptions{});
  return instance;
}

bool is_reply(const json& j) { return j.is_object() && j.value("jsonrpc", "") == "2.0" && j.contains("id"); }

void check_reply(const std::string& text) {
  const json j = json::parse(text, nullptr, false);
  check(!j.is_discarded(), "a reply that is not JSON");
  if (j.is_array()) {
    check(!j.empty(), "an empty batch reply");
    for (const auto& one : j) check(is_reply(one), "a batch reply element that is not a JSON-RPC reply");
  } else {
    check(is_reply(j), "a reply that is not a JSON-RPC reply");
  }
}

void check_headers(std::string_view value) {
  if (mcp::loopback_origin(value)) {
    check(value.starts_with("http://") || value.starts_with("https://"), "a loopback Origin with another scheme");
  }
  (void)mcp::loopback_host(value, 8080);
  (void)mcp::json_content_type(value);
  (void)mcp::accepts_json(value);
  (void)mcp::header_sent(value, "origin");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  mcp::Session session;
  const std::optional<std::string> hello = server().handle(
      R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}})",
      session);
  check(hello.has_value(), "initialize has no reply");
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view line = text.substr(start, end - start);
    check_headers(line);
    if (const std::optional<std::string> reply = server().handle(line, session)) check_reply(*reply);
    start = end + 1;
  }
  return 0;
}
