#include "reports/trec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <ostream>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "core/error.hpp"
#include "core/fields.hpp"
#include "core/files.hpp"

namespace okfbench::reports {
namespace {

template <typename Number>
bool parse_number(std::string_view text, Number& value) {
  if (text.size() > 1 && text.front() == '+') text.remove_prefix(1);  // from_chars rejects '+'; C's atof does not
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc{} && end == text.data() + text.size();
}

// Calls `handle(fields, line_number)` for each non-blank line of `text`.
template <typename Handler>
void for_each_line(std::string_view text, Handler handle) {
  std::size_t line_number = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    ++line_number;
    auto fields = split_fields(text.substr(pos, end - pos));
    if (!fields.empty()) handle(fields, line_number);
    pos = end + 1;
  }
}

std::string read_whole_file(const std::filesystem::path& path, std::string_view what) {
  return read_file(path, fmt::format("cannot open {} file '{}': check the path and permissions", what, path.string()));
}

}  // namespace

void Qrels::add(const std::string& qid, const std::string& docno, int gain, std::string_view where) {
  auto [it, inserted] = queries[qid].emplace(docno, gain);
  if (!inserted) {
    throw InputError(fmt::format("{}: document '{}' is judged twice for query '{}'; keep one judgment per document",
                                 where, docno, qid));
  }
}

void Run::add(const std::string& qid, const std::string& docno, double score) {
  auto& entries = queries[qid];
  entries.push_back(RunEntry{docno, score, static_cast<long>(entries.size()) + 1});
}

Qrels parse_qrels(std::string_view text, std::string_view source) {
  Qrels qrels;
  for_each_line(text, [&](const std::vector<std::string_view>& fields, std::size_t line) {
    if (fields.size() != 4) {
      throw InputError(fmt::format("{}:{}: expected 4 fields 'qid iter docno gain', found {}", source, line,
                                   fields.size()));
    }
    int gain = 0;
    if (!parse_number(fields[3], gain)) {
      throw InputError(fmt::format("{}:{}: field 4 (gain) '{}' is not an integer; relevance must be a whole number",
                                   source, line, fields[3]));
    }
    qrels.add(std::string(fields[0]), std::string(fields[2]), gain, fmt::format("{}:{}", source, line));
  });
  return qrels;
}

Run parse_run(std::string_view text, std::string_view source) {
  Run run;
  // qid -> docno -> line where first retrieved, to name both lines on a duplicate.
  std::unordered_map<std::string, std::unordered_map<std::string, std::size_t>> seen;
  bool first = true;
  for_each_line(text, [&](const std::vector<std::string_view>& fields, std::size_t line) {
    if (fields.size() != 6) {
      throw InputError(fmt::format("{}:{}: expected 6 fields 'qid Q0 docno rank score tag', found {}", source, line,
                                   fields.size()));
    }
    RunEntry entry{std::string(fields[2]), 0.0, 0};
    if (!parse_number(fields[3], entry.rank)) {
      throw InputError(fmt::format("{}:{}: field 4 (rank) '{}' is not an integer", source, line, fields[3]));
    }
    if (!parse_number(fields[4], entry.score) || !std::isfinite(entry.score)) {
      throw InputError(fmt::format("{}:{}: field 5 (score) '{}' is not a finite number", source, line, fields[4]));
    }
    std::string qid(fields[0]);
    auto [it, inserted] = seen[qid].emplace(entry.docno, line);
    if (!inserted) {
      throw InputError(fmt::format("{}:{}: document '{}' is retrieved twice for query '{}' (first on line {}); "
                                   "a run must list each document once per query",
                                   source, line, entry.docno, qid, it->second));
    }
    if (first) run.tag = std::string(fields[5]);
    first = false;
    run.queries[qid].push_back(std::move(entry));
  });
  return run;
}

Qrels read_qrels(const std::filesystem::path& path) {
  return parse_qrels(read_whole_file(path, "qrels"), path.string());
}

Run read_run(const std::filesystem::path& path) {
  return parse_run(read_whole_file(path, "run"), path.string());
}

std::vector<RunEntry> ranked(const std::vector<RunEntry>& entries) {
  std::vector<RunEntry> order = entries;
  std::sort(order.begin(), order.end(), [](const RunEntry& a, const RunEntry& b) {
    if (a.score != b.score) return a.score > b.score;
    return a.docno > b.docno;
  });
  return order;
}

void write_run(std::ostream& out, const Run& run) {
  const std::string tag = run.tag.empty() ? "okfbench" : run.tag;
  for (const auto& [qid, entries] : run.queries) {
    std::unordered_set<std::string_view> seen;
    long rank = 0;
    for (const RunEntry& entry : ranked(entries)) {
      if (!seen.insert(entry.docno).second) {
        throw InputError(fmt::format("run '{}': document '{}' is retrieved twice for query '{}'", tag, entry.docno,
                                     qid));
      }
      out << fmt::format("{} Q0 {} {} {:.17g} {}\n", qid, entry.docno, ++rank, entry.score, tag);
    }
  }
}

void write_run_file(const std::filesystem::path& path, const Run& run) {
  std::ostringstream text;
  write_run(text, run);
  write_atomically(path, text.str());
}

}  // namespace okfbench::reports
