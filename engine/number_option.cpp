#include "engine/number_option.hpp"

namespace okfbench::cli {

CLI::Validator number_in(RealRange range) {
  return CLI::Validator(
      [range](std::string& text) {
        Parsed<double> parsed = parse_real(text, range);
        if (!parsed.value) return parsed.problem;
        text = number_detail::to_text(*parsed.value);
        return std::string();
      },
      (range.above_min ? ">" : "") + number_detail::to_text(range.min) + ".." + number_detail::to_text(range.max));
}

}  // namespace okfbench::cli
