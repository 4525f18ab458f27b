#pragma once
// Numbers that people write (specs, question sets, regression specs, --set
// values, flags, qrels grades, header values), converted with their range
// checked on the parsed value before it is narrowed to the caller's type, so
// nothing wraps, saturates or becomes NaN. One syntax everywhere:
//
//   integer  plain decimal digits with an optional leading '-' (accepted so
//            that "-1" is reported as out of range, not as "not a number");
//            no leading zeros ("010" is octal to YAML 1.1 and to strtol),
//            no '+', no hex, no exponent, no fraction ("5.0"), no spaces or
//            digit separators.
//   real     an integer as above, or decimal digits with a fraction and/or
//            an exponent ("0.5", ".5", "1e3", "2.5E-3"), no leading zeros
//            before the point ("00.5"); always finite:
//            nan, inf, YAML's .nan and .inf, hex floats and '+' are refused.
//
// A refusal reads `expected an integer from 1 to 10000, got "2147483648"`;
// the caller puts the file:line or flag and the key in front of it.
// Header-only, like error.hpp, so that reports/ (which depends on nothing of
// ours) checks its numbers the same way.
#include <charconv>
#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace okfbench {

// Inclusive bounds of an integer.
template <std::integral T>
struct IntegerRange {
  T min;
  T max;
};

// Bounds of a real; `above_min` excludes min itself (a cost cap must be
// more than 0).
struct RealRange {
  double min;
  double max;
  bool above_min = false;
};

// The value, or no value and why.
template <class T>
struct Parsed {
  std::optional<T> value;
  std::string problem;  // set when there is no value
};

namespace number_detail {

// The shortest text that reads back as the same double, without an exponent
// below 1e15 ("1000000", not "1e+06").
inline std::string to_text(double value) {
  char buffer[400];
  const auto format = value > -1e15 && value < 1e15 ? std::chars_format::fixed : std::chars_format::general;
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value, format);
  return ec == std::errc() ? std::string(buffer, end) : std::string("?");
}

// The offending text as it is quoted in a message: at most 40 bytes, control
// characters shown as '?', so a hostile value cannot flood or forge a line.
inline std::string quoted(std::string_view text) {
  constexpr std::size_t shown = 40;
  std::string out = "\"";
  for (std::size_t i = 0; i < text.size() && i < shown; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    out += c < 0x20 || c == 0x7f ? '?' : text[i];
  }
  return out + (text.size() > shown ? "...\"" : "\"");
}

inline bool all_digits(std::string_view text) {
  return !text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos;
}

}  // namespace number_detail

// What a range allows, for messages and help: "an integer from 1 to 10000".
template <std::integral T>
std::string describe(IntegerRange<T> range) {
  return "an integer from " + std::to_string(range.min) + " to " + std::to_string(range.max);
}

inline std::string describe(RealRange range) {
  using number_detail::to_text;
  if (range.above_min) return "a number greater than " + to_text(range.min) + " and at most " + to_text(range.max);
  return "a number from " + to_text(range.min) + " to " + to_text(range.max);
}

template <std::integral T>
Parsed<T> parse_integer(std::string_view text, IntegerRange<T> range) {
  const bool negative = text.starts_with('-');
  const std::string_view digits = text.substr(negative ? 1 : 0);
  if (number_detail::all_digits(digits) && (digits.size() == 1 || digits.front() != '0')) {
    std::uint64_t magnitude = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), magnitude);
    constexpr std::uint64_t most_negative = std::uint64_t{1} << 63;  // the magnitude of INT64_MIN
    if (ec == std::errc() && !negative && std::cmp_greater_equal(magnitude, range.min) &&
        std::cmp_less_equal(magnitude, range.max)) {
      return {static_cast<T>(magnitude), {}};
    }
    if (ec == std::errc() && negative && magnitude <= most_negative) {
      const std::int64_t value = magnitude == most_negative ? INT64_MIN : -static_cast<std::int64_t>(magnitude);
      if (std::cmp_greater_equal(value, range.min) && std::cmp_less_equal(value, range.max)) {
        return {static_cast<T>(value), {}};
      }
    }
  }
  return {std::nullopt, "expected " + describe(range) + ", got " + number_detail::quoted(text)};
}

inline Parsed<double> parse_real(std::string_view text, RealRange range) {
  const std::string_view unsigned_part = text.substr(text.starts_with('-') ? 1 : 0);
  const std::size_t exponent = unsigned_part.find_first_of("eE");
  const std::string_view mantissa = unsigned_part.substr(0, exponent);
  const std::size_t dot = mantissa.find('.');
  const std::string_view whole = mantissa.substr(0, dot);
  const std::string_view fraction = dot == std::string_view::npos ? std::string_view() : mantissa.substr(dot + 1);
  bool plain = (whole.empty() || (number_detail::all_digits(whole) && (whole.size() == 1 || whole.front() != '0'))) &&
               (fraction.empty() || number_detail::all_digits(fraction)) && !(whole.empty() && fraction.empty());
  if (exponent != std::string_view::npos) {
    std::string_view power = unsigned_part.substr(exponent + 1);
    if (power.starts_with('-') || power.starts_with('+')) power.remove_prefix(1);
    plain = plain && number_detail::all_digits(power);
  }
  if (plain) {
    double value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    const bool above = range.above_min ? value > range.min : value >= range.min;
    if (ec == std::errc() && end == text.data() + text.size() && above && value <= range.max) return {value, {}};
  }
  return {std::nullopt, "expected " + describe(range) + ", got " + number_detail::quoted(text)};
}

// The same, throwing Error("<field>: <problem>"); Error is InputError for a
// file's contents, UsageError for the command line.
template <class Error, std::integral T>
T integer_or_throw(std::string_view text, IntegerRange<T> range, std::string_view field) {
  Parsed<T> parsed = parse_integer(text, range);
  if (!parsed.value) throw Error(std::string(field) + ": " + parsed.problem);
  return *parsed.value;
}

template <class Error>
double real_or_throw(std::string_view text, RealRange range, std::string_view field) {
  Parsed<double> parsed = parse_real(text, range);
  if (!parsed.value) throw Error(std::string(field) + ": " + parsed.problem);
  return *parsed.value;
}

}  // namespace okfbench
