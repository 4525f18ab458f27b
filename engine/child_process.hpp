#pragma once
// One run of a program the user named (paths.external): argv as given, no
// shell, in its own process group, with `input` on its stdin, its stdout kept
// up to a bound and the tail of its stderr, and a timeout.
//
//   program      argv[0]: a name is looked up in PATH, a path with a '/' is
//                taken relative to `working_dir`
//   environment  exactly `environment` (NAME=VALUE), nothing inherited
//   stdin        `input`, then closed
//   stdout       kept up to max_output bytes; one byte more kills the group
//                (output_too_large)
//   stderr       the last stderr_tail bytes kept
//   timeout      past it the whole process group is killed (SIGKILL)
//   the end      when the program exits, whatever it left running in its
//                process group is killed too, so no trial leaves an orphan
//                behind (a process that made a session of its own with
//                setsid has left the group and is the program's business)
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace okfbench::engine {

struct ChildOptions {
  std::vector<std::string> argv;
  std::filesystem::path working_dir;
  std::vector<std::string> environment;
  std::string input;
  std::chrono::milliseconds timeout{300'000};
  std::size_t max_output = std::size_t{4} << 20;
  std::size_t stderr_tail = 4096;
};

struct ChildResult {
  std::string spawn_error;  // the program could not be started ("" when it was)
  std::string output;       // stdout, at most max_output bytes
  std::string stderr_tail;  // the last stderr_tail bytes of stderr
  bool output_too_large = false;
  bool timed_out = false;
  int exit_code = -1;  // when it exited
  int signal = 0;      // when a signal ended it (SIGKILL after a timeout or too much output included)
  double ms = 0;
};

// Never throws for what the program does; a program that cannot be started
// is spawn_error.
ChildResult run_child(const ChildOptions& options);

// Why a finished run of the program is a failure, or "" when it exited 0:
// "timed out after 300 s", "exited with status 3", "killed by signal 9
// (Killed)", "printed more than 4194304 bytes on stdout", "could not start: ...".
std::string child_failure(const ChildResult& result, const ChildOptions& options);

}  // namespace okfbench::engine
