#include "reports/html.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <regex>

#include "tests/reports/fixtures.hpp"

namespace okfbench::reports {
namespace {

const char* kChromium = "/usr/bin/chromium";

// Bundles of three sizes, both paths, ranking measures: every chart has data.
std::vector<TrialRecord> multi_size_run() {
  std::vector<TrialRecord> records;
  for (std::int64_t size : {10, 100, 1000}) {
    for (auto r : fixtures::small_run()) {
      r.bundle = "gen-" + std::to_string(size);
      r.concept_count = size;
      for (auto& t : r.turns) {
        if (t.input_tokens) *t.input_tokens += size;
      }
      records.push_back(r);
    }
  }
  return records;
}

std::string chromium_flags(const std::filesystem::path& profile) {
  return std::string(kChromium) +
         " --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update"
         " --disable-sync --no-first-run --disable-dev-shm-usage --user-data-dir=" +
         profile.string() + " --virtual-time-budget=30000";
}

std::string element_text(const std::string& dom, const std::string& id) {
  std::smatch m;
  std::regex pattern("<pre id=\"" + id + "\">([^<]*)</pre>");
  return std::regex_search(dom, m, pattern) ? m[1].str() : std::string("<element missing>");
}

TEST(Html, SelfContainedWithoutNetworkReferences) {
  auto records = fixtures::small_run();
  std::string html = html_report(fixtures::manifest(), summarize(records, fixtures::pricing()), records);
  EXPECT_EQ(html.find("<script src"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_NE(html.find("vegaEmbed"), std::string::npos);
  EXPECT_NE(html.find("BSD"), std::string::npos);  // the inlined libraries' licence travels with them
  // Only the opening tags we wrote; the libraries' own text never closes a script early.
  std::size_t scripts = 0;
  for (auto at = html.find("</script>"); at != std::string::npos; at = html.find("</script>", at + 1)) ++scripts;
  EXPECT_EQ(scripts, 4u);
}

TEST(Html, EmptyChartsAreExplainedNotDrawn) {
  std::vector<TrialRecord> records = {fixtures::context_trial("q1", 100, 1, 1)};
  records[0].measures.clear();
  Summary s = summarize(records, fixtures::pricing());
  auto ids = html_chart_ids(s);
  EXPECT_EQ(ids, (std::vector<std::string>{"size", "front"}));
  std::string html = html_report(fixtures::manifest(), s, records);
  EXPECT_NE(html.find("No tool calls in this run."), std::string::npos);
  EXPECT_EQ(html.find("id=\"chart-tools\""), std::string::npos);
}

TEST(Html, EveryChartRendersInHeadlessChromium) {
  if (!std::filesystem::exists(kChromium)) GTEST_SKIP() << kChromium << " is not installed (scripts/setup.sh installs it)";
  auto dir = test::fresh_dir("html_report");
  auto records = multi_size_run();
  Summary s = summarize(records, fixtures::pricing());
  auto ids = html_chart_ids(s);
  ASSERT_EQ(ids, (std::vector<std::string>{"turns", "size", "front", "answers", "tools", "measures"}));
  test::write_file(dir / "report.html", html_report(fixtures::manifest(), s, records));

  auto dom = test::run_command(chromium_flags(dir / "profile-dom") + " --dump-dom file://" + (dir / "report.html").string());
  ASSERT_EQ(dom.exit_code, 0) << dom.err;
  test::write_file(dir / "dom.html", dom.out);
  EXPECT_NE(dom.out.find("data-charts-rendered=\"6\""), std::string::npos) << "see " << (dir / "dom.html");
  EXPECT_EQ(element_text(dom.out, "okfbench-errors"), "");
  EXPECT_EQ(element_text(dom.out, "okfbench-warnings"), "");
  for (const auto& id : ids) {
    auto at = dom.out.find("id=\"chart-" + id + "\"");
    ASSERT_NE(at, std::string::npos) << id;
    auto next = dom.out.find("<h2>", at);
    std::string chart = dom.out.substr(at, next == std::string::npos ? std::string::npos : next - at);
    EXPECT_NE(chart.find("<svg"), std::string::npos) << "chart " << id << " has no SVG";
    EXPECT_NE(chart.find("<path"), std::string::npos) << "chart " << id << " drew no marks";
  }

  auto png = dir / "report.png";
  auto shot = test::run_command(chromium_flags(dir / "profile-shot") + " --hide-scrollbars --window-size=1280,4400 --screenshot=" +
                                png.string() + " file://" + (dir / "report.html").string());
  ASSERT_EQ(shot.exit_code, 0) << shot.err;
  ASSERT_TRUE(std::filesystem::exists(png));
  EXPECT_GT(std::filesystem::file_size(png), 20'000u);
  EXPECT_EQ(test::read_file(png).substr(1, 3), "PNG");
  RecordProperty("screenshot", png.string());
  std::cout << "screenshot: " << png.string() << "\n";
}

}  // namespace
}  // namespace okfbench::reports
