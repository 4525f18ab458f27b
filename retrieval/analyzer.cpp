#include "retrieval/analyzer.hpp"

#include <libstemmer.h>
#include <utf8proc.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>
#include <memory>

#include "core/error.hpp"
#include "core/unicode_fold.hpp"

namespace okfbench::retrieval {
namespace {

// Lucene EnglishAnalyzer.ENGLISH_STOP_WORDS_SET (sorted for binary search).
constexpr std::array<std::string_view, 33> kLuceneStopwords = {
    "a",    "an",   "and",   "are",   "as",   "at",    "be",    "but",  "by",   "for",  "if",
    "in",   "into", "is",    "it",    "no",   "not",   "of",    "on",   "or",   "such", "that",
    "the",  "their", "then", "there", "these", "they", "this",  "to",   "was",  "will", "with"};

using detail::is_ascii_alnum;

char ascii_lower(unsigned char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : static_cast<char>(c); }

bool all_ascii(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}


// Tokenises text that is already folded (or plain ASCII, folded on the fly).
void scan_tokens(std::string_view text, const std::function<void(std::string_view)>& emit) {
  std::string token;
  auto flush = [&] {
    if (!token.empty()) emit(token);
    token.clear();
  };
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  utf8proc_ssize_t left = static_cast<utf8proc_ssize_t>(text.size());
  while (left > 0) {
    if (*p < 0x80) {
      if (is_ascii_alnum(*p)) token.push_back(ascii_lower(*p));
      else flush();
      ++p;
      --left;
      continue;
    }
    utf8proc_int32_t cp = 0;
    utf8proc_ssize_t n = utf8proc_iterate(p, left, &cp);
    if (n <= 0) {
      flush();
      n = 1;
    } else {
      CharClass cls = classify(cp);
      if (cls == CharClass::word || (cls == CharClass::mark && !token.empty())) {
        token.append(reinterpret_cast<const char*>(p), static_cast<std::size_t>(n));
      } else {
        flush();
      }
    }
    p += n;
    left -= n;
  }
  flush();
}

struct StemmerDeleter {
  void operator()(sb_stemmer* s) const { sb_stemmer_delete(s); }
};

// libstemmer objects are not thread-safe: one per thread and algorithm.
sb_stemmer* thread_stemmer(Stemmer which) {
  thread_local std::array<std::unique_ptr<sb_stemmer, StemmerDeleter>, 3> stemmers;
  auto& slot = stemmers[static_cast<std::size_t>(which)];
  if (!slot) {
    const char* algorithm = which == Stemmer::porter ? "porter" : "english";
    slot.reset(sb_stemmer_new(algorithm, "UTF_8"));
    if (!slot) throw InputError(std::string("libstemmer has no '") + algorithm + "' stemmer");
  }
  return slot.get();
}

bool ends_with(std::string_view s, std::string_view suffix) { return s.ends_with(suffix); }

bool is_vowel(char c) { return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u'; }

bool all_ascii_letters(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= 'a' && c <= 'z'; });
}

std::string singular_of(std::string_view w) {
  if (w.size() > 4 && ends_with(w, "ies")) return std::string(w.substr(0, w.size() - 3)) + "y";
  for (std::string_view es : {"sses", "xes", "zes", "ches", "shes"}) {
    if (w.size() > es.size() && ends_with(w, es)) return std::string(w.substr(0, w.size() - 2));
  }
  if (w.size() > 3 && ends_with(w, "s") && !ends_with(w, "ss") && !ends_with(w, "us") && !ends_with(w, "is")) {
    return std::string(w.substr(0, w.size() - 1));
  }
  return {};
}

std::string plural_of(std::string_view w) {
  if (w.size() > 2 && ends_with(w, "y") && !is_vowel(w[w.size() - 2])) {
    return std::string(w.substr(0, w.size() - 1)) + "ies";
  }
  for (std::string_view es : {"s", "x", "z", "ch", "sh"}) {
    if (ends_with(w, es)) return std::string(w) + "es";
  }
  return std::string(w) + "s";
}

}  // namespace

Stemmer parse_stemmer(std::string_view name) {
  if (name == "none") return Stemmer::none;
  if (name == "porter") return Stemmer::porter;
  if (name == "english") return Stemmer::english;
  throw UsageError("unknown stemmer '" + std::string(name) + "': use none, porter or english");
}

Stopwords parse_stopwords(std::string_view name) {
  if (name == "none") return Stopwords::none;
  if (name == "lucene") return Stopwords::lucene;
  throw UsageError("unknown stop word list '" + std::string(name) + "': use none or lucene");
}

std::string_view to_string(Stemmer stemmer) {
  switch (stemmer) {
    case Stemmer::porter: return "porter";
    case Stemmer::english: return "english";
    case Stemmer::none: break;
  }
  return "none";
}

std::string_view to_string(Stopwords stopwords) { return stopwords == Stopwords::lucene ? "lucene" : "none"; }

void detail::scan_folded_run(std::string_view run, const std::function<void(std::string_view)>& emit) {
  scan_tokens(nfkc_casefold(run), emit);
}

void for_each_token(std::string_view text, const std::function<void(std::string_view)>& emit) {
  std::string scratch;
  for_each_token_fast(text, emit, scratch);
}

std::vector<std::string> tokenize(std::string_view text) {
  std::vector<std::string> tokens;
  for_each_token(text, [&](std::string_view token) { tokens.emplace_back(token); });
  return tokens;
}

std::string fold_case(std::string_view text) {
  if (all_ascii(text)) {
    std::string out(text);
    for (char& c : out) c = ascii_lower(static_cast<unsigned char>(c));
    return out;
  }
  return nfkc_casefold(text);
}

std::vector<std::string> plural_variants(std::string_view token) {
  if (token.size() < 3 || !all_ascii_letters(token)) return {};
  std::string singular = singular_of(token);
  if (!singular.empty()) return {singular};
  return {plural_of(token)};
}

bool is_lucene_stopword(std::string_view token) {
  return std::binary_search(kLuceneStopwords.begin(), kLuceneStopwords.end(), token);
}

Analyzer::Analyzer(AnalyzerOptions options) : options_(options) {}

std::string Analyzer::term(std::string_view token) const {
  if (options_.stopwords == Stopwords::lucene && is_lucene_stopword(token)) return {};
  if (options_.stemmer == Stemmer::none) return std::string(token);
  sb_stemmer* stemmer = thread_stemmer(options_.stemmer);
  const sb_symbol* stem = sb_stemmer_stem(stemmer, reinterpret_cast<const sb_symbol*>(token.data()),
                                          static_cast<int>(token.size()));
  if (stem == nullptr) throw std::bad_alloc();
  return std::string(reinterpret_cast<const char*>(stem), static_cast<std::size_t>(sb_stemmer_length(stemmer)));
}

std::vector<std::string> Analyzer::terms(std::string_view text) const {
  std::vector<std::string> out;
  for_each_token(text, [&](std::string_view token) {
    std::string t = term(token);
    if (!t.empty()) out.push_back(std::move(t));
  });
  return out;
}

std::vector<WeightedTerm> Analyzer::query_terms(std::string_view query) const {
  std::map<std::string, double> direct;
  std::vector<std::string> surface;
  for_each_token(query, [&](std::string_view token) {
    std::string t = term(token);
    if (t.empty()) return;
    direct[t] += 1.0;
    surface.emplace_back(token);
  });
  std::map<std::string, double> weights = direct;
  if (options_.stemmer == Stemmer::none) {
    for (const std::string& token : surface) {
      for (std::string& variant : plural_variants(token)) {
        if (direct.count(variant) != 0) continue;
        if (options_.stopwords == Stopwords::lucene && is_lucene_stopword(variant)) continue;
        weights.emplace(std::move(variant), kPluralWeight);
      }
    }
  }
  std::vector<WeightedTerm> out;
  out.reserve(weights.size());
  for (auto& [t, w] : weights) out.push_back({t, w});
  return out;
}

}  // namespace okfbench::retrieval
