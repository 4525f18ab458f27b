#include "engine/attribution.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

namespace okfbench::engine {

namespace {

void add(std::vector<reports::InputShare>& parts, const std::string& origin, std::int64_t tokens) {
  for (auto& p : parts) {
    if (p.origin == origin) {
      p.tokens += tokens;
      return;
    }
  }
  parts.push_back({origin, tokens});
}

// The question's user message on the context path: each packed block by
// concept, the rest (question, template, the boundaries between blocks) as
// the question.
void add_packed_question(std::vector<reports::InputShare>& parts, std::int64_t tokens,
                         const std::vector<reports::PackedConcept>& pack) {
  std::int64_t packed = 0;
  for (const auto& c : pack) {
    const std::int64_t share = std::clamp<std::int64_t>(c.tokens, 0, tokens - packed);
    add(parts, "pack:" + c.id, share);
    packed += share;
  }
  add(parts, "question", tokens - packed);
}

}  // namespace

std::vector<reports::InputShare> attribute_request(const agents::ChatRequest& request, std::size_t first_new,
                                                   const std::vector<reports::PackedConcept>& pack,
                                                   agents::SimModel& counting) {
  const std::vector<agents::PromptBlock> blocks = counting.blocks(request);
  std::vector<reports::InputShare> parts;
  std::size_t b = 0;
  std::int64_t tools = 0;
  for (; b < request.tools.size() && b < blocks.size(); ++b) tools += blocks[b].tokens;
  if (!request.tools.empty()) add(parts, "tools", tools);
  bool asked = false;
  std::size_t conversation_index = 0;
  for (std::size_t m = 0; m < request.messages.size() && b < blocks.size(); ++m, ++b) {
    const agents::Message& message = request.messages[m];
    const std::int64_t tokens = blocks[b].tokens;
    if (m == 0 && message.role == agents::Role::system) {
      add(parts, "system", tokens);
      continue;
    }
    const bool is_new = conversation_index++ >= first_new;
    if (message.role == agents::Role::user && !asked) {
      asked = true;
      if (pack.empty()) {
        add(parts, "question", tokens);
      } else {
        add_packed_question(parts, tokens, pack);
      }
    } else if (message.role == agents::Role::tool) {
      add(parts, (is_new ? "new:tool:" : "history:tool:") + message.name, tokens);
    } else if (message.role == agents::Role::assistant) {
      add(parts, "history:assistant", tokens);
    } else {
      add(parts, "history:user", tokens);
    }
  }
  // What follows the messages: the reply priming.
  std::int64_t framing = 0;
  for (; b < blocks.size(); ++b) framing += blocks[b].tokens;
  if (framing > 0) add(parts, "framing", framing);
  return parts;
}

}  // namespace okfbench::engine
