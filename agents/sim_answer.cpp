#include "agents/sim_answer.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <numbers>
#include <random>
#include <set>

#include "core/hash.hpp"

namespace okfbench::agents {
namespace {

const std::set<std::string>& stop_words() {
  static const std::set<std::string> stop{
      "the",   "and",   "for",   "with",   "what",  "how",   "why",   "when",  "where", "which", "who",
      "does",  "did",   "should", "can",   "could", "would", "this",  "that",  "these", "those", "from",
      "into",  "about", "after", "before", "are",   "was",   "were",  "have",  "has",   "had",   "you",
      "your",  "our",   "its",   "not",    "but",   "all",   "any",   "step",  "please", "save", "note",
      "remember", "tell", "explain", "there", "their", "them", "then", "than",  "also",  "get",   "got",
      "way",   "use",   "used",  "using"};
  return stop;
}

bool same_term(std::string_view word, std::string_view term) {
  if (word == term) return true;
  if (word.size() == term.size() + 1) return word.back() == 's' && word.starts_with(term);
  if (term.size() == word.size() + 1) return term.back() == 's' && term.starts_with(word);
  return false;
}

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

bool is_heading(std::string_view line) {
  const auto hashes = line.find_first_not_of('#');
  return hashes != 0 && (hashes == std::string_view::npos || line[hashes] == ' ');
}

bool is_separator_row(std::string_view row) { return row.find_first_not_of("|-: ") == std::string_view::npos; }

// "| a | b |" -> "a | b".
std::string row_text(std::string_view row) {
  std::string out;
  std::size_t start = row.starts_with('|') ? 1 : 0;
  while (start < row.size()) {
    auto end = row.find('|', start);
    if (end == std::string_view::npos) end = row.size();
    const std::string_view cell = trim(row.substr(start, end - start));
    if (!cell.empty()) out += (out.empty() ? "" : " | ") + std::string(cell);
    start = end + 1;
  }
  return out;
}

// Length of a list marker ("- ", "* ", "+ ", "12. ", "3) ") at the start of `line`, 0 if none.
std::size_t list_marker(std::string_view line) {
  if (line.size() >= 2 && (line[0] == '-' || line[0] == '*' || line[0] == '+') && line[1] == ' ') return 2;
  std::size_t digits = 0;
  while (digits < line.size() && std::isdigit(static_cast<unsigned char>(line[digits]))) ++digits;
  if (digits > 0 && digits + 1 < line.size() && (line[digits] == '.' || line[digits] == ')') && line[digits + 1] == ' ')
    return digits + 2;
  return 0;
}

// "[text](url)" -> "text"; "[^note]" -> "".
std::string plain_inline(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '[') {
      const auto close = text.find(']', i);
      if (close != std::string_view::npos && i + 1 < text.size() && text[i + 1] == '^') {
        i = close;
        continue;
      }
      if (close != std::string_view::npos && close + 1 < text.size() && text[close + 1] == '(') {
        const auto paren = text.find(')', close);
        if (paren != std::string_view::npos) {
          if (!out.empty() && out.back() == '!') out.pop_back();  // an image keeps its alt text
          out += text.substr(i + 1, close - i - 1);
          i = paren;
          continue;
        }
      }
    }
    out += text[i];
  }
  return out;
}

// "[text](target)" and nothing else.
bool is_bare_link(std::string_view text) {
  if (!text.starts_with('[') || !text.ends_with(')')) return false;
  const auto close = text.find("](");
  return close != std::string_view::npos && text.find(']', 1) == close && text.find(')', close) == text.size() - 1;
}

// "e.g." and friends end a word, not a sentence.
bool ends_with_abbreviation(std::string_view before) {
  static const std::set<std::string, std::less<>> abbreviations{"e.g", "i.e", "etc", "vs", "cf", "al", "approx"};
  const auto space = before.find_last_of(" (");
  std::string word(space == std::string_view::npos ? before : before.substr(space + 1));
  std::transform(word.begin(), word.end(), word.begin(), [](unsigned char c) { return std::tolower(c); });
  return abbreviations.count(word) > 0;
}

// Sentences of a prose paragraph: cut after ". ", "! " or "? " when what
// follows starts like a sentence (a capital, a digit, code or emphasis).
std::vector<std::string> sentences(std::string_view text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i + 2 < text.size(); ++i) {
    const char c = text[i];
    if ((c != '.' && c != '!' && c != '?') || text[i + 1] != ' ') continue;
    const auto next = static_cast<unsigned char>(text[i + 2]);
    if (!std::isupper(next) && !std::isdigit(next) && next != '`' && next != '*') continue;
    if (c == '.' && ends_with_abbreviation(text.substr(start, i - start))) continue;
    out.emplace_back(trim(text.substr(start, i + 1 - start)));
    start = i + 2;
  }
  if (const std::string_view last = trim(text.substr(start)); !last.empty()) out.emplace_back(last);
  return out;
}

// Cuts markdown into statements line by line.
class StatementCutter {
 public:
  void line(std::string_view raw) {
    const std::string_view t = trim(raw);
    if (!fence_.empty()) return code_line(raw, t);
    if (t.starts_with("```") || t.starts_with("~~~")) {
      flush();
      fence_ = std::string(t.substr(0, 3));
      return;
    }
    if (t.empty() || is_heading(t) || t.starts_with("[^") || t.starts_with("[truncated:") ||
        t.starts_with("[... truncated")) {
      return flush();
    }
    if (t.starts_with('|')) {
      flush();
      if (!is_separator_row(t)) add(row_text(t), false);
      return;
    }
    if (const std::size_t marker = list_marker(t); marker > 0) {
      flush();
      paragraph_ = std::string(t.substr(marker));
      list_item_ = true;
      return;
    }
    paragraph_ += (paragraph_.empty() ? "" : " ") + std::string(t);
  }

  std::vector<Statement> finish() {
    flush();
    if (!code_.empty()) add(std::move(code_), true);  // an unclosed fence still showed its code
    return std::move(out_);
  }

 private:
  void code_line(std::string_view raw, std::string_view t) {
    if (t.starts_with(fence_)) {
      fence_.clear();
      if (!code_.empty()) code_.pop_back();
      if (!trim(code_).empty()) add(std::move(code_), true);
      code_.clear();
      return;
    }
    code_ += std::string(raw) + "\n";
  }

  void flush() {
    if (paragraph_.empty()) return;
    const std::string text = plain_inline(paragraph_);
    if (list_item_ && is_bare_link(paragraph_)) {
      // "- [Storage engine](/architecture/storage-engine.md)": navigation, not a statement.
    } else if (list_item_) {
      add(text, false);
    } else {
      for (std::string& s : sentences(text)) add(std::move(s), false);
    }
    paragraph_.clear();
    list_item_ = false;
  }

  void add(std::string text, bool code) {
    if (!trim(text).empty()) out_.push_back({std::move(text), code});
  }

  std::vector<Statement> out_;
  std::string paragraph_;
  bool list_item_ = false;
  std::string fence_;  // "```" or "~~~" inside a fenced block, else ""
  std::string code_;
};

// One source as the answer sees it: its statements and the terms each carries.
struct ReadSource {
  const SimSource* source = nullptr;
  std::vector<Statement> statements;
  std::vector<std::size_t> terms;  // per statement: how many question terms it carries
  std::vector<bool> chosen;
  std::vector<std::string> shared;  // the question terms in the title, description and text
  std::size_t about = 0;             // how many of them the title and description carry
  bool relevant = false;
};

ReadSource read_source(const SimSource& s, const std::vector<std::string>& terms) {
  ReadSource r;
  r.source = &s;
  r.statements = statements(s.description + "\n\n" + s.text);
  for (const Statement& st : r.statements) r.terms.push_back(terms_in(st.text, terms).size());
  r.chosen.assign(r.statements.size(), false);
  r.shared = terms_in(s.title + "\n" + s.description + "\n" + s.text, terms);
  r.about = terms_in(s.title + "\n" + s.description, terms).size();
  return r;
}

// Marks the relevant sources (see the header); false when none is.
bool pick_relevant(std::vector<ReadSource>& sources) {
  std::vector<ReadSource*> by_share;
  for (ReadSource& r : sources)
    if (!r.shared.empty()) by_share.push_back(&r);
  if (by_share.empty()) return false;
  std::stable_sort(by_share.begin(), by_share.end(),
                   [](const ReadSource* a, const ReadSource* b) { return a->shared.size() > b->shared.size(); });
  const std::size_t most = by_share.front()->shared.size();
  std::set<std::string> covered;
  for (ReadSource* r : by_share) {
    const bool adds = std::any_of(r->shared.begin(), r->shared.end(), [&](const std::string& t) { return !covered.count(t); });
    r->relevant = 2 * r->shared.size() >= most || adds;
    if (r->relevant) covered.insert(r->shared.begin(), r->shared.end());
  }
  return true;
}

std::string heading(const SimSource& s) { return fmt::format("**{}** [{}]", s.title.empty() ? s.id : s.title, s.id); }

std::string rendered(const Statement& s) { return s.code ? "```\n" + s.text + "\n```" : "- " + s.text; }

std::string sources_line(const std::vector<ReadSource>& read) {
  std::string ids;
  for (const ReadSource& r : read)
    if (r.relevant) ids += (ids.empty() ? "[" : ", [") + r.source->id + "]";
  return "Sources: " + ids;
}

std::string nothing_relevant(const std::vector<SimSource>& read, const std::vector<std::string>& terms) {
  const std::string looked_for = terms.empty() ? "the question" : fmt::format("{}", fmt::join(terms, ", "));
  if (read.empty()) return fmt::format("I found nothing in the bundle about {}, so I cannot answer this.", looked_for);
  std::vector<std::string> ids;
  for (const SimSource& s : read) ids.push_back(s.id);
  return fmt::format("None of what I read ({}) mentions {}, so I cannot answer this from the bundle.",
                     fmt::join(ids, ", "), looked_for);
}

// The relevant source most about the question (see the header).
std::size_t main_source(const std::vector<ReadSource>& read) {
  std::size_t main = read.size();
  auto rank = [&](std::size_t s) { return std::pair(read[s].about, read[s].shared.size()); };
  for (std::size_t s = 0; s < read.size(); ++s)
    if (read[s].relevant && (main == read.size() || rank(s) > rank(main))) main = s;
  return main;
}

// Chooses statements towards `target` tokens in the documented order.
class Chooser {
 public:
  Chooser(std::vector<ReadSource>& read, std::size_t main, std::size_t target, const retrieval::TokenCounter& counter)
      : read_(read), main_(main), target_(static_cast<long long>(target)), counter_(counter) {
    total_ = static_cast<long long>(counter_.count(sources_line(read_)));
  }

  void run() {
    ReadSource& main = read_[main_];
    if (!main.statements.empty()) take(main, static_cast<std::size_t>(std::max_element(main.terms.begin(), main.terms.end()) - main.terms.begin()));
    for (std::size_t i = 0; i < main.statements.size(); ++i) offer(main, i);
    std::vector<std::pair<std::size_t, std::size_t>> carrying, others;  // (source, statement)
    for (std::size_t s = 0; s < read_.size(); ++s)
      for (std::size_t i = 0; s != main_ && read_[s].relevant && i < read_[s].statements.size(); ++i)
        (read_[s].terms[i] > 0 ? carrying : others).emplace_back(s, i);
    std::stable_sort(carrying.begin(), carrying.end(), [&](const auto& a, const auto& b) {
      return read_[a.first].terms[a.second] > read_[b.first].terms[b.second];
    });
    for (const auto& [s, i] : carrying) offer(read_[s], i);
    for (const auto& [s, i] : others) offer(read_[s], i);
  }

 private:
  // A line and its newline; lines start with a non-space, so BPE counts of lines add up.
  long long line_tokens(const std::string& line) const { return static_cast<long long>(counter_.count(line + "\n")); }

  // A statement's tokens, with its source's heading and the blank line after when it is the source's first.
  long long cost(const ReadSource& r, std::size_t i) const {
    const bool first = std::none_of(r.chosen.begin(), r.chosen.end(), [](bool c) { return c; });
    return line_tokens(rendered(r.statements[i])) + (first ? line_tokens(heading(*r.source)) + line_tokens("") : 0);
  }

  void take(ReadSource& r, std::size_t i) {
    total_ += cost(r, i);
    r.chosen[i] = true;
  }

  // Taken when it brings the total closer to the target than leaving it out.
  void offer(ReadSource& r, std::size_t i) {
    if (r.chosen[i] || total_ >= target_) return;
    if (2 * total_ + cost(r, i) < 2 * target_) take(r, i);
  }

  std::vector<ReadSource>& read_;
  std::size_t main_;
  long long target_;
  const retrieval::TokenCounter& counter_;
  long long total_ = 0;
};

std::string restated(const ReadSource& r) {
  if (std::none_of(r.chosen.begin(), r.chosen.end(), [](bool c) { return c; })) return "";
  std::string text = heading(*r.source) + "\n";
  for (std::size_t i = 0; i < r.statements.size(); ++i)
    if (r.chosen[i]) text += rendered(r.statements[i]) + "\n";
  return text + "\n";
}

// The main source first, then the others in reading order, then every citation.
std::string render(const std::vector<ReadSource>& read, std::size_t main) {
  std::string text = restated(read[main]);
  for (std::size_t s = 0; s < read.size(); ++s)
    if (s != main) text += restated(read[s]);
  return text + sources_line(read);
}

}  // namespace

std::vector<std::string> lower_words(std::string_view text) {
  std::vector<std::string> out;
  std::string current;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c >= 0x80) {
      current += static_cast<char>(std::tolower(c));
    } else if (!current.empty()) {
      out.push_back(std::move(current));
      current.clear();
    }
  }
  if (!current.empty()) out.push_back(std::move(current));
  return out;
}

std::vector<std::string> question_terms(std::string_view question) {
  std::vector<std::string> terms;
  for (std::string& w : lower_words(question))
    if (w.size() >= 3 && !stop_words().count(w) && std::find(terms.begin(), terms.end(), w) == terms.end())
      terms.push_back(std::move(w));
  return terms;
}

std::vector<std::string> terms_in(std::string_view text, const std::vector<std::string>& terms) {
  const std::vector<std::string> words = lower_words(text);
  const std::set<std::string_view> distinct(words.begin(), words.end());
  std::vector<std::string> found;
  for (const std::string& term : terms) {
    const bool occurs = std::any_of(distinct.begin(), distinct.end(), [&](std::string_view w) { return same_term(w, term); });
    if (occurs) found.push_back(term);
  }
  return found;
}

std::vector<Statement> statements(std::string_view markdown) {
  StatementCutter cutter;
  std::size_t pos = 0;
  while (pos <= markdown.size()) {
    auto end = markdown.find('\n', pos);
    if (end == std::string_view::npos) end = markdown.size();
    cutter.line(markdown.substr(pos, end - pos));
    pos = end + 1;
  }
  return cutter.finish();
}

std::string compose_answer(std::string_view question, const std::vector<SimSource>& read, std::size_t target_tokens,
                           const retrieval::TokenCounter& counter) {
  const std::vector<std::string> terms = question_terms(question);
  std::vector<ReadSource> sources;
  for (const SimSource& s : read) sources.push_back(read_source(s, terms));
  if (!pick_relevant(sources)) return nothing_relevant(read, terms);
  const std::size_t main = main_source(sources);
  Chooser(sources, main, target_tokens, counter).run();
  return render(sources, main);
}

std::size_t answer_target(std::size_t mean, std::size_t spread, std::uint64_t seed, std::string_view question) {
  if (seed == 0) return std::max<std::size_t>(1, mean);
  // Box-Muller written out: <random>'s distributions differ between standard libraries.
  std::mt19937_64 rng(seed ^ fnv1a(question, fnv1a("answer-length")));
  const double u1 = std::max(static_cast<double>(rng() >> 11) * 0x1.0p-53, 1e-12);
  const double u2 = static_cast<double>(rng() >> 11) * 0x1.0p-53;
  const double normal = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  const double tokens = static_cast<double>(mean) + static_cast<double>(spread) * normal;
  return static_cast<std::size_t>(std::max(1.0, std::round(tokens)));
}

}  // namespace okfbench::agents
