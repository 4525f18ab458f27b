#pragma once
// The project's one error policy.
//
// Expected, content-level problems are values: a bundle that loads with
// problems returns Diagnostics, a lookup that misses returns an empty optional
// or an {"error": ...} tool result. Exceptions are for failures that stop the
// operation the user asked for, and there are exactly two kinds, both caught in
// main():
//   InputError - a file, spec, flag value or HTTP response is unusable
//                (exit code 1); the message names the file/line/field and says
//                what to do.
//   UsageError - the command line itself is wrong (exit code 2).
// Header-only so that every library can throw them without a link dependency.
#include <stdexcept>
#include <string>

namespace okfbench {

class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace okfbench
