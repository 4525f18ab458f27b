#include "retrieval/analyzer.hpp"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"

namespace okfbench::retrieval {
namespace {

using Tokens = std::vector<std::string>;

TEST(AnalyzerTokenize, SplitsOnNonLetterNumberRunsAndFoldsAsciiCase) {
  EXPECT_EQ(tokenize("Hello, World! p53-mediated_x 3.5"),
            (Tokens{"hello", "world", "p53", "mediated", "x", "3", "5"}));
  EXPECT_EQ(tokenize(""), Tokens{});
  EXPECT_EQ(tokenize(" \t--//"), Tokens{});
}

TEST(AnalyzerTokenize, AppliesNfkcCaseFolding) {
  // U+FB01 ligature fi, full-width digits, sharp s, Greek capital letters.
  EXPECT_EQ(tokenize("\xEF\xAC\x81le \xEF\xBC\x92\xEF\xBC\x90 Stra\xC3\x9F" "e \xCE\x9A\xCE\x91\xCE\x99"),
            (Tokens{"file", "20", "strasse", "\xCE\xBA\xCE\xB1\xCE\xB9"}));
  // Decomposed e + combining acute composes to U+00E9 and stays in the word.
  EXPECT_EQ(tokenize("Caf" "e\xCC\x81 ol\xC3\xA9"), (Tokens{"caf\xC3\xA9", "ol\xC3\xA9"}));
}

TEST(AnalyzerTokenize, InvalidUtf8BytesAreSeparators) {
  EXPECT_EQ(tokenize("ab\xFF" "cd \xC3\xA9t\xC3\xA9"), (Tokens{"ab", "cd", "\xC3\xA9t\xC3\xA9"}));
}

TEST(AnalyzerTokenize, NonLatinScriptsKeepCombiningMarksInsideWords) {
  // Hindi "नमस्ते": the virama and vowel signs are marks, not separators.
  EXPECT_EQ(tokenize("\xE0\xA4\xA8\xE0\xA4\xAE\xE0\xA4\xB8\xE0\xA5\x8D\xE0\xA4\xA4\xE0\xA5\x87!"),
            (Tokens{"\xE0\xA4\xA8\xE0\xA4\xAE\xE0\xA4\xB8\xE0\xA5\x8D\xE0\xA4\xA4\xE0\xA5\x87"}));
}

TEST(AnalyzerFoldCase, FoldsWholeStrings) {
  EXPECT_EQ(fold_case("Metric"), "metric");
  EXPECT_EQ(fold_case("\xC3\x9C" "ber"), "\xC3\xBC" "ber");
}

TEST(AnalyzerStopwords, LuceneSetHasThe33Words) {
  int count = 0;
  for (const char* w : {"a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into",
                        "is", "it", "no", "not", "of", "on", "or", "such", "that", "the", "their", "then",
                        "there", "these", "they", "this", "to", "was", "will", "with"}) {
    EXPECT_TRUE(is_lucene_stopword(w)) << w;
    ++count;
  }
  EXPECT_EQ(count, 33);
  EXPECT_FALSE(is_lucene_stopword("cat"));
  EXPECT_FALSE(is_lucene_stopword("s"));
}

TEST(AnalyzerTerms, RemovesStopwordsThenStems) {
  Analyzer none;
  EXPECT_EQ(none.terms("The cats are running"), (Tokens{"the", "cats", "are", "running"}));
  Analyzer lucene({Stemmer::none, Stopwords::lucene});
  EXPECT_EQ(lucene.terms("The cats are running"), (Tokens{"cats", "running"}));
  Analyzer porter({Stemmer::porter, Stopwords::lucene});
  EXPECT_EQ(porter.terms("The cats are running generously"), (Tokens{"cat", "run", "gener"}));
  Analyzer english({Stemmer::english, Stopwords::none});
  EXPECT_EQ(english.terms("generously"), (Tokens{"generous"}));
}

TEST(AnalyzerPlurals, VariantsGoBothWays) {
  EXPECT_EQ(plural_variants("query"), Tokens{"queries"});
  EXPECT_EQ(plural_variants("queries"), Tokens{"query"});
  EXPECT_EQ(plural_variants("box"), Tokens{"boxes"});
  EXPECT_EQ(plural_variants("boxes"), Tokens{"box"});
  EXPECT_EQ(plural_variants("class"), Tokens{"classes"});
  EXPECT_EQ(plural_variants("classes"), Tokens{"class"});
  EXPECT_EQ(plural_variants("status"), Tokens{"statuses"});
  EXPECT_EQ(plural_variants("dog"), Tokens{"dogs"});
  EXPECT_EQ(plural_variants("days"), Tokens{"day"});
  EXPECT_EQ(plural_variants("key"), Tokens{"keys"});
  EXPECT_EQ(plural_variants("42"), Tokens{});
  EXPECT_EQ(plural_variants("ox"), Tokens{});
}

TEST(AnalyzerQueryTerms, AddsPluralFormsAtReducedWeight) {
  Analyzer analyzer;
  EXPECT_EQ(analyzer.query_terms("Cat"), (std::vector<WeightedTerm>{{"cat", 1.0}, {"cats", kPluralWeight}}));
  // A form that is itself in the query keeps its full weight; repeats add up.
  EXPECT_EQ(analyzer.query_terms("cats cat cat"), (std::vector<WeightedTerm>{{"cat", 2.0}, {"cats", 1.0}}));
}

TEST(AnalyzerQueryTerms, StemmingReplacesPluralExpansion) {
  Analyzer analyzer({Stemmer::porter, Stopwords::lucene});
  EXPECT_EQ(analyzer.query_terms("the cats and a cat"), (std::vector<WeightedTerm>{{"cat", 2.0}}));
}

TEST(AnalyzerQueryTerms, StopwordsAreDroppedFromQueries) {
  Analyzer analyzer({Stemmer::none, Stopwords::lucene});
  EXPECT_EQ(analyzer.query_terms("the"), std::vector<WeightedTerm>{});
}

TEST(AnalyzerOptions, ParseNamesAndRejectUnknownOnes) {
  EXPECT_EQ(parse_stemmer("porter"), Stemmer::porter);
  EXPECT_EQ(parse_stemmer("english"), Stemmer::english);
  EXPECT_EQ(parse_stemmer("none"), Stemmer::none);
  EXPECT_EQ(parse_stopwords("lucene"), Stopwords::lucene);
  EXPECT_THROW(parse_stemmer("krovetz"), UsageError);
  EXPECT_THROW(parse_stopwords("smart"), UsageError);
  EXPECT_EQ(to_string(Stemmer::english), "english");
  EXPECT_EQ(to_string(Stopwords::lucene), "lucene");
}

TEST(AnalyzerThreads, StemmingIsSafeFromSeveralThreads) {
  Analyzer analyzer({Stemmer::porter, Stopwords::none});
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      for (int n = 0; n < 2000; ++n) {
        if (analyzer.terms("running relational hopeful") != Tokens{"run", "relat", "hope"}) ++failures[i];
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures, (std::vector<int>{0, 0, 0, 0}));
}

}  // namespace
}  // namespace okfbench::retrieval
