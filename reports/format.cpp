#include "reports/format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace okfbench::reports {

namespace {

std::string with_unknown(const MeanValue& v, std::string text) {
  if (v.unknown > 0) text += fmt::format(" ({} n/a)", v.unknown);
  return text;
}

}  // namespace

std::string format_count(double value) {
  auto rounded = static_cast<long long>(std::llround(value));
  std::string digits = std::to_string(rounded < 0 ? -rounded : rounded);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return rounded < 0 ? "-" + out : out;
}

std::string format_decimal(double value, int places) { return fmt::format("{:.{}f}", value, places); }

std::string format_dollars(double value) {
  double magnitude = std::fabs(value);
  if (magnitude >= 1.0) return fmt::format("${:.2f}", value);
  if (magnitude == 0.0) return "$0";
  // Four significant digits in fixed notation (never "3.28e-05"), trailing zeros dropped.
  int places = std::min(12, 3 - static_cast<int>(std::floor(std::log10(magnitude))));
  std::string text = fmt::format("{:.{}f}", value, places);
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return "$" + text;
}

std::string format_share(std::optional<double> share) {
  return share ? fmt::format("{:.1f}%", *share * 100.0) : "n/a";
}

std::string format_ratio(std::optional<double> ratio) { return ratio ? fmt::format("{:.1f}x", *ratio) : "n/a"; }

std::string format_mean_count(const MeanValue& v) {
  return v.mean ? with_unknown(v, format_count(*v.mean)) : "n/a";
}

std::string format_mean_decimal(const MeanValue& v, int places) {
  return v.mean ? with_unknown(v, format_decimal(*v.mean, places)) : "n/a";
}

std::string format_mean_dollars(const MeanValue& v) {
  return v.mean ? with_unknown(v, format_dollars(*v.mean)) : "n/a";
}

std::string markup_escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // Control characters other than tab/newline are not allowed in XML 1.0.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') out += ' ';
        else out += c;
    }
  }
  return out;
}

namespace {

bool is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

}  // namespace

std::string markdown_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (is_control(static_cast<unsigned char>(c))) out += ' ';
    else if (c == '<') out += "&lt;";  // raw HTML and autolinks start with it
    else if (std::string_view("\\`*[]|").find(c) != std::string_view::npos) out += std::string{'\\', c};
    else out += c;
  }
  // What would start a block if the text began a line: a heading, a quote, a
  // list item ("- ", "+ ", "1. ", "1) ") or a setext underline.
  const std::size_t first = out.find_first_not_of(' ');
  if (first == std::string::npos) return out;
  const auto ends_marker = [&](std::size_t at) { return at >= out.size() || out[at] == ' '; };
  const char lead = out[first];
  if (lead == '#' || lead == '>' || ((lead == '-' || lead == '+') && ends_marker(first + 1)) ||
      (lead == '=' && out.find_first_not_of("= ", first) == std::string::npos)) {
    out.insert(first, 1, '\\');
  } else if (lead >= '0' && lead <= '9') {
    const std::size_t digits_end = out.find_first_not_of("0123456789", first);
    if (digits_end != std::string::npos && (out[digits_end] == '.' || out[digits_end] == ')') && ends_marker(digits_end + 1))
      out.insert(digits_end, 1, '\\');
  }
  return out;
}

std::string markdown_code(std::string_view text) {
  std::string body;
  body.reserve(text.size());
  std::size_t run = 0, longest = 0;
  for (char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
    if (is_control(static_cast<unsigned char>(c))) body += ' ';
    else if (c == '|') body += "\\|";
    else body += c;
  }
  const std::string fence(longest + 1, '`');
  // A space inside each fence only where the text starts or ends with a
  // backtick or a space (CommonMark strips one from each side).
  const bool pad = !body.empty() && (body.front() == '`' || body.back() == '`' || body.front() == ' ' || body.back() == ' ');
  return pad ? fence + " " + body + " " + fence : fence + body + fence;
}

}  // namespace okfbench::reports
