#include "engine/store.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "reports/record.hpp"
#include "core/error.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::engine {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

reports::TrialRecord trial(const std::string& key, const std::string& error = "", int runs = 1) {
  reports::TrialRecord r;
  r.trial_key = key;
  r.bundle = "b";
  r.question_id = "q-" + key;
  r.config.model = "openai:gpt-4o-mini";
  r.error = error;
  if (!error.empty()) r.error_class = "transient";
  r.runs = runs;
  reports::TurnRecord turn;
  turn.input_tokens = 100;
  turn.output_tokens = 10;
  r.turns.push_back(turn);
  return r;
}

std::vector<std::string> jsonl_keys(const fs::path& dir) {
  std::vector<std::string> keys;
  std::ifstream in(dir / "results.jsonl");
  for (std::string line; std::getline(in, line);) keys.push_back(reports::trial_from_json_text(line, "test").trial_key);
  return keys;
}

TEST(ResultStore, ReplaceKeepsTheFailedRunAsSupersededAndRewritesTheJsonl) {
  const fs::path dir = test::fresh_dir("store-replace");
  const reports::TrialRecord failed = trial("a", "HTTP 503");
  const reports::TrialRecord retried = trial("a", "", 2);
  {
    ResultStore store = ResultStore::open(dir);
    store.add(failed);
    store.add(trial("b"));
    store.replace(retried);
    store.add(trial("c"));  // added while the file is stale: the rewrite holds it too
    EXPECT_EQ(store.records(), (std::vector<reports::TrialRecord>{retried, trial("b"), trial("c")}));
    EXPECT_EQ(store.superseded(), (std::vector<reports::TrialRecord>{failed}));
    store.flush_jsonl();
    EXPECT_EQ(jsonl_keys(dir), (std::vector<std::string>{"a", "b", "c"}));
    EXPECT_EQ(reports::read_results_jsonl(dir / "results.jsonl")[0], retried);
    EXPECT_THROW(store.replace(trial("never-stored")), InputError);
  }
  ResultStore again = ResultStore::open(dir);
  EXPECT_EQ(again.records()[0], retried);
  EXPECT_EQ(again.superseded().size(), 1u);
}

TEST(ResultStore, AJsonlLeftStaleByAKillIsRewrittenOnOpen) {
  const fs::path dir = test::fresh_dir("store-stale");
  {
    ResultStore store = ResultStore::open(dir);
    store.add(trial("a", "timeout"));
    store.replace(trial("a", "", 2));  // no flush: as if the process died here
  }
  ResultStore store = ResultStore::open(dir);
  EXPECT_EQ(reports::read_results_jsonl(dir / "results.jsonl"), (std::vector<reports::TrialRecord>{trial("a", "", 2)}));
}

TEST(ResultStore, AFullDiskIsAnInputErrorNotACrash) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full on this system";
  const fs::path dir = test::fresh_dir("store-full");
  ResultStore store = ResultStore::open(dir);
  fs::remove(dir / "results.jsonl");
  fs::create_symlink("/dev/full", dir / "results.jsonl");  // every append fails with ENOSPC
  try {
    store.add(trial("a"));
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("results.jsonl: No space left on device"));
  }
  EXPECT_EQ(store.size(), 1u);  // SQLite, the record of truth, holds it; the next open rewrites the file
}

}  // namespace
}  // namespace okfbench::engine
