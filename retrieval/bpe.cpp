#include "retrieval/bpe.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <openssl/evp.h>
#include <pcre2.h>
#include <utf8proc.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <mutex>
#include <queue>
#include <sstream>

#include "retrieval/data_home.hpp"
#include "core/digest.hpp"
#include "core/error.hpp"
#include "core/files.hpp"

namespace okfbench::retrieval {
namespace {

constexpr TokenId kNoRank = std::numeric_limits<TokenId>::max();

// ---------------------------------------------------------------------------
// The supported encodings (patterns and special tokens as in
// datasets/tokenizers/encodings.json; a test keeps the two in step).

const char* const kO200kPattern =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?)"
    R"(|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?)"
    R"(|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* const kCl100kPattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

enum class Grammar { o200k, cl100k, other };

Grammar grammar_of(const std::string& pattern) {
  if (pattern == kO200kPattern) return Grammar::o200k;
  if (pattern == kCl100kPattern) return Grammar::cl100k;
  return Grammar::other;
}

// ---------------------------------------------------------------------------
// Character classes of the split patterns.

enum : std::uint8_t {
  kLetter = 1,     // \p{L}
  kUpperish = 2,   // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
  kLowerish = 4,   // [\p{Ll}\p{Lm}\p{Lo}\p{M}]
  kNumber = 8,     // \p{N}
  kSpace = 16,     // \s: the Unicode White_Space property, as tiktoken's Rust regex
  kNewline = 32,   // \r or \n
  kPresent = 64,   // any character (0 only past the end of the text)
};

// Unicode White_Space (PropList.txt, Unicode 15): what Rust regex calls \s.
bool is_white_space(std::int32_t cp) {
  if (cp >= 0x09 && cp <= 0x0D) return true;
  switch (cp) {
    case 0x20: case 0x85: case 0xA0: case 0x1680: case 0x2028: case 0x2029:
    case 0x202F: case 0x205F: case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

std::uint8_t classify_codepoint(std::int32_t cp) {
  std::uint8_t cls = kPresent;
  if (is_white_space(cp)) cls |= kSpace;
  if (cp == '\r' || cp == '\n') cls |= kNewline;
  switch (utf8proc_category(cp)) {
    case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LT: return cls | kLetter | kUpperish;
    case UTF8PROC_CATEGORY_LL: return cls | kLetter | kLowerish;
    case UTF8PROC_CATEGORY_LM: case UTF8PROC_CATEGORY_LO: return cls | kLetter | kUpperish | kLowerish;
    case UTF8PROC_CATEGORY_MN: case UTF8PROC_CATEGORY_MC: case UTF8PROC_CATEGORY_ME:
      return cls | kUpperish | kLowerish;
    case UTF8PROC_CATEGORY_ND: case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_NO: return cls | kNumber;
    default: return cls;
  }
}

// Classes of every code point below U+0800 (one- and two-byte UTF-8), the
// common case in the text okfbench counts; the rest are looked up each time.
const std::array<std::uint8_t, 0x800>& small_classes() {
  static const auto table = [] {
    std::array<std::uint8_t, 0x800> t{};
    for (std::int32_t cp = 0; cp < 0x800; ++cp) t[static_cast<std::size_t>(cp)] = classify_codepoint(cp);
    return t;
  }();
  return table;
}

struct Char {
  std::uint32_t len = 0;   // bytes; 0 past the end
  std::uint8_t cls = 0;
};

// One step of UTF-8 decoding. An invalid byte is a one-byte "symbol" character
// (the class of U+FFFD), so scanning always advances.
struct Utf8Step {
  std::int32_t cp;
  std::uint32_t len;
  bool valid;
};

Utf8Step decode_step(const unsigned char* s, std::size_t n) {
  if (s[0] < 0x80) return {s[0], 1, true};
  std::int32_t cp = 0;
  auto len = utf8proc_iterate(s, static_cast<utf8proc_ssize_t>(std::min<std::size_t>(n, 4)), &cp);
  if (len <= 0) return {0xFFFD, 1, false};
  return {cp, static_cast<std::uint32_t>(len), true};
}

// The hand-written pre-tokenizer: the same pieces as the encoding's pattern
// under leftmost-first (backtracking) semantics, in one forward pass.
class Scanner {
 public:
  Scanner(std::string_view text, Grammar grammar)
      : s_(reinterpret_cast<const unsigned char*>(text.data())), n_(text.size()), grammar_(grammar),
        small_(small_classes()) {}

  // End of the piece that starts at `i` (< size).
  std::size_t next(std::size_t i) const { return grammar_ == Grammar::o200k ? next_o200k(i) : next_cl100k(i); }

 private:
  Char at(std::size_t i) const {
    if (i >= n_) return {};
    unsigned char b = s_[i];
    if (b < 0x80) return {1, small_[b]};
    Utf8Step step = decode_step(s_ + i, n_ - i);
    if (!step.valid) return {1, kPresent};
    std::uint8_t cls = step.cp < 0x800 ? small_[static_cast<std::size_t>(step.cp)] : classify_codepoint(step.cp);
    return {step.len, cls};
  }
  static bool is_prefix(Char c) { return (c.cls & kPresent) && !(c.cls & (kLetter | kNumber | kNewline)); }
  static bool is_symbol(Char c) { return (c.cls & kPresent) && !(c.cls & (kLetter | kNumber | kSpace)); }

  std::size_t run(std::size_t i, std::uint8_t mask) const {
    for (Char c = at(i); c.cls & mask; c = at(i)) i += c.len;
    return i;
  }
  std::size_t run_symbols(std::size_t i) const {
    for (Char c = at(i); is_symbol(c); c = at(i)) i += c.len;
    return i;
  }
  std::size_t run_bytes(std::size_t i, std::string_view set) const {
    while (i < n_ && set.find(static_cast<char>(s_[i])) != std::string_view::npos) ++i;
    return i;
  }
  bool byte_is(std::size_t i, unsigned char lower) const { return i < n_ && (s_[i] | 0x20) == lower; }

  // (?i:'s|'t|'re|'ve|'m|'ll|'d) at i: its length, 0 when absent. Case
  // folding maps U+017F LATIN SMALL LETTER LONG S to s as well.
  std::size_t contraction(std::size_t i) const {
    if (i >= n_ || s_[i] != '\'') return 0;
    if (byte_is(i + 1, 's') || byte_is(i + 1, 't') || byte_is(i + 1, 'm') || byte_is(i + 1, 'd')) return 2;
    if (i + 2 < n_ && s_[i + 1] == 0xC5 && s_[i + 2] == 0xBF) return 3;
    if ((byte_is(i + 1, 'r') || byte_is(i + 1, 'v')) && byte_is(i + 2, 'e')) return 3;
    if (byte_is(i + 1, 'l') && byte_is(i + 2, 'l')) return 3;
    return 0;
  }

  std::size_t numbers(std::size_t i) const {
    for (int k = 0; k < 3; ++k) {
      Char c = at(i);
      if (!(c.cls & kNumber)) break;
      i += c.len;
    }
    return i;
  }

  // " ?[^\s\p{L}\p{N}]+" then trailing bytes from `tail`; 0 when no match.
  std::size_t symbols(std::size_t i, std::string_view tail) const {
    std::size_t q = (s_[i] == ' ' && is_symbol(at(i + 1))) ? i + 1 : i;
    if (!is_symbol(at(q))) return 0;
    return run_bytes(run_symbols(q), tail);
  }

  // \s*[\r\n]+ | \s+(?!\S) | \s+ at a white-space character.
  std::size_t spaces(std::size_t i) const {
    std::size_t end = i, last_start = i, newline_end = 0;
    for (Char c = at(end); c.cls & kSpace; c = at(end)) {
      if (c.cls & kNewline) newline_end = end + c.len;
      last_start = end;
      end += c.len;
    }
    if (newline_end != 0) return newline_end;
    if (end == n_ || last_start == i) return std::max(end, i + 1);
    return last_start;  // leave the last space to prefix the next word
  }

  std::size_t next_cl100k(std::size_t i) const {
    if (std::size_t k = contraction(i)) return i + k;
    Char c = at(i);
    std::size_t q = is_prefix(c) ? i + c.len : i;
    if (at(q).cls & kLetter) return run(q, kLetter);
    if (c.cls & kNumber) return numbers(i);
    if (std::size_t e = symbols(i, "\r\n")) return e;
    return spaces(i);
  }

  // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+ from q, with the
  // backtracking of the greedy star: 0 when it cannot match.
  std::size_t upper_then_lower(std::size_t q) const {
    std::size_t p = q, last_lower_end = 0;
    for (Char c = at(p); c.cls & kUpperish; c = at(p)) {
      if (c.cls & kLowerish) last_lower_end = p + c.len;
      p += c.len;
    }
    if (at(p).cls & kLowerish) return run(p, kLowerish);
    return last_lower_end;
  }

  std::size_t next_o200k(std::size_t i) const {
    Char c = at(i);
    const bool prefix = is_prefix(c);
    for (int take = prefix ? 1 : 0; take >= 0; --take) {
      if (std::size_t e = upper_then_lower(take ? i + c.len : i)) return e + contraction(e);
    }
    for (int take = prefix ? 1 : 0; take >= 0; --take) {
      std::size_t q = take ? i + c.len : i;
      if (at(q).cls & kUpperish) {
        std::size_t e = run(run(q, kUpperish), kLowerish);
        return e + contraction(e);
      }
    }
    if (c.cls & kNumber) return numbers(i);
    if (std::size_t e = symbols(i, "\r\n/")) return e;
    return spaces(i);
  }

  const unsigned char* s_;
  std::size_t n_;
  Grammar grammar_;
  const std::array<std::uint8_t, 0x800>& small_;
};

// ---------------------------------------------------------------------------
// The PCRE2 reference splitter.

// PCRE2's \s in UCP mode is not exactly Unicode White_Space (it leaves out
// U+0085, U+180E handling differs by version), so the reference spells the
// White_Space set out; everything else is the published pattern verbatim.
std::string pcre2_pattern(const std::string& pattern) {
  const std::string space = R"(\t-\r\x{20}\x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000})";
  std::string out;
  bool in_class = false;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      const char e = pattern[++i];
      if (e == 's' && in_class) out += space;
      else if (e == 's' || e == 'S') out += (e == 'S' ? "[^" : "[") + space + "]";
      else out += std::string{c, e};
      continue;
    }
    if (c == '[') in_class = true;
    if (c == ']') in_class = false;
    out += c;
  }
  return out;
}

class Pcre2Splitter {
 public:
  explicit Pcre2Splitter(const std::string& pattern) {
    const std::string translated = pcre2_pattern(pattern);
    int error = 0;
    PCRE2_SIZE offset = 0;
    code_ = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.c_str()), translated.size(),
                          PCRE2_UTF | PCRE2_UCP, &error, &offset, nullptr);
    if (!code_) {
      std::array<PCRE2_UCHAR, 256> message{};
      pcre2_get_error_message(error, message.data(), message.size());
      throw InputError("split pattern does not compile at offset " + std::to_string(offset) + ": " +
                       reinterpret_cast<const char*>(message.data()));
    }
    pcre2_jit_compile(code_, PCRE2_JIT_COMPLETE);  // falls back to the interpreter when JIT is unavailable
  }
  ~Pcre2Splitter() { pcre2_code_free(code_); }
  Pcre2Splitter(const Pcre2Splitter&) = delete;
  Pcre2Splitter& operator=(const Pcre2Splitter&) = delete;

  // Pieces as (begin, end) byte offsets into `text`, as tiktoken's find_iter.
  std::vector<std::pair<std::size_t, std::size_t>> split(std::string_view text) const;

 private:
  pcre2_code* code_ = nullptr;
};

// Invalid UTF-8 bytes become U+FFFD for PCRE2; `origin` maps offsets back.
struct Transcoded {
  std::string text;
  std::vector<std::size_t> origin;  // origin[k] = offset in the input of byte k (and of the end)
};

Transcoded transcode(std::string_view input) {
  Transcoded out;
  out.text.reserve(input.size());
  const auto* s = reinterpret_cast<const unsigned char*>(input.data());
  for (std::size_t i = 0; i < input.size();) {
    Utf8Step step = decode_step(s + i, input.size() - i);
    if (step.valid) {
      out.text.append(input.substr(i, step.len));
      for (std::uint32_t k = 0; k < step.len; ++k) out.origin.push_back(i + k);
    } else {
      out.text.append("\xEF\xBF\xBD");
      out.origin.insert(out.origin.end(), {i, i, i});
    }
    i += step.len;
  }
  out.origin.push_back(input.size());
  return out;
}

// Match data and a JIT stack per thread: the reference splitter is shared by
// threads like the rest of the encoding.
struct Pcre2Scratch {
  pcre2_match_data* match = pcre2_match_data_create(1, nullptr);
  pcre2_match_context* context = pcre2_match_context_create(nullptr);
  pcre2_jit_stack* stack = pcre2_jit_stack_create(32 * 1024, 16 * 1024 * 1024, nullptr);
  Pcre2Scratch() { pcre2_jit_stack_assign(context, nullptr, stack); }
  ~Pcre2Scratch() {
    pcre2_jit_stack_free(stack);
    pcre2_match_context_free(context);
    pcre2_match_data_free(match);
  }
  Pcre2Scratch(const Pcre2Scratch&) = delete;
  Pcre2Scratch& operator=(const Pcre2Scratch&) = delete;
};

std::vector<std::pair<std::size_t, std::size_t>> Pcre2Splitter::split(std::string_view input) const {
  Transcoded t = transcode(input);
  thread_local Pcre2Scratch scratch;
  std::vector<std::pair<std::size_t, std::size_t>> pieces;
  std::size_t at = 0;
  while (at < t.text.size()) {
    int rc = pcre2_match(code_, reinterpret_cast<PCRE2_SPTR>(t.text.data()), t.text.size(), at,
                         PCRE2_NO_UTF_CHECK, scratch.match, scratch.context);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) throw InputError("PCRE2 split failed with error " + std::to_string(rc));
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(scratch.match);
    if (ov[1] == ov[0]) {  // the patterns never match empty; guard against a loop anyway
      ++at;
      continue;
    }
    pieces.emplace_back(t.origin[ov[0]], t.origin[ov[1]]);
    at = ov[1];
  }
  return pieces;
}

// ---------------------------------------------------------------------------
// Rank table: open addressing over byte strings kept in one arena.

std::uint64_t hash_bytes(const char* p, std::size_t n) {
  constexpr std::uint64_t kMul = 0x9E3779B97F4A7C15ULL;
  std::uint64_t h = n * kMul;
  while (n >= 8) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ w) * kMul;
    h ^= h >> 32;
    p += 8;
    n -= 8;
  }
  std::uint64_t w = 0;
  for (std::size_t i = 0; i < n; ++i) w |= static_cast<std::uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  h = (h ^ w) * kMul;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ULL;
  return h ^ (h >> 32);
}

// Tokens and pieces are short: an inline loop beats a call to memcmp.
bool same_bytes(const char* a, const char* b, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

class RankTable {
 public:
  void reserve(std::size_t count) {
    std::size_t size = 1;
    while (size < count * 2) size <<= 1;
    slots_.assign(size, Slot{});
    mask_ = size - 1;
  }
  // False when `bytes` is already present.
  bool insert(std::string_view bytes, TokenId rank) {
    std::uint64_t h = hash_bytes(bytes.data(), bytes.size());
    if (find(bytes, h) != kNoRank || bytes.size() > 0xFFFF) return false;
    std::size_t i = h & mask_;
    while (slots_[i].rank != kNoRank) i = (i + 1) & mask_;
    slots_[i] = {static_cast<std::uint32_t>(arena_.size()), static_cast<std::uint16_t>(bytes.size()), tag(h), rank};
    arena_.append(bytes);
    return true;
  }
  // `h` is hash_bytes(bytes): callers that look a piece up twice hash it once.
  TokenId find(std::string_view bytes, std::uint64_t h) const {
    const std::uint16_t t = tag(h);
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
      const Slot& slot = slots_[i];
      if (slot.rank == kNoRank) return kNoRank;
      if (slot.tag == t && slot.len == bytes.size() &&
          same_bytes(arena_.data() + slot.offset, bytes.data(), bytes.size())) {
        return slot.rank;
      }
    }
  }
  TokenId find(std::string_view bytes) const { return find(bytes, hash_bytes(bytes.data(), bytes.size())); }
  const std::string& arena() const { return arena_; }

 private:
  struct Slot {
    std::uint32_t offset = 0;
    std::uint16_t len = 0;
    std::uint16_t tag = 0;  // high hash bits: most mismatches end here, without touching the arena
    TokenId rank = kNoRank;
  };
  static std::uint16_t tag(std::uint64_t h) { return static_cast<std::uint16_t>(h >> 48); }
  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  std::string arena_;
};

// A per-thread cache of the encodings of pieces that are not single tokens:
// open addressing over two arenas, emptied when half full so that a long sweep
// does not grow it without bound. Per thread, so sharing one encoder between
// threads needs no lock.
class PieceCache {
 public:
  std::uint64_t owner = 0;  // serial of the encoding the entries belong to

  std::span<const TokenId> find(std::string_view piece, std::uint64_t h) const {
    if (slots_.empty()) return {};
    for (std::size_t i = h & (kSlots - 1);; i = (i + 1) & (kSlots - 1)) {
      const Slot& slot = slots_[i];
      if (slot.key_len == 0) return {};
      if (slot.hash == h && slot.key_len == piece.size() &&
          same_bytes(keys_.data() + slot.key_offset, piece.data(), piece.size())) {
        return {ids_.data() + slot.ids_offset, slot.ids_len};
      }
    }
  }
  std::span<const TokenId> insert(std::string_view piece, std::uint64_t h, const std::vector<TokenId>& ids) {
    if (slots_.empty() || used_ * 2 >= kSlots) clear();
    std::size_t i = h & (kSlots - 1);
    while (slots_[i].key_len != 0) i = (i + 1) & (kSlots - 1);
    slots_[i] = {h, static_cast<std::uint32_t>(keys_.size()), static_cast<std::uint32_t>(piece.size()),
                 static_cast<std::uint32_t>(ids_.size()), static_cast<std::uint32_t>(ids.size())};
    keys_.append(piece);
    ids_.insert(ids_.end(), ids.begin(), ids.end());
    ++used_;
    return {ids_.data() + slots_[i].ids_offset, ids.size()};
  }
  void clear() {
    slots_.assign(kSlots, Slot{});
    keys_.clear();
    ids_.clear();
    used_ = 0;
  }

 private:
  static constexpr std::size_t kSlots = 1 << 18;
  struct Slot {
    std::uint64_t hash = 0;
    std::uint32_t key_offset = 0, key_len = 0;  // key_len 0 = empty (pieces are never empty)
    std::uint32_t ids_offset = 0, ids_len = 0;
  };
  std::vector<Slot> slots_;
  std::string keys_;
  std::vector<TokenId> ids_;
  std::size_t used_ = 0;
};

// ---------------------------------------------------------------------------
// Loading .tiktoken files.

std::string read_whole_file(const std::filesystem::path& path, const std::string& name) {
  return read_file(path, "cannot read the " + name + " vocabulary " + path.string() +
                             ": set OKFBENCH_TOKENIZERS to the folder holding " + name +
                             ".tiktoken (an install has it in share/okfbench/tokenizers)");
}

std::string base64_decode(std::string_view b64) {
  std::string out(b64.size() / 4 * 3 + 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(b64.data()), static_cast<int>(b64.size()));
  if (n < 0 || b64.size() % 4 != 0) throw InputError("invalid base64");
  std::size_t padding = 0;
  for (std::size_t i = b64.size(); i > 0 && b64[i - 1] == '='; --i) ++padding;
  out.resize(static_cast<std::size_t>(n) - padding);
  return out;
}

std::atomic<std::uint64_t> next_encoding_serial{1};

}  // namespace

// ---------------------------------------------------------------------------

struct BpeEncoding::Impl {
  EncodingSpec spec;
  Grammar grammar = Grammar::other;
  std::uint64_t serial = 0;  // tells the per-thread piece caches apart
  RankTable ranks;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> by_rank;  // rank -> (offset, len) in the arena
  std::unique_ptr<Pcre2Splitter> reference;

  void parse(const std::string& data, const std::filesystem::path& path);
  template <class F>
  void for_each_piece(std::string_view text, Splitter splitter, F&& f) const;
  void merge(std::string_view piece, std::vector<TokenId>& out) const;
  void merge_short(std::string_view piece, std::vector<TokenId>& out) const;
  void merge_long(std::string_view piece, std::vector<TokenId>& out) const;
  std::span<const TokenId> cached_merge(std::string_view piece, std::uint64_t hash) const;
  void encode_piece(std::string_view piece, std::vector<TokenId>& out) const;
  std::size_t count_piece(std::string_view piece) const;
  TokenId rank_of(std::string_view bytes) const { return ranks.find(bytes); }
};

void BpeEncoding::Impl::parse(const std::string& data, const std::filesystem::path& path) {
  std::size_t lines = static_cast<std::size_t>(std::count(data.begin(), data.end(), '\n')) + 1;
  ranks.reserve(lines);
  std::size_t line_no = 0;
  std::string_view rest(data);
  while (!rest.empty()) {
    ++line_no;
    std::size_t eol = rest.find('\n');
    std::string_view line = rest.substr(0, eol);
    rest = eol == std::string_view::npos ? std::string_view{} : rest.substr(eol + 1);
    if (line.empty()) continue;
    auto where = [&] { return path.string() + ":" + std::to_string(line_no) + ": "; };
    std::size_t space = line.find(' ');
    TokenId rank = 0;
    auto parsed = space == std::string_view::npos
                      ? std::from_chars_result{line.data(), std::errc::invalid_argument}
                      : std::from_chars(line.data() + space + 1, line.data() + line.size(), rank);
    if (parsed.ec != std::errc{} || parsed.ptr != line.data() + line.size() || rank == kNoRank) {
      throw InputError(where() + "expected `base64 rank`; the vocabulary file is damaged");
    }
    std::string bytes;
    try {
      bytes = base64_decode(line.substr(0, space));
    } catch (const InputError&) {
      throw InputError(where() + "invalid base64 token; the vocabulary file is damaged");
    }
    if (bytes.empty() || !ranks.insert(bytes, rank)) throw InputError(where() + "empty or repeated token");
    if (by_rank.size() <= rank) by_rank.resize(rank + 1, {0, 0});
    by_rank[rank] = {static_cast<std::uint32_t>(ranks.arena().size() - bytes.size()),
                     static_cast<std::uint32_t>(bytes.size())};
  }
  for (int b = 0; b < 256; ++b) {
    const char byte = static_cast<char>(b);
    if (ranks.find(std::string_view(&byte, 1)) == kNoRank) {
      throw InputError(path.string() + ": byte " + std::to_string(b) +
                       " has no token, so this is not a byte-level BPE vocabulary");
    }
  }
}

template <class F>
void BpeEncoding::Impl::for_each_piece(std::string_view text, Splitter splitter, F&& f) const {
  if (splitter == Splitter::pcre2 || grammar == Grammar::other) {
    for (auto [b, e] : reference->split(text)) f(text.substr(b, e - b));
    return;
  }
  Scanner scanner(text, grammar);
  for (std::size_t i = 0; i < text.size();) {
    std::size_t end = scanner.next(i);
    f(text.substr(i, end - i));
    i = end;
  }
}

// The tiktoken merge on a short piece: repeatedly merge the adjacent pair of
// lowest rank (leftmost on ties). Quadratic, so only for short pieces.
void BpeEncoding::Impl::merge_short(std::string_view piece, std::vector<TokenId>& out) const {
  constexpr std::size_t kMax = 128;
  std::array<std::uint32_t, kMax + 1> start{};
  std::array<TokenId, kMax> pair{};
  std::size_t parts = piece.size();
  for (std::size_t k = 0; k <= parts; ++k) start[k] = static_cast<std::uint32_t>(k);
  auto pair_rank = [&](std::size_t k) {
    return k + 1 < parts ? rank_of(piece.substr(start[k], start[k + 2] - start[k])) : kNoRank;
  };
  for (std::size_t k = 0; k < parts; ++k) pair[k] = pair_rank(k);
  while (parts > 1) {
    std::size_t best = 0;
    for (std::size_t k = 1; k + 1 < parts; ++k) {
      if (pair[k] < pair[best]) best = k;
    }
    if (pair[best] == kNoRank) break;
    for (std::size_t k = best + 1; k < parts; ++k) {
      start[k] = start[k + 1];
      pair[k] = pair[k + 1 < parts ? k + 1 : k];
    }
    --parts;
    pair[best] = pair_rank(best);
    if (best > 0) pair[best - 1] = pair_rank(best - 1);
  }
  for (std::size_t k = 0; k < parts; ++k) out.push_back(rank_of(piece.substr(start[k], start[k + 1] - start[k])));
}

// The same merge order with a heap of candidate pairs and a linked list of
// parts: O(n log n), for long pieces such as a 100 kB run of one letter. The
// heap orders by (rank, start), which is "lowest rank, leftmost on ties";
// entries made stale by a neighbouring merge are skipped when popped.
void BpeEncoding::Impl::merge_long(std::string_view piece, std::vector<TokenId>& out) const {
  const std::size_t n = piece.size();
  std::vector<std::uint32_t> next(n), prev(n);
  std::vector<TokenId> pair(n, kNoRank);
  std::vector<bool> alive(n, true);
  for (std::size_t k = 0; k < n; ++k) {
    next[k] = static_cast<std::uint32_t>(k + 1);
    prev[k] = static_cast<std::uint32_t>(k == 0 ? 0 : k - 1);
  }
  using Entry = std::uint64_t;  // rank << 32 | start
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap;
  auto refresh = [&](std::size_t k) {
    pair[k] = next[k] < n ? rank_of(piece.substr(k, next[next[k]] - k)) : kNoRank;
    if (pair[k] != kNoRank) heap.push((static_cast<Entry>(pair[k]) << 32) | k);
  };
  for (std::size_t k = 0; k < n; ++k) refresh(k);
  while (!heap.empty()) {
    Entry top = heap.top();
    heap.pop();
    auto k = static_cast<std::uint32_t>(top & 0xFFFFFFFFu);
    if (!alive[k] || pair[k] != static_cast<TokenId>(top >> 32)) continue;
    std::uint32_t gone = next[k];
    alive[gone] = false;
    next[k] = next[gone];
    if (next[k] < n) prev[next[k]] = k;
    refresh(k);
    if (k > 0) refresh(prev[k]);
  }
  for (std::size_t k = 0; k < n; k = next[k]) out.push_back(rank_of(piece.substr(k, next[k] - k)));
}

void BpeEncoding::Impl::merge(std::string_view piece, std::vector<TokenId>& out) const {
  if (piece.size() <= 128) merge_short(piece, out);
  else merge_long(piece, out);
}

constexpr std::size_t kCachedPieceBytes = 64;

std::span<const TokenId> BpeEncoding::Impl::cached_merge(std::string_view piece, std::uint64_t h) const {
  thread_local std::array<PieceCache, 4> caches;
  PieceCache& cache = caches[serial % caches.size()];
  if (cache.owner != serial) {
    cache.clear();
    cache.owner = serial;
  }
  if (auto ids = cache.find(piece, h); !ids.empty()) return ids;
  std::vector<TokenId> ids;
  merge(piece, ids);
  return cache.insert(piece, h, ids);
}

void BpeEncoding::Impl::encode_piece(std::string_view piece, std::vector<TokenId>& out) const {
  const std::uint64_t h = hash_bytes(piece.data(), piece.size());
  if (TokenId whole = ranks.find(piece, h); whole != kNoRank) {
    out.push_back(whole);
  } else if (piece.size() <= kCachedPieceBytes) {
    auto ids = cached_merge(piece, h);
    out.insert(out.end(), ids.begin(), ids.end());
  } else {
    merge(piece, out);
  }
}

std::size_t BpeEncoding::Impl::count_piece(std::string_view piece) const {
  const std::uint64_t h = hash_bytes(piece.data(), piece.size());
  if (ranks.find(piece, h) != kNoRank) return 1;
  if (piece.size() <= kCachedPieceBytes) return cached_merge(piece, h).size();
  std::vector<TokenId> ids;
  merge(piece, ids);
  return ids.size();
}

// ---------------------------------------------------------------------------

const std::vector<EncodingSpec>& encoding_specs() {
  static const std::vector<EncodingSpec> specs = {
      {"o200k_base", kO200kPattern, "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
       {{"<|endoftext|>", 199999}, {"<|endofprompt|>", 200018}}},
      {"cl100k_base", kCl100kPattern, "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
       {{"<|endoftext|>", 100257},
        {"<|fim_prefix|>", 100258},
        {"<|fim_middle|>", 100259},
        {"<|fim_suffix|>", 100260},
        {"<|endofprompt|>", 100276}}},
  };
  return specs;
}

std::filesystem::path tokenizer_dir() {
  if (const char* env = std::getenv("OKFBENCH_TOKENIZERS"); env && *env) return env;
  return data_home() / "tokenizers";
}

BpeEncoding::BpeEncoding(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BpeEncoding::~BpeEncoding() = default;

std::unique_ptr<BpeEncoding> BpeEncoding::load(const std::filesystem::path& file, const EncodingSpec& spec) {
  std::string data = read_whole_file(file, spec.name);
  std::string digest = sha256_hex(data);
  if (digest != spec.sha256) {
    throw InputError(file.string() + ": SHA-256 is " + digest + ", expected " + spec.sha256 + " for " + spec.name +
                     "; the file is damaged or is another vocabulary: restore it from datasets/tokenizers/ "
                     "(git checkout) or point OKFBENCH_TOKENIZERS at an unmodified copy");
  }
  auto impl = std::make_unique<Impl>();
  impl->spec = spec;
  impl->grammar = grammar_of(spec.pattern);
  impl->serial = next_encoding_serial++;
  impl->parse(data, file);
  impl->reference = std::make_unique<Pcre2Splitter>(spec.pattern);
  return std::unique_ptr<BpeEncoding>(new BpeEncoding(std::move(impl)));
}

const BpeEncoding& BpeEncoding::get(std::string_view name) {
  const auto& specs = encoding_specs();
  static std::array<std::once_flag, 2> once;
  static std::array<std::unique_ptr<BpeEncoding>, 2> loaded;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    if (specs[i].name != name) continue;
    std::call_once(once[i], [&] { loaded[i] = load(tokenizer_dir() / (specs[i].name + ".tiktoken"), specs[i]); });
    return *loaded[i];
  }
  throw InputError("unknown encoding \"" + std::string(name) + "\": use o200k_base or cl100k_base");
}

const std::string& BpeEncoding::name() const { return impl_->spec.name; }

std::size_t BpeEncoding::vocabulary_size() const { return impl_->by_rank.size(); }

std::vector<TokenId> BpeEncoding::encode_ordinary(std::string_view text, Splitter splitter) const {
  std::vector<TokenId> ids;
  ids.reserve(text.size() / 3);
  impl_->for_each_piece(text, splitter, [&](std::string_view piece) { impl_->encode_piece(piece, ids); });
  return ids;
}

std::size_t BpeEncoding::count(std::string_view text) const {
  std::size_t total = 0;
  impl_->for_each_piece(text, Splitter::scanner, [&](std::string_view piece) { total += impl_->count_piece(piece); });
  return total;
}

std::vector<TokenId> BpeEncoding::encode(std::string_view text, SpecialTokens special) const {
  std::vector<TokenId> ids;
  while (!text.empty()) {
    std::size_t first = std::string_view::npos;
    const std::pair<std::string, TokenId>* which = nullptr;
    for (const auto& token : impl_->spec.special_tokens) {
      std::size_t at = text.find(token.first);
      if (at < first) {
        first = at;
        which = &token;
      }
    }
    if (which && special == SpecialTokens::disallowed) {
      throw InputError("the text contains the special token " + which->first + " at byte " + std::to_string(first) +
                       "; count it as ordinary text (encode_ordinary) or allow special tokens");
    }
    std::string_view plain = text.substr(0, first);
    impl_->for_each_piece(plain, Splitter::scanner, [&](std::string_view piece) { impl_->encode_piece(piece, ids); });
    if (!which) break;
    ids.push_back(which->second);
    text.remove_prefix(first + which->first.size());
  }
  return ids;
}

std::string BpeEncoding::decode(std::span<const TokenId> ids) const {
  std::string out;
  const std::string& arena = impl_->ranks.arena();
  for (TokenId id : ids) {
    if (id < impl_->by_rank.size() && impl_->by_rank[id].second > 0) {
      out.append(arena, impl_->by_rank[id].first, impl_->by_rank[id].second);
      continue;
    }
    auto special = std::find_if(impl_->spec.special_tokens.begin(), impl_->spec.special_tokens.end(),
                                [&](const auto& t) { return t.second == id; });
    if (special == impl_->spec.special_tokens.end()) {
      throw InputError("token id " + std::to_string(id) + " is not in the " + impl_->spec.name + " vocabulary");
    }
    out += special->first;
  }
  return out;
}

std::vector<std::string_view> BpeEncoding::split(std::string_view text, Splitter splitter) const {
  std::vector<std::string_view> pieces;
  impl_->for_each_piece(text, splitter, [&](std::string_view piece) { pieces.push_back(piece); });
  return pieces;
}

}  // namespace okfbench::retrieval
