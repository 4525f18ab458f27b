// End-to-end tests of `okfbench calibrate` (the built program).
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "agents/sim_profile_file.hpp"
#include "core/error.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::cli {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string okfbench() { return test::okfbench_binary().string(); }
std::string demo() { return (test::source_dir() / "datasets" / "bundles" / "demo").string(); }

const char* const kQuestions[] = {
    "\"A production Cypher query got slow after a data load. What should I do, step by step?\"",
    "\"Why is the replica lagging behind the primary?\"",
    "\"How do I rebuild an index that went offline?\"",
    "\"What does the query latency p95 metric measure?\""};

// Records `model` (sim:PROFILE) answering the questions into one cassette.
fs::path record(const fs::path& dir, const std::string& profile) {
  test::write_file(dir / "truth.yaml", profile);
  for (const char* q : kQuestions) {
    const auto r = test::run_command(fmt::format("{} agent {} {} --model sim:{} --record {} --tools search,open,follow",
                                                 okfbench(), demo(), q, (dir / "truth.yaml").string(),
                                                 (dir / "calls.jsonl").string()));
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  return dir / "calls.jsonl";
}

TEST(CliCalibrate, FitsWritesAProfileAndReplaysTheQuestions) {
  const fs::path dir = test::fresh_dir("cli-calibrate");
  const fs::path calls = record(dir, "searches: 2\nopens_per_search: 1\nfollow_rate: 0\nseed_variation: false\n");
  const auto r = test::run_command(fmt::format("{} calibrate {} --out {} --bundle {} --holdout 0", okfbench(), calls.string(),
                                               (dir / "fitted.yaml").string(), demo()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("fitted on 4 conversation(s)"));
  EXPECT_THAT(r.out, HasSubstr("searches per question                  2.00       2.00"));
  EXPECT_THAT(r.out, HasSubstr("check (fit set): 4 question(s) replayed with the fitted sim"));
  EXPECT_THAT(r.out, HasSubstr("total: input "));
  const agents::SimOptions fitted = agents::load_sim_profile(dir / "fitted.yaml");
  EXPECT_EQ(fitted.profile.searches, agents::CountDistribution::always(2));
  EXPECT_EQ(fitted.profile.follow_rate, 0);
  // The same as JSON; replayed with the profile that made them, the totals are the recorded ones.
  const auto j = test::run_command(fmt::format("{} calibrate {} --out {} --bundle {} --holdout 0 --json --check-with {}",
                                               okfbench(), calls.string(), (dir / "again.yaml").string(), demo(),
                                               (dir / "truth.yaml").string()));
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const auto doc = nlohmann::json::parse(j.out);
  const auto& total = doc["check"]["total"];
  EXPECT_EQ(total["sim_input"], total["real_input"]);
  EXPECT_EQ(total["sim_calls"], total["real_calls"]);
  EXPECT_GT(total["real_calls"].get<int>(), 4 * 3);
  EXPECT_EQ(doc["check"]["questions"].size(), 4u);
}

// `--out /dev/full` printed "wrote" and exited 0; on a full disk it left an
// empty profile that sim: then read as the default.
TEST(NumbersAndWrites, AFailedProfileWriteExitsOneAndLeavesNoFile) {
  const fs::path dir = test::fresh_dir("cli-calibrate-full");
  const fs::path calls = record(dir, "searches: 2\nopens_per_search: 1\nfollow_rate: 0\nseed_variation: false\n");
  const auto r = test::run_command(fmt::format("{} calibrate {} --out /dev/full --bundle {} --holdout 0", okfbench(),
                                               calls.string(), demo()));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("/dev/full: cannot write"));
  EXPECT_EQ(r.out.find("wrote"), std::string::npos) << r.out;
  const auto missing = test::run_command(fmt::format("{} calibrate {} --out {} --bundle {} --holdout 0", okfbench(), calls.string(),
                                                     (dir / "no-such-folder" / "p.yaml").string(), demo()));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_FALSE(fs::exists(dir / "no-such-folder"));
  test::write_file(dir / "empty.yaml", "");  // what a full disk used to leave
  EXPECT_THROW(agents::load_sim_profile(dir / "empty.yaml"), InputError);
}

TEST(CliCalibrate, BadInputExitsWithAMessage) {
  const fs::path dir = test::fresh_dir("cli-calibrate-bad");
  test::write_file(dir / "bad.jsonl", "{not json\n");
  auto r = test::run_command(fmt::format("{} calibrate {} --out {}", okfbench(), (dir / "bad.jsonl").string(),
                                         (dir / "p.yaml").string()));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("bad.jsonl:1"));
  r = test::run_command(fmt::format("{} calibrate {} --out {} --holdout 2", okfbench(), (dir / "bad.jsonl").string(),
                                    (dir / "p.yaml").string()));
  EXPECT_EQ(r.exit_code, 2);
  r = test::run_command(fmt::format("{} calibrate {}", okfbench(), (dir / "bad.jsonl").string()));
  EXPECT_EQ(r.exit_code, 2);  // --out is required
  EXPECT_FALSE(fs::exists(dir / "p.yaml"));
}

}  // namespace
}  // namespace okfbench::cli
