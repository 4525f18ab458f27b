#pragma once
// Number formatting shared by the text writers, so the headline table, the
// Markdown report and compare print the same value the same way. Unknown
// values print as "n/a"; a mean over fewer trials than the row has adds how
// many were unknown, e.g. "1,234 (2 n/a)".
#include <optional>
#include <string>
#include <string_view>

#include "reports/summary.hpp"

namespace okfbench::reports {

std::string format_count(double value);                     // 12345.6 -> "12,346"
std::string format_decimal(double value, int places);       // fixed places
std::string format_dollars(double value);                   // "$12.35"; below $1 four significant digits, "$0.0000328"
std::string format_share(std::optional<double> share);      // 0.614 -> "61.4%"
std::string format_ratio(std::optional<double> ratio);      // 3.73 -> "3.7x"
std::string format_mean_count(const MeanValue& v);
std::string format_mean_decimal(const MeanValue& v, int places);
std::string format_mean_dollars(const MeanValue& v);

// Escapes & < > " ' for HTML and XML text and attribute values.
std::string markup_escape(std::string_view text);

}  // namespace okfbench::reports
