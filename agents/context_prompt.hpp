#pragma once
// The one-shot (context) path's prompt: a system instruction and one user
// message that carries a context() pack and the question. The runner writes
// it; the sim model reads it back, as a provider's model reads the same text.
//
// User message format:
//
//   Context:
//
//   <pack text: blocks in the format of retrieval/context.hpp>
//
//   Question: <question>
//
// A block starts at the beginning of the pack or after a blank line with
// "### <title>" followed by a line "id: <id>[ | ...]".
#include <string>
#include <string_view>
#include <vector>

namespace okfbench::agents {

inline constexpr std::string_view kContextSystemPrompt =
    "Answer the question from the context below. Cite the concept ids you rely on in square brackets, "
    "e.g. [runbooks/slow-queries]. If the context does not answer the question, say so.";

std::string context_user_message(std::string_view pack_text, std::string_view question);

// One packed block as the model sees it.
struct ContextBlock {
  std::string id;
  std::string title;
  std::string description;  // the line after the id line, "" when the concept has none
  std::string text;         // the body, without citations or the truncation marker
};

struct ContextPrompt {
  std::vector<ContextBlock> blocks;  // in pack order
  std::string question;
};

// Reads a message written by context_user_message(); false when `message` is
// not one (it does not start with "Context:" or has no "Question: " line).
bool read_context_user_message(std::string_view message, ContextPrompt& out);

}  // namespace okfbench::agents
