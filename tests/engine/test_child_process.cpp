#include "engine/child_process.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include "tests/support/test_support.hpp"

extern char** environ;

namespace okfbench::engine {
namespace {

ChildOptions shell(const std::string& script) {
  ChildOptions o;
  o.argv = {"sh", "-c", script};
  o.working_dir = test::fresh_dir("child-process");
  for (char** e = environ; *e; ++e) o.environment.emplace_back(*e);
  o.timeout = std::chrono::milliseconds(20'000);
  return o;
}

TEST(ChildProcess, ExitStatusStdoutAndTheTailOfStderrAreKept) {
  ChildOptions o = shell("echo out; i=0; while [ $i -lt 500 ]; do echo line$i >&2; i=$((i+1)); done; exit 3");
  o.stderr_tail = 100;
  const ChildResult r = run_child(o);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.output, "out\n");
  EXPECT_EQ(r.stderr_tail.size(), 100u);
  EXPECT_TRUE(r.stderr_tail.ends_with("line499\n"));
  EXPECT_EQ(child_failure(r, o), "exited with status 3");
}

TEST(ChildProcess, InputArrivesWholeOnStdin) {
  ChildOptions o = shell("wc -c");
  o.input = std::string(1 << 20, 'q');  // past a pipe's buffer
  const ChildResult r = run_child(o);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(std::stol(r.output), 1 << 20);
}

TEST(ChildProcess, ATimeoutKillsTheWholeProcessGroup) {
  const auto dir = test::fresh_dir("child-timeout");
  ChildOptions o = shell("sleep 300 & echo $! > " + (dir / "pid").string() + "; sleep 300");
  o.timeout = std::chrono::milliseconds(500);
  const ChildResult r = run_child(o);
  EXPECT_TRUE(r.timed_out);
  EXPECT_LT(r.ms, 5000);
  EXPECT_NE(child_failure(r, o).find("timed out after 0.5 s"), std::string::npos);
  const pid_t left = static_cast<pid_t>(std::stol(test::read_file(dir / "pid")));
  for (int i = 0; i < 50 && ::kill(left, 0) == 0; ++i) ::usleep(100'000);
  EXPECT_NE(::kill(left, 0), 0) << "the background sleep outlived the timeout";
}

TEST(ChildProcess, WhatAnExitedProgramLeftRunningIsKilled) {
  const auto dir = test::fresh_dir("child-leftover");
  ChildOptions o = shell("sleep 300 >/dev/null 2>&1 & echo $! > " + (dir / "pid").string() + "; echo done");
  const ChildResult r = run_child(o);
  EXPECT_EQ(r.exit_code, 0);
  const pid_t left = static_cast<pid_t>(std::stol(test::read_file(dir / "pid")));
  for (int i = 0; i < 50 && ::kill(left, 0) == 0; ++i) ::usleep(100'000);
  EXPECT_NE(::kill(left, 0), 0);
}

TEST(ChildProcess, OutputPastTheBoundStopsIt) {
  ChildOptions o = shell("yes");
  o.max_output = 10'000;
  const ChildResult r = run_child(o);
  EXPECT_TRUE(r.output_too_large);
  EXPECT_EQ(r.output.size(), 10'000u);
  EXPECT_NE(child_failure(r, o).find("more than 10000 bytes"), std::string::npos);
}

TEST(ChildProcess, ASignalAndAMissingProgramAreSaidSo) {
  ChildOptions o = shell("kill -9 $$");
  const ChildResult r = run_child(o);
  EXPECT_EQ(r.signal, SIGKILL);
  EXPECT_NE(child_failure(r, o).find("killed by signal 9"), std::string::npos);
  o.argv = {"no-such-program-okfbench"};
  EXPECT_NE(child_failure(run_child(o), o).find("could not start"), std::string::npos);
  o.argv = {"./missing.sh"};
  EXPECT_NE(child_failure(run_child(o), o).find("could not start"), std::string::npos);
}

TEST(ChildProcess, TheEnvironmentIsExactlyTheOneGiven) {
  ChildOptions o = shell("echo \"[$OKFBENCH_ONLY][$HOME_PROBE]\"");
  o.environment = {"PATH=/usr/bin:/bin", "OKFBENCH_ONLY=yes"};
  EXPECT_EQ(run_child(o).output, "[yes][]\n");
}

}  // namespace
}  // namespace okfbench::engine
