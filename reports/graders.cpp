#include "reports/graders.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <utf8proc.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "reports/measures.hpp"
#include "core/unicode_fold.hpp"

namespace okfbench::reports {

namespace {

// ---- normalisation (the facts rule, steps 1-3) ----

std::vector<utf8proc_int32_t> code_points(std::string_view text) {
  std::vector<utf8proc_int32_t> out;
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  auto left = static_cast<utf8proc_ssize_t>(text.size());
  while (left > 0) {
    utf8proc_int32_t cp = 0;
    utf8proc_ssize_t n = utf8proc_iterate(p, left, &cp);
    if (n <= 0) {  // an invalid byte reads as a space
      cp = ' ';
      n = 1;
    }
    out.push_back(cp);
    p += n;
    left -= n;
  }
  return out;
}

std::string encode(const std::vector<utf8proc_int32_t>& cps) {
  std::string out;
  utf8proc_uint8_t buffer[4];
  for (utf8proc_int32_t cp : cps) {
    utf8proc_ssize_t n = utf8proc_encode_char(cp, buffer);
    out.append(reinterpret_cast<const char*>(buffer), static_cast<std::size_t>(n));
  }
  return out;
}

// Step 1: NFKC with case folding; invalid bytes read as spaces.
std::vector<utf8proc_int32_t> folded(std::string_view text) { return code_points(nfkc_casefold(text)); }

bool is_digit(utf8proc_int32_t cp) { return utf8proc_category(cp) == UTF8PROC_CATEGORY_ND; }


// Step 2: a comma with a digit before it and exactly three digits after it.
bool is_group_comma(const std::vector<utf8proc_int32_t>& cps, std::size_t i) {
  if (cps[i] != ',' || i == 0 || !is_digit(cps[i - 1])) return false;
  for (std::size_t k = 1; k <= 3; ++k) {
    if (i + k >= cps.size() || !is_digit(cps[i + k])) return false;
  }
  return i + 4 >= cps.size() || !is_digit(cps[i + 4]);
}

double f1(double precision, double recall) {
  return precision + recall > 0 ? 2 * precision * recall / (precision + recall) : 0.0;
}

std::string quoted_list(const std::vector<std::string>& items) {
  std::vector<std::string> quoted;
  for (const auto& item : items) quoted.push_back("\"" + item + "\"");
  return fmt::format("{}", fmt::join(quoted, ", "));
}

Grade not_graded(std::string grader, std::string why) {
  return Grade{std::move(grader), GradeStatus::not_graded, std::nullopt, false, std::move(why), ""};
}

Grade graded(const std::string& grader, double threshold, double score, std::string detail) {
  return Grade{grader, GradeStatus::graded, score, score >= threshold - 1e-12, std::move(detail), ""};
}

// ---- the built-in graders ----

constexpr double kFactsThreshold = 1.0;
constexpr double kCitationsThreshold = 0.5;
constexpr double kAnsweredThreshold = 1.0;

GraderResult grade_facts(const GradeInput& in) {
  if (in.answer_facts.empty()) return {not_graded("facts", "the question has no answer_facts"), std::nullopt};
  const FactsMatch m = match_facts(in.answer_facts, in.answer);
  const double score = static_cast<double>(m.matched.size()) / static_cast<double>(in.answer_facts.size());
  std::string detail = m.missing.empty()
                           ? fmt::format("all {} fact(s) stated", in.answer_facts.size())
                           : fmt::format("{} of {} fact(s) stated; missing: {}", m.matched.size(),
                                         in.answer_facts.size(), quoted_list(m.missing));
  return {graded("facts", kFactsThreshold, score, std::move(detail)), std::nullopt};
}

GraderResult grade_citations(const GradeInput& in) {
  std::vector<std::string> relevant, cited_relevant, cited_other;
  for (const auto& [id, grade] : in.relevant) {
    if (grade > 0) relevant.push_back(id);
  }
  if (relevant.empty()) return {not_graded("citations", "the question has no relevant concept"), std::nullopt};
  std::vector<std::string> distinct;
  for (const auto& id : in.citations) {
    if (std::find(distinct.begin(), distinct.end(), id) != distinct.end()) continue;
    distinct.push_back(id);
    (std::find(relevant.begin(), relevant.end(), id) != relevant.end() ? cited_relevant : cited_other).push_back(id);
  }
  if (distinct.empty()) {
    return {graded("citations", kCitationsThreshold, 0.0,
                   fmt::format("cites nothing; relevant: {}", fmt::join(relevant, ", "))),
            std::nullopt};
  }
  const CitationScores s = citation_scores(in.relevant, distinct);
  const double score = f1(*s.precision, *s.recall);
  std::string detail = fmt::format("cites {} of {} relevant ({}); precision {:.3f}, recall {:.3f}",
                                   cited_relevant.size(), relevant.size(), fmt::join(cited_relevant, ", "),
                                   *s.precision, *s.recall);
  if (!cited_other.empty()) detail += fmt::format("; not relevant: {}", fmt::join(cited_other, ", "));
  return {graded("citations", kCitationsThreshold, score, std::move(detail)), std::nullopt};
}

GraderResult grade_answered(const GradeInput& in) {
  switch (in.end) {
    case TrialEnd::answered: return {graded("answered", kAnsweredThreshold, 1.0, "ended with an answer"), std::nullopt};
    case TrialEnd::no_answer:
      return {graded("answered", kAnsweredThreshold, 0.0, "no answer: max_turns reached or an empty answer"), std::nullopt};
    case TrialEnd::error: return {graded("answered", kAnsweredThreshold, 0.0, "the trial failed"), std::nullopt};
  }
  return {graded("answered", kAnsweredThreshold, 0.0, "unknown ending"), std::nullopt};
}

void add_usage(std::optional<JudgeUsage>& total, const JudgeUsage& more) {
  if (!total) {
    total = more;
    return;
  }
  auto sum = [](std::optional<std::int64_t>& a, const std::optional<std::int64_t>& b) {
    a = a && b ? std::optional<std::int64_t>(*a + *b) : std::nullopt;
  };
  if (total->model != more.model) total->model += "+" + more.model;
  total->calls += more.calls;
  total->cache_hits += more.cache_hits;
  sum(total->input_tokens, more.input_tokens);
  sum(total->cached_tokens, more.cached_tokens);
  sum(total->cache_write_tokens, more.cache_write_tokens);
  sum(total->output_tokens, more.output_tokens);
}

}  // namespace

const std::vector<Grader>& builtin_graders() {
  static const std::vector<Grader> graders = {
      {"facts", "share of the question's answer_facts stated in the answer (exact rule in reports/graders.hpp)",
       kFactsThreshold, grade_facts},
      {"citations", "F1 of citation precision and recall against the relevant concepts", kCitationsThreshold,
       grade_citations},
      {"answered", "1 when the trial ended with an answer, not at max_turns, empty or with an error",
       kAnsweredThreshold, grade_answered},
  };
  return graders;
}

const Grader* find_builtin_grader(std::string_view name) {
  for (const auto& g : builtin_graders()) {
    if (g.name == name) return &g;
  }
  return nullptr;
}

const std::vector<std::string>& grader_names() {
  static const std::vector<std::string> names = {"facts", "citations", "answered", "judge"};
  return names;
}

Grading grade_all(const std::vector<Grader>& graders, const GradeInput& input) {
  Grading out;
  for (const auto& g : graders) {
    GraderResult r = g.grade(input);
    out.grades.push_back(std::move(r.grade));
    if (r.usage) add_usage(out.judge_usage, *r.usage);
  }
  return out;
}

std::vector<std::string> fact_tokens(std::string_view text) {
  const std::vector<utf8proc_int32_t> cps = folded(text);
  std::vector<std::string> tokens;
  std::vector<utf8proc_int32_t> token;
  auto flush = [&] {
    if (!token.empty()) tokens.push_back(encode(token));
    token.clear();
  };
  for (std::size_t i = 0; i < cps.size(); ++i) {
    if (is_group_comma(cps, i)) continue;
    const CharClass kind = classify(cps[i]);
    if (kind == CharClass::word || (kind == CharClass::mark && !token.empty())) {
      token.push_back(cps[i]);
    } else {
      flush();
    }
  }
  flush();
  return tokens;
}

namespace {

bool same_token(const std::string& fact, const std::string& answer) {
  if (fact == answer) return true;
  if (answer.size() == fact.size() + 1) return answer.back() == 's' && answer.compare(0, fact.size(), fact) == 0;
  if (fact.size() == answer.size() + 1) return fact.back() == 's' && fact.compare(0, answer.size(), answer) == 0;
  return false;
}

}  // namespace

bool tokens_match(const std::vector<std::string>& fact, const std::vector<std::string>& answer) {
  if (fact.empty() || fact.size() > answer.size()) return false;
  for (std::size_t start = 0; start + fact.size() <= answer.size(); ++start) {
    std::size_t k = 0;
    while (k < fact.size() && same_token(fact[k], answer[start + k])) ++k;
    if (k == fact.size()) return true;
  }
  return false;
}

FactsMatch match_facts(const std::vector<std::string>& facts, std::string_view answer) {
  const std::vector<std::string> answer_tokens = fact_tokens(answer);
  FactsMatch m;
  for (const auto& fact : facts) {
    (tokens_match(fact_tokens(fact), answer_tokens) ? m.matched : m.missing).push_back(fact);
  }
  return m;
}

namespace {

std::string trimmed(std::string_view s) {
  const std::size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return {};
  return std::string(s.substr(b, s.find_last_not_of(" \t") - b + 1));
}

// "/a b.md" -> "a b"; "%20" and the other escapes of a URI read as bytes.
std::string citation_id(std::string_view text) {
  std::string id = trimmed(text);
  if (id.starts_with("/")) id.erase(0, 1);
  if (id.ends_with(".md")) id.resize(id.size() - 3);
  return id;
}

std::string percent_decoded(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
    if (text[i] == '%' && i + 2 < text.size() && hex(text[i + 1]) && hex(text[i + 2])) {
      out.push_back(static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16)));
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

}  // namespace

std::string_view to_string(NuggetImportance importance) {
  return importance == NuggetImportance::okay ? "okay" : "vital";
}

std::string_view to_string(NuggetLabel label) {
  switch (label) {
    case NuggetLabel::support: return "support";
    case NuggetLabel::partial_support: return "partial_support";
    case NuggetLabel::not_support: return "not_support";
  }
  return "not_support";
}

std::optional<NuggetLabel> parse_nugget_label(std::string_view text) {
  for (NuggetLabel l : {NuggetLabel::support, NuggetLabel::partial_support, NuggetLabel::not_support}) {
    if (text == to_string(l)) return l;
  }
  return std::nullopt;
}

NuggetScores nugget_scores(const std::vector<NuggetImportance>& importance, const std::vector<NuggetLabel>& labels) {
  double all = 0, vital = 0, strict_all = 0, strict_vital = 0;
  std::size_t vital_count = 0;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const bool is_vital = importance.size() != labels.size() || importance[i] == NuggetImportance::vital;
    const double s = labels[i] == NuggetLabel::support ? 1.0 : labels[i] == NuggetLabel::partial_support ? 0.5 : 0.0;
    const double strict = labels[i] == NuggetLabel::support ? 1.0 : 0.0;
    all += s;
    strict_all += strict;
    if (is_vital) {
      ++vital_count;
      vital += s;
      strict_vital += strict;
    }
  }
  const auto share = [](double sum, std::size_t n) { return n == 0 ? 0.0 : sum / static_cast<double>(n); };
  return {share(strict_vital, vital_count), share(strict_all, labels.size()), share(vital, vital_count),
          share(all, labels.size())};
}

std::vector<std::string> cited_ids(std::string_view answer, const std::function<bool(const std::string&)>& is_concept) {
  std::vector<std::string> out;
  auto cite = [&](std::string id) {
    if (id.empty() || std::find(out.begin(), out.end(), id) != out.end()) return false;
    if (!is_concept(id)) {
      id = percent_decoded(id);
      if (id.empty() || std::find(out.begin(), out.end(), id) != out.end() || !is_concept(id)) return false;
    }
    out.push_back(std::move(id));
    return true;
  };
  std::size_t at = 0;
  while ((at = answer.find('[', at)) != std::string_view::npos) {
    const std::size_t end = answer.find_first_of("[]\r\n", at + 1);
    if (end == std::string_view::npos) break;
    if (answer[end] != ']' || end == at + 1) {
      at = end;
      continue;
    }
    const std::string_view inside = answer.substr(at + 1, end - at - 1);
    // The whole text first (vault ids hold spaces and commas), then each
    // comma- or semicolon-separated part ("[a, b]" cites two concepts).
    if (!cite(citation_id(inside)) && inside.find_first_of(",;") != std::string_view::npos) {
      std::size_t from = 0;
      while (from <= inside.size()) {
        const std::size_t sep = std::min(inside.find_first_of(",;", from), inside.size());
        cite(citation_id(inside.substr(from, sep - from)));
        from = sep + 1;
      }
    }
    at = end + 1;
  }
  return out;
}

TrialEnd trial_end(const TrialRecord& r) {
  if (!r.error.empty()) return TrialEnd::error;
  if (r.answer.find_first_not_of(" \t\r\n") == std::string::npos) return TrialEnd::no_answer;
  if (r.config.kind == PathKind::agent && (r.turns.empty() || !r.turns.back().tool_calls.empty())) {
    return TrialEnd::no_answer;
  }
  return TrialEnd::answered;
}

const Grade* find_grade(const TrialRecord& record, std::string_view grader) {
  for (const auto& g : record.grades) {
    if (g.grader == grader) return &g;
  }
  return nullptr;
}

void AgreementTally::add(const TrialRecord& r) {
  const Grade* ga = find_grade(r, a_);
  const Grade* gb = find_grade(r, b_);
  if (!ga || !gb || ga->status != GradeStatus::graded || gb->status != GradeStatus::graded) return;
  ++pairs_;
  agree_ += ga->correct == gb->correct ? 1 : 0;
  a_correct_ += ga->correct ? 1 : 0;
  b_correct_ += gb->correct ? 1 : 0;
}

Agreement AgreementTally::agreement() const {
  Agreement out;
  out.pairs = pairs_;
  if (pairs_ == 0) return out;
  const double n = pairs_;
  const double observed = agree_ / n;
  const double expected = (a_correct_ / n) * (b_correct_ / n) + (1 - a_correct_ / n) * (1 - b_correct_ / n);
  out.share = observed;
  if (expected < 1.0 - 1e-12) out.kappa = (observed - expected) / (1.0 - expected);
  return out;
}

Agreement agreement(const std::vector<const TrialRecord*>& records, std::string_view a, std::string_view b) {
  AgreementTally tally{std::string(a), std::string(b)};
  for (const TrialRecord* r : records) tally.add(*r);
  return tally.agreement();
}

}  // namespace okfbench::reports
