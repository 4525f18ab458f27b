#pragma once
// Text analysis for search: text -> index terms, query -> weighted terms.
//
//   1. Normalise: Unicode NFKC with case folding (utf8proc; ASCII takes a
//      fast path with the same result). Invalid UTF-8 bytes act as separators.
//   2. Tokenise: maximal runs of Unicode letters (L*) and numbers (N*);
//      combining marks (M*) continue a run that has started, so scripts whose
//      vowel signs are marks stay whole words.
//   3. Stop words (optional): Lucene's 33-word English set
//      (EnglishAnalyzer.ENGLISH_STOP_WORDS_SET), removed before stemming.
//   4. Stemming (optional): Snowball `porter` or `english` via libstemmer.
//   5. Plural forms (only when no stemmer is set, since a stemmer already
//      conflates them): a query term also matches its English singular or
//      plural form, the expanded form weighted kPluralWeight (0.95).
//
// An Analyzer is immutable after construction and safe to use from several
// threads (each thread gets its own libstemmer object, which is not
// thread-safe).
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace okfbench::retrieval {

enum class Stemmer { none, porter, english };
enum class Stopwords { none, lucene };

struct AnalyzerOptions {
  Stemmer stemmer = Stemmer::none;
  Stopwords stopwords = Stopwords::none;
  bool operator==(const AnalyzerOptions&) const = default;
};

// Parse "none|porter|english" and "none|lucene"; throw UsageError otherwise.
Stemmer parse_stemmer(std::string_view name);
Stopwords parse_stopwords(std::string_view name);
std::string_view to_string(Stemmer stemmer);
std::string_view to_string(Stopwords stopwords);

// Weight of a plural/singular form added to a query for a term that is not
// itself in the query.
inline constexpr double kPluralWeight = 0.95;

struct WeightedTerm {
  std::string term;
  double weight = 1.0;
  bool operator==(const WeightedTerm&) const = default;
};

// Case-folded NFKC letter/number runs of `text`, no stop words or stemming.
// Calls `emit` with each token (a view valid only during the call).
void for_each_token(std::string_view text, const std::function<void(std::string_view)>& emit);

namespace detail {
// Tokenises a run that holds non-ASCII bytes (NFKC casefold, then scan).
void scan_folded_run(std::string_view run, const std::function<void(std::string_view)>& emit);
inline bool is_ascii_alnum(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
}  // namespace detail

// for_each_token for hot loops (index build): ASCII words are folded inline
// and passed without copying; runs with non-ASCII bytes go through utf8proc.
// ASCII punctuation and spaces are fixed points of NFKC casefolding, so
// splitting on them first gives the same tokens as folding the whole text.
template <typename Emit>
void for_each_token_fast(std::string_view text, Emit&& emit, std::string& scratch) {
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80 && !detail::is_ascii_alnum(c)) {
      ++i;
      continue;
    }
    const std::size_t start = i;
    bool upper = false, ascii = true;
    for (; i < n; ++i) {
      c = static_cast<unsigned char>(text[i]);
      if (c >= 0x80) ascii = false;
      else if (!detail::is_ascii_alnum(c)) break;
      else upper = upper || (c >= 'A' && c <= 'Z');
    }
    const std::string_view run = text.substr(start, i - start);
    if (!ascii) {
      detail::scan_folded_run(run, [&](std::string_view token) { emit(token); });
    } else if (!upper) {
      emit(run);
    } else {
      scratch.assign(run);
      for (char& ch : scratch) ch = (ch >= 'A' && ch <= 'Z') ? static_cast<char>(ch + 32) : ch;
      emit(std::string_view(scratch));
    }
  }
}
std::vector<std::string> tokenize(std::string_view text);

// NFKC case folding of a whole string (e.g. for case-insensitive filters).
std::string fold_case(std::string_view text);

// The English singular/plural counterparts of a folded token ("query" ->
// "queries", "boxes" -> "box"); empty when there is none.
std::vector<std::string> plural_variants(std::string_view token);

bool is_lucene_stopword(std::string_view token);

class Analyzer {
 public:
  explicit Analyzer(AnalyzerOptions options = {});

  const AnalyzerOptions& options() const { return options_; }

  // The index term for one folded token: "" when it is a stop word, else the
  // (stemmed) token.
  std::string term(std::string_view token) const;

  // Index terms of `text` in order, stop words removed.
  std::vector<std::string> terms(std::string_view text) const;

  // Distinct query terms with weights: each query token adds 1.0 (repeats
  // add up, as a bag-of-words query does); a plural variant that is not
  // itself a query term gets kPluralWeight. Sorted by term.
  std::vector<WeightedTerm> query_terms(std::string_view query) const;

 private:
  AnalyzerOptions options_;
};

}  // namespace okfbench::retrieval
