#pragma once
// Whitespace-separated columns, as TREC run and qrels files and BEIR tsv rows
// write them: runs of spaces and tabs separate fields and a trailing '\r'
// (a file saved with CRLF) is ignored. Header-only so that the readers in
// datasets/ and reports/ share it without a link dependency.
#include <string_view>
#include <vector>

namespace okfbench {

inline std::vector<std::string_view> split_fields(std::string_view line) {
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  std::vector<std::string_view> fields;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && blank(line[i])) ++i;
    std::size_t start = i;
    while (i < line.size() && !blank(line[i])) ++i;
    if (i > start) fields.push_back(line.substr(start, i - start));
  }
  return fields;
}

}  // namespace okfbench
