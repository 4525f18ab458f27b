#include "mcp/uri.hpp"

#include <gtest/gtest.h>

namespace okfbench::mcp {
namespace {

TEST(ConceptUri, KeepsSlashesAndEncodesEverythingElseThatIsReserved) {
  EXPECT_EQ(concept_uri("demo", "runbooks/slow-queries"), "okf://demo/runbooks/slow-queries");
  EXPECT_EQ(concept_uri("my kb", "a b/c?d#e%f"), "okf://my%20kb/a%20b/c%3Fd%23e%25f");
  EXPECT_EQ(concept_uri("demo", "caf\xc3\xa9"), "okf://demo/caf%C3%A9");
}

TEST(ConceptUri, ParsesWhatItWrites) {
  for (const char* id : {"runbooks/slow-queries", "a b/c?d#e%f", "caf\xc3\xa9", "x/../y"}) {
    auto parsed = parse_concept_uri(concept_uri("b", id));
    ASSERT_TRUE(parsed) << id;
    EXPECT_EQ(*parsed, (ConceptUri{"b", id}));
  }
}

TEST(ConceptUri, RefusesOtherSchemesMissingPartsAndBadEscapes) {
  for (const char* uri : {"file:///etc/passwd", "okf:/demo/x", "okf://demo", "okf://demo/", "okf:///x", "okf://demo/a%2",
                          "okf://demo/a%zz", "okf://demo/%"})
    EXPECT_FALSE(parse_concept_uri(uri)) << uri;
}

}  // namespace
}  // namespace okfbench::mcp
