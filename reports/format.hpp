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

// Text from outside (client names, tool arguments, concept and question ids,
// configuration labels, error messages) written into Markdown. Every
// Markdown writer passes such text through one of these, so it can never
// start a heading, a list or a quote, close a code span, split a table cell
// or add a line: line breaks and other control characters become spaces;
// \ ` * [ ] | are backslash-escaped (not _: inside a word it never
// emphasises, and ids are full of it); < becomes &lt; (raw HTML); a leading
// #, >, "- ", "+ ", "1. ", "1) " or a run of = is escaped too.
std::string markdown_text(std::string_view text);

// `text` as one Markdown code span, inside a table cell or running text: the
// fence is one backtick longer than the longest run of backticks inside,
// padded with spaces where needed; line breaks and control characters become spaces and
// '|' is written "\|" (GFM reads that as '|' even inside a code span in a
// table).
std::string markdown_code(std::string_view text);

}  // namespace okfbench::reports
