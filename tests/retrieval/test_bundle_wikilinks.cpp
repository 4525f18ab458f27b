// Wikilinks in the repo profile, on the fixture vault tests/data/vault/.
#include <gtest/gtest.h>

#include "retrieval/bundle.hpp"
#include "retrieval/markdown.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::retrieval {
namespace {

Bundle load_vault(Profile profile = Profile::repo) {
  LoadOptions options;
  options.profile = profile;
  return Bundle::load(okfbench::test::source_dir() / "tests/data/vault", options);
}

struct Seen {
  std::string target;
  std::string raw;
  std::string text;
  std::string relation;
  int line;
  bool resolved;
  LinkForm form;
  bool operator==(const Seen&) const = default;
};

void PrintTo(const Seen& s, std::ostream* os) {
  *os << s.target << " | " << s.raw << " | " << s.text << " | " << s.relation << " | " << s.line << " | "
      << s.resolved << " | " << static_cast<int>(s.form);
}

std::vector<Seen> links_of(const Bundle& bundle, std::string_view id) {
  std::vector<Seen> seen;
  for (const Link& link : bundle.find(id)->links)
    seen.push_back({link.target, link.raw, link.text, link.relation, link.line, link.resolved, link.form});
  return seen;
}

TEST(BundleWikilinks, FindWikilinksSplitsTargetHeadingAndLabel) {
  std::vector<Wikilink> found = find_wikilinks("a [[ Note # Part | shown ]] b ![[pic.png]] [[x|y|z]] [[]] [[#Top]]");
  ASSERT_EQ(found.size(), 4u);
  EXPECT_EQ(found[0], (Wikilink{"Note", "Part", "shown", "[[ Note # Part | shown ]]", false}));
  EXPECT_EQ(found[1], (Wikilink{"pic.png", "", "pic.png", "![[pic.png]]", true}));
  EXPECT_EQ(found[2], (Wikilink{"x", "", "y|z", "[[x|y|z]]", false}));
  EXPECT_EQ(found[3], (Wikilink{"", "Top", "#Top", "[[#Top]]", false}));
  // The innermost pair is the link; an unclosed one is text.
  std::vector<Wikilink> nested = find_wikilinks("[[a [[b]] and [[c");
  ASSERT_EQ(nested.size(), 1u);
  EXPECT_EQ(nested[0].target, "b");
}

TEST(BundleWikilinks, ScanFindsThemOutsideCodeOnlyWhenAsked) {
  const std::string body = "x [[A]] `[[B]]`\n\n```\n[[C]]\n```\n\n# Uses\n\n[[D|d]] and [e](e.md)\n";
  EXPECT_EQ(scan_markdown(body, 1).links.size(), 1u);  // only the markdown link
  MarkdownScan scan = scan_markdown(body, 1, Wikilinks::on);
  ASSERT_EQ(scan.links.size(), 3u);
  EXPECT_EQ(scan.links[0].href, "A");
  EXPECT_EQ(scan.links[0].line, 1);
  EXPECT_EQ(scan.links[1].href, "D");
  EXPECT_EQ(scan.links[1].text, "d");
  EXPECT_EQ(scan.links[1].relation, "USES");
  EXPECT_EQ(scan.links[1].line, 9);
  EXPECT_EQ(scan.links[2].href, "e.md");
  EXPECT_EQ(scan.links[2].form, LinkForm::markdown);
}

TEST(BundleWikilinks, ResolvedByFileNameAnywhereShortestPathCaseInsensitive) {
  Bundle vault = load_vault();
  const auto W = LinkForm::wikilink;
  // The nearest heading above names the relation, as for markdown links ("# Home" -> HOME).
  std::vector<Seen> expected{
      {"Getting Started", "[[Getting Started]]", "Getting Started", "HOME", 3, true, W},
      {"Projects/Roadmap", "[[Projects/Roadmap|roadmap]]", "roadmap", "HOME", 3, true, W},
      {"Meeting Notes", "[[Meeting Notes#Decisions]]", "Meeting Notes#Decisions", "HOME", 4, true, W},
      {"Diagram", "![[Diagram]]", "Diagram", "HOME", 4, true, LinkForm::embed},
      // Archive/Roadmap and Projects/Roadmap are both one level deep: fewer bytes wins.
      {"Archive/Roadmap", "[[roadmap]]", "roadmap", "HOME", 4, true, W},
      // ![[photo.png]] is an attachment, not an edge; [[#Home]] is this page.
      {"", "[[Missing Note]]", "Missing Note", "HOME", 6, false, W},
      {"Guides/Setup", "Guides/Setup.md", "Setup", "HOME", 8, true, LinkForm::markdown},
      // Guides/Setup is shallower than Archive/Old/Setup; ".md" and case do not matter.
      {"Guides/Setup", "[[SETUP.md]]", "SETUP.md", "DEPENDS_ON", 16, true, W},
  };
  EXPECT_EQ(links_of(vault, "Home"), expected);
  EXPECT_EQ(links_of(vault, "Getting Started"),
            (std::vector<Seen>{{"Home", "[[home]]", "home", "GETTING_STARTED", 6, true, W}}));
  EXPECT_EQ(vault.link_count(), 13u);
  EXPECT_EQ(vault.broken_link_count(), 1u);
  ASSERT_EQ(vault.unresolved("Home").size(), 1u);
  EXPECT_EQ(vault.unresolved("Home")[0]->raw, "[[Missing Note]]");
}

TEST(BundleWikilinks, GraphSeesThemBothWays) {
  Bundle vault = load_vault();
  std::vector<std::string> out, in;
  for (const Neighbor& n : vault.neighbors("Home", Direction::out)) out.push_back(n.id);
  for (const Neighbor& n : vault.neighbors("Home", Direction::in)) in.push_back(n.id);
  EXPECT_EQ(out, (std::vector<std::string>{"Getting Started", "Projects/Roadmap", "Meeting Notes", "Diagram",
                                           "Archive/Roadmap", "Guides/Setup"}));
  EXPECT_EQ(in, (std::vector<std::string>{"Getting Started", "Guides/Setup"}));
  std::vector<std::string> two_hops;
  for (const Neighbor& n : vault.neighbors("Archive/Roadmap", Direction::out, {}, 2)) two_hops.push_back(n.id);
  EXPECT_EQ(two_hops, (std::vector<std::string>{"Projects/Roadmap", "Getting Started"}));
}

TEST(BundleWikilinks, NotLinksInTheOkfProfile) {
  // Without frontmatter every vault file is an error in the okf profile; a
  // concept with a type keeps only its markdown links there.
  std::filesystem::path dir = okfbench::test::fresh_dir("wikilinks_okf");
  okfbench::test::write_file(dir / "a.md", "---\ntype: Note\n---\n[[b]] and [b](b.md)\n");
  okfbench::test::write_file(dir / "b.md", "---\ntype: Note\n---\nB\n");
  Bundle okf = Bundle::load(dir);
  ASSERT_EQ(okf.find("a")->links.size(), 1u);
  EXPECT_EQ(okf.find("a")->links[0].form, LinkForm::markdown);
  LoadOptions repo_options;
  repo_options.profile = Profile::repo;
  Bundle repo = Bundle::load(dir, repo_options);
  EXPECT_EQ(repo.find("a")->links.size(), 2u);
}

}  // namespace
}  // namespace okfbench::retrieval
