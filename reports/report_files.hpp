#pragma once
// Writing a run's report files: what `okfbench report` does and what the
// runner calls when a run finishes. Each file is written to a temporary name
// and renamed into place, so a reader never sees half a report.
#include <filesystem>
#include <span>
#include <string_view>
#include <vector>

#include "reports/pricing.hpp"
#include "reports/record.hpp"
#include "reports/transcript.hpp"

namespace okfbench::reports {

enum class ReportFormat { markdown, html, json, csv, junit };

// Every format, in the order `okfbench report` writes them.
std::span<const ReportFormat> all_report_formats();

// Parses a comma-separated list such as "md,html,json,csv,junit" (also
// "markdown"). Throws UsageError naming an unknown entry and the known ones.
std::vector<ReportFormat> parse_report_formats(std::string_view list);

// Writes the files of each format into out_dir (created when missing):
// markdown report.md, html report.html, json report.json, csv summary.csv and
// trials.csv, junit report.junit.xml. `transcripts` (null when the run kept
// none) gives the HTML report each trial's conversation. Returns the paths
// written. Throws InputError when a file cannot be written.
std::vector<std::filesystem::path> write_report_files(const RunManifest& manifest,
                                                      const std::vector<TrialRecord>& records,
                                                      const TranscriptSet* transcripts,
                                                      const PricingTable& pricing,
                                                      std::span<const ReportFormat> formats,
                                                      const std::filesystem::path& out_dir);

// Writes `text` to `path` atomically (PATH.tmp-PID-N beside it, then rename;
// retrieval/atomic_file.hpp). On any failure (no such folder, a full disk, a
// directory in the way) the temporary file is removed and InputError names
// PATH and the reason. A target that is not a regular file (/dev/full) is
// written in place, every write checked.
void write_text_atomically(const std::filesystem::path& path, std::string_view text);

}  // namespace okfbench::reports
