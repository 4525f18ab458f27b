#pragma once
// The knowledge-access event of one tool call: which concepts of which
// bundle reached the client, and how (reports/session.hpp names the kinds).
// Read from the call's arguments and its result as the tools wrote them
// (agents/bundle_tools.hpp), with ids made canonical through Bundle::lookup.
#include <string_view>

#include "agents/toolbox.hpp"
#include "reports/session.hpp"
#include "retrieval/bundle.hpp"

namespace okfbench::mcp {

// A failed call touched nothing: kind "" and no concepts.
reports::SessionAccess tool_access(std::string_view tool, std::string_view arguments, const agents::ToolResult& result,
                                   const retrieval::Bundle& bundle, std::string_view bundle_name);

}  // namespace okfbench::mcp
