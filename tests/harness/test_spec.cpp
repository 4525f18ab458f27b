#include "harness/spec.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "retrieval/error.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::harness {
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
  EXPECT_EQ(changed.models, (std::vector<std::string>{"sim", "openai:gpt-4o-mini"}));
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
  EXPECT_THAT(error_of(text), HasSubstr("spec.yaml:10: paths.context.budget_tokens[1]: expected a positive integer, got \"lots\""));
  text = kSpec;
  text.replace(text.find("    hops: 0"), 11, "    hopz: 0");
  EXPECT_THAT(error_of(text), HasSubstr("spec.yaml:11: paths.context.hopz: unknown key; known keys here: budget_tokens, hops, k, strategy"));
  text = kSpec;
  text.replace(text.find("[search, open]"), 14, "[search, opn]");
  EXPECT_THAT(error_of(text), HasSubstr("spec.yaml:13: paths.agent.tools[0][1]: unknown value \"opn\""));
  EXPECT_THAT(error_of(std::string(kSpec) + "cach_models: [none]\n"), HasSubstr("spec.yaml:17: cach_models: unknown key"));
  EXPECT_THAT(error_of("bundles: []\npaths: {context: {}}\n"), HasSubstr("spec.yaml:1: bundles: required"));
  EXPECT_THAT(error_of("bundles:\n  - generate: {concepts: 10}\n"), HasSubstr("paths: required"));
  EXPECT_THAT(error_of("bundles:\n  - generate: {concepts: 10}\npaths: {context: {}}\nmodels: [gpt]\n"),
              HasSubstr("spec.yaml:4: models: unknown model \"gpt\""));
  EXPECT_THAT(error_of("bundles:\n  - generate: {concepts: [10, 10]}\npaths: {context: {}}\n"),
              HasSubstr("two bundles are named \"gen-10\""));
  EXPECT_THAT(error_of("bundles: [\n"), HasSubstr("spec.yaml:2: not valid YAML"));
  EXPECT_THAT(error_of("bundles:\n  - path: does/not/exist\npaths: {context: {}}\n"),
              HasSubstr("spec.yaml:2: bundles[0].path: no such folder /specs/does/not/exist"));
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
  EXPECT_THAT(error_of(std::string(kSpec) + "judge: {votes: 10}\n"), HasSubstr("spec.yaml:17: judge.votes: expected 1 to 9, got 10"));
  EXPECT_THAT(error_of(std::string(kSpec) + "judge: {votes: 0}\n"), HasSubstr("judge.votes: expected an integer of at least 1"));
  EXPECT_THAT(error_of(std::string(kSpec) + "judge: {model: sim, temperature: 0}\n"), HasSubstr("judge.temperature: unknown key"));
  EXPECT_THAT(error_of(kSpec, {"judge.votes=many"}), HasSubstr("--set judge.votes=many: judge.votes: expected a positive integer"));
}

TEST(Spec, ErrorsInOverriddenValuesNameTheSetArgument) {
  EXPECT_THAT(error_of(kSpec, {"paths.context.budget_tokens=-5"}),
              HasSubstr("--set paths.context.budget_tokens=-5: paths.context.budget_tokens: expected an integer of at least 1"));
  EXPECT_THROW(parse(kSpec, {"no-equals-sign"}), UsageError);
  EXPECT_THROW(parse(kSpec, {"paths..k=3"}), UsageError);
  EXPECT_THROW(parse(kSpec, {"bundles.5.path=x"}), UsageError);
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
  EXPECT_EQ(spec.models, (std::vector<std::string>{"sim"}));
  EXPECT_EQ(spec.cache_models, (std::vector<std::string>{"openai"}));
  if (!test::have_data()) GTEST_SKIP() << "no reference data for real.yaml";
  ::setenv("OKFBENCH_DATA", test::data_root().c_str(), 0);
  const ExperimentSpec real = load_spec(test::source_dir() / "datasets" / "experiments" / "real.yaml");
  EXPECT_GE(real.bundles.size(), 7u);
}

TEST(Spec, StableHashIsFnv1a) {
  // Reference values of 64-bit FNV-1a.
  EXPECT_EQ(stable_hash(""), "cbf29ce484222325");
  EXPECT_EQ(stable_hash("a"), "af63dc4c8601ec8c");
}

}  // namespace
}  // namespace okfbench::harness
