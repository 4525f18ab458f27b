// RegularFile refuses what is not a regular file at once; LineReader gives
// a file's lines one at a time, bounded, with their numbers.
#include "core/regular_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench {
namespace {
namespace fs = std::filesystem;

std::vector<std::string> lines_of(const std::string& text, std::size_t max = 1 << 20) {
  const fs::path file = test::fresh_dir("line_reader") / "f.jsonl";
  test::write_file(file, text);
  const RegularFile f(file);
  LineReader reader(f, file, max);
  std::vector<std::string> out;
  for (std::string line; reader.next(line);) {
    EXPECT_EQ(reader.number(), static_cast<int>(out.size()) + 1);
    out.push_back(line);
  }
  return out;
}

TEST(LineReader, GivesEveryLineWithOrWithoutAFinalNewline) {
  EXPECT_EQ(lines_of(""), std::vector<std::string>{});
  EXPECT_EQ(lines_of("a\nb\n"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(lines_of("a\nb"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(lines_of("\n\nc"), (std::vector<std::string>{"", "", "c"}));
  EXPECT_EQ(lines_of("a\r\n"), (std::vector<std::string>{"a\r"}));
}

TEST(LineReader, LinesLongerThanItsBufferComeWhole) {
  const std::string long_line(200000, 'x');
  EXPECT_EQ(lines_of(long_line + "\nshort\n" + long_line), (std::vector<std::string>{long_line, "short", long_line}));
}

TEST(LineReader, ALineOverTheLimitIsAnErrorNamingIt) {
  try {
    lines_of("ok\n" + std::string(101, 'x') + "\n", 100);
    FAIL() << "a line over the limit was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("f.jsonl:2: a line longer than 100 bytes"), std::string::npos) << e.what();
  }
  EXPECT_EQ(lines_of(std::string(100, 'x'), 100).size(), 1u);
}

TEST(RegularFile, AFifoIsRefusedWithoutBlocking) {
  const fs::path fifo = test::fresh_dir("regular_file") / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THROW(RegularFile{fifo}, InputError);
  EXPECT_THROW(RegularFile{fifo.parent_path()}, InputError);
}

}  // namespace
}  // namespace okfbench
