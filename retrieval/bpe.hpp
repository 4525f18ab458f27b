#pragma once
// Exact, tiktoken-compatible byte-level BPE (o200k_base, cl100k_base).
//
// Encoding is the tiktoken algorithm: split the text with the encoding's
// pre-tokenizer pattern, then merge each piece's bytes greedily by lowest rank
// (Sennrich et al. 2016, "Neural Machine Translation of Rare Words with Subword
// Units", byte-level as in Radford et al. 2019, GPT-2). Ids are bit-for-bit what
// tiktoken produces for valid UTF-8 text.
//
// Bytes that are not valid UTF-8 never crash and never vanish: the pre-tokenizer
// treats each invalid byte like U+FFFD (a symbol: not a letter, number or space)
// and byte-level BPE encodes the byte itself, so decode(encode(x)) == x for any
// byte string. (tiktoken's Python API replaces such input with U+FFFD first;
// okfbench keeps the bytes so counts of raw tool output stay honest.)
//
// Thread safety: a loaded BpeEncoding is immutable; encode/count/decode may be
// called from any number of threads (the piece cache is per thread).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace okfbench::retrieval {

using TokenId = std::uint32_t;

// What encode() does with special-token strings such as "<|endoftext|>".
enum class SpecialTokens {
  allowed,     // they become their special ids
  disallowed,  // finding one is an InputError (tiktoken's default)
};

// Which pre-tokenizer encode uses. `scanner` is the fast hand-written one;
// `pcre2` compiles the encoding's published pattern with PCRE2 (JIT) and is
// kept as the reference the scanner is tested against.
enum class Splitter { scanner, pcre2 };

// Fixed facts about a supported encoding (also in datasets/tokenizers/encodings.json).
struct EncodingSpec {
  std::string name;          // "o200k_base" or "cl100k_base"
  std::string pattern;       // pre-tokenizer split pattern (pat_str)
  std::string sha256;        // expected SHA-256 of <name>.tiktoken, lowercase hex
  std::vector<std::pair<std::string, TokenId>> special_tokens;
};

// The supported encodings, in a fixed order.
const std::vector<EncodingSpec>& encoding_specs();

// Folder the .tiktoken files are read from: $OKFBENCH_TOKENIZERS when set,
// else data_home()/tokenizers (retrieval/data_home.hpp).
std::filesystem::path tokenizer_dir();

class BpeEncoding {
 public:
  // The named encoding, loaded from tokenizer_dir() on first use and shared by
  // the whole process afterwards. Throws InputError for an unknown name, a
  // missing or corrupt file, or a SHA-256 mismatch (the message names the file
  // and what to do).
  static const BpeEncoding& get(std::string_view name);

  // Loads `spec` from an explicit file (checks the SHA-256 too).
  static std::unique_ptr<BpeEncoding> load(const std::filesystem::path& tiktoken_file,
                                           const EncodingSpec& spec);

  const std::string& name() const;

  // Special-token strings are ordinary text here (tiktoken's encode_ordinary).
  std::vector<TokenId> encode_ordinary(std::string_view text,
                                       Splitter splitter = Splitter::scanner) const;
  std::vector<TokenId> encode(std::string_view text, SpecialTokens special) const;
  // encode_ordinary(text).size(), without building the id vector.
  std::size_t count(std::string_view text) const;
  // The bytes the ids stand for (special ids give their strings). Throws
  // InputError for an id outside the vocabulary.
  std::string decode(std::span<const TokenId> ids) const;

  // Pre-tokenizer pieces of `text`, in order; they concatenate back to `text`.
  std::vector<std::string_view> split(std::string_view text,
                                      Splitter splitter = Splitter::scanner) const;

  std::size_t vocabulary_size() const;  // ordinary tokens, without specials

  ~BpeEncoding();
  BpeEncoding(const BpeEncoding&) = delete;
  BpeEncoding& operator=(const BpeEncoding&) = delete;

  struct Impl;

 private:
  explicit BpeEncoding(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace okfbench::retrieval
