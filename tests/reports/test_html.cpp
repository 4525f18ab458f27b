#include "reports/html.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
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
      if (r.trial_key == "a-q2") r.turns[0].attribution = {{"system", 300}, {"tools", 700}, {"question", 121 + size}};
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
  std::string html = html_report(fixtures::manifest(), summarize(records, fixtures::pricing()), records, nullptr, fixtures::pricing());
  EXPECT_EQ(html.find("<script src"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_NE(html.find("vegaEmbed"), std::string::npos);
  EXPECT_NE(html.find("BSD"), std::string::npos);  // the inlined libraries' licence travels with them
  // Only the elements we wrote: error capture, libraries, trial table, one
  // chunk of details, the prompts, chart specs, chart rendering, explorer.
  // The libraries' own text never closes a script early.
  std::size_t scripts = 0;
  for (auto at = html.find("</script>"); at != std::string::npos; at = html.find("</script>", at + 1)) ++scripts;
  EXPECT_EQ(scripts, 8u);
  EXPECT_NE(html.find("id=\"okfbench-chunk-0\""), std::string::npos);
  EXPECT_EQ(html.find("id=\"okfbench-chunk-1\""), std::string::npos);
}

// An answer with "<!--" and, later in the same JSON, "<script" put the HTML
// tokenizer into a state that swallowed the rest of the page.
TEST(ReportsEmbedTextSafely, JsonInTheReportHasNoMarkupFromTheTrials) {
  std::vector<TrialRecord> records = fixtures::small_run();
  records[0].question_id = "q1<!--";
  records[0].answer = "see <!-- <script> </script>";
  records[1].error = "<script>alert(1)</script> & more";
  records[1].bundle = "<script>";
  const Summary s = summarize(records, fixtures::pricing());
  const std::string html = html_report(fixtures::manifest(), s, records, nullptr, fixtures::pricing());
  const std::string open = "<script type=\"application/json\" id=\"okfbench-trials\">";
  const std::size_t start = html.find(open);
  ASSERT_NE(start, std::string::npos);
  const std::size_t end = html.find("</script>", start);
  const std::string json_text = html.substr(start + open.size(), end - start - open.size());
  EXPECT_EQ(json_text.find_first_of("<>&"), std::string::npos);
  EXPECT_NE(json_text.find("q1\\u003c!--"), std::string::npos);
  EXPECT_FALSE(nlohmann::json::parse(json_text).is_discarded());
  const auto comments = [](const std::string& page) {
    std::size_t n = 0;
    for (auto at = page.find("<!--"); at != std::string::npos; at = page.find("<!--", at + 1)) ++n;
    return n;
  };
  const std::vector<TrialRecord> plain = fixtures::small_run();
  const std::string plain_html = html_report(fixtures::manifest(), summarize(plain, fixtures::pricing()), plain, nullptr, fixtures::pricing());
  EXPECT_EQ(comments(html), comments(plain_html));  // the trials added none
}

// Shares worked out by hand from the fixture prices (input $2/M, cached
// $0.5/M, output $8/M) in micro-dollars: output 2,000, tools 1,500, new
// search results 920, question 742.5, system 250, history 75.5, framing 12; 5,500 in all.
TEST(Html, TheShareOfSpendTableHasABarAndTheSharesPerConfiguration) {
  TrialRecord r = fixtures::base("q1", PathKind::agent);
  TurnRecord first = fixtures::turn(1000, 0, 50);
  first.attribution = {{"tools", 600}, {"system", 100}, {"question", 297}, {"framing", 3}};
  TurnRecord second = fixtures::turn(1500, 1000, 200);
  second.attribution = {{"tools", 600}, {"system", 100}, {"question", 297}, {"history:assistant", 40}, {"new:tool:search", 460}, {"framing", 3}};
  r.turns = {first, second};
  const std::vector<TrialRecord> records = {r};
  const std::string html = html_report(fixtures::manifest(), summarize(records, fixtures::pricing()), records, nullptr, fixtures::pricing());
  EXPECT_NE(html.find("<h2>Share of spend by origin</h2>"), std::string::npos);
  EXPECT_NE(html.find("<td title=\"agent surface=okf tools=search+open max_turns=12 model=sim cache=openai\">agent</td><td>1</td><td>+0</td>"),
            std::string::npos);
  EXPECT_NE(html.find("output 36.4%, tools 27.3%, new:tool:search 16.7%, question 13.5%, system 4.5%, history:assistant 1.4%, "
                      "framing 0.2%</td>"),
            std::string::npos);
  EXPECT_NE(html.find("<span class=\"origin-output\" style=\"width:36.36%\" title=\"output 36.4%\"></span>"
                      "<span class=\"origin-tools\" style=\"width:27.27%\""),
            std::string::npos);
  EXPECT_NE(html.find("<span class=\"origin-new\" style=\"width:16.73%\" title=\"new:tool:search 16.7%\">"), std::string::npos);
  const std::vector<TrialRecord> unattributed = fixtures::small_run();
  EXPECT_EQ(html_report(fixtures::manifest(), summarize(unattributed, fixtures::pricing()), unattributed, nullptr, fixtures::pricing())
                .find("Share of spend"),
            std::string::npos);  // records without attribution: no table
}

TEST(Html, EmptyChartsAreExplainedNotDrawn) {
  std::vector<TrialRecord> records = {fixtures::context_trial("q1", 100, 1, 1)};
  records[0].measures.clear();
  Summary s = summarize(records, fixtures::pricing());
  auto ids = html_chart_ids(s);
  EXPECT_EQ(ids, (std::vector<std::string>{"size", "front"}));
  std::string html = html_report(fixtures::manifest(), s, records, nullptr, fixtures::pricing());
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
  test::write_file(dir / "report.html", html_report(fixtures::manifest(), s, records, nullptr, fixtures::pricing()));

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

// Drives the explorer with playwright-core in Chromium (tests/reports/html_explorer.js):
// open, filter by path and bundle, search, open a trial's conversation,
// expand a tool call, list the failed trials, sort; no console error or warning.
TEST(Html, ExplorerFiltersAndOpensATrialInChromium) {
  if (!std::filesystem::exists(kChromium)) GTEST_SKIP() << kChromium << " is not installed (scripts/setup.sh installs it)";
  ASSERT_TRUE(std::filesystem::exists(test::web_node_modules() / "playwright-core"))
      << "playwright-core is missing from " << test::web_node_modules() << "; the build installs it with npm ci (reports/web)";
  auto dir = test::fresh_dir("html_explorer");
  auto records = multi_size_run();
  Summary s = summarize(records, fixtures::pricing());
  const TranscriptSet transcripts = fixtures::agent_transcripts({"q2"});  // the agent's q1 keeps none
  test::write_file(dir / "report.html", html_report(fixtures::manifest(), s, records, &transcripts, fixtures::pricing()));
  auto driver = test::source_dir() / "tests" / "reports" / "html_explorer.js";
  auto run = test::run_command("NODE_PATH=" + test::web_node_modules().string() + " node " + driver.string() + " check " +
                               (dir / "report.html").string() + " " + dir.string());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto seen = nlohmann::json::parse(run.out);
  std::cout << "screenshots: " << (dir / "explorer-open.png").string() << " " << (dir / "explorer-trial.png").string() << "\n";

  EXPECT_NE(seen["answer"].get<std::string>().find("On 1,000 concepts (gen-1000), agent reads "), std::string::npos) << seen["answer"];
  // The first screen answers the question: verdict lines, then the chart, then the explorer; nothing sideways at 1,280 px.
  std::cout << "first screen: " << (dir / "first-screen.png").string() << "\n";
  const auto& first = seen["first_screen"];
  EXPECT_LE(first["scroll_width"].get<int>(), 1280) << first;
  EXPECT_NE(first["verdict"].get<std::string>().find("gen-1000: agent against one-shot (cheapest context configuration by input tokens)"),
            std::string::npos)
      << first["verdict"];
  EXPECT_TRUE(first["verdict_before_chart"].get<bool>()) << first;
  EXPECT_TRUE(first["chart_before_explorer"].get<bool>()) << first;
  EXPECT_LT(first["verdict_top"].get<double>(), first["explorer_top"].get<double>()) << first;
  EXPECT_EQ(first["chart_id"], "chart-answers");
  EXPECT_GE(first["marker_fills"].get<int>(), 2) << first;   // one colour per configuration
  EXPECT_GE(first["marker_shapes"].get<int>(), 2) << first;  // and one shape
  EXPECT_NE(std::find(first["legend"].begin(), first["legend"].end(), "one-shot"), first["legend"].end()) << first;
  EXPECT_NE(std::find(first["legend"].begin(), first["legend"].end(), "agent"), first["legend"].end()) << first;
  EXPECT_EQ(seen["headline_path_title"], "context budget=2000 k=5 hops=1 model=sim cache=openai");
  EXPECT_EQ(seen["opened"], "15 of 15 trials");
  EXPECT_EQ(seen["agent_only"], "9 of 15 trials");
  EXPECT_EQ(seen["agent_gen100"], "3 of 15 trials");
  EXPECT_EQ(seen["searched"], "1 of 15 trials");
  ASSERT_EQ(seen["searched_rows"].size(), 1u);
  EXPECT_EQ(seen["searched_rows"][0][0], "gen-100");
  EXPECT_EQ(seen["searched_rows"][0][1], "q2");
  EXPECT_EQ(seen["searched_rows"][0][5], "8,361");  // 7,961 and 100 more per turn on the 100-concept bundle
  EXPECT_EQ(seen["trial_key"], "a-q2");
  EXPECT_EQ(seen["turn_headings"], (nlohmann::json{"Turn 1", "Turn 2", "Turn 3", "Turn 4"}));
  // The conversation from the transcript: the prompt, every message, each call's whole result, the reply.
  EXPECT_EQ(seen["system_prompt"], "Answer from the OKF bundle; cite concept ids.");
  EXPECT_EQ(seen["tools_summary"], "Tools (2)");
  EXPECT_EQ(seen["messages"], (nlohmann::json{nlohmann::json{"user", "How do I speed up a slow query? (q2)"}, nlohmann::json::array(),
                                              nlohmann::json::array(), nlohmann::json{"assistant", "See the runbook."}}));
  ASSERT_EQ(seen["results"].size(), 3u);
  EXPECT_EQ(seen["results"][1], "# Slow queries\n\nAdd an index on the filtered column.\nRUNBOOK-END");
  EXPECT_EQ(seen["attribution"], "input by origin: system 300, tools 700, question 221");
  EXPECT_EQ(seen["numbers"], "input 1,221 (new 1,121, re-sent 100, cached n/a) · output 50 · call 25.0 ms");
  EXPECT_EQ(seen["missing_kept"], 0);
  // The agent's q1 kept no transcript: the view says so and why, and still shows its turns.
  EXPECT_EQ(seen["other_key"], "a-q1");
  EXPECT_NE(seen["other_missing"].get<std::string>().find("was not kept: the run kept transcripts, but not this one"),
            std::string::npos)
      << seen["other_missing"];
  EXPECT_EQ(seen["other_turns"], 4);
  EXPECT_EQ(seen["other_result"], "The result text is not in the transcript; only its size was recorded.");
  // Turn 3 of the trial without cache counts: new and re-sent, nothing cached.
  EXPECT_EQ(seen["bar_parts"], (nlohmann::json{"part-new", "part-resent"}));
  EXPECT_TRUE(seen["tool_call_open"].get<bool>());
  EXPECT_NE(seen["tool_call"].get<std::string>().find("search({\"query\":\"slow query\"}) → 900 bytes"), std::string::npos)
      << seen["tool_call"];
  EXPECT_EQ(seen["answer_text"], "See the runbook.");
  EXPECT_EQ(seen["grades"], (nlohmann::json{"facts yes", "answered yes", "judge yes"}));
  ASSERT_EQ(seen["failed_rows"].size(), 3u);  // the failed agent trial of each bundle
  EXPECT_EQ(seen["failed_rows"][0][9], "model timeout after 3 retries");
  EXPECT_EQ(seen["sorted_descending"][0][5], "11,961");  // the agent on 1,000 concepts
  EXPECT_EQ(seen["failed_rows"][0][5], "n/a");           // no model call, no input count
  EXPECT_EQ(seen["errors_shown"], "");
  EXPECT_EQ(seen["warnings_shown"], "");
  EXPECT_EQ(seen["console_problems"], nlohmann::json::array());
  for (const char* png : {"explorer-open.png", "explorer-trial.png"}) {
    ASSERT_TRUE(std::filesystem::exists(dir / png)) << png;
    EXPECT_EQ(test::read_file(dir / png).substr(1, 3), "PNG");
  }
}

}  // namespace
}  // namespace okfbench::reports
