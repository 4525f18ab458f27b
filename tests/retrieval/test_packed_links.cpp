// A concept's raw links packed into one string: what goes in comes out, and
// bytes that do not read back as links are refused, never read past.
#include "retrieval/packed_links.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "retrieval/binary_io.hpp"

namespace okfbench::retrieval::detail {
namespace {

std::vector<RawLink> sample_links() {
  return {
      {"/tables/orders.md", "orders", "LINKS_TO", 3, false, LinkForm::markdown, ""},
      {"Revenue", "the revenue", "JOINS_WITH", 200000, true, LinkForm::wikilink, "[[Revenue|the revenue]]"},
      {"diagram", "", "", 0, false, LinkForm::embed, "![[diagram]]"},
      {std::string(300, 'h'), std::string(70000, 't'), "DEPENDS_ON", 7, true, LinkForm::markdown, ""},
  };
}

void expect_equal(const RawLinkView& a, const RawLink& b) {
  EXPECT_EQ(a.href, b.href);
  EXPECT_EQ(a.text, b.text);
  EXPECT_EQ(a.relation, b.relation);
  EXPECT_EQ(a.line, b.line);
  EXPECT_EQ(a.from_frontmatter, b.from_frontmatter);
  EXPECT_EQ(a.form, b.form);
  EXPECT_EQ(a.written, b.written);
}

TEST(PackedRawLinks, EveryFieldOfEveryLinkComesBackInOrder) {
  const std::vector<RawLink> links = sample_links();
  const PackedRawLinks packed(links);
  EXPECT_EQ(packed.size(), links.size());
  const std::vector<RawLinkView> views = packed.views();
  ASSERT_EQ(views.size(), links.size());
  for (std::size_t i = 0; i < links.size(); ++i) expect_equal(views[i], links[i]);
  EXPECT_EQ(views[1].written, "[[Revenue|the revenue]]");
  EXPECT_EQ(views[3].text.size(), 70000u);
  // Their text and a few bytes each, not a RawLink's 144 bytes and heap blocks.
  std::size_t text = 0;
  for (const RawLink& l : links) text += l.href.size() + l.text.size() + l.relation.size() + l.written.size();
  EXPECT_LE(packed.bytes().size(), text + 12 * links.size());
}

TEST(PackedRawLinks, BytesReadBackAsTheSameLinks) {
  const PackedRawLinks packed(sample_links());
  const PackedRawLinks again = PackedRawLinks::from_bytes(packed.bytes());
  EXPECT_EQ(again.bytes(), packed.bytes());
  EXPECT_EQ(again.size(), packed.size());
  EXPECT_TRUE(PackedRawLinks::from_bytes("").empty());
  EXPECT_TRUE(PackedRawLinks(std::vector<RawLink>{}).bytes().empty());
}

TEST(PackedRawLinks, BytesThatAreNotLinksAreRefused) {
  const std::string good = PackedRawLinks(sample_links()).bytes();
  // Every cut short of the whole fails, but where a link ends: no link
  // ends early unnoticed.
  const std::vector<RawLink> links = sample_links();
  std::vector<std::size_t> ends;
  for (std::size_t n = 1; n <= links.size(); ++n)
    ends.push_back(PackedRawLinks(std::vector<RawLink>(links.begin(), links.begin() + static_cast<std::ptrdiff_t>(n)))
                       .bytes()
                       .size());
  for (std::size_t cut = 1; cut < good.size(); cut += (cut < 400 ? 1 : 997)) {
    if (std::find(ends.begin(), ends.end(), cut) != ends.end()) continue;
    EXPECT_THROW(PackedRawLinks::from_bytes(good.substr(0, cut)), CorruptCache) << "cut at " << cut;
  }
  std::string flags = good;
  flags[1] = static_cast<char>(3 << 1);  // a fourth LinkForm
  EXPECT_THROW(PackedRawLinks::from_bytes(flags), CorruptCache);
  flags[1] = static_cast<char>(1 << 3);  // an unknown flag
  EXPECT_THROW(PackedRawLinks::from_bytes(flags), CorruptCache);
  EXPECT_THROW(PackedRawLinks::from_bytes(std::string(11, '\xff')), CorruptCache);  // a varint past 64 bits
  EXPECT_THROW(PackedRawLinks::from_bytes(std::string("\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", 10)),
               CorruptCache);  // a line past int
  std::string length = good;
  length[2] = '\x7f';  // href longer than the bytes left
  EXPECT_THROW(PackedRawLinks::from_bytes(length.substr(0, 40)), CorruptCache);
}

}  // namespace
}  // namespace okfbench::retrieval::detail
