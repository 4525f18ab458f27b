#include "mcp/stdio.hpp"

#include <fmt/format.h>

#include <istream>
#include <ostream>
#include <string>

#include "mcp/jsonrpc.hpp"
#include "mcp/server.hpp"
#include "core/json_text.hpp"

namespace okfbench::mcp {
namespace {

// One line without its '\n', keeping at most `limit` + 1 bytes of it;
// `length` is the whole line's. False at the end of input with nothing read.
bool read_line(std::streambuf& in, std::string& line, std::size_t limit, std::size_t& length) {
  line.clear();
  length = 0;
  for (int c = in.sbumpc(); c != std::char_traits<char>::eof(); c = in.sbumpc()) {
    if (c == '\n') return true;
    if (++length <= limit + 1) line.push_back(static_cast<char>(c));
  }
  return length > 0;
}

}  // namespace

void serve_stdio(Server& server, std::istream& in, std::ostream& out) {
  Session session;
  std::string line;
  std::size_t length = 0;
  while (in.rdbuf() && read_line(*in.rdbuf(), line, jsonrpc::kMaxMessageBytes, length)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    std::optional<std::string> reply;
    if (length > jsonrpc::kMaxMessageBytes)
      reply = json_text(jsonrpc::error(nullptr, {jsonrpc::code::invalid_request,
                                                 fmt::format("message of {} bytes refused: at most {} bytes", length,
                                                             jsonrpc::kMaxMessageBytes)}));
    else
      reply = server.handle(line, session);
    if (!reply) continue;
    out << *reply << '\n' << std::flush;
    if (!out) return;
  }
}

}  // namespace okfbench::mcp
