#include "engine/regression.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "core/error.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::cli {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr const char* kSpec = R"(name: tiny
corpus: {format: beir, path: collections/x}
index: {mode: flat, k1: 0.9, b: 0.4}
statistics: {documents: 10}
search: {k: 100}
measures:
  - measure: ndcg_cut.10
    score: ndcg_cut_10
    expected: 0.5
)";

std::string error_of(const std::string& text) {
  const fs::path file = test::fresh_dir("regression") / "spec.yaml";
  test::write_file(file, text);
  try {
    load_regression(file);
  } catch (const InputError& e) {
    const std::string message = e.what();
    return message.substr(message.find("spec.yaml"));
  }
  return "(no error)";
}

std::string with(const std::string& from, const std::string& to) {
  std::string text = kSpec;
  text.replace(text.find(from), from.size(), to);
  return text;
}

TEST(Regression, ShippedSpecsLoad) {
  for (const char* name : {"cranfield", "scifact-bm25f", "scifact-flat"}) {
    const RegressionSpec spec = load_regression(test::source_dir() / "datasets" / "regressions" / (std::string(name) + ".yaml"));
    EXPECT_EQ(spec.name, name);
    EXPECT_FALSE(spec.scores.empty());
  }
}

TEST(Regression, NumbersAreRangeChecked) {
  EXPECT_EQ(error_of(kSpec), "(no error)");
  for (const char* k1 : {".nan", ".inf", "-1", "1001", "0x1", "lots"}) {
    EXPECT_EQ(error_of(with("k1: 0.9", std::string("k1: ") + k1)),
              fmt::format("spec.yaml:3: `k1`: expected a number from 0 to 1000, got \"{}\"", k1));
  }
  EXPECT_EQ(error_of(with("b: 0.4", "b: 1.5")), "spec.yaml:3: `b`: expected a number from 0 to 1, got \"1.5\"");
  for (const char* k : {"0", "-1", "100001", "2147483648", "18446744073709551617", "5.0", "1e3"}) {
    EXPECT_EQ(error_of(with("k: 100", std::string("k: ") + k)),
              fmt::format("spec.yaml:5: `k`: expected an integer from 1 to 100000, got \"{}\"", k));
  }
  EXPECT_EQ(error_of(with("documents: 10", "documents: -1")),
            "spec.yaml:4: `documents`: expected an integer from 0 to 18446744073709551615, got \"-1\"");
  EXPECT_EQ(error_of(with("expected: 0.5", "expected: .nan")),
            "spec.yaml:9: `expected`: expected a number from 0 to 1000000000000, got \".nan\"");
}

TEST(Regression, RepeatedKeysAreErrors) {
  EXPECT_EQ(error_of(with("search: {k: 100}", "search: {k: 100, k: 10}")),
            "spec.yaml:5: search.k: duplicate key (first at line 5); YAML keys must be unique, keep one");
}

}  // namespace
}  // namespace okfbench::cli
