#pragma once
// CLI11 validators for numeric flags. CLI11's own conversion takes "010" as
// octal, "0x10" as hex, "+5", and "nan" or "inf" for a real (which pass
// CLI::Range), and its unsigned conversion of "-1" depends on the version;
// these validators parse the flag's text with core/numbers.hpp instead,
// check the range, and hand CLI11 the number in plain decimal. A refusal is a
// usage error (exit 2):
//   --k: expected an integer from 1 to 1000, got "2147483648"
#include <CLI/CLI.hpp>

#include <string>

#include "core/numbers.hpp"

namespace okfbench::cli {

template <std::integral T>
CLI::Validator number_in(IntegerRange<T> range) {
  return CLI::Validator(
      [range](std::string& text) {
        Parsed<T> parsed = parse_integer(text, range);
        if (!parsed.value) return parsed.problem;
        text = std::to_string(*parsed.value);
        return std::string();
      },
      std::to_string(range.min) + ".." + std::to_string(range.max));
}

CLI::Validator number_in(RealRange range);

}  // namespace okfbench::cli
