#include "agents/context_prompt.hpp"

#include <fmt/format.h>

namespace okfbench::agents {
namespace {

constexpr std::string_view kContextLead = "Context:\n\n";
constexpr std::string_view kQuestionLead = "\n\nQuestion: ";

std::string_view first_line(std::string_view text) { return text.substr(0, text.find('\n')); }

std::string_view after_first_line(std::string_view text) {
  const auto newline = text.find('\n');
  return newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
}

// "### title\nid: x | ..." at `at`.
bool block_starts_at(std::string_view pack, std::size_t at) {
  std::string_view rest = pack.substr(at);
  return rest.starts_with("### ") && after_first_line(rest).starts_with("id: ");
}

// Everything after the header lines, less the trailing citations and the truncation marker.
std::string block_text(std::string_view rest) {
  if (rest.ends_with("tokens shown]")) {
    const auto cut = rest.rfind("[truncated: ");
    if (cut != std::string_view::npos && (cut == 0 || rest[cut - 1] == '\n')) rest = rest.substr(0, cut == 0 ? 0 : cut - 1);
  }
  if (const auto citations = rest.rfind("\n\nCitations:\n"); citations != std::string_view::npos)
    rest = rest.substr(0, citations);
  return std::string(rest);
}

ContextBlock parse_block(std::string_view block) {
  ContextBlock b;
  b.title = std::string(first_line(block).substr(4));
  std::string_view id_line = first_line(after_first_line(block)).substr(4);
  b.id = std::string(id_line.substr(0, id_line.find(" | ")));
  // After the id line: the description line when there is one, then a blank line and the body.
  std::string_view rest = after_first_line(after_first_line(block));
  if (!rest.empty() && rest.front() != '\n') {
    b.description = std::string(first_line(rest));
    rest = after_first_line(rest);
  }
  if (rest.starts_with('\n')) rest.remove_prefix(1);
  b.text = block_text(rest);
  return b;
}

std::vector<ContextBlock> parse_pack(std::string_view pack) {
  std::vector<std::size_t> starts;
  if (block_starts_at(pack, 0)) starts.push_back(0);
  for (auto at = pack.find("\n\n### "); at != std::string_view::npos; at = pack.find("\n\n### ", at + 1))
    if (block_starts_at(pack, at + 2)) starts.push_back(at + 2);
  std::vector<ContextBlock> blocks;
  for (std::size_t i = 0; i < starts.size(); ++i) {
    const std::size_t end = i + 1 < starts.size() ? starts[i + 1] - 2 : pack.size();
    blocks.push_back(parse_block(pack.substr(starts[i], end - starts[i])));
  }
  return blocks;
}

}  // namespace

std::string context_user_message(std::string_view pack_text, std::string_view question) {
  return fmt::format("{}{}{}{}", kContextLead, pack_text, kQuestionLead, question);
}

bool read_context_user_message(std::string_view message, ContextPrompt& out) {
  if (!message.starts_with(kContextLead)) return false;
  const auto question = message.rfind(kQuestionLead);
  if (question == std::string_view::npos || question < kContextLead.size()) return false;
  out.blocks = parse_pack(message.substr(kContextLead.size(), question - kContextLead.size()));
  out.question = std::string(message.substr(question + kQuestionLead.size()));
  return true;
}

}  // namespace okfbench::agents
