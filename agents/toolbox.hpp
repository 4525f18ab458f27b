#pragma once
// What run_agent needs from a set of tools. BundleTools (agents/bundle_tools.hpp)
// is the real one; tests use scripted ones.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agents/access.hpp"
#include "agents/wire.hpp"

namespace okfbench::agents {

struct ToolResult {
  std::string content;  // what goes back to the model (compact JSON)
  std::string error;    // "" on success; otherwise content is {"error": error}
};

class Toolbox {
 public:
  virtual ~Toolbox() = default;
  // The enabled tools, in the order they are offered to the model.
  virtual std::vector<ToolSpec> specs() const = 0;
  // Runs one call. Never throws for bad input: unknown tools, bad arguments
  // and misses come back as ToolResult::error.
  virtual ToolResult call(std::string_view name, std::string_view arguments) = 0;
  virtual std::string default_system_prompt() const = 0;
  // The knowledge-access event of a call that `call` answered with `result`;
  // nullopt for tools that read no knowledge (the default).
  virtual std::optional<KnowledgeAccess> access(std::string_view /*name*/, std::string_view /*arguments*/,
                                                const ToolResult& /*result*/) const {
    return std::nullopt;
  }
};

// The {"error": message} result every tool returns on failure.
ToolResult tool_error(std::string message);

}  // namespace okfbench::agents
