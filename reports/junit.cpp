// JUnit XML, the format CI systems show as test results.
#include <fmt/format.h>

#include <map>

#include "reports/format.hpp"
#include "reports/writers.hpp"

namespace okfbench::reports {

namespace {

struct Case {
  std::string suite;
  std::string name;
  std::string failure;  // empty when the case passed
  std::string output;
};

std::string render(const std::string& name, const std::vector<Case>& cases) {
  std::map<std::string, std::vector<const Case*>> suites;
  int failures = 0;
  for (const auto& c : cases) {
    suites[c.suite].push_back(&c);
    failures += c.failure.empty() ? 0 : 1;
  }
  std::string out = fmt::format("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\">\n",
                                markup_escape(name), cases.size(), failures);
  for (const auto& [suite, members] : suites) {
    int suite_failures = 0;
    for (const Case* c : members) suite_failures += c->failure.empty() ? 0 : 1;
    out += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\">\n", markup_escape(suite), members.size(),
                       suite_failures);
    for (const Case* c : members) {
      out += fmt::format("    <testcase classname=\"{}\" name=\"{}\">\n", markup_escape(suite), markup_escape(c->name));
      if (!c->failure.empty()) out += fmt::format("      <failure message=\"{}\"/>\n", markup_escape(c->failure));
      if (!c->output.empty()) out += fmt::format("      <system-out>{}</system-out>\n", markup_escape(c->output));
      out += "    </testcase>\n";
    }
    out += "  </testsuite>\n";
  }
  return out + "</testsuites>\n";
}

}  // namespace

std::string junit_for_run(const Summary& summary, const std::vector<TrialRecord>& records) {
  std::vector<Case> cases;
  for (const auto& row : summary.rows) {
    Case c{row.bundle + " / " + row.question_set, row.label, "", ""};
    for (const auto& r : records) {
      bool same = r.bundle == row.bundle && r.question_set == row.question_set && r.config.label() == row.label;
      if (same && !r.error.empty()) c.output += r.question_id + ": " + r.error + "\n";
    }
    if (row.errors > 0) c.failure = fmt::format("{} of {} trials failed", row.errors, row.trials);
    cases.push_back(std::move(c));
  }
  return render("okfbench run", cases);
}

std::string junit_for_comparison(const Comparison& comparison) {
  std::vector<Case> cases;
  for (const auto& check : comparison.checks) {
    Case c{check.bundle + " / " + check.question_set + " / " + check.label, check.threshold.text, "", check.message};
    if (check.crossed) c.failure = check.message;
    cases.push_back(std::move(c));
  }
  return render("okfbench compare", cases);
}

}  // namespace okfbench::reports
