#pragma once
// Private to retrieval: a concept's raw links (as written, before
// resolution) packed into one string. A bundle keeps them beside the
// resolved links so that remember() can resolve every link again; held as
// RawLink vectors they took about 144 bytes and up to four heap blocks a
// link, now their text and a few bytes each (retrieval/docs/index-cache.md,
// the memory figures).
//
// Layout of one link: varint line, one flags byte (bit 0 from_frontmatter,
// bits 1-2 the LinkForm), then href, text, relation and written, each a
// varint length and its bytes. The index cache stores the packed bytes as
// they are; from_bytes() checks them before they are kept.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "retrieval/links.hpp"

namespace okfbench::retrieval::detail {

// A packed link read in place: views into the PackedRawLinks' bytes.
struct RawLinkView {
  std::string_view href;
  std::string_view text;
  std::string_view relation;
  std::string_view written;
  int line = 0;
  bool from_frontmatter = false;
  LinkForm form = LinkForm::markdown;
};

class PackedRawLinks {
 public:
  PackedRawLinks() = default;
  explicit PackedRawLinks(const std::vector<RawLink>& links);
  // Bytes written by bytes(), checked whole; throws CorruptCache
  // (binary_io.hpp) when they do not read back as links.
  static PackedRawLinks from_bytes(std::string_view bytes);

  const std::string& bytes() const { return bytes_; }
  std::size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  std::vector<RawLinkView> views() const;  // valid while this object lives unchanged

 private:
  std::string bytes_;
  std::size_t count_ = 0;
};

}  // namespace okfbench::retrieval::detail
