#pragma once
// Hand-built trial records and golden-file helpers shared by the reports tests.
// Golden files live in tests/golden/; scripts/update-golden.sh regenerates
// them by running the tests with OKFBENCH_UPDATE_GOLDEN=1.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "reports/pricing.hpp"
#include "reports/record.hpp"
#include "reports/transcript.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::reports::fixtures {

inline const PricingTable& pricing() {
  static const PricingTable table = [] {
    auto dir = test::fresh_dir("fixture_pricing");
    test::write_file(dir / "p.yaml", R"(models:
  - model: m
    input: 2.0
    cached_input: 0.5
    cache_write: 2.0
    output: 8.0
    source: test
    as_of: 2026-01-01
aliases:
  sim: m
)");
    return PricingTable::load(dir / "p.yaml");
  }();
  return table;
}

inline TurnRecord turn(std::optional<std::int64_t> input, std::optional<std::int64_t> cached,
                       std::optional<std::int64_t> output, std::optional<std::int64_t> fresh = std::nullopt) {
  TurnRecord t;
  t.input_tokens = input;
  t.cached_tokens = cached;
  t.cache_write_tokens = cached ? std::optional<std::int64_t>(0) : std::nullopt;
  t.output_tokens = output;
  t.new_input_tokens = fresh;
  return t;
}

inline TrialRecord base(const std::string& question, PathKind kind) {
  TrialRecord r;
  r.bundle = "demo";
  r.concept_count = 12;
  r.question_set = "demo-questions";
  r.question_id = question;
  r.trial_key = std::string(kind == PathKind::context ? "c-" : "a-") + question;
  r.config.kind = kind;
  r.config.model = "sim";
  r.config.cache_model = "openai";
  if (kind == PathKind::context) {
    r.config.budget_tokens = 2000;
    r.config.k = 5;
    r.config.hops = 1;
  } else {
    r.config.surface = "okf";
    r.config.tools = {"search", "open"};
    r.config.max_turns = 12;
  }
  return r;
}

inline TrialRecord context_trial(const std::string& q, std::int64_t input, double recall, double ndcg) {
  TrialRecord r = base(q, PathKind::context);
  r.turns = {turn(input, 0, 100, input)};
  r.packed = {{"glossary/graph", 700, "seed"}, {"runbooks/slow-queries", 900, "via LINKS_TO from glossary/graph"}};
  r.context_tokens = 1600;
  r.retrieved_ids = {"glossary/graph", "runbooks/slow-queries"};
  r.evidence_recall = recall;
  r.measures = {{"ndcg_cut_10", ndcg}};
  return r;
}

inline TrialRecord agent_trial(const std::string& q, bool cache_reported, double recall) {
  TrialRecord r = base(q, PathKind::agent);
  auto cached = [&](std::int64_t v) { return cache_reported ? std::optional<std::int64_t>(v) : std::nullopt; };
  r.turns = {turn(1121, cached(0), 50, 1121), turn(1582, cached(0), 50, 461), turn(2187, cached(1024), 50),
             turn(3071, cached(1536), 50)};
  r.turns[0].tool_calls = {{"search", R"({"query":"slow query"})", 900, "", false, std::nullopt}};
  r.turns[1].tool_calls = {{"open", R"({"concept_id":"runbooks/slow-queries"})", 3000, "", false, std::nullopt}};
  r.turns[2].tool_calls = {{"open", R"({"concept_id":"glossary/graph"})", 1200, "", false, std::nullopt}};
  r.opened_ids = {"runbooks/slow-queries", "glossary/graph"};
  r.answer = "See the runbook.";
  r.citations = {"runbooks/slow-queries"};
  r.evidence_recall = recall;
  return r;
}

inline Grade graded(const std::string& grader, double score, bool correct, const std::string& detail = "") {
  return Grade{grader, GradeStatus::graded, score, correct, detail, ""};
}

// Grades as a run with facts, answered and the sim judge leaves them.
inline TrialRecord with_grades(TrialRecord r, double facts, bool judge_correct) {
  r.grades = {graded("facts", facts, facts >= 1.0), graded("answered", 1.0, true)};
  r.grades.push_back(graded("judge", judge_correct ? 1.0 : 0.5, judge_correct));
  r.judge_usage = JudgeUsage{"sim", 1, 0, 500, 0, 0, 20};
  return r;
}

// Two context trials, two agent trials (the seed's per-turn inputs; the
// second without cache counts) and one failed agent trial. Facts: context q1
// correct, q2 half; both agent trials correct; the judge agrees except on
// context q2 (it says correct where facts found half).
inline std::vector<TrialRecord> small_run() {
  TrialRecord failed = base("q3", PathKind::agent);
  failed.error = "model timeout after 3 retries";
  return {with_grades(context_trial("q1", 2000, 1.0, 1.0), 1.0, true),
          with_grades(context_trial("q2", 2200, 0.5, 0.5), 0.5, true),
          with_grades(agent_trial("q1", true, 1.0), 1.0, true), with_grades(agent_trial("q2", false, 0.5), 1.0, true),
          failed};
}

inline RunManifest manifest() {
  RunManifest m;
  m.date = "2026-11-29T12:00:00Z";
  m.host = "test-host";
  m.git_sha = "0123456789abcdef";
  m.build_type = "Release";
  m.okfbench_version = "0.1.0";
  m.spec_path = "datasets/experiments/default.yaml";
  m.spec_hash = "feedface";
  m.models = {{"sim", ""}};
  m.cache_models = {"openai"};
  m.seeds = {42};
  return m;
}

inline void expect_golden(const std::string& name, const std::string& actual) {
  auto path = test::source_dir() / "tests" / "golden" / name;
  const char* update = std::getenv("OKFBENCH_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    test::write_file(path, actual);
    return;
  }
  ASSERT_TRUE(std::filesystem::exists(path)) << path << " is missing; run scripts/update-golden.sh";
  EXPECT_EQ(actual, test::read_file(path)) << "golden " << name
                                           << " differs; if the change is intended run scripts/update-golden.sh";
}

// The conversation of agent_trial(q) as a run keeps it: one prompt (hash
// "prompt-okf"), the question, a search, two opens whose results are the
// concepts' text, and the answer; call ids "<q>-1" ... "<q>-3".
inline Transcript agent_transcript(const std::string& q) {
  auto call = [&](int n, const std::string& name, const std::string& args) {
    return TranscriptToolCall{q + "-" + std::to_string(n), name, args};
  };
  auto result = [&](int n, const std::string& name, const std::string& text) {
    return TranscriptMessage{"tool", text, {}, q + "-" + std::to_string(n), name};
  };
  auto turn = [](std::vector<TranscriptMessage> added, TranscriptMessage reply) {
    TranscriptTurn t;
    t.prompt_hash = "prompt-okf";
    t.added = std::move(added);
    t.reply = std::move(reply);
    t.stop = t.reply->tool_calls.empty() ? "end_turn" : "tool_calls";
    t.ms = 12.5 * static_cast<double>(t.added.size() + 1);  // 25 ms for a turn that added one message
    return t;
  };
  Transcript t;
  t.trial_key = "a-" + q;
  t.turns = {
      turn({{"user", "How do I speed up a slow query? (" + q + ")", {}, "", ""}},
           {"assistant", "", {call(1, "search", R"({"query":"slow query"})")}, "", ""}),
      turn({result(1, "search", R"({"results":[{"id":"runbooks/slow-queries","score":7.5}]})")},
           {"assistant", "", {call(2, "open", R"({"concept_id":"runbooks/slow-queries"})")}, "", ""}),
      turn({result(2, "open", "# Slow queries\n\nAdd an index on the filtered column.\nRUNBOOK-END")},
           {"assistant", "", {call(3, "open", R"({"concept_id":"glossary/graph"})")}, "", ""}),
      turn({result(3, "open", "# Graph\n\nNodes and edges.")}, {"assistant", "See the runbook.", {}, "", ""}),
  };
  t.answer = "See the runbook.";
  return t;
}

// A transcripts file's content holding agent_transcript(q) for each of `questions`.
inline TranscriptSet agent_transcripts(const std::vector<std::string>& questions) {
  TranscriptSet set;
  set.prompts["prompt-okf"] = {"prompt-okf", "Answer from the OKF bundle; cite concept ids.",
                               {{"search", "Search the bundle.", R"({"type":"object","properties":{"query":{"type":"string"}}})"},
                                {"open", "Open a concept.", R"({"type":"object","properties":{"concept_id":{"type":"string"}}})"}}};
  for (const auto& q : questions) set.trials.push_back(agent_transcript(q));
  set.prompt_lines = 1;
  set.trial_lines = set.trials.size();
  return set;
}

// A run folder (manifest.json + results.jsonl) holding `records`, as the runner writes it.
inline std::filesystem::path stored_run(const std::string& name, const std::vector<TrialRecord>& records) {
  auto dir = test::fresh_dir(name);
  test::write_file(dir / "manifest.json", manifest_to_json_text(manifest()));
  std::string lines;
  for (const auto& r : records) lines += to_jsonl_line(r) + "\n";
  test::write_file(dir / "results.jsonl", lines);
  return dir;
}

}  // namespace okfbench::reports::fixtures
