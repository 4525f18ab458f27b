// Escaping of untrusted text for the Markdown writers (reports/format.hpp).
#include "reports/format.hpp"

#include <gtest/gtest.h>

namespace okfbench::reports {
namespace {

TEST(ReportsEmbedTextSafely, MarkdownTextCannotAddLinesHeadingsOrCells) {
  const std::string forged = markdown_text("x\n## Concepts read (999)\n| a | b |");
  EXPECT_EQ(forged.find('\n'), std::string::npos);
  EXPECT_EQ(forged, "x ## Concepts read (999) \\| a \\| b \\|");
  EXPECT_EQ(markdown_text("# Heading"), "\\# Heading");
  EXPECT_EQ(markdown_text("  - item"), "  \\- item");
  EXPECT_EQ(markdown_text("12. item"), "12\\. item");
  EXPECT_EQ(markdown_text("> quote"), "\\> quote");
  EXPECT_EQ(markdown_text("==="), "\\===");
  EXPECT_EQ(markdown_text("-4.8%"), "-4.8%");  // numbers stay as they are
  EXPECT_EQ(markdown_text("1.000"), "1.000");
  EXPECT_EQ(markdown_text("a`b` *c* [l](u) <img src=x> \\"), "a\\`b\\` \\*c\\* \\[l\\](u) &lt;img src=x> \\\\");
  EXPECT_EQ(markdown_text(std::string("a\0b\r\tc", 6)), "a b  c");
  EXPECT_EQ(markdown_text("metric_name q1"), "metric_name q1");  // ids keep their underscores
}

TEST(ReportsEmbedTextSafely, MarkdownCodeSpanCannotBeClosedFromInside) {
  EXPECT_EQ(markdown_code("{\"q\":1}"), "`{\"q\":1}`");
  EXPECT_EQ(markdown_code("a`b``c"), "```a`b``c```");
  EXPECT_EQ(markdown_code("`x"), "`` `x ``");
  EXPECT_EQ(markdown_code("x|y\nz"), "`x\\|y z`");
}

}  // namespace
}  // namespace okfbench::reports
