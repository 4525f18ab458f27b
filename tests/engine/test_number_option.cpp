// Numeric flags: the validator in-process, then every numeric flag of every
// subcommand through the binary with a table of hostile values (each must be
// a usage error, exit 2, naming the flag and its range).
#include "engine/number_option.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstdint>

#include "datasets/questions.hpp"
#include "engine/limits.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::cli {
namespace {

using ::testing::HasSubstr;
namespace limits = engine::limits;

// Parses `--n VALUE` into `target` through number_in(range); returns CLI11's message or "".
template <class T, class Range>
std::string parse_flag(const std::string& value, T& target, Range range) {
  CLI::App app;
  app.add_option("--n", target)->check(number_in(range));
  std::vector<std::string> args = {value, "--n"};  // CLI11 takes the arguments last first
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  return "";
}

TEST(NumberOption, InRangeValuesConvertInPlainDecimal) {
  int k = 0;
  EXPECT_EQ(parse_flag("1000", k, limits::search_k), "");
  EXPECT_EQ(k, 1000);
  std::uint64_t seed = 0;
  EXPECT_EQ(parse_flag("18446744073709551615", seed, limits::seed), "");
  EXPECT_EQ(seed, UINT64_MAX);
  double ratio = -1;
  EXPECT_EQ(parse_flag("0.25", ratio, limits::sim_open_ratio), "");
  EXPECT_EQ(ratio, 0.25);
  EXPECT_EQ(parse_flag("1e-1", ratio, limits::sim_open_ratio), "");
  EXPECT_EQ(ratio, 0.1);
  std::size_t hits = 0;
  EXPECT_EQ(parse_flag("0", hits, limits::Int{0, 1000}), "");
  EXPECT_EQ(hits, 0u);
}

TEST(NumberOption, HostileValuesAreUsageErrorsNotWrappedOrReadInAnotherBase) {
  // CLI11 alone read "010" as 8, "0x10" as 16, "+5" as 5, and passed "nan" through CLI::Range.
  int k = 5;
  for (const char* value : {"0", "1001", "-1", "2147483648", "4294967297", "18446744073709551617", "010", "0x10", "+5",
                            "5.0", "1e3", "nan", " 5", ""}) {
    EXPECT_EQ(parse_flag(value, k, limits::search_k),
              fmt::format("--n: expected an integer from 1 to 1000, got \"{}\"", value));
    EXPECT_EQ(k, 5) << value;
  }
  std::size_t bytes = 8;
  EXPECT_EQ(parse_flag("-1", bytes, limits::max_body_chars), "--n: expected an integer from 1 to 100000000, got \"-1\"");
  EXPECT_EQ(bytes, 8u);
  double ratio = 0.5;
  for (const char* value : {"nan", "inf", "-inf", "1.5", "-0.1", "0x1p-1", "+0.5", "1e999"}) {
    EXPECT_EQ(parse_flag(value, ratio, limits::sim_open_ratio), fmt::format("--n: expected a number from 0 to 1, got \"{}\"", value));
    EXPECT_EQ(ratio, 0.5) << value;
  }
}

// One numeric flag of one subcommand: the command line before it and the flag's range.
struct Flag {
  std::string command;  // e.g. "search BUNDLE q"
  std::string flag;
  std::string range;    // as the message states it
  std::vector<std::string> outside;  // just past each bound
};

std::string text_of(limits::Int range) { return describe(range); }

std::vector<Flag> numeric_flags() {
  auto past = [](limits::Int range) {
    return std::vector<std::string>{std::to_string(range.min - 1), std::to_string(range.max + 1)};
  };
  const std::string b = "/nonexistent-bundle";
  const limits::Int context_k{0, limits::k.max};
  const limits::Int gen_layers{1, limits::layers.max};
  const std::string seed_range = describe(limits::seed);
  std::vector<Flag> flags = {
      {"gen --out /nonexistent-out --concepts 10", "--seed", seed_range, {"-1", "18446744073709551616"}},
      {"gen --out /nonexistent-out", "--concepts", text_of(limits::concepts), past(limits::concepts)},
      {"gen --out /nonexistent-out --concepts 10", "--layers", text_of(gen_layers), past(gen_layers)},
      {"gen --out /nonexistent-out --concepts 10", "--questions", text_of(limits::generated_questions), past(limits::generated_questions)},
      {"gen --out /nonexistent-out --concepts 10", "--threads", text_of(limits::threads), past(limits::threads)},
      {"context " + b + " q", "--budget", text_of(limits::budget_tokens), past(limits::budget_tokens)},
      {"context " + b + " q", "--k", text_of(context_k), past(context_k)},
      {"context " + b + " q", "--hops", text_of(limits::hops), past(limits::hops)},
      {"search " + b + " q", "--k", text_of(limits::search_k), past(limits::search_k)},
      {"search " + b + " q", "--k1", describe(limits::bm25_k1), {"-0.5", "1000.5"}},
      {"search " + b + " q", "--b", describe(limits::bm25_b), {"-0.1", "1.1"}},
      {"search " + b + " q", "--rrf-k", describe(limits::rrf_k), {"0", "1000001"}},
      {"search " + b + " q", "--depth", text_of(limits::fusion_depth), past(limits::fusion_depth)},
      {"eval --bundle " + b + " --questions q.yaml", "--k", text_of(limits::eval_k), past(limits::eval_k)},
      {"agent " + b + " q", "--max-turns", text_of(limits::max_turns), past(limits::max_turns)},
      {"agent " + b + " q", "--max-body-chars", text_of(limits::max_body_chars), past(limits::max_body_chars)},
      {"agent " + b + " q", "--seed", seed_range, {"-1"}},
      {"agent " + b + " q", "--sim-search-k", text_of(limits::sim_search_k), past(limits::sim_search_k)},
      {"agent " + b + " q", "--sim-max-open", text_of(limits::sim_max_open), past(limits::sim_max_open)},
      {"agent " + b + " q", "--sim-open-ratio", describe(limits::sim_open_ratio), {"-0.1", "1.01"}},
      {"validate " + b, "--max-file-bytes", text_of(limits::max_file_bytes), past(limits::max_file_bytes)},
      {"validate " + b, "--max-files", text_of(limits::max_files), past(limits::max_files)},
      {"validate " + b, "--max-total-bytes", text_of(limits::max_total_bytes), past(limits::max_total_bytes)},
      {"neighbors " + b + " x", "--hops", text_of(limits::neighbor_hops), past(limits::neighbor_hops)},
      {"compare /nonexistent-a /nonexistent-b", "--seed", seed_range, {"-1"}},
      {"compare /nonexistent-a /nonexistent-b", "--permutations", text_of(limits::permutations), past(limits::permutations)},
      {"grade --questions /nonexistent-q.yaml --answers /nonexistent-a.jsonl", "--votes", text_of(limits::judge_votes),
       past(limits::judge_votes)},
      {"mock-server", "--port", text_of(limits::port), past(limits::port)},
      {"mock-server", "--seed", seed_range, {"-1"}},
      {"trec-eval /nonexistent-qrels /nonexistent-run", "-l", describe(datasets::kGrades),
       {"-1000001", "1000001"}},
  };
  return flags;
}

TEST(NumberOption, EveryNumericFlagOfEverySubcommandRefusesHostileValues) {
  const std::string binary = test::okfbench_binary().string();
  std::size_t runs = 0;
  for (const Flag& f : numeric_flags()) {
    const bool real = f.range.starts_with("a number");
    std::vector<std::string> values = f.outside;
    for (const char* v : {"18446744073709551617", "-18446744073709551617", "nan", "inf", "0x10", "+5", "abc"}) values.push_back(v);
    if (!real) {
      for (const char* v : {"5.5", "1e3", "010"}) values.push_back(v);
    }
    for (const std::string& value : values) {
      // A value that slipped through would start the command: `timeout` keeps mock-server from hanging the test.
      const std::string line = fmt::format("timeout 20 '{}' {} {} '{}'", binary, f.command, f.flag, value);
      const test::CommandResult r = test::run_command(line);
      ++runs;
      EXPECT_EQ(r.exit_code, 2) << line << "\n" << r.err;
      EXPECT_THAT(r.err, HasSubstr(fmt::format("{}: expected {}, got \"{}\"", f.flag, f.range, value))) << line;
    }
  }
  EXPECT_GT(runs, 300u);
}

TEST(NumberOption, AValueAtTheBoundIsAccepted) {
  // The flags parse; the command then fails on the missing bundle (exit 1), not on the number.
  const std::string binary = test::okfbench_binary().string();
  for (const std::string& flag : {std::string("--k 1000"), std::string("--k1 1000"), std::string("--b 1"),
                                  std::string("--depth 100000"), std::string("--k 1")}) {
    const test::CommandResult r = test::run_command(fmt::format("'{}' search /nonexistent-bundle q {}", binary, flag));
    EXPECT_EQ(r.exit_code, 1) << flag << "\n" << r.err;
    EXPECT_THAT(r.err, ::testing::Not(HasSubstr("expected"))) << flag;
  }
}

}  // namespace
}  // namespace okfbench::cli
