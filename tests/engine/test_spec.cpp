#include "engine/spec.hpp"

#include <gmock/gmock.h>
#include <cstdlib>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "core/error.hpp"
#include "engine/run_plan.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::engine {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr const char* kSpec = R"(name: sweep
seed: 7
repeats: 2
concurrency: 3
cost_cap_usd: 1.5
bundles:
  - generate: {concepts: [10, 100], questions: 5}
paths:
  context:
    budget_tokens: [500, 2000]
    hops: 0
  agent:
    tools: [[search, open], [browse, search, open, follow, history, remember]]
    max_turns: 6
models: [sim]
cache_models: [none, openai]
)";

std::vector<std::string> model_labels(const ExperimentSpec& spec) {
  std::vector<std::string> out;
  for (const auto& m : spec.models) out.push_back(m.label);
  return out;
}

ExperimentSpec parse(const std::string& text, const std::vector<std::string>& overrides = {}) {
  return parse_spec(text, "spec.yaml", fs::path("/specs"), overrides);
}

// The message of the InputError that parsing `text` throws.
std::string error_of(const std::string& text, const std::vector<std::string>& overrides = {}) {
  try {
    parse(text, overrides);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Spec, ReadsEveryKeyAndExpandsSizeLists) {
  const ExperimentSpec spec = parse(kSpec);
  EXPECT_EQ(spec.name, "sweep");
  EXPECT_EQ(spec.seed, 7u);
  EXPECT_EQ(spec.repeats, 2);
  EXPECT_EQ(spec.concurrency, 3u);
  ASSERT_TRUE(spec.cost_cap_usd);
  EXPECT_DOUBLE_EQ(*spec.cost_cap_usd, 1.5);
  ASSERT_EQ(spec.bundles.size(), 2u);
  EXPECT_EQ(spec.bundles[0].name, "gen-10");
  EXPECT_EQ(spec.bundles[1].name, "gen-100");
  EXPECT_EQ(spec.bundles[1].kind, BundleKind::generated);
  EXPECT_EQ(spec.bundles[1].concepts, 100u);
  EXPECT_EQ(spec.bundles[1].seed, 7u);  // the spec seed unless the entry has its own
  EXPECT_EQ(spec.bundles[1].question_count, 5u);
  ASSERT_TRUE(spec.context);
  EXPECT_EQ(spec.context->budget_tokens, (std::vector<std::int64_t>{500, 2000}));
  EXPECT_EQ(spec.context->hops, (std::vector<int>{0}));  // a scalar is a one-element list
  EXPECT_EQ(spec.context->k, (std::vector<int>{5}));     // default
  ASSERT_TRUE(spec.agent);
  ASSERT_EQ(spec.agent->tools.size(), 2u);
  EXPECT_EQ(spec.agent->tools[0], (std::vector<std::string>{"search", "open"}));
  EXPECT_EQ(spec.agent->max_turns, (std::vector<int>{6}));
  EXPECT_EQ(spec.cache_models, (std::vector<std::string>{"none", "openai"}));
  EXPECT_EQ(spec.hash.size(), 16u);
}

TEST(Spec, SetOverridesAnyValueAndChangesTheHash) {
  const ExperimentSpec base = parse(kSpec);
  const ExperimentSpec changed = parse(kSpec, {"paths.context.budget_tokens=750", "models=[sim, openai:gpt-4o-mini]",
                                               "paths.agent.max_turns=[2, 4]", "seed=9"});
  EXPECT_EQ(changed.context->budget_tokens, (std::vector<std::int64_t>{750}));
  EXPECT_EQ(model_labels(changed), (std::vector<std::string>{"sim", "openai:gpt-4o-mini"}));
  EXPECT_EQ(changed.agent->max_turns, (std::vector<int>{2, 4}));
  EXPECT_EQ(changed.seed, 9u);
  EXPECT_NE(base.hash, changed.hash);
  EXPECT_EQ(base.hash, parse(kSpec).hash);
  // A key that does not exist yet is created; an element of a list is addressed by index.
  const ExperimentSpec indexed = parse(kSpec, {"bundles.0.generate.concepts=3", "max_questions=2"});
  EXPECT_EQ(indexed.bundles[0].concepts, 3u);
  EXPECT_EQ(indexed.max_questions, 2u);
}

TEST(Spec, ErrorsNameTheFileLineAndKey) {
  std::string text = kSpec;
  text.replace(text.find("budget_tokens: [500, 2000]"), 26, "budget_tokens: [500, lots]");
  EXPECT_THAT(error_of(text), HasSubstr("spec.yaml:10: paths.context.budget_tokens[1]: expected an integer from 1 to 10000000, got \"lots\""));
  text = kSpec;
  text.replace(text.find("    hops: 0"), 11, "    hopz: 0");
  EXPECT_THAT(error_of(text), HasSubstr("spec.yaml:11: paths.context.hopz: unknown key; known keys here: budget_tokens, hops, k, retrieval, strategy"));
  text = kSpec;
  text.replace(text.find("[search, open]"), 14, "[search, opn]");
  EXPECT_THAT(error_of(text), HasSubstr("spec.yaml:13: paths.agent.tools[0][1]: unknown value \"opn\""));
  EXPECT_THAT(error_of(std::string(kSpec) + "cach_models: [none]\n"), HasSubstr("spec.yaml:17: cach_models: unknown key"));
  EXPECT_THAT(error_of("bundles: []\npaths: {context: {}}\n"), HasSubstr("spec.yaml:1: bundles: required"));
  EXPECT_THAT(error_of("bundles:\n  - generate: {concepts: 10}\n"), HasSubstr("paths: required"));
  EXPECT_THAT(error_of("bundles:\n  - generate: {concepts: 10}\npaths: {context: {}}\nmodels: [gpt]\n"),
              HasSubstr("spec.yaml:4: models[0]: unknown model \"gpt\""));
  EXPECT_THAT(error_of("bundles:\n  - generate: {concepts: [10, 10]}\npaths: {context: {}}\n"),
              HasSubstr("two bundles are named \"gen-10\""));
  EXPECT_THAT(error_of("bundles: [\n"), HasSubstr("spec.yaml:2: not valid YAML"));
  EXPECT_THAT(error_of("bundles:\n  - path: does/not/exist\npaths: {context: {}}\n"),
              HasSubstr("spec.yaml:2: bundles[0].path: no such folder /specs/does/not/exist"));
}

TEST(Spec, AToolListEverySurfaceCannotHaveIsRefusedNamingTheCombination) {
  const std::string head = "bundles:\n  - generate: {concepts: 10}\npaths:\n  agent:\n    surface: [grafito, harnessx]\n";
  EXPECT_EQ(error_of(head + "    tools: [[search, open], [browse, search]]\n"),
            "spec.yaml:6: paths.agent.tools[1]: surface harnessx has no browse (grafito's search, open and follow are "
            "its search_concepts, read_concept and get_neighbors; browse, history and remember exist only on "
            "grafito); give tool lists that every surface has, or drop harnessx from surface:");
  // The default tool list is grafito's whole surface.
  EXPECT_THAT(error_of(head), HasSubstr("spec.yaml:5: paths.agent.tools: surface harnessx has no browse, history, remember ("));
  EXPECT_EQ(error_of(head + "    tools: [[search_concepts, get_neighbors], [search, open]]\n"), "(no error)");
}

TEST(Spec, APathListIsRefusedPointingAtACombinedEntry) {
  EXPECT_THAT(error_of("bundles:\n  - path: [a, b]\npaths: {context: {}}\n"),
              HasSubstr("spec.yaml:2: bundles[0].path: one path per entry; to search several bundles as one index, "
                        "list them under paths: in an entry of their own"));
}

// A combined entry: its bundles as parts (names by default from the folder or
// the git source), one question set, an identity made of the parts'.
TEST(Spec, ACombinedEntryListsItsBundlesUnderPaths) {
  const std::string kb = (test::source_dir() / "tests/data/kb").string();
  const ExperimentSpec spec = parse(fmt::format(
      "bundles:\n  - paths:\n      - {0}/sales\n      - {{path: {0}/support, name: help}}\n"
      "      - {{path: file:///srv/kb.git, subdir: bundles/ops, profile: repo}}\n"
      "    questions: {0}/questions.yaml\n  - path: {0}/sales\n    questions: {0}/sales/questions.yaml\n"
      "paths: {{context: {{}}}}\n",
      kb));
  ASSERT_EQ(spec.bundles.size(), 2u);
  const BundleSource& b = spec.bundles[0];
  EXPECT_EQ(b.kind, BundleKind::combined);
  EXPECT_EQ(b.name, "sales+help+ops");
  ASSERT_EQ(b.parts.size(), 3u);
  EXPECT_EQ(b.parts[0].kind, BundleKind::path);
  EXPECT_EQ(b.parts[0].name, "sales");
  EXPECT_EQ(b.parts[1].name, "help");
  EXPECT_EQ(b.parts[2].kind, BundleKind::git);
  EXPECT_EQ(b.parts[2].name, "ops");
  EXPECT_EQ(b.parts[2].profile, "repo");
  EXPECT_EQ(b.identity(), fmt::format("combined:[sales=path:{0}/sales|questions:][help=path:{0}/support|questions:]"
                                      "[ops=git:file:///srv/kb.git#:bundles/ops|commit:|questions:|profile:repo]"
                                      "|questions:{0}/questions.yaml",
                                      kb));
  // A single bundle beside it reads as before (its trial keys do not change).
  EXPECT_EQ(spec.bundles[1].identity(), fmt::format("path:{0}/sales|questions:{0}/sales/questions.yaml", kb));
  const ExperimentSpec named = parse(fmt::format(
      "bundles:\n  - name: kb\n    paths: [{0}/sales, {0}/support]\n    questions: {0}/questions.yaml\n"
      "paths: {{context: {{}}}}\n",
      kb));
  EXPECT_EQ(named.bundles[0].name, "kb");
}

TEST(Spec, BadCombinedEntriesNameTheKey) {
  const std::string kb = (test::source_dir() / "tests/data/kb").string();
  const auto spec_with = [&](const std::string& entry) {
    return error_of(fmt::format("bundles:\n  - {}\npaths: {{context: {{}}}}\n", fmt::format(fmt::runtime(entry), kb)));
  };
  EXPECT_EQ(spec_with("paths: [{0}/sales, {0}/sales]\n    questions: {0}/questions.yaml"),
            "spec.yaml:2: bundles[0].paths[1].name: two bundles of this entry are named \"sales\"; give one a name:");
  EXPECT_EQ(spec_with("paths: [{0}/sales]\n    questions: {0}/questions.yaml"),
            "spec.yaml:2: bundles[0].paths: expected a list of two or more bundles, got 1; one bundle is a path: entry");
  EXPECT_EQ(spec_with("paths: [{0}/sales, {0}/support]"),
            "spec.yaml:2: bundles[0].questions: required: the question set of these bundles, its relevant ids written "
            "BUNDLE:ID");
  EXPECT_EQ(spec_with("paths: [{0}/sales, {{path: {0}/support, name: 'a:b'}}]\n    questions: {0}/questions.yaml"),
            "spec.yaml:2: bundles[0].paths[1].name: \"a:b\": a combined bundle's name is not empty and has no ':' (ids "
            "are written BUNDLE:ID); give it another name:");
  EXPECT_EQ(spec_with("paths:\n      - {0}/sales\n      - {{path: {0}/support, questions: q.yaml}}\n"
                      "    questions: {0}/questions.yaml"),
            "spec.yaml:4: bundles[0].paths[1].questions: the bundles of one entry share its question set; write "
            "questions: beside paths:, not in one bundle");
  EXPECT_EQ(spec_with("paths: [{0}/sales, {{nam: x}}]\n    questions: {0}/questions.yaml"),
            "spec.yaml:2: bundles[0].paths[1].nam: unknown key; known keys here: name, path, profile, ref, subdir");
  EXPECT_EQ(spec_with("paths: [{0}/sales, {0}/nope]\n    questions: {0}/questions.yaml"),
            fmt::format("spec.yaml:2: bundles[0].paths[1].path: no such folder {}/nope", kb));
  EXPECT_EQ(spec_with("paths: [{0}/sales, {0}/support]\n    questions: {0}/nope.yaml"),
            fmt::format("spec.yaml:3: bundles[0].questions: no question set at {}/nope.yaml", kb));
  EXPECT_EQ(spec_with("paths: [{0}/sales, {0}/support]\n    questions: {0}/questions.yaml\n    path: {0}/sales"),
            "spec.yaml:4: bundles[0].path: unknown key; known keys here: name, paths, questions");
  EXPECT_EQ(spec_with("paths: [{0}/sales, {{path: {0}/support, profile: lessons}}]\n    questions: {0}/questions.yaml"),
            "spec.yaml:2: bundles[0].paths[1].profile: a bundle of a combined entry takes okf or repo, not lessons: give "
            "it a path: entry of its own");
}

TEST(Spec, GitBundlesAreReadFromPathRefAndSubdir) {
  const ExperimentSpec spec = parse(
      "bundles:\n  - path: https://github.com/acme/kb/tree/main/bundles/sales\n    ref: v2\n"
      "  - path: file:///srv/kb.git\n    subdir: bundles/support\n    name: help\n    questions: q.yaml\n"
      "paths: {context: {}}\n");
  ASSERT_EQ(spec.bundles.size(), 2u);
  EXPECT_EQ(spec.bundles[0].kind, BundleKind::git);
  EXPECT_EQ(spec.bundles[0].git, (GitSource{"https://github.com/acme/kb.git", "v2", "bundles/sales"}));
  EXPECT_EQ(spec.bundles[0].name, "sales");
  EXPECT_EQ(spec.bundles[0].questions, fs::path());
  EXPECT_EQ(spec.bundles[1].git, (GitSource{"file:///srv/kb.git", "", "bundles/support"}));
  EXPECT_EQ(spec.bundles[1].name, "help");
  EXPECT_EQ(spec.bundles[1].questions, fs::path("/specs/q.yaml"));
  EXPECT_EQ(spec.bundles[0].identity(), "git:https://github.com/acme/kb.git#v2:bundles/sales|commit:|questions:");
  EXPECT_EQ(error_of("bundles:\n  - path: file:///srv/kb.git\n  - path: file:///other/kb\npaths: {context: {}}\n"),
            "spec.yaml:2: bundles: two bundles are named \"kb\"; give one a name:");
  EXPECT_EQ(error_of("bundles:\n  - path: file:///srv/kb#main:../x\npaths: {context: {}}\n"),
            "spec.yaml:2: bundles[0].path: file:///srv/kb#main:../x: the subdirectory `../x` has a `..` part; name a "
            "folder inside the repository");
  EXPECT_THAT(error_of("bundles:\n  - path: /specs\n    ref: v1\npaths: {context: {}}\n"),
              HasSubstr("spec.yaml:3: bundles[0]: ref: and subdir: need a git URL in path:"));
}

// The message of the UsageError that applying `overrides` to kSpec throws.
std::string usage_error_of(const std::vector<std::string>& overrides) {
  try {
    parse(kSpec, overrides);
  } catch (const UsageError& e) {
    return e.what();
  } catch (const InputError& e) {
    return std::string("(an InputError: ") + e.what() + ")";
  }
  return "(no error)";
}

TEST(Spec, ToolBudgetsAreSweepableAndRangeChecked) {
  const std::string head = "bundles:\n  - generate: {concepts: 10}\npaths:\n  agent:\n    tools: [search, open]\n";
  const ExperimentSpec spec = parse(head + "    max_body_chars: [500, 2000]\n    index_char_budget: 300\n");
  EXPECT_EQ(spec.agent->max_body_chars, (std::vector<std::int64_t>{500, 2000}));
  EXPECT_EQ(spec.agent->index_char_budget, (std::vector<std::int64_t>{300}));
  EXPECT_TRUE(parse(head).agent->max_body_chars.empty());
  EXPECT_EQ(error_of(head + "    max_body_chars: [0]\n"),
            "spec.yaml:6: paths.agent.max_body_chars[0]: expected an integer from 1 to 100000000, got \"0\"");
  EXPECT_EQ(error_of(head + "    index_char_budget: -1\n"),
            "spec.yaml:6: paths.agent.index_char_budget: expected an integer from 1 to 100000000, got \"-1\"");
}

TEST(Spec, RetrievalIsAValueOrASweepOfTheThreeMethods) {
  const std::string head = "bundles:\n  - generate: {concepts: 10}\npaths:\n";
  const ExperimentSpec plain = parse(head + "  context: {k: 3}\n  agent: {tools: [search, open]}\n");
  EXPECT_EQ(plain.context->retrieval, (std::vector<std::string>{"bm25f"}));
  EXPECT_EQ(plain.agent->retrieval, (std::vector<std::string>{"bm25f"}));
  const ExperimentSpec swept = parse(head + "  context: {retrieval: [bm25f, hybrid, hybrid+rerank]}\n"
                                     "  agent: {tools: [search, open], retrieval: hybrid}\n");
  EXPECT_EQ(swept.context->retrieval, (std::vector<std::string>{"bm25f", "hybrid", "hybrid+rerank"}));
  EXPECT_EQ(swept.agent->retrieval, (std::vector<std::string>{"hybrid"}));
  EXPECT_EQ(error_of(head + "  context:\n    retrieval: [bm25f, dense]\n"),
            "spec.yaml:5: paths.context.retrieval[1]: unknown value \"dense\"; use one of: bm25f, hybrid, hybrid+rerank");
  EXPECT_EQ(error_of(head + "  agent:\n    tools: [search, open]\n    retrieval: rerank\n"),
            "spec.yaml:6: paths.agent.retrieval: unknown value \"rerank\"; use one of: bm25f, hybrid, hybrid+rerank");
  EXPECT_EQ(error_of(head + "  context:\n    retrieval: []\n"),
            "spec.yaml:5: paths.context.retrieval: expected at least one value");
}

// Hybrid ranks one bundle's embeddings: a combined entry takes bm25f only,
// and a lessons policy bundle takes every method (the retriever honours its
// selection).
TEST(Spec, RetrievalOtherThanBm25fRefusesACombinedEntry) {
  const std::string kb = (test::source_dir() / "tests/data/kb").string();
  const std::string combined =
      fmt::format("bundles:\n  - paths: [{0}/sales, {0}/support]\n    questions: {0}/questions.yaml\npaths:\n", kb);
  EXPECT_EQ(parse(combined + "  context: {retrieval: bm25f}\n").context->retrieval, (std::vector<std::string>{"bm25f"}));
  EXPECT_EQ(error_of(combined + "  context:\n    retrieval: [bm25f, hybrid]\n"),
            "spec.yaml:6: paths.context.retrieval: hybrid takes one bundle, and bundles[0] (\"sales+support\") is a "
            "combined entry: several bundles are searched with bm25f; give hybrid a spec of its own");
  EXPECT_EQ(error_of(combined + "  agent:\n    tools: [search, open]\n    retrieval: hybrid+rerank\n"),
            "spec.yaml:7: paths.agent.retrieval: hybrid+rerank takes one bundle, and bundles[0] (\"sales+support\") is "
            "a combined entry: several bundles are searched with bm25f; give hybrid+rerank a spec of its own");
}

TEST(Spec, GradersAndJudge) {
  const ExperimentSpec plain = parse(kSpec);
  EXPECT_EQ(plain.graders, (std::vector<std::string>{"facts", "citations", "answered"}));
  EXPECT_FALSE(plain.judge.has_value());
  const ExperimentSpec judged = parse(std::string(kSpec) + "judge: {model: \"openai:gpt-4.1-mini\", votes: 3}\n");
  EXPECT_EQ(judged.graders, (std::vector<std::string>{"facts", "citations", "answered", "judge"}));
  EXPECT_EQ(judged.judge->model, "openai:gpt-4.1-mini");
  EXPECT_EQ(judged.judge->votes, 3);
  EXPECT_NE(judged.hash, plain.hash);
  const ExperimentSpec only = parse(std::string(kSpec) + "graders: [judge, facts]\njudge: {}\n");
  EXPECT_EQ(only.graders, (std::vector<std::string>{"judge", "facts"}));
  EXPECT_EQ(only.judge->model, "sim");
  EXPECT_EQ(only.judge->votes, 1);
  EXPECT_THAT(error_of(std::string(kSpec) + "graders: [facts, vibes]\n"),
              HasSubstr("spec.yaml:17: graders[1]: unknown value \"vibes\"; use one of: answered, citations, facts, judge"));
  EXPECT_THAT(error_of(std::string(kSpec) + "graders: [facts, facts]\n"), HasSubstr("spec.yaml:17: graders: a grader is named twice"));
  EXPECT_THAT(error_of(std::string(kSpec) + "graders: [judge]\n"), HasSubstr("spec.yaml:17: graders: judge needs a judge:"));
  EXPECT_THAT(error_of(std::string(kSpec) + "judge: {model: gpt-4}\n"),
              HasSubstr("spec.yaml:17: judge.model: unknown model \"gpt-4\"; use sim, openai:MODEL or anthropic:MODEL"));
  EXPECT_THAT(error_of(std::string(kSpec) + "judge: {votes: 10}\n"),
              HasSubstr("spec.yaml:17: judge.votes: expected an integer from 1 to 9, got \"10\""));
  EXPECT_THAT(error_of(std::string(kSpec) + "judge: {votes: 0}\n"), HasSubstr("judge.votes: expected an integer from 1 to 9, got \"0\""));
  EXPECT_THAT(error_of(std::string(kSpec) + "judge: {model: sim, temperature: 0}\n"), HasSubstr("judge.temperature: unknown key"));
  EXPECT_EQ(usage_error_of({"judge.votes=many"}), "--set judge.votes=many: judge.votes: expected an integer from 1 to 9, got \"many\"");
}

TEST(Spec, ErrorsInOverriddenValuesNameTheSetArgument) {
  EXPECT_EQ(usage_error_of({"paths.context.budget_tokens=-5"}),
            "--set paths.context.budget_tokens=-5: paths.context.budget_tokens: expected an integer from 1 to 10000000, "
            "got \"-5\"");
  EXPECT_THROW(parse(kSpec, {"no-equals-sign"}), UsageError);
  EXPECT_THROW(parse(kSpec, {"paths..k=3"}), UsageError);
  EXPECT_THROW(parse(kSpec, {"paths.context.=3"}), UsageError);
  EXPECT_THROW(parse(kSpec, {"bundles.5.path=x"}), UsageError);
  // A value inside a list element is blamed on the argument, not on line 1 of the file.
  EXPECT_EQ(usage_error_of({"bundles.0.generate.concepts=[10, x]"}),
            "--set bundles.0.generate.concepts=[10, x]: bundles[0].generate.concepts[1]: expected an integer from 1 to "
            "10000000, got \"x\"");
  EXPECT_EQ(usage_error_of({"bundles.0.generate.seed=-1"}),
            "--set bundles.0.generate.seed=-1: bundles[0].generate.seed: expected an integer from 0 to "
            "18446744073709551615, got \"-1\"");
  // A key the argument added inside an entry is blamed on it too.
  EXPECT_EQ(usage_error_of({"bundles.0.path=x"}), "--set bundles.0.path=x: bundles[0]: a generate: entry has no other keys");
  EXPECT_EQ(usage_error_of({"paths.context.kk=1"}),
            "--set paths.context.kk=1: paths.context.kk: unknown key; known keys here: budget_tokens, hops, k, retrieval, strategy");
}

TEST(Spec, SetPathsThatAddressNothingAreUsageErrors) {
  // Each once ended in "internal error: stoul" (exit 3) or rewrote a value it should not have.
  EXPECT_EQ(usage_error_of({"bundles.99999999999999999999.path=x"}),
            "--set bundles.99999999999999999999.path=x: bundles is a list of 1; address an element by its index from 0 "
            "to 0, not \"99999999999999999999\"");
  for (const char* argument : {"bundles.1.path=x", "bundles.-1.path=x", "bundles.+0.path=x", "bundles.00.path=x",
                               "bundles.0x0.path=x", "bundles.first.path=x", "bundles.18446744073709551616=x"}) {
    EXPECT_THAT(usage_error_of({argument}), HasSubstr(fmt::format("--set {}: bundles is a list of 1; address an element by its "
                                                                  "index from 0 to 0", argument)));
  }
  EXPECT_EQ(usage_error_of({"repeats.x=1"}), "--set repeats.x=1: repeats is a single value, not a mapping; set repeats itself");
  EXPECT_EQ(usage_error_of({"paths.context.hops.deeper=1"}),
            "--set paths.context.hops.deeper=1: paths.context.hops is a single value, not a mapping; set "
            "paths.context.hops itself");
  EXPECT_EQ(usage_error_of({"paths.agent.tools.0.0.x=1"}),
            "--set paths.agent.tools.0.0.x=1: paths.agent.tools[0][0] is a single value, not a mapping; set "
            "paths.agent.tools[0][0] itself");
  EXPECT_EQ(usage_error_of({"paths.context={k: 1, hops: 0, k: 2}"}),
            "--set paths.context={k: 1, hops: 0, k: 2}: paths.context.k: duplicate key; YAML keys must be unique, keep one");
  EXPECT_EQ(usage_error_of({"bundles=[{generate: {concepts: 1, concepts: 2}}]"}),
            "--set bundles=[{generate: {concepts: 1, concepts: 2}}]: bundles[0].generate.concepts: duplicate key; YAML "
            "keys must be unique, keep one");
  // Elements are replaced by index; the last part may be one too.
  const ExperimentSpec replaced = parse(kSpec, {"bundles.0={generate: {concepts: 7}}", "paths.agent.tools.1=[search]"});
  ASSERT_EQ(replaced.bundles.size(), 1u);
  EXPECT_EQ(replaced.bundles[0].name, "gen-7");
  EXPECT_EQ(replaced.agent->tools[1], (std::vector<std::string>{"search"}));
}

// One hostile value of one key: what the spec says and what the message must contain.
struct Hostile {
  std::string key;    // as --set writes it
  std::string value;  // YAML text
  std::string range;  // the allowed range as the message states it
};

// Every numeric key with values that used to wrap, truncate, become NaN or
// be read in another base, and the bounds on either side.
std::vector<Hostile> hostile_values() {
  struct Key {
    std::string key;
    std::string range;
    bool integer;
    std::vector<std::string> outside;  // just past each bound
  };
  const std::vector<Key> keys = {
      {"seed", "an integer from 0 to 18446744073709551615", true, {"-1", "18446744073709551616"}},
      {"repeats", "an integer from 1 to 1000", true, {"0", "1001", "1000000000"}},
      {"concurrency", "an integer from 1 to 256", true, {"0", "257"}},
      {"requests_per_minute", "a number from 0 to 1000000", false, {"-1", "1000000.5", "-0.001"}},
      {"cost_cap_usd", "a number greater than 0 and at most 1000000", false, {"0", "-1", "1000001"}},
      {"max_questions", "an integer from 0 to 10000000", true, {"-1", "10000001"}},
      {"bundles.0.generate.concepts", "an integer from 1 to 10000000", true, {"0", "10000001"}},
      {"bundles.0.generate.seed", "an integer from 0 to 18446744073709551615", true, {"-1"}},
      {"bundles.0.generate.layers", "an integer from 0 to 8", true, {"-1", "9"}},
      {"bundles.0.generate.questions", "an integer from 1 to 10000000", true, {"0", "10000001"}},
      {"paths.context.budget_tokens", "an integer from 1 to 10000000", true, {"0", "10000001", "1e18"}},
      {"paths.context.k", "an integer from 1 to 1000", true, {"0", "1001"}},
      {"paths.context.hops", "an integer from 0 to 10", true, {"-1", "11"}},
      {"paths.agent.max_turns", "an integer from 1 to 1000", true, {"0", "1001"}},
      {"judge.votes", "an integer from 1 to 9", true, {"0", "10"}},
  };
  std::vector<Hostile> out;
  for (const Key& k : keys) {
    std::vector<std::string> values = k.outside;
    for (const char* v : {"2147483648", "4294967297", "9223372036854775808", "18446744073709551617", "-2147483649",
                          ".nan", ".NaN", ".inf", "-.inf", "nan", "inf", "0x10", "+3", "lots", "\"\""}) {
      values.push_back(v);
    }
    if (k.integer) {
      for (const char* v : {"5.0", "1e3", "2.5", "010", "0o17", "1_000"}) values.push_back(v);
    }
    for (const std::string& v : values) {
      const bool fits_a_seed = v == "2147483648" || v == "4294967297" || v == "9223372036854775808";
      if (!(k.key.ends_with("seed") && fits_a_seed)) out.push_back({k.key, v, k.range});
    }
  }
  return out;
}

TEST(Spec, EveryNumberIsRangeCheckedBeforeItIsConverted) {
  const std::vector<Hostile> cases = hostile_values();
  ASSERT_GT(cases.size(), 250u);
  for (const Hostile& h : cases) {
    const std::string argument = h.key + "=" + h.value;
    // The reader names list elements by index: bundles[0].generate.concepts.
    const std::string key = h.key.starts_with("bundles.0.") ? "bundles[0]." + h.key.substr(10) : h.key;
    const std::string got = h.value == "\"\"" ? "" : h.value;
    EXPECT_EQ(usage_error_of({argument}), fmt::format("--set {}: {}: expected {}, got \"{}\"", argument, key, h.range, got));
  }
}

// requests_per_minute: 1e-300 passed the range and hung the pacer.
TEST(NumbersAndWrites, APositiveRateBelowTheMinimumIsRefused) {
  const std::string base = "bundles:\n  - generate: {concepts: 10}\npaths:\n  context: {}\n  agent: {}\n";
  EXPECT_EQ(error_of("requests_per_minute: 1e-300\n" + base),
            "spec.yaml:1: requests_per_minute: 1e-300 is below 0.01; write 0 for no limit or a rate of at least 0.01 "
            "(a smaller one would wait days between requests)");
  EXPECT_NE(error_of("tokens_per_minute: 5\n" + base).find("tokens_per_minute: 5 is below 1000"), std::string::npos);
  EXPECT_NE(error_of("models: [{name: openai:a, request_timeout_seconds: 1e-300}]\n" + base).find("from 0.001 to 86400"),
            std::string::npos);
  EXPECT_EQ(parse("requests_per_minute: 0.01\ntokens_per_minute: 0\n" + base).requests_per_minute, 0.01);
  EXPECT_EQ(parse("requests_per_minute: 0\n" + base).requests_per_minute, 0);
}

TEST(Spec, NumbersInTheFileNameTheirLineAndRange) {
  // The issue's cases, as a spec file would hold them.
  const std::string base = "bundles:\n  - generate: {concepts: 10}\npaths:\n  context: {}\n  agent: {}\n";
  EXPECT_EQ(error_of("repeats: 2147483648\n" + base), "spec.yaml:1: repeats: expected an integer from 1 to 1000, got \"2147483648\"");
  EXPECT_EQ(error_of("repeats: 4294967297\n" + base), "spec.yaml:1: repeats: expected an integer from 1 to 1000, got \"4294967297\"");
  EXPECT_EQ(error_of("concurrency: 4294967297\n" + base),
            "spec.yaml:1: concurrency: expected an integer from 1 to 256, got \"4294967297\"");
  EXPECT_EQ(error_of("cost_cap_usd: .nan\n" + base),
            "spec.yaml:1: cost_cap_usd: expected a number greater than 0 and at most 1000000, got \".nan\"");
  EXPECT_EQ(error_of("requests_per_minute: .inf\n" + base),
            "spec.yaml:1: requests_per_minute: expected a number from 0 to 1000000, got \".inf\"");
  const std::string lists = "bundles:\n  - generate: {concepts: 10}\npaths:\n  context:\n    k: [5, 2147483648]\n"
                            "    hops: 2147483648\n  agent: {max_turns: 2147483648}\n";
  EXPECT_EQ(error_of(lists), "spec.yaml:5: paths.context.k[1]: expected an integer from 1 to 1000, got \"2147483648\"");
  EXPECT_EQ(error_of("bundles:\n  - generate: {concepts: 10}\npaths: {context: {budget_tokens: 1e18}}\n"),
            "spec.yaml:3: paths.context.budget_tokens: expected an integer from 1 to 10000000, got \"1e18\"");
  EXPECT_EQ(error_of("bundles:\n  - generate: {concepts: 10}\npaths: {agent: {max_turns: 2147483648}}\n"),
            "spec.yaml:3: paths.agent.max_turns: expected an integer from 1 to 1000, got \"2147483648\"");
  EXPECT_EQ(error_of("bundles:\n  - generate: {concepts: 10}\npaths: {context: {hops: [1, 2147483648]}}\n"),
            "spec.yaml:3: paths.context.hops[1]: expected an integer from 0 to 10, got \"2147483648\"");
  EXPECT_EQ(error_of("repeats: [2]\n" + base), "spec.yaml:1: repeats: expected an integer from 1 to 1000, got a list");
  EXPECT_EQ(error_of("repeats: ~\n" + base), "spec.yaml:1: repeats: expected an integer from 1 to 1000, got nothing");
  // In range and in plain decimal, numbers read as written (and quoted ones too).
  const ExperimentSpec spec = parse("seed: 18446744073709551615\nrepeats: \"1000\"\nconcurrency: 256\n"
                                    "requests_per_minute: 1e3\ncost_cap_usd: 0.01\n" + base);
  EXPECT_EQ(spec.seed, 18446744073709551615u);
  EXPECT_EQ(spec.repeats, 1000);
  EXPECT_EQ(spec.concurrency, 256u);
  EXPECT_DOUBLE_EQ(spec.requests_per_minute, 1000.0);
  EXPECT_DOUBLE_EQ(*spec.cost_cap_usd, 0.01);
}

TEST(Spec, APlanTooLargeForOneRunIsRefusedBeforeAnythingIsAllocated) {
  // 1,001 budgets x 1,000 k values: 1,001,000 trials for every question.
  std::string budgets = "[";
  for (int i = 1; i <= 1001; ++i) budgets += fmt::format("{}{}", i > 1 ? "," : "", i);
  std::string ks = "[";
  for (int i = 1; i <= 1000; ++i) ks += fmt::format("{}{}", i > 1 ? "," : "", i);
  const std::string text = "bundles:\n  - generate: {concepts: 10}\npaths:\n  context:\n    budget_tokens: " + budgets +
                           "]\n    k: " + ks + "]\n";
  EXPECT_EQ(error_of(text),
            "spec.yaml:4: paths: the lists under paths:, models: and cache_models: with repeats: 1 make more than "
            "1000000 trials for each question, and a run holds at most 1000000 trials; shorten the lists or split the "
            "sweep into several specs");
  // 1,000 repeats of 1,000 configurations still fit one question's worth.
  EXPECT_NO_THROW(parse("repeats: 1000\nbundles:\n  - generate: {concepts: 10}\npaths:\n  context:\n    k: " + ks + "]\n"));
  // Repeats multiply the models and cache models too.
  EXPECT_THAT(error_of("repeats: 1000\ncache_models: [none, openai]\nbundles:\n  - generate: {concepts: 10}\npaths:\n"
                       "  context:\n    k: " + ks + "]\n"),
              HasSubstr("paths: the lists under paths:, models: and cache_models: with repeats: 1000 make more than"));
}

TEST(Spec, RepeatedKeysAreErrorsNamingBothLines) {
  // yaml-cpp keeps both pairs and the reader would have used the first.
  EXPECT_EQ(error_of("repeats: 2\nrepeats: 3\nbundles:\n  - generate: {concepts: 10}\npaths: {context: {}}\n"),
            "spec.yaml:2: repeats: duplicate key (first at line 1); YAML keys must be unique, keep one");
  EXPECT_EQ(error_of("bundles:\n  - generate: {concepts: 10, seed: 1, concepts: 20}\npaths: {context: {}}\n"),
            "spec.yaml:2: bundles[0].generate.concepts: duplicate key (first at line 2); YAML keys must be unique, keep one");
  EXPECT_EQ(error_of("bundles:\n  - generate: {concepts: 10}\npaths:\n  context:\n    k: 1\n  agent: {}\n  context:\n"
                     "    k: 2\n"),
            "spec.yaml:7: paths.context: duplicate key (first at line 4); YAML keys must be unique, keep one");
  // Every repeat is listed, in file order.
  EXPECT_EQ(error_of("seed: 1\nseed: 2\nname: a\nname: b\nbundles: []\n"),
            "spec.yaml:2: seed: duplicate key (first at line 1); YAML keys must be unique, keep one\n"
            "spec.yaml:4: name: duplicate key (first at line 3); YAML keys must be unique, keep one");
  // An anchor used twice is not a repeat.
  EXPECT_NO_THROW(parse("bundles:\n  - generate: &g {concepts: 10}\n  - generate: {concepts: 20}\n"
                        "paths: {context: {}}\nmodels: &m [sim]\ncache_models: [none]\n"));
}

TEST(Spec, NonScalarKeysAreErrorsNotCrashes) {
  EXPECT_EQ(error_of("? [a, b]\n: 1\nbundles: []\n"), "spec.yaml:1: spec: a key must be a plain name");
  EXPECT_EQ(error_of("bundles:\n  - generate: {concepts: 10}\npaths: {context: {? {a: 1}: 2}}\n"),
            "spec.yaml:3: paths.context: a key must be a plain name");
}

TEST(Spec, PathBundlesResolveAgainstTheSpecFolderAndExpandVariables) {
  const fs::path dir = test::fresh_dir("spec-paths");
  test::write_file(dir / "bundles" / "demo" / "index.md", "# Demo\n");
  test::write_file(dir / "bundles" / "demo" / "questions.yaml", "questions: []\n");
  test::write_file(dir / "experiments" / "x.yaml",
                   "bundles:\n  - path: ../bundles/demo\n  - path: ${OKFBENCH_SPEC_TEST}/bundles/demo\n    name: again\n"
                   "paths: {context: {}}\n");
  ::setenv("OKFBENCH_SPEC_TEST", dir.c_str(), 1);
  const ExperimentSpec spec = load_spec(dir / "experiments" / "x.yaml");
  ASSERT_EQ(spec.bundles.size(), 2u);
  EXPECT_EQ(spec.name, "x");
  EXPECT_EQ(spec.bundles[0].name, "demo");
  EXPECT_EQ(spec.bundles[0].path, (dir / "bundles" / "demo").lexically_normal());
  EXPECT_EQ(spec.bundles[0].questions, (dir / "bundles" / "demo" / "questions.yaml").lexically_normal());
  EXPECT_EQ(spec.bundles[1].path, spec.bundles[0].path);
  EXPECT_NE(spec.bundles[0].identity(), BundleSource{}.identity());
  ::unsetenv("OKFBENCH_SPEC_TEST");
  EXPECT_THROW(load_spec(dir / "experiments" / "x.yaml"), InputError);  // the variable is gone
  EXPECT_THROW(load_spec(dir / "missing.yaml"), InputError);
}

TEST(Spec, PathBundlesTakeAProfile) {
  const fs::path dir = test::fresh_dir("spec-profile");
  test::write_file(dir / "vault" / "Note.md", "# Note\n");
  test::write_file(dir / "vault" / "questions.yaml", "questions: []\n");
  test::write_file(dir / "x.yaml",
                   "bundles:\n  - path: vault\n    profile: repo\n  - path: vault\n    name: plain\n"
                   "paths: {context: {}}\n");
  const ExperimentSpec spec = load_spec(dir / "x.yaml");
  ASSERT_EQ(spec.bundles.size(), 2u);
  EXPECT_EQ(spec.bundles[0].profile, "repo");
  EXPECT_EQ(spec.bundles[1].profile, "okf");
  // okf adds nothing to the identity, so trial keys of earlier runs stay the same.
  EXPECT_EQ(spec.bundles[0].identity(), spec.bundles[1].identity() + "|profile:repo");
  test::write_file(dir / "bad.yaml", "bundles:\n  - path: vault\n    profile: wiki\npaths: {context: {}}\n");
  try {
    load_spec(dir / "bad.yaml");
    ADD_FAILURE() << "profile: wiki was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.yaml:3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("unknown profile \"wiki\": use okf, repo, lessons or expertise"),
              std::string::npos)
        << e.what();
  }
}

// The message of the InputError loading `yaml` (written as dir/name) gives, or "" when it loads.
std::string spec_error(const fs::path& dir, const std::string& name, const std::string& yaml) {
  test::write_file(dir / name, yaml);
  try {
    load_spec(dir / name);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Spec, LessonsAndExpertiseProfilesTakeTheirPolicy) {
  const fs::path dir = test::fresh_dir("spec-policy");
  test::write_file(dir / "kb" / "questions.yaml", "questions: []\n");
  test::write_file(dir / "x.yaml",
                   "bundles:\n"
                   "  - path: kb\n    profile: lessons\n"
                   "    lessons: {as_of: 2026-12-02, include_candidates: true, prefer_scope: project}\n"
                   "  - path: kb\n    name: pack\n    profile: expertise\n"
                   "    expertise: {as_of: 2026-06-01, task_tags: [python-library, cli]}\n"
                   "paths: {context: {}}\n");
  const ExperimentSpec spec = load_spec(dir / "x.yaml");
  ASSERT_EQ(spec.bundles.size(), 2u);
  EXPECT_EQ(spec.bundles[0].policy.as_of, "2026-12-02");
  EXPECT_TRUE(spec.bundles[0].policy.include_candidates);
  EXPECT_EQ(spec.bundles[0].policy.prefer_scope, "project");
  EXPECT_EQ(spec.bundles[1].policy.task_tags, (std::vector<std::string>{"python-library", "cli"}));
  const std::string path = fmt::format("path:{}|questions:{}", (dir / "kb").generic_string(),
                                       (dir / "kb" / "questions.yaml").generic_string());
  // The policy is part of the bundle's identity, so of every trial key.
  EXPECT_EQ(spec.bundles[0].identity(), path + "|profile:lessons|as_of:2026-12-02|candidates:1|scope:project");
  EXPECT_EQ(spec.bundles[1].identity(), path + "|profile:expertise|as_of:2026-06-01|task_tags:python-library,cli");
}

TEST(Spec, PolicyProblemsNameFileLineAndKey) {
  const fs::path dir = test::fresh_dir("spec-policy-bad");
  test::write_file(dir / "kb" / "questions.yaml", "questions: []\n");
  const std::string head = "paths: {context: {}}\nbundles:\n  - path: kb\n";
  EXPECT_EQ(spec_error(dir, "a.yaml", head + "    profile: lessons\n"),
            (dir / "a.yaml").string() +
                ":3: bundles[0].lessons: required for profile: lessons, with at least as_of, e.g. lessons: {as_of: "
                "2026-12-01}");
  EXPECT_EQ(spec_error(dir, "b.yaml", head + "    profile: lessons\n    lessons: {prefer_scope: team}\n"),
            (dir / "b.yaml").string() +
                ":5: bundles[0].lessons.as_of: required: the clock expires_at is judged against, e.g. as_of: "
                "2026-12-01 (a trial must not change with the day it runs)");
  EXPECT_EQ(spec_error(dir, "c.yaml", head + "    profile: lessons\n    lessons:\n      as_of: someday\n"),
            (dir / "c.yaml").string() +
                ":6: bundles[0].lessons.as_of: \"someday\" is not a date; write YYYY-MM-DD or 2026-06-30T14:00:00Z");
  EXPECT_EQ(spec_error(dir, "d.yaml", head + "    profile: lessons\n    lessons: {as_of: 2026-12-01, task_tags: [x]}\n"),
            (dir / "d.yaml").string() +
                ":5: bundles[0].lessons.task_tags: unknown key; known keys here: as_of, include_candidates, "
                "prefer_scope");
  EXPECT_EQ(spec_error(dir, "e.yaml", head + "    expertise: {as_of: 2026-12-01}\n"),
            (dir / "e.yaml").string() +
                ":4: bundles[0].expertise: applies to profile: expertise only (this bundle's profile is okf)");
  EXPECT_EQ(spec_error(dir, "f.yaml",
                       head + "    profile: lessons\n    lessons:\n      as_of: 2026-12-01\n"
                              "      include_candidates: maybe\n"),
            (dir / "f.yaml").string() + ":7: bundles[0].lessons.include_candidates: expected true or false, got \"maybe\"");
}

// Names derived from folder and file names end up in JSON records and
// reports, so bytes that are not UTF-8 are escaped ("\xE9"), never kept.
TEST(Spec, NamesFromFolderAndFileNamesAreUtf8) {
  const fs::path dir = test::fresh_dir("spec-utf8");
  test::write_file(dir / "caf\xE9" / "index.md", "# Demo\n");
  test::write_file(dir / "caf\xE9" / "questions.yaml", "questions: []\n");
  test::write_file(dir / "sweep\xFF.yaml", "bundles:\n  - path: caf\xE9\npaths: {context: {}}\n");
  const ExperimentSpec spec = load_spec(dir / "sweep\xFF.yaml");
  EXPECT_EQ(spec.name, "sweep\\xFF");
  ASSERT_EQ(spec.bundles.size(), 1u);
  EXPECT_EQ(spec.bundles[0].name, "caf\\xE9");
  EXPECT_EQ(spec.bundles[0].path, dir / "caf\xE9");  // the folder itself is still found by its bytes
}

TEST(Spec, ShippedExperimentsParse) {
  const ExperimentSpec spec = load_spec(test::source_dir() / "datasets" / "experiments" / "default.yaml");
  EXPECT_EQ(spec.name, "default");
  EXPECT_GE(spec.bundles.size(), 5u);
  ASSERT_TRUE(spec.context);
  EXPECT_EQ(spec.context->budget_tokens, (std::vector<std::int64_t>{2000}));
  ASSERT_TRUE(spec.agent);
  EXPECT_EQ(spec.agent->tools.size(), 2u);
  EXPECT_EQ(model_labels(spec), (std::vector<std::string>{"sim"}));
  EXPECT_EQ(spec.cache_models, (std::vector<std::string>{"openai"}));
  if (!test::have_data()) GTEST_SKIP() << "no reference data for real.yaml";
  ::setenv("OKFBENCH_DATA", test::data_root().c_str(), 0);
  const ExperimentSpec real = load_spec(test::source_dir() / "datasets" / "experiments" / "real.yaml");
  EXPECT_GE(real.bundles.size(), 7u);
}

// kSpec with its models: line replaced by `models`.
std::string with_models(const std::string& models) {
  std::string text = kSpec;
  const auto at = text.find("models: [sim]\n");
  return text.replace(at, 14, models);
}

TEST(Spec, ModelEntriesCarryEndpointKeyHeadersTimeoutsAndPrice) {
  const ExperimentSpec spec = parse(with_models(R"(models:
  - sim
  - openai:gpt-4o-mini
  - name: openai:my-model
    label: mine-via-gateway
    base_url: http://gateway.local:8080/v1
    api_key_env: GATEWAY_KEY
    headers: {X-Team: evals}
    connect_timeout_seconds: 2
    request_timeout_seconds: 30
    trial_deadline_seconds: 90
    max_output_tokens: 256
    temperature: 0.5
    price: {input_per_mtok: 1.5, output_per_mtok: 6}
  - {name: anthropic:claude-sonnet-4-5, replay: recorded}
)"));
  ASSERT_EQ(spec.models.size(), 4u);
  EXPECT_EQ(model_labels(spec), (std::vector<std::string>{"sim", "openai:gpt-4o-mini", "mine-via-gateway", "anthropic:claude-sonnet-4-5"}));
  EXPECT_FALSE(spec.models[0].calls_provider());
  EXPECT_TRUE(spec.models[1].calls_provider());
  EXPECT_EQ(spec.models[1].request_timeout_seconds, kDefaultRequestTimeoutSeconds);
  EXPECT_EQ(spec.models[1].trial_deadline_seconds, kDefaultTrialDeadlineSeconds);
  const ModelSpec& m = spec.models[2];
  EXPECT_EQ(m.name, "openai:my-model");
  EXPECT_EQ(m.base_url, "http://gateway.local:8080/v1");
  EXPECT_EQ(m.api_key_env, "GATEWAY_KEY");
  EXPECT_EQ(m.headers, (std::vector<std::pair<std::string, std::string>>{{"X-Team", "evals"}}));
  EXPECT_EQ(m.connect_timeout_seconds, 2);
  EXPECT_EQ(m.request_timeout_seconds, 30);
  EXPECT_EQ(m.trial_deadline_seconds, 90);
  EXPECT_EQ(m.max_output_tokens, 256);
  EXPECT_EQ(m.temperature, 0.5);
  ASSERT_TRUE(m.price);
  EXPECT_EQ(m.price->model, "mine-via-gateway");
  EXPECT_EQ(m.price->input, 1.5);
  EXPECT_EQ(m.price->cached_input, 1.5);  // defaults to the input price
  EXPECT_EQ(m.price->cache_write, 1.5);
  EXPECT_EQ(m.price->output, 6);
  EXPECT_THAT(m.price->source, HasSubstr("spec.yaml:"));
  EXPECT_EQ(spec.models[3].replay, fs::path("/specs/recorded"));
  EXPECT_FALSE(spec.models[3].calls_provider());  // it answers from cassettes
}

TEST(Spec, SimWithAProfileIsOfflineItsPathIsResolvedAndItsContentIsHashed) {
  const fs::path dir = test::fresh_dir("spec-sim-profile");
  test::write_file(dir / "p.yaml", "searches: 2\n");
  const std::string text = with_models("models: [sim, sim:p.yaml]\n");
  const ExperimentSpec spec = parse_spec(text, "spec.yaml", dir);
  ASSERT_EQ(spec.models.size(), 2u);
  EXPECT_TRUE(spec.models[1].is_sim());
  EXPECT_FALSE(spec.models[1].calls_provider());
  EXPECT_EQ(spec.models[1].sim_profile, dir / "p.yaml");
  EXPECT_EQ(spec.models[1].label, "sim:p.yaml");
  const std::string before = spec.hash;
  test::write_file(dir / "p.yaml", "searches: 3\n");
  EXPECT_NE(parse_spec(text, "spec.yaml", dir).hash, before);
  EXPECT_EQ(parse_spec(with_models("models: [sim]\n"), "spec.yaml", dir).hash, parse(kSpec).hash);
  try {
    parse_spec(with_models("models: [sim:missing.yaml]\n"), "spec.yaml", dir);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("spec.yaml:"));
    EXPECT_THAT(e.what(), HasSubstr("missing.yaml is not a file"));
  }
}

TEST(Spec, RunOnlyModelSettingsStayOutOfTheHash) {
  const std::string plain = with_models("models:\n  - openai:gpt-4o-mini\n");
  const std::string run_only = with_models(R"(models:
  - name: openai:gpt-4o-mini
    api_key_env: OTHER_KEY
    connect_timeout_seconds: 3
    request_timeout_seconds: 4
    trial_deadline_seconds: 5
    price: {input_per_mtok: 1, output_per_mtok: 2}
    replay: somewhere
tokens_per_minute: 1000
)");
  EXPECT_EQ(parse(plain).hash, parse(run_only).hash);
  EXPECT_NE(parse(plain).hash, parse(with_models("models: [{name: openai:gpt-4o-mini, temperature: 1}]\n")).hash);
  EXPECT_NE(parse(plain).hash, parse(with_models("models: [{name: openai:gpt-4o-mini, base_url: 'http://x/v1'}]\n")).hash);
  EXPECT_EQ(parse(with_models("models: [openai:gpt-4o-mini]\ntokens_per_minute: 90000\n")).tokens_per_minute, 90000);
}

TEST(Spec, BadModelEntriesNameTheKey) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"models: [{label: x}]\n", "models[0].name: required"},
      {"models: [{name: gpt-4o}]\n", "models[0].name: unknown model \"gpt-4o\""},
      {"models: [{name: sim, colour: red}]\n", "models[0].colour: unknown key"},
      {"models: [openai:a, {name: openai:b, label: 'openai:a'}]\n", "two models are labelled \"openai:a\""},
      {"models: [{name: openai:a, headers: {X-Evil: \"v\\r\\nX-Injected: pwned\"}}]\n", "models[0].headers.X-Evil: value: contains the control character 0x0D"},
      {"models: [{name: openai:a, headers: {\"Bad Name\": v}}]\n", "'Bad Name' is not a valid header name"},
      {"models: [{name: openai:a, headers: {Authorization: Bearer x}}]\n", "Authorization is set by okfbench; give the key with api_key_env"},
      {"models: [{name: openai:a, base_url: 'http://user:sk-secret@host/v1'}]\n", "carries user-info"},
      {"models: [{name: openai:a, base_url: 'ftp://host'}]\n", "expected an http:// or https:// URL"},
      {"models: [{name: openai:a, request_timeout_seconds: .nan}]\n", "models[0].request_timeout_seconds: expected a number from 0.001 to 86400, got \".nan\""},
      {"models: [{name: openai:a, trial_deadline_seconds: .inf}]\n", "trial_deadline_seconds: expected a number from 0.001 to 86400, got \".inf\""},
      {"models: [{name: openai:a, temperature: 3}]\n", "temperature: expected a number from 0 to 2"},
      {"models: [{name: openai:a, max_output_tokens: 0}]\n", "max_output_tokens: expected an integer from 1 to 1000000, got \"0\""},
      {"models: [{name: openai:a, max_output_tokens: 5000000}]\n", "max_output_tokens: expected an integer from 1 to 1000000, got \"5000000\""},
      {"models: [{name: openai:a, price: {input_per_mtok: 1}}]\n", "models[0].price.output_per_mtok: required"},
      {"models: [{name: openai:a, price: {input_per_mtok: -1, output_per_mtok: 1}}]\n", "input_per_mtok: expected a number from 0 to"},
      {"models: [{name: openai:a, price: {input_per_mtok: 1, output_per_mtok: 1, per: 1}}]\n", "models[0].price.per: unknown key"},
      {"models: [{name: sim, base_url: 'http://x/v1'}]\n", "sim runs offline"},
      {"models: [sim]\ntokens_per_minute: .nan\n", "tokens_per_minute: expected a number from 0 to"},
  };
  for (const auto& [models, expected] : cases) EXPECT_THAT(error_of(with_models(models)), HasSubstr(expected)) << models;
}

}  // namespace
}  // namespace okfbench::engine

namespace okfbench::engine {
namespace {

// The bundle cache is never a folder of the working directory: by default the
// documented cache folder, a written cache_dir relative to the spec's folder.
TEST(Spec, CacheDirIsTheCacheFolderOrRelativeToTheSpec) {
  const std::string base = "bundles:\n  - generate: {concepts: 10}\npaths:\n  context: {budget_tokens: 500}\n";
  const char* saved = std::getenv("XDG_CACHE_HOME");
  const std::string kept = saved ? saved : "";
  ::setenv("XDG_CACHE_HOME", "/xdg", 1);
  EXPECT_EQ(parse_spec(base, "spec.yaml", "/specs").cache_dir, std::filesystem::path("/xdg/okfbench/bundles"));
  EXPECT_EQ(parse_spec("cache_dir: c\n" + base, "spec.yaml", "/specs").cache_dir, std::filesystem::path("/specs/c"));
  EXPECT_EQ(parse_spec("cache_dir: /abs\n" + base, "spec.yaml", "/specs").cache_dir, std::filesystem::path("/abs"));
  ExperimentSpec none = parse_spec(base, "spec.yaml", "/specs");
  none.cache_dir.clear();
  try {
    cache_folder(none);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_THAT(std::string(e.what()), ::testing::HasSubstr("write cache_dir: DIR in the spec"));
  }
  if (saved) {
    ::setenv("XDG_CACHE_HOME", kept.c_str(), 1);
  } else {
    ::unsetenv("XDG_CACHE_HOME");
  }
}

TEST(SpecBaseline, NamesAConfigurationByShortNameOrLabelAndStaysOutOfTheHash) {
  const std::string simple = R"(bundles:
  - generate: {concepts: [10], questions: 2}
paths:
  context: {budget_tokens: [500, 2000]}
  agent: {tools: [[search, open]]}
)";
  const ExperimentSpec by_name = parse(simple + "baseline: one-shot budget=2000\n");
  EXPECT_EQ(by_name.baseline, "one-shot budget=2000");
  EXPECT_EQ(by_name.hash, parse(simple).hash);  // no trial depends on it
  EXPECT_TRUE(parse(simple).baseline.empty());
  const std::string label = "context budget=500 k=5 hops=1 strategy=grafito model=sim cache=none";
  EXPECT_EQ(parse(simple + "baseline: " + label + "\n").baseline, label);
}

TEST(SpecBaseline, AnUnknownBaselineNamesTheKeyAndTheConfigurations) {
  const std::string message = error_of(R"(bundles:
  - generate: {concepts: [10], questions: 2}
paths:
  context: {budget_tokens: [500, 2000]}
  agent: {tools: [[search, open]]}
baseline: one-shot budget=999
)");
  EXPECT_THAT(message, HasSubstr("spec.yaml:6: baseline:"));
  EXPECT_THAT(message, HasSubstr("\"one-shot budget=999\""));
  EXPECT_THAT(message, HasSubstr("\"one-shot budget=500\""));
  EXPECT_THAT(message, HasSubstr("\"agent\" (agent"));
}

}  // namespace
}  // namespace okfbench::engine

namespace okfbench::engine {
namespace {

const char* kExternal = R"(bundles:
  - generate: {concepts: 10}
paths:
  external:
    command: [python3, my_agent.py]
    timeout_s: 30
    answer: json
    args: [[--fast], [--slow]]
    label: mine
models: [sim, {name: openai:gpt-4o-mini, base_url: "http://127.0.0.1:1/v1"}]
)";

TEST(SpecExternal, AnArgsSweepIsOneConfigurationPerListWithProviderModelsOnly) {
  const ExperimentSpec spec = parse(kExternal);
  ASSERT_EQ(spec.external.size(), 2u);
  EXPECT_EQ(spec.external[0].label, "mine --fast");
  EXPECT_EQ(spec.external[1].command, (std::vector<std::string>{"python3", "my_agent.py", "--slow"}));
  EXPECT_EQ(spec.external[0].timeout_s, 30);
  EXPECT_TRUE(spec.external[0].answer_json);
  EXPECT_EQ(spec.external[0].working_dir, fs::path("/specs"));
  const auto configs = path_configs(spec);
  ASSERT_EQ(configs.size(), 2u) << "sim runs no external trials";
  EXPECT_EQ(configs[0].label(), "external agent=mine --fast model=openai:gpt-4o-mini cache=provider");
  // Without a label the command names it.
  std::string text = kExternal;
  text.replace(text.find("    label: mine\n"), 16, "");
  EXPECT_EQ(parse(text).external[1].label, "python3 my_agent.py --slow");
}

TEST(SpecExternal, ProblemsNameTheKey) {
  const auto with = [](const std::string& from, const std::string& to) {
    std::string text = kExternal;
    text.replace(text.find(from), from.size(), to);
    return error_of(text);
  };
  EXPECT_THAT(with("timeout_s: 30", "timeout_s: 0"), HasSubstr("spec.yaml:6: paths.external.timeout_s: expected a number from 1 to 86400"));
  EXPECT_THAT(with("timeout_s: 30", "timeout_s: lots"), HasSubstr("paths.external.timeout_s"));
  EXPECT_THAT(with("command: [python3, my_agent.py]", "command: []"), HasSubstr("paths.external.command: expected at least one value"));
  EXPECT_THAT(with("command: [python3, my_agent.py]", "command: [python3, \"\"]"), HasSubstr("paths.external.command[1]: an empty argument"));
  EXPECT_THAT(with("    command: [python3, my_agent.py]\n", ""), HasSubstr("paths.external.command: required"));
  EXPECT_THAT(with("answer: json", "answer: xml"), HasSubstr("paths.external.answer: unknown value \"xml\""));
  EXPECT_THAT(with("args: [[--fast], [--slow]]", "args: [[--fast], [--fast]]"), HasSubstr("two external agents are labelled \"mine --fast\""));
  EXPECT_THAT(with("args: [[--fast], [--slow]]", "args: []"), HasSubstr("paths.external.args: expected a list of argument lists"));
  EXPECT_THAT(with("    label: mine\n", "    label: mine\n    upstream: ftp://x\n"), HasSubstr("paths.external.upstream: expected an http:// or https:// URL"));
  EXPECT_THAT(with("    label: mine\n", "    label: mine\n    shell: true\n"), HasSubstr("paths.external.shell: unknown key"));
  EXPECT_THAT(with("models: [sim, {name: openai:gpt-4o-mini, base_url: \"http://127.0.0.1:1/v1\"}]", "models: [sim]"),
              HasSubstr("paths.external: an external agent calls a model through the run's proxy"));
  EXPECT_THROW(parse(kExternal, {"paths.external.timeout_s=100000"}), UsageError);
}

}  // namespace
}  // namespace okfbench::engine
