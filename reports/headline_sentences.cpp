#include "reports/headline_sentences.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>
#include <utility>

#include "reports/format.hpp"

namespace okfbench::reports {

namespace {

using Group = std::pair<std::string, std::string>;  // bundle, question set

std::string name_of(const SummaryRow& row, const std::map<std::string, std::string>& names) {
  auto it = names.find(row.label);
  return it == names.end() ? row.label : it->second;
}

std::string where(const SummaryRow& row, bool name_question_set) {
  std::string place = row.bundle;
  if (name_question_set) place += fmt::format(", {}", row.question_set);
  return fmt::format("On {} concepts ({})", format_count(static_cast<double>(row.concept_count)), place);
}

std::optional<double> ratio(const MeanValue& a, const MeanValue& b) {
  if (!a.mean || !b.mean || *b.mean <= 0) return std::nullopt;
  return *a.mean / *b.mean;
}

std::optional<double> share_correct(const SummaryRow& row) {
  auto it = row.grades.find(kAnswerGrader);
  return it == row.grades.end() ? std::nullopt : it->second.share_correct;
}

// "agent 6 tools reads 2.6x the input tokens of one-shot per question and
// costs 1.6x ($a against $b), with 75.0% correct against 75.0%"; a clause
// that follows one with the same base leaves out the base's name and values.
std::string agent_clause(const SummaryRow& agent, const SummaryRow& base, const std::map<std::string, std::string>& names,
                         bool name_base) {
  std::string out = name_of(agent, names);
  if (agent.one_shot_ratio) {
    out += fmt::format(" reads {}", format_ratio(agent.one_shot_ratio));
    if (name_base) out += fmt::format(" the input tokens of {} per question", name_of(base, names));
  } else {
    out += " (input tokens unknown)";
  }
  if (auto cost = ratio(agent.cost, base.cost)) {
    out += fmt::format(" and costs {}", format_ratio(cost));
    out += name_base ? fmt::format(" ({} against {})", format_dollars(*agent.cost.mean), format_dollars(*base.cost.mean))
                     : fmt::format(" ({})", format_dollars(*agent.cost.mean));
  }
  if (auto correct = share_correct(agent)) {
    out += fmt::format(", with {} correct", format_share(correct));
    auto base_correct = share_correct(base);
    if (name_base && base_correct) out += fmt::format(" against {}", format_share(base_correct));
  }
  return out;
}

std::string one_path_sentence(const std::vector<const SummaryRow*>& rows, const std::map<std::string, std::string>& names,
                              bool name_question_set) {
  const SummaryRow& first = *rows.front();
  std::string path = first.config.kind == PathKind::context ? "one-shot" : first.config.kind == PathKind::agent ? "agent" : "external";
  std::string out = fmt::format("{} only {} configurations ran (", where(first, name_question_set), path);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (i > 0) out += "; ";
    out += name_of(*rows[i], names);
    if (rows[i]->cost.mean) out += fmt::format(" {} per question", format_dollars(*rows[i]->cost.mean));
    if (auto correct = share_correct(*rows[i])) out += fmt::format(", {} correct", format_share(correct));
  }
  return out + "), so there is nothing to compare them with.";
}

}  // namespace

std::vector<std::string> headline_sentences(const Summary& summary, const std::map<std::string, std::string>& names) {
  std::vector<Group> groups;
  std::map<std::string, std::set<std::string>> sets_of_bundle;
  for (const auto& row : summary.rows) {
    Group g{row.bundle, row.question_set};
    if (std::find(groups.begin(), groups.end(), g) == groups.end()) groups.push_back(g);
    sets_of_bundle[row.bundle].insert(row.question_set);
  }
  std::vector<std::string> sentences;
  for (const auto& [bundle, question_set] : groups) {
    std::vector<const SummaryRow*> rows, agents;
    for (const auto& row : summary.rows) {
      if (row.bundle != bundle || row.question_set != question_set) continue;
      rows.push_back(&row);
      if (agentic(row.config.kind)) agents.push_back(&row);
    }
    const bool name_set = sets_of_bundle[bundle].size() > 1;
    if (agents.empty() || agents.size() == rows.size()) {
      sentences.push_back(one_path_sentence(rows, names, name_set));
      continue;
    }
    std::string text = fmt::format("{}, ", where(*rows.front(), name_set));
    const SummaryRow* previous_base = nullptr;
    for (std::size_t i = 0; i < agents.size(); ++i) {
      if (i > 0) text += "; ";
      const SummaryRow* base = one_shot_row(summary, *agents[i]);
      if (!base) {
        text += fmt::format("{} has no one-shot configuration with its model to compare with", name_of(*agents[i], names));
      } else {
        text += agent_clause(*agents[i], *base, names, base != previous_base);
      }
      previous_base = base;
    }
    sentences.push_back(text + ".");
  }
  return sentences;
}

}  // namespace okfbench::reports
