#pragma once
// A Model Context Protocol server over OKF bundles, independent of the
// transport (mcp/stdio.hpp, mcp/http_server.hpp carry its messages).
//
// Protocol revision 2025-06-18; a client asking for 2025-03-26 or 2024-11-05
// gets that revision, any other gets 2025-06-18 (the client then decides).
//   initialize                 the negotiated version, capabilities (tools, resources), server info, instructions
//   ping                       {}
//   tools/list                 the surface's tools with their JSON Schemas (agents/bundle_tools.hpp)
//   tools/call                 runs one tool; a tool's failure is a result with isError, not a JSON-RPC error
//   resources/list             every concept as okf://BUNDLE/ID (mcp/uri.hpp), kResourcePage a page
//   resources/read             one concept as text/markdown: read_concept's metadata header and the whole body
//   resources/templates/list   okf://BUNDLE/{+concept_id}
//   notifications              accepted; nothing is answered
// Before initialize only initialize and ping are served. JSON-RPC batches are
// served for 2025-03-26 and 2024-11-05 (at most jsonrpc::kMaxBatch messages);
// 2025-06-18 removed them. With several bundles the tools are
// agents::MultiBundleTools': search without "bundle" searches one index over
// all of them (shared statistics), every other tool requires "bundle", every
// result names its bundle, and the instructions list the bundles; the
// session log records a search over all of them as bundle "*" with its hits
// as BUNDLE:ID.
//
// `remember` is offered only with allow_write; every path rule of the bundle
// holds because every call goes through BundleTools (lookups in memory,
// Bundle::remember for writes).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agents/bundle_tools.hpp"
#include "retrieval/bundle.hpp"

namespace okfbench::mcp {

class SessionLog;

inline constexpr std::string_view kLatestProtocol = "2025-06-18";
// The revisions initialize accepts as asked, newest first.
const std::vector<std::string>& protocol_versions();
inline constexpr std::size_t kResourcePage = 100;

struct ServedBundle {
  std::string name;            // as URIs and the "bundle" argument name it; unique
  retrieval::Bundle* bundle;   // must outlive the server
  // The bundle's search index with the default config (one the index cache
  // restored), which must outlive the server; nullptr: the server builds one.
  const retrieval::SearchIndex* index = nullptr;
};

struct ServerOptions {
  agents::Surface surface = agents::Surface::grafito;
  std::vector<std::string> tools;  // a subset of the surface; empty = all it offers
  bool allow_write = false;        // offer remember (grafito)
  std::size_t max_body_chars = 8000;
  std::string version = "unknown";  // serverInfo.version: the program's (engine::build_version)
};

// One client's state. The transport owns it: stdio has one, HTTP one per
// Mcp-Session-Id.
struct Session {
  std::string id = new_id();
  std::string protocol_version;  // "" until initialize was answered
  std::int64_t calls = 0;
  bool tools_listed = false;
  static std::string new_id();  // 32 random hex digits
};

class Server {
 public:
  // Throws UsageError for a tool the surface does not have, remember without
  // allow_write, no bundles or two bundles of one name; InputError when the
  // log needs the tokenizers and they cannot be loaded.
  Server(std::vector<ServedBundle> bundles, ServerOptions options, SessionLog* log = nullptr);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // One message or batch as the client sent it; the reply to send, or
  // nullopt when there is none (notifications and responses only). Never
  // throws for what a client sends. Thread-safe (one call at a time).
  std::optional<std::string> handle(std::string_view text, Session& session);

  std::vector<std::string> tool_names() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace okfbench::mcp
