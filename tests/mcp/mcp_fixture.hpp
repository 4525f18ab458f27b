#pragma once
// A server over the demo bundle and helpers that speak to it in JSON, for
// the tests of mcp/.
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "mcp/server.hpp"
#include "mcp/session_log.hpp"
#include "reports/session.hpp"
#include "retrieval/bundle.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::mcp::test_fixture {

using nlohmann::json;

inline std::filesystem::path demo() { return test::source_dir() / "datasets" / "bundles" / "demo"; }

// A writable copy of the demo bundle (for remember), in a folder named `name`.
inline std::filesystem::path demo_copy(const std::string& name = "demo") {
  std::filesystem::path dir = test::fresh_dir("mcp-copy") / name;
  std::filesystem::copy(demo(), dir, std::filesystem::copy_options::recursive);
  return dir;
}

inline json request(json id, const std::string& method, json params = json::object()) {
  return {{"jsonrpc", "2.0"}, {"id", std::move(id)}, {"method", method}, {"params", std::move(params)}};
}

inline json initialize_params(const std::string& version = "2025-06-18") {
  return {{"protocolVersion", version}, {"capabilities", json::object()}, {"clientInfo", {{"name", "gtest"}, {"version", "1.0"}}}};
}

struct Demo {
  explicit Demo(ServerOptions options = {}, std::filesystem::path root = demo(), bool with_log = true)
      : bundle(retrieval::Bundle::load(root)) {
    if (with_log) {
      log_path = test::fresh_dir("mcp-log") / "session.jsonl";
      log = std::make_unique<SessionLog>(log_path);
    }
    server = std::make_unique<Server>(std::vector<ServedBundle>{{root.filename().string(), &bundle}}, options, log.get());
  }

  // The reply to `text`, parsed; null when the server answered nothing.
  json send_text(const std::string& text) {
    std::optional<std::string> reply = server->handle(text, session);
    if (!reply) return nullptr;
    return json::parse(*reply);
  }
  json send(const json& message) { return send_text(message.dump()); }
  json call(const std::string& method, json params = json::object()) { return send(request(++id, method, std::move(params))); }
  json initialize(const std::string& version = "2025-06-18") { return call("initialize", initialize_params(version)); }
  // tools/call's result object.
  json tool(const std::string& name, json arguments) {
    return call("tools/call", {{"name", name}, {"arguments", std::move(arguments)}})["result"];
  }
  std::vector<reports::SessionEvent> events() const { return reports::read_session_log(log_path); }

  retrieval::Bundle bundle;
  std::filesystem::path log_path;
  std::unique_ptr<SessionLog> log;
  std::unique_ptr<Server> server;
  Session session;
  int id = 0;
};

inline int error_code(const json& reply) { return reply.at("error").at("code").get<int>(); }

}  // namespace okfbench::mcp::test_fixture
