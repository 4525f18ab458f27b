#include "reports/report_files.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/error.hpp"
#include "core/files.hpp"
#include "reports/html.hpp"
#include "reports/summary.hpp"
#include "reports/verdict.hpp"
#include "reports/writers.hpp"

namespace okfbench::reports {

namespace {

constexpr std::array kAllFormats = {ReportFormat::markdown, ReportFormat::html, ReportFormat::json,
                                    ReportFormat::csv, ReportFormat::junit};

void write_one(ReportFormat format, const RunManifest& manifest, const std::vector<TrialRecord>& records,
               const TranscriptSet* transcripts, const Summary& summary, const PricingTable& pricing, const std::filesystem::path& dir,
               std::vector<std::filesystem::path>& written) {
  auto put = [&](const char* name, const std::string& text) {
    write_atomically(dir / name, text);
    written.push_back(dir / name);
  };
  switch (format) {
    case ReportFormat::markdown: put("report.md", markdown_report(manifest, summary, records, pricing)); break;
    case ReportFormat::html: put("report.html", html_report(manifest, summary, records, transcripts, pricing)); break;
    case ReportFormat::json: put("report.json", json_report(manifest, summary, run_verdicts(records, summary, pricing))); break;
    case ReportFormat::csv:
      put("summary.csv", summary_csv(summary));
      put("trials.csv", trials_csv(records, pricing));
      break;
    case ReportFormat::junit: put("report.junit.xml", junit_for_run(summary, records)); break;
  }
}

}  // namespace

std::span<const ReportFormat> all_report_formats() { return kAllFormats; }

std::vector<ReportFormat> parse_report_formats(std::string_view list) {
  std::vector<ReportFormat> formats;
  while (!list.empty()) {
    auto comma = list.find(',');
    std::string_view name = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
    if (name.empty()) continue;
    if (name == "md" || name == "markdown") formats.push_back(ReportFormat::markdown);
    else if (name == "html") formats.push_back(ReportFormat::html);
    else if (name == "json") formats.push_back(ReportFormat::json);
    else if (name == "csv") formats.push_back(ReportFormat::csv);
    else if (name == "junit") formats.push_back(ReportFormat::junit);
    else throw UsageError(fmt::format("--format: unknown format '{}'; use a comma-separated list of md, html, json, csv, junit", name));
  }
  if (formats.empty()) throw UsageError("--format: no format given; use a comma-separated list of md, html, json, csv, junit");
  return formats;
}

std::vector<std::filesystem::path> write_report_files(const RunManifest& manifest,
                                                      const std::vector<TrialRecord>& records,
                                                      const TranscriptSet* transcripts,
                                                      const PricingTable& pricing,
                                                      std::span<const ReportFormat> formats,
                                                      const std::filesystem::path& out_dir) {
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) throw InputError(fmt::format("{}: cannot create the report folder: {}", out_dir.string(), ec.message()));
  Summary summary = summarize(records, pricing, manifest.baseline);
  std::vector<std::filesystem::path> written;
  for (ReportFormat f : formats) write_one(f, manifest, records, transcripts, summary, pricing, out_dir, written);
  return written;
}

}  // namespace okfbench::reports
