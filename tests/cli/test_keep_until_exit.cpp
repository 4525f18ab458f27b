// What a command keeps to the end of the process is never destroyed.
#include "cli/keep_until_exit.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace okfbench::cli {
namespace {

struct Counted {
  int* destroyed;
  std::vector<std::string> payload;
  Counted(int* d, std::vector<std::string> p) : destroyed(d), payload(std::move(p)) {}
  Counted(Counted&& other) noexcept : destroyed(std::exchange(other.destroyed, nullptr)), payload(std::move(other.payload)) {}
  ~Counted() {
    if (destroyed) ++*destroyed;
  }
};

TEST(KeepUntilExit, TheValueMovesInStaysPutAndIsNeverDestroyed) {
  int destroyed = 0;
  Counted& first = keep_until_exit(Counted(&destroyed, {"a", "b"}));
  Counted& second = keep_until_exit(Counted(&destroyed, {"c"}));
  const Counted* where = &first;
  for (int i = 0; i < 100; ++i) keep_until_exit(std::string(1000, 'x'));
  EXPECT_EQ(&first, where) << "later values do not move earlier ones";
  EXPECT_EQ(first.payload, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(second.payload, (std::vector<std::string>{"c"}));
  EXPECT_EQ(destroyed, 0);
}

}  // namespace
}  // namespace okfbench::cli
