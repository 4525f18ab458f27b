// Showing outside text safely (retrieval/utf8.hpp).
#include "retrieval/utf8.hpp"

#include <gtest/gtest.h>

namespace okfbench::retrieval {
namespace {

TEST(ReportsEmbedTextSafely, PrintableTextHasNoControlCharacters) {
  EXPECT_EQ(printable(std::string("a\0b\x1b[2Kc\r\nd\re\tf\n\x7f", 17)),
            "a\xEF\xBF\xBD" "b\xEF\xBF\xBD[2Kc\nd\xEF\xBF\xBD" "e\tf\n\xEF\xBF\xBD");
}

TEST(ResourceBounds, EchoedArgumentsAreBounded) {
  const std::string id(100'000, 'x');
  const std::string shown = echoed(id);
  EXPECT_LT(shown.size(), 300u);
  EXPECT_EQ(shown, std::string(kEchoedChars, 'x') + "... (100000 bytes)");
  EXPECT_EQ(echoed("short\nid"), "short\nid");
  EXPECT_EQ(echoed(std::string("\xC3\xA9", 2) + std::string(300, 'y'), 1), "... (302 bytes)");  // never half a character
}

}  // namespace
}  // namespace okfbench::retrieval
