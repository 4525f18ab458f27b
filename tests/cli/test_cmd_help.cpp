// okfbench help: a subcommand's help is its --help text under the name
// `okfbench ...`; --markdown documents every subcommand (cli/CLI.md is
// that output; test docs.cli_reference compares them); unknown names are
// usage errors.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/support/test_support.hpp"

namespace okfbench::cli {
namespace {

using ::testing::HasSubstr;

test::CommandResult okfbench(const std::string& args) {
  return test::run_command(test::okfbench_binary().string() + " " + args);
}

// The text after the Usage line, which names the program as it was called.
std::string after_usage(const std::string& help) {
  const auto usage = help.find("Usage: ");
  return help.substr(help.find('\n', usage));
}

TEST(CmdHelp, ASubcommandsHelpIsItsOwnHelpUnderTheProgramsName) {
  const auto help = okfbench("help run");
  const auto own = okfbench("run --help");
  ASSERT_EQ(help.exit_code, 0) << help.err;
  EXPECT_THAT(help.out, HasSubstr("Usage: okfbench run [OPTIONS] [spec]"));
  EXPECT_EQ(after_usage(help.out), after_usage(own.out));
}

TEST(CmdHelp, MarkdownHasASectionWithTheHelpOfEverySubcommand) {
  const auto md = okfbench("help --markdown");
  ASSERT_EQ(md.exit_code, 0) << md.err;
  for (const char* name : {"gen", "run", "merge", "tokens", "validate", "help"}) {
    EXPECT_THAT(md.out, HasSubstr(fmt::format("## `okfbench {}`\n\n```\n", name)));
    EXPECT_THAT(md.out, HasSubstr(after_usage(okfbench(std::string(name) + " --help").out)));
  }
}

TEST(CmdHelp, UnknownSubcommandsAndMarkdownOfOneAreUsageErrors) {
  auto r = okfbench("help nosuch");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("help nosuch: no such subcommand"));
  r = okfbench("help --markdown run");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("give no SUBCOMMAND"));
}

}  // namespace
}  // namespace okfbench::cli
