#include "datasets/generator.hpp"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "retrieval/bundle.hpp"
#include "core/error.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::datasets {
namespace {

namespace fs = std::filesystem;
using test::fresh_dir;
using test::read_file;

GenerationSummary generate(std::size_t concepts, std::uint64_t seed, const fs::path& out, unsigned threads = 2,
                           std::size_t layers = 0) {
  GeneratorOptions options;
  options.concepts = concepts;
  options.seed = seed;
  options.threads = threads;
  options.layers = layers;
  return generate_bundle(options, out);
}

// Every file under `root`, relative path -> contents.
std::map<std::string, std::string> tree(const fs::path& root) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.is_regular_file()) files[fs::relative(entry.path(), root).generic_string()] = read_file(entry.path());
  }
  return files;
}

struct ConceptFile {
  YAML::Node frontmatter;
  std::string body;
};

ConceptFile parse_concept(const std::string& text) {
  EXPECT_TRUE(text.starts_with("---\n"));
  const auto end = text.find("\n---\n", 4);
  EXPECT_NE(end, std::string::npos);
  return {YAML::Load(text.substr(4, end - 4)), text.substr(end + 5)};
}

bool is_concept(const std::string& rel) {
  const std::string name = fs::path(rel).filename().string();
  return name.ends_with(".md") && name != "index.md" && name != "log.md";
}

std::size_t median(std::vector<std::size_t> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// The markdown link targets of a body outside fenced code.
std::vector<std::string> body_links(const std::string& body) {
  std::vector<std::string> links;
  std::istringstream lines(body);
  std::string line;
  bool in_code = false;
  static const std::regex link_re(R"(\]\(([^)\s]+)\))");
  while (std::getline(lines, line)) {
    if (line.starts_with("```")) in_code = !in_code;
    if (in_code) continue;
    for (std::sregex_iterator it(line.begin(), line.end(), link_re), end; it != end; ++it) links.push_back((*it)[1]);
  }
  return links;
}

TEST(Generator, SameSeedGivesIdenticalFilesWhateverTheThreadCount) {
  const fs::path a = fresh_dir("gen-a");
  const fs::path b = fresh_dir("gen-b");
  const fs::path c = fresh_dir("gen-c");
  const auto sa = generate(300, 42, a, 1);
  const auto sb = generate(300, 42, b, 4);
  generate(300, 43, c, 2);
  EXPECT_EQ(tree(a), tree(b));
  EXPECT_NE(tree(a), tree(c));
  ASSERT_EQ(sa.questions.size(), sb.questions.size());
  for (std::size_t i = 0; i < sa.questions.size(); ++i) EXPECT_EQ(sa.questions[i].text, sb.questions[i].text);
}

TEST(Generator, WritesConformantConceptsWithTrustStatusAndTags) {
  const fs::path out = fresh_dir("gen-conformant");
  const auto summary = generate(500, 7, out);
  std::size_t concepts = 0;
  std::set<std::string> statuses, verifiers, types;
  for (const auto& [rel, text] : tree(out)) {
    if (!is_concept(rel)) continue;
    ++concepts;
    const ConceptFile file = parse_concept(text);
    ASSERT_TRUE(file.frontmatter["type"]) << rel;
    EXPECT_FALSE(file.frontmatter["type"].as<std::string>().empty()) << rel;
    EXPECT_FALSE(file.frontmatter["title"].as<std::string>().empty()) << rel;
    EXPECT_FALSE(file.frontmatter["description"].as<std::string>().empty()) << rel;
    EXPECT_GE(file.frontmatter["tags"].size(), 2u) << rel;
    types.insert(file.frontmatter["type"].as<std::string>());
    statuses.insert(file.frontmatter["status"] ? file.frontmatter["status"].as<std::string>() : "stable");
    if (file.frontmatter["verified"]) {
      verifiers.insert(file.frontmatter["verified"][0]["by"].as<std::string>().substr(0, 6));
    }
  }
  EXPECT_EQ(concepts, 500u);
  EXPECT_EQ(summary.concepts, 500u);
  EXPECT_EQ(statuses, (std::set<std::string>{"deprecated", "draft", "stable"}));
  EXPECT_EQ(verifiers, (std::set<std::string>{"human:", "proces"}));  // human-reviewed and machine-confirmed
  EXPECT_EQ(types.size(), 6u);  // six layers by default at this size
}

TEST(Generator, EveryDirectoryHasAnIndexAndLogsAreNewestFirst) {
  const fs::path out = fresh_dir("gen-index");
  generate(2000, 3, out);
  const std::string root_index = read_file(out / "index.md");
  EXPECT_TRUE(root_index.starts_with("---\nokf_version: \"0.2\"\n---\n")) << root_index.substr(0, 80);
  std::size_t dirs = 0;
  for (const auto& entry : fs::recursive_directory_iterator(out)) {
    if (!entry.is_directory()) continue;
    ++dirs;
    EXPECT_TRUE(fs::exists(entry.path() / "index.md")) << entry.path();
  }
  EXPECT_GT(dirs, 6u);  // layers nested by area at this size
  for (const fs::path& log : {out / "log.md", out / "metrics" / "log.md"}) {
    const std::string text = read_file(log);
    static const std::regex date_re(R"(^## (\d{4}-\d{2}-\d{2})$)", std::regex::multiline);
    std::vector<std::string> dates;
    for (std::sregex_iterator it(text.begin(), text.end(), date_re), end; it != end; ++it) dates.push_back((*it)[1]);
    ASSERT_GT(dates.size(), 5u) << log;
    EXPECT_TRUE(std::is_sorted(dates.rbegin(), dates.rend())) << log;
    EXPECT_NE(text.find("* **"), std::string::npos);
  }
}

TEST(Generator, LinksResolveInsideTheBundleExceptTheDeclaredBrokenOnes) {
  const fs::path out = fresh_dir("gen-links");
  const auto summary = generate(1000, 11, out);
  std::size_t links = 0, broken = 0, relative = 0;
  std::map<std::string, std::size_t> in_degree;
  std::vector<std::size_t> out_degree;
  std::set<std::string> headings;
  for (const auto& [rel, text] : tree(out)) {
    if (!is_concept(rel)) continue;
    const ConceptFile file = parse_concept(text);
    const auto targets = body_links(file.body);
    out_degree.push_back(targets.size());
    for (const std::string& href : targets) {
      ++links;
      const fs::path from_dir = fs::path(rel).parent_path();
      const fs::path resolved = href.starts_with("/") ? fs::path(href.substr(1)) : (from_dir / href).lexically_normal();
      ASSERT_FALSE(resolved.generic_string().starts_with("..")) << rel << " -> " << href;
      if (!href.starts_with("/")) ++relative;
      if (fs::exists(out / resolved)) {
        ++in_degree[resolved.generic_string()];
      } else {
        ++broken;
      }
    }
    static const std::regex heading_re(R"(^# (.+)$)", std::regex::multiline);
    for (std::sregex_iterator it(file.body.begin(), file.body.end(), heading_re), end; it != end; ++it) {
      headings.insert((*it)[1]);
    }
  }
  EXPECT_EQ(links, summary.links);
  EXPECT_EQ(broken, summary.broken_links);
  EXPECT_GT(broken, 0u);
  EXPECT_LT(broken * 20, links);  // a few percent, as in real bundles
  EXPECT_GT(relative, links / 10);
  for (const char* typed : {"Depends on", "Joins with", "Runbooks", "Governed by"}) EXPECT_TRUE(headings.count(typed)) << typed;
  // Heavy tails: the median concept has about one link, the best-linked many more.
  EXPECT_LE(median(out_degree), 2u);
  EXPECT_GE(*std::max_element(out_degree.begin(), out_degree.end()), 10u);
  std::vector<std::size_t> in;
  for (const auto& [id, n] : in_degree) in.push_back(n);
  EXPECT_GE(*std::max_element(in.begin(), in.end()), 10 * median(in));
}

// The real bundles in OKFBENCH_DATA/okf (engine/docs/gen.md): title median 25
// characters, description median 87, body median 1,867 bytes.
TEST(Generator, LengthsFollowTheRealBundles) {
  const fs::path out = fresh_dir("gen-lengths");
  generate(2000, 5, out);
  std::vector<std::size_t> titles, descriptions, bodies;
  for (const auto& [rel, text] : tree(out)) {
    if (!is_concept(rel)) continue;
    const ConceptFile file = parse_concept(text);
    titles.push_back(file.frontmatter["title"].as<std::string>().size());
    descriptions.push_back(file.frontmatter["description"].as<std::string>().size());
    bodies.push_back(file.body.size());
  }
  EXPECT_NEAR(static_cast<double>(median(titles)), 25.0, 10.0);
  EXPECT_NEAR(static_cast<double>(median(descriptions)), 87.0, 30.0);
  EXPECT_NEAR(static_cast<double>(median(bodies)), 1867.0, 450.0);
  std::sort(bodies.begin(), bodies.end());
  EXPECT_GT(bodies[bodies.size() * 9 / 10], 2 * median(bodies) * 8 / 10);  // a long tail like the real p90/median of 2.0
}

std::set<std::string> content_words(const std::string& text) {
  static const std::set<std::string> stop = {"a", "an", "the", "of", "for", "and", "to", "in", "on", "is", "it", "we"};
  std::set<std::string> words;
  std::string word;
  for (char ch : text + " ") {
    if (std::isalnum(static_cast<unsigned char>(ch))) {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    } else if (!word.empty()) {
      if (word.size() > 1 && word.back() == 's') word.pop_back();
      if (!stop.count(word)) words.insert(word);
      word.clear();
    }
  }
  return words;
}

TEST(Generator, QuestionsHaveKnownGradedAnswersAndDoNotCopyTitles) {
  const fs::path out = fresh_dir("gen-questions");
  GeneratorOptions options;
  options.concepts = 3000;
  options.seed = 9;
  options.questions = 40;
  options.threads = 2;
  const auto summary = generate_bundle(options, out);
  ASSERT_EQ(summary.questions.size(), 40u);
  std::size_t graded_one = 0;
  std::set<std::string> ids;
  for (const auto& q : summary.questions) {
    EXPECT_TRUE(ids.insert(q.id).second);
    ASSERT_FALSE(q.relevant.empty());
    EXPECT_EQ(q.relevant.front().second, 2) << q.id;
    const fs::path answer = out / (q.relevant.front().first + ".md");
    ASSERT_TRUE(fs::exists(answer)) << q.relevant.front().first;
    const ConceptFile file = parse_concept(read_file(answer));
    const std::string title = file.frontmatter["title"].as<std::string>();
    EXPECT_NE(file.frontmatter["status"].as<std::string>("stable"), "deprecated");
    // At most one title word (the business area) appears in the question.
    std::size_t shared = 0;
    const auto question_words = content_words(q.text);
    for (const std::string& w : content_words(title)) shared += question_words.count(w);
    EXPECT_LE(shared, 1u) << q.text << " / " << title;
    // The answer facts are in the answer's body.
    for (const std::string& fact : q.answer_facts) EXPECT_NE(file.body.find(fact), std::string::npos) << fact;
    for (std::size_t i = 1; i < q.relevant.size(); ++i) {
      ++graded_one;
      EXPECT_EQ(q.relevant[i].second, 1);
      EXPECT_NE(file.body.find("/" + q.relevant[i].first + ".md"), std::string::npos)
          << q.relevant.front().first << " should link to " << q.relevant[i].first;
    }
  }
  EXPECT_GT(graded_one, 0u);
  const std::string yaml = questions_to_yaml(summary.questions, options);
  const YAML::Node parsed = YAML::Load(yaml)["questions"];
  ASSERT_EQ(parsed.size(), 40u);
  EXPECT_EQ(parsed[0]["relevant"][summary.questions[0].relevant[0].first].as<int>(), 2);
  EXPECT_EQ(parsed[0]["text"].as<std::string>(), summary.questions[0].text);
}

TEST(Generator, AThousandQuestionsEachCarryFactsVerbatimFromTheirAnswersBody) {
  const fs::path out = fresh_dir("gen-facts");
  GeneratorOptions options;
  options.concepts = 5000;
  options.seed = 4;
  options.questions = 1000;
  options.threads = 2;
  const auto summary = generate_bundle(options, out);
  ASSERT_EQ(summary.questions.size(), 1000u);
  std::size_t two_facts = 0;
  for (const auto& q : summary.questions) {
    ASSERT_FALSE(q.answer_facts.empty()) << q.id;
    const std::string body = parse_concept(read_file(out / (q.relevant.front().first + ".md"))).body;
    for (const std::string& fact : q.answer_facts) {
      EXPECT_FALSE(fact.empty()) << q.id;
      EXPECT_NE(body.find(fact), std::string::npos) << q.id << ": " << fact << " not in " << q.relevant.front().first;
    }
    // A question about how often data is reloaded asks for the refresh schedule.
    if (q.text.find("how often is it reloaded") != std::string::npos) {
      EXPECT_TRUE(q.answer_facts[0].starts_with("every ")) << q.id;
    }
    two_facts += q.answer_facts.size() == 2;
  }
  EXPECT_GT(two_facts, 0u);
  EXPECT_LT(two_facts, summary.questions.size());
}

TEST(Generator, RefusesANonEmptyFolderAndBadSizes) {
  const fs::path out = fresh_dir("gen-refuse");
  test::write_file(out / "keep.txt", "mine");
  EXPECT_THROW(generate(10, 1, out), InputError);
  EXPECT_EQ(read_file(out / "keep.txt"), "mine");
  EXPECT_THROW(generate(0, 1, fresh_dir("gen-zero")), UsageError);
  EXPECT_THROW(generate(10, 1, fresh_dir("gen-layers"), 1, 9), UsageError);
}

TEST(Generator, TinyBundlesStillWork) {
  const fs::path out = fresh_dir("gen-tiny");
  const auto summary = generate(1, 1, out);
  EXPECT_EQ(summary.concepts, 1u);
  EXPECT_EQ(summary.questions.size(), 1u);
  EXPECT_TRUE(fs::exists(out / "index.md"));
}

TEST(Generator, LoadsAsABundleWithoutErrors) {
  const fs::path out = fresh_dir("gen-load");
  const auto summary = generate(400, 21, out);
  const auto bundle = retrieval::Bundle::load(out);
  EXPECT_EQ(bundle.concepts().size(), 400u);
  for (const auto& d : bundle.diagnostics()) EXPECT_NE(d.severity, retrieval::Severity::error) << d.path << ": " << d.message;
  EXPECT_EQ(bundle.link_count(), summary.links);
  EXPECT_EQ(bundle.broken_link_count(), summary.broken_links);
  std::set<std::string> relations;
  for (const auto& c : bundle.concepts()) {
    for (const auto& l : c.links) relations.insert(l.relation);
  }
  EXPECT_TRUE(relations.count("DEPENDS_ON"));
  EXPECT_TRUE(relations.count("JOINS_WITH"));
  EXPECT_GT(bundle.layers().size(), 3u);
  EXPECT_FALSE(bundle.history().empty());
}

}  // namespace
}  // namespace okfbench::datasets
