// The one checked parser of numbers that people write: a table of hostile
// texts for integers and reals, and what each range allows.
#include "core/numbers.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "core/error.hpp"

namespace okfbench {
namespace {

using ::testing::HasSubstr;

constexpr IntegerRange<std::int64_t> kSmall{1, 1000};
constexpr IntegerRange<int> kSigned{-5, 5};
constexpr IntegerRange<std::uint64_t> kSeed{0, std::numeric_limits<std::uint64_t>::max()};
constexpr IntegerRange<std::size_t> kIndex{0, 9};

TEST(Numbers, IntegersInRangeInPlainDecimal) {
  EXPECT_EQ(parse_integer("1", kSmall).value, 1);
  EXPECT_EQ(parse_integer("1000", kSmall).value, 1000);
  EXPECT_EQ(parse_integer("-5", kSigned).value, -5);
  EXPECT_EQ(parse_integer("-0", kSigned).value, 0);
  EXPECT_EQ(parse_integer("0", kIndex).value, 0u);
  EXPECT_EQ(parse_integer("18446744073709551615", kSeed).value, std::numeric_limits<std::uint64_t>::max());
  constexpr IntegerRange<std::int64_t> all{std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()};
  EXPECT_EQ(parse_integer("-9223372036854775808", all).value, std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(parse_integer("9223372036854775807", all).value, std::numeric_limits<std::int64_t>::max());
}

TEST(Numbers, HostileIntegersAreRefusedNotWrapped) {
  // Each of these once converted to something: 2^31 to a negative int, 2^32+1
  // to 1 as unsigned, "0x10" to 16 and "010" to 8 through strtol, "+3" to 3,
  // "5.0" and "1e3" through a double.
  for (const char* text : {"0", "1001", "-1", "2147483648", "4294967297", "9223372036854775808", "18446744073709551616",
                           "99999999999999999999", "-9223372036854775809", "5.0", "1e3", "0x10", "010", "+3", " 5",
                           "5 ", "5_000", "1,000", "", "-", "abc", "nan", "inf", ".inf", "5\n", "٣"}) {
    const Parsed<std::int64_t> parsed = parse_integer(text, kSmall);
    EXPECT_FALSE(parsed.value) << '"' << text << "\" gave " << parsed.value.value_or(0);
    EXPECT_THAT(parsed.problem, HasSubstr("expected an integer from 1 to 1000, got \"")) << text;
  }
  EXPECT_FALSE(parse_integer("-1", kSeed).value);                    // unsigned: negative is out of range
  EXPECT_FALSE(parse_integer("18446744073709551616", kSeed).value);  // 2^64
  EXPECT_FALSE(parse_integer("6", kSigned).value);
  EXPECT_FALSE(parse_integer("-6", kSigned).value);
  EXPECT_FALSE(parse_integer("10", kIndex).value);
}

TEST(Numbers, MessagesQuoteAShortSafeCopyOfTheText) {
  EXPECT_EQ(parse_integer("2147483648", kSmall).problem, "expected an integer from 1 to 1000, got \"2147483648\"");
  const std::string flood(5000, '9');
  const std::string problem = parse_integer(flood, kSmall).problem;
  EXPECT_LT(problem.size(), 120u);
  EXPECT_THAT(problem, HasSubstr("...\""));
  EXPECT_THAT(parse_integer("1\r\nX-Forged: yes", kSmall).problem, HasSubstr("got \"1??X-Forged: yes\""));
}

TEST(Numbers, RealsAreFiniteDecimalsInRange) {
  constexpr RealRange unit{0, 1};
  EXPECT_EQ(parse_real("0", unit).value, 0.0);
  EXPECT_EQ(parse_real("1", unit).value, 1.0);
  EXPECT_EQ(parse_real("0.25", unit).value, 0.25);
  EXPECT_EQ(parse_real(".5", unit).value, 0.5);
  EXPECT_EQ(parse_real("5e-1", unit).value, 0.5);
  EXPECT_EQ(parse_real("2.5E-1", unit).value, 0.25);
  EXPECT_EQ(parse_real("1e3", RealRange{0, 1e6}).value, 1000.0);
  EXPECT_EQ(parse_real("-2", RealRange{-5, 5}).value, -2.0);
  for (const char* text : {"nan", "NaN", ".nan", "inf", "-inf", ".inf", "-.inf", "infinity", "1e999", "0x1p-1",
                           "+0.5", "1.5", "-0.1", "00.5", "1e", "e1", ".", "-", "", "0.5 ", "1..2", "1e3.5", "abc",
                           "1,5"}) {
    const Parsed<double> parsed = parse_real(text, unit);
    EXPECT_FALSE(parsed.value) << '"' << text << "\" gave " << parsed.value.value_or(-1);
    EXPECT_THAT(parsed.problem, HasSubstr("expected a number from 0 to 1, got \"")) << text;
  }
}

TEST(Numbers, AnExclusiveMinimumRefusesTheBoundItself) {
  constexpr RealRange cap{0, 1'000'000, true};
  EXPECT_FALSE(parse_real("0", cap).value);
  EXPECT_FALSE(parse_real("-0.0", cap).value);
  EXPECT_EQ(parse_real("0.001", cap).value, 0.001);
  EXPECT_EQ(parse_real("1000000", cap).value, 1e6);
  EXPECT_EQ(parse_real("0", cap).problem, "expected a number greater than 0 and at most 1000000, got \"0\"");
}

TEST(Numbers, ThrowingFormsNameTheField) {
  EXPECT_EQ(integer_or_throw<UsageError>("7", kSmall, "--k"), 7);
  try {
    integer_or_throw<UsageError>("0", kSmall, "--k");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--k: expected an integer from 1 to 1000, got \"0\"");
  }
  EXPECT_THROW(real_or_throw<InputError>("nan", RealRange{0, 1}, "spec.yaml:3: cost_cap_usd"), InputError);
  EXPECT_EQ(real_or_throw<InputError>("0.5", RealRange{0, 1}, "x"), 0.5);
}

TEST(Numbers, DescribeWritesBoundsWithoutExponents) {
  EXPECT_EQ(describe(IntegerRange<std::int64_t>{1, 10'000'000}), "an integer from 1 to 10000000");
  EXPECT_EQ(describe(RealRange{0, 1e6}), "a number from 0 to 1000000");
  EXPECT_EQ(describe(RealRange{0.5, 1e12}), "a number from 0.5 to 1000000000000");
}

}  // namespace
}  // namespace okfbench
