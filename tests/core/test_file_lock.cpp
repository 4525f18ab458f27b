#include "core/file_lock.hpp"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <thread>

#include "core/error.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

TEST(FileLock, ASecondHolderIsRefusedWithTheFirstOnesPidAndHost) {
  const fs::path file = test::fresh_dir("lock-refuse") / "okfbench.lock";
  {
    const FileLock held = FileLock::acquire(file, FileLock::Wait::no);
    try {
      FileLock::acquire(file, FileLock::Wait::no, "pass another --out");
      FAIL() << "expected an InputError";
    } catch (const InputError& e) {
      EXPECT_THAT(e.what(), HasSubstr(fmt::format("is held by okfbench pid {} on host ", ::getpid())));
      EXPECT_THAT(e.what(), HasSubstr("since 20"));
      EXPECT_THAT(e.what(), HasSubstr(": pass another --out"));
    }
    const auto holder = FileLock::held_by(file);
    ASSERT_TRUE(holder.has_value());
    EXPECT_THAT(*holder, HasSubstr(fmt::format("pid {}", ::getpid())));
  }
  EXPECT_FALSE(FileLock::held_by(file).has_value());  // released with the object
  EXPECT_NO_THROW(FileLock::acquire(file, FileLock::Wait::no));
  EXPECT_FALSE(FileLock::held_by(file.parent_path() / "missing.lock").has_value());
}

TEST(FileLock, WaitingBlocksUntilTheHolderLetsGo) {
  const fs::path file = test::fresh_dir("lock-wait") / ".entry.lock";
  std::optional<FileLock> held = FileLock::acquire(file, FileLock::Wait::no);
  std::jthread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    held.reset();
  });
  int waits = 0;
  std::string seen;
  const auto start = std::chrono::steady_clock::now();
  const FileLock mine = FileLock::acquire(file, FileLock::Wait::yes, {}, [&](const std::string& holder) {
    ++waits;
    seen = holder;
  });
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(250));
  EXPECT_EQ(waits, 1);
  EXPECT_THAT(seen, HasSubstr(fmt::format("pid {}", ::getpid())));
}

TEST(FileLock, DescribesWhatTheFileSays) {
  EXPECT_EQ(describe_lock_holder("pid=42\nhost=box\nsince=2026-11-29T12:00:00Z\n"), "pid 42 on host box since 2026-11-29T12:00:00Z");
  EXPECT_EQ(describe_lock_holder(""), "an unknown process");
  EXPECT_EQ(describe_lock_holder("garbage"), "an unknown process");
}

TEST(FileLock, AnUncreatableFileIsAnInputError) {
  EXPECT_THROW(FileLock::acquire("/proc/okfbench-no/such.lock", FileLock::Wait::no), InputError);
}

}  // namespace
}  // namespace okfbench
