#pragma once
// The stdio transport of MCP: the client writes one JSON-RPC message per
// line to the server's stdin and reads one reply per line from its stdout
// (messages never hold a raw newline; JSON escapes it). Nothing else may
// reach stdout; logs go to stderr.
#include <iosfwd>

namespace okfbench::mcp {

class Server;

// Serves one session until `in` ends or `out` fails. Blank lines are
// skipped and a trailing '\r' is dropped; a line longer than
// jsonrpc::kMaxMessageBytes is read to its end without being kept and
// answered with invalid_request.
void serve_stdio(Server& server, std::istream& in, std::ostream& out);

}  // namespace okfbench::mcp
