#pragma once
// The knowledge-access event of one bundle tool call (core/knowledge_access.hpp
// says what each field means per tool), read from the call's arguments and
// its result as the tools wrote them.
#include <string_view>

#include "core/knowledge_access.hpp"

namespace okfbench::agents {

// `error` is the call's error ("" when it succeeded); `content` what went back to the model.
KnowledgeAccess knowledge_access(std::string_view tool, std::string_view arguments, std::string_view content,
                                 std::string_view error, std::string_view bundle);

}  // namespace okfbench::agents
