#include "agents/context_prompt.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "retrieval/bundle.hpp"
#include "retrieval/context.hpp"
#include "retrieval/search.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::agents {
namespace {

struct Demo {
  retrieval::Bundle bundle = retrieval::Bundle::load(test::source_dir() / "datasets/bundles/demo");
  retrieval::SearchIndex index = retrieval::SearchIndex::build(bundle);
};

TEST(ContextPrompt, ReadsBackEveryPackedBlockOfARealPack) {
  Demo demo;
  const std::string question = "A production Cypher query got slow after a data load. What should I do?";
  retrieval::ContextOptions options;
  options.budget_tokens = 4000;
  const retrieval::ContextPack pack = retrieval::pack_context(demo.bundle, demo.index, question, options);
  ASSERT_GE(pack.concepts.size(), 3u);
  ContextPrompt prompt;
  ASSERT_TRUE(read_context_user_message(context_user_message(pack.text, question), prompt));
  EXPECT_EQ(prompt.question, question);
  ASSERT_EQ(prompt.blocks.size(), pack.concepts.size());
  for (std::size_t i = 0; i < pack.concepts.size(); ++i) {
    const retrieval::Concept& c = *demo.bundle.find(pack.concepts[i].id);
    EXPECT_EQ(prompt.blocks[i].id, c.id);
    EXPECT_EQ(prompt.blocks[i].title, c.title);
    EXPECT_EQ(prompt.blocks[i].description, c.description) << c.id;
    EXPECT_EQ(prompt.blocks[i].text.substr(0, 40), c.body.substr(c.body.find_first_not_of(" \n"), 40)) << c.id;
    EXPECT_EQ(prompt.blocks[i].text.find("id: "), std::string::npos) << c.id;         // no header line
    EXPECT_EQ(prompt.blocks[i].text.find("\nCitations:\n"), std::string::npos) << c.id;  // no citations
  }
  // runbooks/slow-queries has "# Steps" headings inside its body: still one block, read to its end.
  const auto slow = std::find_if(prompt.blocks.begin(), prompt.blocks.end(),
                                 [](const ContextBlock& b) { return b.id == "runbooks/slow-queries"; });
  ASSERT_NE(slow, prompt.blocks.end());
  EXPECT_NE(slow->text.find("# Steps"), std::string::npos);
  EXPECT_NE(slow->text.find("- [Memory pressure](memory-pressure.md)"), std::string::npos);
}

TEST(ContextPrompt, ACutBlockLosesItsMarkerAndAnEmptyPackHasNoBlocks) {
  Demo demo;
  retrieval::ContextOptions options;
  options.budget_tokens = 60;
  const retrieval::ContextPack pack = retrieval::pack_context(demo.bundle, demo.index, "slow Cypher query", options);
  ASSERT_TRUE(pack.truncated);
  ASSERT_NE(pack.text.find("[truncated: "), std::string::npos);
  ContextPrompt prompt;
  ASSERT_TRUE(read_context_user_message(context_user_message(pack.text, "q"), prompt));
  ASSERT_EQ(prompt.blocks.size(), 1u);
  EXPECT_EQ(prompt.blocks[0].text.find("[truncated"), std::string::npos);

  ASSERT_TRUE(read_context_user_message(context_user_message("", "What is it?"), prompt));
  EXPECT_TRUE(prompt.blocks.empty());
  EXPECT_EQ(prompt.question, "What is it?");
}

TEST(ContextPrompt, OtherMessagesAreNotContextPrompts) {
  ContextPrompt prompt;
  EXPECT_FALSE(read_context_user_message("Why is the replica lagging?", prompt));
  EXPECT_FALSE(read_context_user_message("Context:\n\n### A\nid: a\n\nno question line", prompt));
}

}  // namespace
}  // namespace okfbench::agents
