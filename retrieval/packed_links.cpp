#include "retrieval/packed_links.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "retrieval/binary_io.hpp"

namespace okfbench::retrieval::detail {
namespace {

constexpr unsigned kFormShift = 1;
constexpr unsigned kFlagBits = 3;  // from_frontmatter and two bits of form

std::size_t varint_size(std::uint64_t value) {
  std::size_t bytes = 1;
  for (; value >= 0x80; value >>= 7) ++bytes;
  return bytes;
}

void put_varint(std::string& out, std::uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

void put_text(std::string& out, std::string_view text) {
  put_varint(out, text.size());
  out.append(text);
}

// Reads the packed bytes through binary_io's Reader, which checks every read
// against the bytes left.
class Cursor {
 public:
  explicit Cursor(std::string_view bytes) : r_(bytes.data(), bytes.data() + bytes.size()) {}
  bool done() const { return r_.done(); }

  RawLinkView next() {
    RawLinkView link;
    const std::uint64_t line = varint();
    if (line > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
      throw CorruptCache("a link's line number is out of range");
    link.line = static_cast<int>(line);
    const auto flags = r_.get<std::uint8_t>();
    const unsigned form = (flags >> kFormShift) & 3u;
    if ((flags >> kFlagBits) != 0 || form > static_cast<unsigned>(LinkForm::embed))
      throw CorruptCache("a link's flags are out of range");
    link.from_frontmatter = (flags & 1u) != 0;
    link.form = static_cast<LinkForm>(form);
    link.href = text();
    link.text = text();
    link.relation = text();
    link.written = text();
    return link;
  }

 private:
  std::uint64_t varint() {
    std::uint64_t value = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
      const auto byte = r_.get<std::uint8_t>();
      value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return value;
    }
    throw CorruptCache("a link's number is longer than 64 bits");
  }
  std::string_view text() {
    const std::uint64_t n = varint();
    if (n > std::numeric_limits<std::size_t>::max()) throw CorruptCache("a link's text runs past its bytes");
    return r_.get_bytes(static_cast<std::size_t>(n));
  }
  Reader r_;
};

}  // namespace

PackedRawLinks::PackedRawLinks(const std::vector<RawLink>& links) : count_(links.size()) {
  const auto line_of = [](const RawLink& link) { return static_cast<std::uint64_t>(std::max(0, link.line)); };
  std::size_t size = 0;  // exactly: the string is kept for the bundle's life
  for (const RawLink& link : links) {
    size += varint_size(line_of(link)) + 1;
    for (std::string_view text : {link.href, link.text, link.relation, link.written})
      size += varint_size(text.size()) + text.size();
  }
  bytes_.reserve(size);
  for (const RawLink& link : links) {
    put_varint(bytes_, line_of(link));
    const unsigned flags = (link.from_frontmatter ? 1u : 0u) | (static_cast<unsigned>(link.form) << kFormShift);
    bytes_.push_back(static_cast<char>(flags));
    for (std::string_view text : {link.href, link.text, link.relation, link.written}) put_text(bytes_, text);
  }
}

PackedRawLinks PackedRawLinks::from_bytes(std::string_view bytes) {
  PackedRawLinks packed;
  for (Cursor cursor(bytes); !cursor.done(); cursor.next()) ++packed.count_;
  packed.bytes_ = std::string(bytes);
  return packed;
}

std::vector<RawLinkView> PackedRawLinks::views() const {
  std::vector<RawLinkView> out;
  out.reserve(count_);
  for (Cursor cursor(bytes_); !cursor.done();) out.push_back(cursor.next());
  return out;
}

}  // namespace okfbench::retrieval::detail
