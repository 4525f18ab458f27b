#include "retrieval/bpe.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::retrieval {
namespace {

namespace fs = std::filesystem;
using okfbench::test::data_root;
using okfbench::test::have_data;

const BpeEncoding& o200k() { return BpeEncoding::get("o200k_base"); }
const BpeEncoding& cl100k() { return BpeEncoding::get("cl100k_base"); }

struct Vector {
  std::string encoding;
  std::string text;
  std::vector<TokenId> ids;
};

std::vector<Vector> load_vectors() {
  std::ifstream in(data_root() / "tokenizers" / "vectors.jsonl");
  std::vector<Vector> out;
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    out.push_back({j.at("encoding").get<std::string>(), j.at("text").get<std::string>(),
                   j.at("ids").get<std::vector<TokenId>>()});
  }
  return out;
}

std::string join(const std::vector<std::string_view>& pieces) {
  std::string out;
  for (auto p : pieces) out += p;
  return out;
}

TEST(Bpe, ReproducesEveryReferenceVectorExactly) {
  if (!have_data()) GTEST_SKIP() << "no reference data";
  auto vectors = load_vectors();
  ASSERT_EQ(vectors.size(), 652u);
  std::map<std::string, int> per_encoding;
  for (const auto& v : vectors) {
    const BpeEncoding& enc = BpeEncoding::get(v.encoding);
    ++per_encoding[v.encoding];
    EXPECT_EQ(enc.encode_ordinary(v.text), v.ids) << v.encoding << " scanner: " << v.text;
    EXPECT_EQ(enc.encode_ordinary(v.text, Splitter::pcre2), v.ids) << v.encoding << " pcre2: " << v.text;
    EXPECT_EQ(enc.count(v.text), v.ids.size()) << v.text;
    EXPECT_EQ(enc.decode(v.ids), v.text);
  }
  EXPECT_EQ(per_encoding["o200k_base"], 326);
  EXPECT_EQ(per_encoding["cl100k_base"], 326);
}

TEST(Bpe, ScannerSplitsVectorsExactlyAsPcre2) {
  if (!have_data()) GTEST_SKIP() << "no reference data";
  for (const auto& v : load_vectors()) {
    const BpeEncoding& enc = BpeEncoding::get(v.encoding);
    auto pieces = enc.split(v.text);
    EXPECT_EQ(pieces, enc.split(v.text, Splitter::pcre2)) << v.encoding << ": " << v.text;
    EXPECT_EQ(join(pieces), v.text);
  }
}

TEST(Bpe, KnownPiecesOfBothGrammars) {
  using P = std::vector<std::string_view>;
  EXPECT_EQ(cl100k().split("I'm here  now\n\n  x"), (P{"I", "'m", " here", " ", " now", "\n\n", " ", " x"}));
  EXPECT_EQ(o200k().split("HELLO world's 12345 a/b\r\n"),
            (P{"HELLO", " world's", " ", "123", "45", " a", "/b", "\r\n"}));
  EXPECT_EQ(o200k().split("trailing   "), (P{"trailing", "   "}));
}

// Characters chosen to hit every branch of the split patterns: letter
// subclasses, marks, numbers of each kind, Unicode spaces, contractions
// (including U+017F, which case-folds to s), slashes, newlines, invalid bytes.
const std::vector<std::string>& alphabet() {
  static const std::vector<std::string> chars = {
      "a", "Z", "s", "S", "t", "r", "e", "v", "m", "l", "L", "d", "'", "'", "/", " ", " ", " ", "\t", "\n", "\r",
      "\v", "\f", "7", "0", ".", ",", "!", "-", "_", "\"", "(", "\xC5\xBF" /* ſ */, "\xC3\xA9" /* é */,
      "\xC3\x89" /* É */, "\xC7\x85" /* ǅ Lt */, "\xCA\xB0" /* ʰ Lm */, "\xE4\xB8\xAD" /* 中 Lo */,
      "\xCC\x81" /* combining acute Mn */, "\xE0\xA4\xBE" /* Devanagari AA Mc */, "\xE2\x85\xAB" /* Ⅻ Nl */,
      "\xC2\xBD" /* ½ No */, "\xD9\xA3" /* Arabic-Indic 3 Nd */, "\xC2\x85" /* NEL */, "\xC2\xA0" /* NBSP */,
      "\xE2\x80\x83" /* em space */, "\xE3\x80\x80" /* ideographic space */, "\xE2\x80\x8B" /* ZWSP, not space */,
      "\xE1\xA0\x8E" /* U+180E */, "\xF0\x9F\x98\x80" /* emoji */, "\xE2\x82\xAC" /* € */, "\x80", "\xFF", "\xC0",
      "\xC0\xAF" /* overlong */, "\xE2\x82" /* truncated */, "\xED\xA0\x80" /* surrogate */, "\xF4\x90\x80\x80",
      "\x00"};
  return chars;
}

std::string random_text(std::mt19937& rng, std::size_t max_chars) {
  const auto& chars = alphabet();
  std::uniform_int_distribution<std::size_t> len(0, max_chars), pick(0, chars.size() - 1);
  std::string out;
  for (std::size_t n = len(rng); n > 0; --n) out += chars[pick(rng)];
  return out;
}

TEST(Bpe, ScannerAgreesWithPcre2OnFuzzedTextIncludingInvalidUtf8) {
  std::mt19937 rng(20261129);
  for (int round = 0; round < 50000; ++round) {
    std::string text = random_text(rng, 24);
    for (const BpeEncoding* enc : {&o200k(), &cl100k()}) {
      auto pieces = enc->split(text);
      ASSERT_EQ(pieces, enc->split(text, Splitter::pcre2)) << enc->name() << " round " << round;
      ASSERT_EQ(join(pieces), text);
    }
  }
}

TEST(Bpe, ScannerAgreesWithPcre2OnRandomBytes) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> byte(0, 255), len(0, 40);
  for (int round = 0; round < 20000; ++round) {
    std::string text;
    for (int n = len(rng); n > 0; --n) text += static_cast<char>(byte(rng));
    for (const BpeEncoding* enc : {&o200k(), &cl100k()}) {
      ASSERT_EQ(enc->split(text), enc->split(text, Splitter::pcre2)) << enc->name() << " round " << round;
      // Any byte string encodes and decodes back to itself.
      ASSERT_EQ(enc->decode(enc->encode_ordinary(text)), text);
    }
  }
}

std::string utf8(char32_t cp) {
  std::string s;
  auto cont = [&](int shift) { s += static_cast<char>(0x80 | ((cp >> shift) & 0x3F)); };
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xC0 | (cp >> 6));
    cont(0);
  } else if (cp < 0x10000) {
    s += static_cast<char>(0xE0 | (cp >> 12));
    cont(6);
    cont(0);
  } else {
    s += static_cast<char>(0xF0 | (cp >> 18));
    cont(12);
    cont(6);
    cont(0);
  }
  return s;
}

// True when this PCRE2 build's Unicode tables do not know the code point.
bool unassigned_for_pcre2(const std::string& ch) {
  static pcre2_code* cn = [] {
    int error = 0;
    PCRE2_SIZE offset = 0;
    return pcre2_compile(reinterpret_cast<PCRE2_SPTR>("^\\p{Cn}$"), PCRE2_ZERO_TERMINATED, PCRE2_UTF, &error,
                         &offset, nullptr);
  }();
  pcre2_match_data* md = pcre2_match_data_create_from_pattern(cn, nullptr);
  int rc = pcre2_match(cn, reinterpret_cast<PCRE2_SPTR>(ch.data()), ch.size(), 0, 0, md, nullptr);
  pcre2_match_data_free(md);
  return rc >= 0;
}

// Every code point in the contexts that exercise the patterns' classes. The
// scanner classifies with utf8proc (Unicode 15, as tiktoken's Rust regex);
// Debian's PCRE2 10.42 has Unicode 14 tables, so the only disagreements
// allowed are characters PCRE2 does not know yet.
TEST(Bpe, ScannerAgreesWithPcre2OnSampledCodePoints) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<std::uint32_t> any(0, 0x10FFFF);
  int newer_unicode = 0;
  for (int round = 0; round < 30000; ++round) {
    char32_t cp = round < 0x800 ? static_cast<char32_t>(round) : any(rng);
    if (cp >= 0xD800 && cp < 0xE000) continue;
    std::string c = utf8(cp);
    std::string text = "x" + c + "1 " + c + "A" + c + c + "a " + c + "\n" + c + "'s";
    for (const BpeEncoding* enc : {&o200k(), &cl100k()}) {
      if (enc->split(text) == enc->split(text, Splitter::pcre2)) continue;
      ASSERT_TRUE(unassigned_for_pcre2(c)) << enc->name() << " disagrees on U+" << std::hex << static_cast<int>(cp);
      ++newer_unicode;
    }
  }
  EXPECT_LT(newer_unicode, 200);
}

// An independent, deliberately naive BPE over the decoded vocabulary, to check
// the heap merge used for long pieces.
std::vector<TokenId> naive_bpe(const std::map<std::string, TokenId>& vocab, const std::string& piece) {
  std::vector<std::string> parts;
  for (char c : piece) parts.emplace_back(1, c);
  while (parts.size() > 1) {
    std::size_t best = parts.size();
    TokenId best_rank = 0;
    for (std::size_t k = 0; k + 1 < parts.size(); ++k) {
      auto it = vocab.find(parts[k] + parts[k + 1]);
      if (it != vocab.end() && (best == parts.size() || it->second < best_rank)) {
        best = k;
        best_rank = it->second;
      }
    }
    if (best == parts.size()) break;
    parts[best] += parts[best + 1];
    parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(best) + 1);
  }
  std::vector<TokenId> ids;
  for (const auto& p : parts) ids.push_back(vocab.at(p));
  return ids;
}

TEST(Bpe, LongPiecesMergeExactlyLikeNaiveBpe) {
  for (const BpeEncoding* enc : {&o200k(), &cl100k()}) {
    std::map<std::string, TokenId> vocab;
    for (TokenId id = 0; id < enc->vocabulary_size(); ++id) {
      std::vector<TokenId> one{id};
      vocab.emplace(enc->decode(one), id);
    }
    std::mt19937 rng(11);
    for (int round = 0; round < 60; ++round) {
      // One long letter run, so the whole text is a single piece of 100..700 bytes.
      std::uniform_int_distribution<int> len(100, 700), letter(0, round % 2 ? 2 : 25);
      std::string piece;
      for (int n = len(rng); n > 0; --n) piece += static_cast<char>('a' + letter(rng));
      ASSERT_EQ(enc->split(piece).size(), 1u);
      EXPECT_EQ(enc->encode_ordinary(piece), naive_bpe(vocab, piece)) << enc->name() << " " << piece;
    }
  }
}

TEST(Bpe, HundredKilobyteRunOfOneLetterEncodes) {
  std::string run(100'000, 'a');
  for (const BpeEncoding* enc : {&o200k(), &cl100k()}) {
    auto ids = enc->encode_ordinary(run);
    EXPECT_EQ(enc->decode(ids), run);
    EXPECT_EQ(enc->count(run), ids.size());
    EXPECT_LT(ids.size(), run.size() / 4);  // merged, not left as bytes
  }
}

TEST(Bpe, SpecialTokens) {
  const std::string text = "a<|endoftext|>b";
  EXPECT_EQ(o200k().encode(text, SpecialTokens::allowed),
            (std::vector<TokenId>{o200k().encode_ordinary("a")[0], 199999, o200k().encode_ordinary("b")[0]}));
  EXPECT_EQ(cl100k().encode("<|fim_prefix|><|endofprompt|>", SpecialTokens::allowed),
            (std::vector<TokenId>{100258, 100276}));
  try {
    o200k().encode(text, SpecialTokens::disallowed);
    FAIL() << "disallowed special token accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("<|endoftext|> at byte 1"), std::string::npos) << e.what();
  }
  auto ordinary = o200k().encode_ordinary(text);
  EXPECT_EQ(std::count(ordinary.begin(), ordinary.end(), 199999u), 0);
  EXPECT_GT(ordinary.size(), 3u);
  EXPECT_EQ(o200k().encode(text, SpecialTokens::allowed).size(), 3u);
  EXPECT_EQ(o200k().decode(o200k().encode(text, SpecialTokens::allowed)), text);
  EXPECT_EQ(o200k().encode("no specials here", SpecialTokens::disallowed), o200k().encode_ordinary("no specials here"));
  std::vector<TokenId> bad{5'000'000};
  EXPECT_THROW(o200k().decode(bad), InputError);
}

TEST(Bpe, CountIsThreadSafe) {
  std::string text;
  std::mt19937 rng(3);
  for (int i = 0; i < 200; ++i) text += random_text(rng, 30) + " lorem ipsum dolor sit amet ";
  const std::size_t expected = o200k().encode_ordinary(text).size();
  std::vector<std::thread> threads;
  std::vector<std::size_t> counts(4);
  for (std::size_t t = 0; t < counts.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < 20; ++r) counts[t] = o200k().count(text);
    });
  }
  for (auto& th : threads) th.join();
  for (auto c : counts) EXPECT_EQ(c, expected);
}

TEST(Bpe, VocabularyIsCheckedAgainstItsSha256) {
  const EncodingSpec& spec = encoding_specs().at(1);
  fs::path dir = okfbench::test::fresh_dir("bpe-sha");
  fs::path copy = dir / "cl100k_base.tiktoken";
  std::string data = okfbench::test::read_file(tokenizer_dir() / "cl100k_base.tiktoken");
  data[10] = data[10] == 'A' ? 'B' : 'A';
  okfbench::test::write_file(copy, data);
  try {
    BpeEncoding::load(copy, spec);
    FAIL() << "altered vocabulary accepted";
  } catch (const InputError& e) {
    std::string message = e.what();
    EXPECT_NE(message.find(copy.string()), std::string::npos) << message;
    EXPECT_NE(message.find("SHA-256"), std::string::npos) << message;
    EXPECT_NE(message.find(spec.sha256), std::string::npos) << message;
  }
  EXPECT_THROW(BpeEncoding::load(dir / "missing.tiktoken", spec), InputError);
  EXPECT_THROW(BpeEncoding::get("p50k_base"), InputError);
  auto loaded = BpeEncoding::load(tokenizer_dir() / "cl100k_base.tiktoken", spec);
  EXPECT_EQ(loaded->encode_ordinary("hello world"), (std::vector<TokenId>{15339, 1917}));
}

TEST(Bpe, CompiledSpecsMatchCommittedEncodingsJson) {
  auto json = nlohmann::json::parse(okfbench::test::read_file(tokenizer_dir() / "encodings.json"));
  for (const auto& spec : encoding_specs()) {
    const auto& entry = json.at(spec.name);
    EXPECT_EQ(entry.at("pat_str").get<std::string>(), spec.pattern) << spec.name;
    std::map<std::string, TokenId> expected = entry.at("special_tokens").get<std::map<std::string, TokenId>>();
    std::map<std::string, TokenId> compiled(spec.special_tokens.begin(), spec.special_tokens.end());
    EXPECT_EQ(compiled, expected) << spec.name;
  }
}

}  // namespace
}  // namespace okfbench::retrieval
