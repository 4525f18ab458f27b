#include "reports/record.hpp"

#include <sys/stat.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::reports {
namespace {

TrialRecord agent_record() {
  TrialRecord r;
  r.trial_key = "k1";
  r.bundle = "demo";
  r.concept_count = 12;
  r.question_set = "demo-questions";
  r.question_id = "q1";
  r.config.kind = PathKind::agent;
  r.config.surface = "okf";
  r.config.tools = {"search", "open"};
  r.config.max_turns = 12;
  r.config.model = "sim";
  r.config.cache_model = "openai";
  r.config.repeat = 1;
  TurnRecord t1;
  t1.input_tokens = 1121;
  t1.cached_tokens = 0;
  t1.output_tokens = 40;
  t1.new_input_tokens = 1121;
  t1.tool_calls.push_back({"search", R"({"query":"slow query"})", 512, "", false,
                          KnowledgeAccess{"search", "demo", true, "slow query", "", 3, std::nullopt}});
  TurnRecord t2;
  t2.input_tokens = 1582;  // cached/output unknown: must stay unknown
  r.turns = {t1, t2};
  r.retrieved_ids = {"runbooks/slow-queries"};
  r.opened_ids = {"runbooks/slow-queries"};
  r.answer = "Use the runbook.";
  r.citations = {"runbooks/slow-queries"};
  r.evidence_recall = 0.5;
  r.measures = {{"ndcg_cut_10", 0.75}};
  r.timings.total_ms = 12.5;
  return r;
}

TEST(Record, RoundTripsThroughJsonLine) {
  TrialRecord r = agent_record();
  std::string line = to_jsonl_line(r);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  TrialRecord back = trial_from_json_text(line, "x");
  EXPECT_EQ(back, r);
}

TEST(Record, UnknownCountsStayUnknownNotZero) {
  TrialRecord r = agent_record();
  nlohmann::json j = nlohmann::json::parse(to_jsonl_line(r));
  EXPECT_TRUE(j["turns"][1]["cached_tokens"].is_null());
  EXPECT_EQ(j["turns"][0]["cached_tokens"], 0);
  TrialRecord back = trial_from_json_text(j.dump(), "x");
  EXPECT_FALSE(back.turns[1].cached_tokens.has_value());
  ASSERT_TRUE(back.turns[0].cached_tokens.has_value());
  EXPECT_EQ(*back.turns[0].cached_tokens, 0);
}

TEST(Record, LabelLeavesOutRepeatIndex) {
  PathConfig a = agent_record().config;
  PathConfig b = a;
  b.repeat = 2;
  EXPECT_EQ(a.label(), b.label());
  EXPECT_EQ(a.label(), "agent surface=okf tools=search+open max_turns=12 model=sim cache=openai");
  PathConfig c;
  c.budget_tokens = 2000;
  c.k = 5;
  c.hops = 1;
  EXPECT_EQ(c.label(), "context budget=2000 k=5 hops=1");
}

TEST(Record, ErrorsNameLocationAndField) {
  nlohmann::json j = nlohmann::json::parse(to_jsonl_line(agent_record()));
  j["turns"][0]["input_tokens"] = "many";
  try {
    trial_from_json_text(j.dump(), "results.jsonl:7");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("results.jsonl:7"), std::string::npos) << msg;
    EXPECT_NE(msg.find("input_tokens"), std::string::npos) << msg;
    EXPECT_NE(msg.find("turns"), std::string::npos) << msg;
  }
  j = nlohmann::json::parse(to_jsonl_line(agent_record()));
  j.erase("question_id");
  EXPECT_THROW(trial_from_json_text(j.dump(), "x"), InputError);
  EXPECT_THROW(trial_from_json_text("{not json", "x"), InputError);
  j = nlohmann::json::parse(to_jsonl_line(agent_record()));
  j["schema_version"] = kSchemaVersion + 1;
  EXPECT_THROW(trial_from_json_text(j.dump(), "x"), InputError);
  j["schema_version"] = 1;
  j["config"]["kind"] = "oracle";
  EXPECT_THROW(trial_from_json_text(j.dump(), "x"), InputError);
}

TEST(ResourceBounds, EveryFractionAndMeasureOfARecordIsRangeChecked) {
  const nlohmann::json good = nlohmann::json::parse(to_jsonl_line(agent_record()));
  const auto refused = [&](const char* field, nlohmann::json value, std::string_view words) {
    nlohmann::json j = good;
    j[nlohmann::json::json_pointer(field)] = value;
    try {
      trial_from_json_text(j.dump(), "results.jsonl:3");
      ADD_FAILURE() << field << " = " << value << " was read";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("results.jsonl:3"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  refused("/evidence_recall", 5.0, "evidence_recall");
  refused("/evidence_recall", -0.1, "evidence_recall");
  refused("/measures", nlohmann::json::array({{{"name", "ndcg_cut_10"}, {"value", -1}}}), "measures.ndcg_cut_10");
  refused("/timings/total_ms", -5, "timings.total_ms");
  refused("/grades", nlohmann::json::array({{{"grader", "facts"}, {"score", 2.0}}}), "outside [0, 1]");
}

TEST(ResourceBounds, ADuplicateTrialKeyKeepsTheLastLineAndCountsOnce) {
  const auto dir = test::fresh_dir("record-duplicates");
  TrialRecord first = agent_record(), second = agent_record(), other = agent_record();
  first.answer = "first";
  second.answer = "second";
  other.trial_key = "k2";
  test::write_file(dir / "results.jsonl", to_jsonl_line(first) + "\n" + to_jsonl_line(other) + "\n" + to_jsonl_line(second) + "\n");
  const std::vector<TrialRecord> records = read_results_jsonl(dir / "results.jsonl");
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].trial_key, "k1");
  EXPECT_EQ(records[0].answer, "second");
  EXPECT_EQ(records[1].trial_key, "k2");
}

TEST(ResourceBounds, AFifoResultsFileIsRefusedNotWaitedOn) {
  const auto dir = test::fresh_dir("record-fifo");
  ASSERT_EQ(::mkfifo((dir / "results.jsonl").c_str(), 0600), 0);
  try {
    read_results_jsonl(dir / "results.jsonl");
    FAIL() << "a FIFO was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
  }
}

// The retrieval method round-trips and names itself in the label; bm25f
// (the default) is "" there and in the JSON, so bm25f records stay as they were.
TEST(Record, RetrievalRoundTripsAndOnlyAnotherMethodIsNamed) {
  TrialRecord r = agent_record();
  r.config.retrieval = "hybrid+rerank";
  const nlohmann::json j = nlohmann::json::parse(to_jsonl_line(r));
  EXPECT_EQ(j["config"]["retrieval"], "hybrid+rerank");
  EXPECT_EQ(trial_from_json_text(j.dump(), "x"), r);
  EXPECT_EQ(r.config.label(), "agent surface=okf tools=search+open max_turns=12 retrieval=hybrid+rerank model=sim cache=openai");
  const TrialRecord plain = agent_record();
  EXPECT_FALSE(nlohmann::json::parse(to_jsonl_line(plain))["config"].contains("retrieval"));
  EXPECT_EQ(plain.config.label(), "agent surface=okf tools=search+open max_turns=12 model=sim cache=openai");
  nlohmann::json spelled = j;
  spelled["config"]["retrieval"] = "bm25f";  // written out, it reads as the default
  EXPECT_EQ(trial_from_json_text(spelled.dump(), "x").config, plain.config);
  nlohmann::json bad = j;
  bad["config"]["retrieval"] = "dense";
  try {
    (void)trial_from_json_text(bad.dump(), "results.jsonl:3");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("config.retrieval 'dense' is unknown; use bm25f, hybrid or hybrid+rerank"),
              std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("results.jsonl:3"), std::string::npos) << e.what();
  }
  bad["config"]["retrieval"] = 5;
  EXPECT_THROW(trial_from_json_text(bad.dump(), "x"), InputError);
}

// A count below 0 or above 10^12 would price a trial at a negative or absurd
// cost; every count field refuses it and names itself.
TEST(Record, CountsOutOfRangeAreErrorsNamingTheField) {
  const nlohmann::json good = nlohmann::json::parse(to_jsonl_line(agent_record()));
  auto message = [](const nlohmann::json& j) {
    try {
      (void)trial_from_json_text(j.dump(), "x");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  for (const char* key : {"input_tokens", "cached_tokens", "cache_write_tokens", "output_tokens", "new_input_tokens",
                          "dropped_tool_calls"}) {
    nlohmann::json j = good;
    j["turns"][0][key] = -1;
    EXPECT_NE(message(j).find(fmt::format("field '{}' is -1; expected a count from 0 to 10^12", key)), std::string::npos)
        << key << ": " << message(j);
  }
  nlohmann::json j = good;
  j["turns"][0]["tool_calls"][0]["result_bytes"] = 1'000'000'000'001;
  EXPECT_NE(message(j).find("field 'result_bytes' is 1000000000001"), std::string::npos) << message(j);
  j = good;
  j["context_tokens"] = -3;
  EXPECT_NE(message(j).find("field 'context_tokens' is -3"), std::string::npos) << message(j);
  j = good;
  j["turns"][0]["input_tokens"] = 1'000'000'000'000;  // the bound itself is a count
  EXPECT_EQ(message(j), "(accepted)");
}

TEST(Record, ReadsRunDirectory) {
  auto dir = test::fresh_dir("record_run");
  RunManifest m;
  m.date = "2026-11-29T12:40:00Z";
  m.host = "ci";
  m.git_sha = "abc123";
  m.build_type = "Release";
  m.spec_hash = "deadbeef";
  m.models = {{"sim", ""}};
  m.cache_models = {"openai"};
  m.seeds = {42};
  test::write_file(dir / "manifest.json", manifest_to_json_text(m));
  TrialRecord a = agent_record();
  TrialRecord b = agent_record();
  b.question_id = "q2";
  b.trial_key = "k2";  // a key twice is one trial (its last line)
  test::write_file(dir / "results.jsonl", to_jsonl_line(a) + "\n\n" + to_jsonl_line(b) + "\n");
  StoredRun run = read_run_dir(dir);
  EXPECT_EQ(run.manifest, m);
  ASSERT_EQ(run.records.size(), 2u);
  EXPECT_EQ(run.records[1].question_id, "q2");
}

TEST(Record, GradesAndJudgeUsageRoundTrip) {
  TrialRecord r = agent_record();
  r.grades = {{"facts", GradeStatus::graded, 0.5, false, "1 of 2 fact(s) stated; missing: \"x\"", ""},
              {"facts-less", GradeStatus::not_graded, std::nullopt, false, "the question has no answer_facts", ""},
              {"judge", GradeStatus::judge_error, std::nullopt, false, "vote 1 of 1: ...", "Sure, correct!"}};
  r.judge_usage = JudgeUsage{"openai:gpt-4.1-mini", 3, 1, 2000, 0, std::nullopt, 60};
  const std::string line = to_jsonl_line(r);
  EXPECT_EQ(trial_from_json_text(line, "x"), r);
  nlohmann::json j = nlohmann::json::parse(line);
  EXPECT_EQ(j["schema_version"], 3);
  EXPECT_EQ(j["grades"][0]["status"], "graded");
  EXPECT_EQ(j["grades"][1]["score"], nullptr);
  EXPECT_FALSE(j["grades"][0].contains("raw"));
  EXPECT_EQ(j["grades"][2]["raw"], "Sure, correct!");
  EXPECT_EQ(j["judge_usage"]["cache_write_tokens"], nullptr);
}

TEST(Record, ReadsSchemaVersionOneRecords) {
  // A version 1 line as okfbench wrote it before graders: no grades, no judge usage.
  nlohmann::json j = nlohmann::json::parse(to_jsonl_line(agent_record()));
  j["schema_version"] = 1;
  j.erase("grades");
  j.erase("judge_usage");
  j["measures"].push_back({{"name", "answered"}, {"value", 1.0}});
  TrialRecord back = trial_from_json_text(j.dump(), "old.jsonl:1");
  EXPECT_EQ(back.schema_version, 1);
  EXPECT_TRUE(back.grades.empty());
  EXPECT_FALSE(back.judge_usage.has_value());
  EXPECT_EQ(back.measures.back().name, "answered");
}

TEST(Record, AttributionRoundTripsAndVersionTwoRecordsReadWithout) {
  TrialRecord r = agent_record();
  r.turns[0].attribution = {{"tools", 700}, {"system", 40}, {"question", 20}, {"framing", 3}};
  const std::string line = to_jsonl_line(r);
  EXPECT_EQ(trial_from_json_text(line, "x"), r);
  // A version 2 line as okfbench wrote it before attribution.
  nlohmann::json j = nlohmann::json::parse(line);
  j["schema_version"] = 2;
  for (auto& turn : j["turns"]) turn.erase("attribution");
  const TrialRecord old = trial_from_json_text(j.dump(), "old.jsonl:1");
  EXPECT_EQ(old.schema_version, 2);
  EXPECT_TRUE(old.turns[0].attribution.empty());
  EXPECT_EQ(old.turns[0].input_tokens, r.turns[0].input_tokens);
  // A negative part is damage, named by its field.
  j = nlohmann::json::parse(line);
  j["turns"][0]["attribution"][1]["tokens"] = -1;
  try {
    trial_from_json_text(j.dump(), "results.jsonl:4");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("results.jsonl:4"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("tokens"), std::string::npos) << e.what();
  }
}

TEST(Record, BadGradesAreErrorsNamingTheField) {
  nlohmann::json j = nlohmann::json::parse(to_jsonl_line(agent_record()));
  auto fails = [&](nlohmann::json grade, const std::string& words) {
    nlohmann::json k = j;
    k["grades"] = nlohmann::json::array({grade});
    try {
      trial_from_json_text(k.dump(), "results.jsonl:3");
      ADD_FAILURE() << "accepted " << grade.dump();
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("results.jsonl:3"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  fails({{"grader", "facts"}, {"status", "great"}, {"score", 1.0}}, "grade status 'great' is unknown");
  fails({{"grader", "facts"}, {"status", "graded"}, {"score", 1.5}}, "outside [0, 1]");
  fails({{"grader", "facts"}, {"status", "graded"}}, "graded but has no score");
  fails({{"status", "graded"}, {"score", 1.0}}, "'grader' is missing");
}

TEST(Record, FailureClassAndRunsRoundTripAndStayOutOfCleanRecords) {
  TrialRecord clean = agent_record();
  const nlohmann::json plain = nlohmann::json::parse(to_jsonl_line(clean));
  EXPECT_FALSE(plain.contains("error_class"));  // records without a failure read as they always did
  EXPECT_FALSE(plain.contains("runs"));
  TrialRecord failed = agent_record();
  failed.error = "OpenAI http://127.0.0.1:1/v1/chat/completions: failed after 5 attempt(s)";
  failed.error_class = "transient";
  failed.runs = 3;
  EXPECT_EQ(trial_from_json_text(to_jsonl_line(failed), "x"), failed);
  nlohmann::json j = nlohmann::json::parse(to_jsonl_line(failed));
  j["error_class"] = "sometimes";
  EXPECT_THROW(trial_from_json_text(j.dump(), "x"), InputError);
  j["error_class"] = "permanent";
  j["runs"] = 0;
  EXPECT_THROW(trial_from_json_text(j.dump(), "x"), InputError);
}

TEST(Record, ManifestKeepsPricesAndInputHashesOnlyWhenGiven) {
  RunManifest m;
  m.spec_hash = "feed";
  EXPECT_FALSE(nlohmann::json::parse(manifest_to_json_text(m)).contains("prices"));
  EXPECT_FALSE(nlohmann::json::parse(manifest_to_json_text(m)).contains("inputs"));
  m.prices = {{"openai:gpt-4o-mini", {"gpt-4o-mini", 0.15, 0.075, 0.15, 0.6, "list", "2025-10-01"}}};
  m.inputs = {{"bundle", "demo", std::string(64, 'a')}, {"tokenizer", "o200k_base", std::string(64, 'b')}};
  EXPECT_EQ(manifest_from_json_text(manifest_to_json_text(m), "manifest.json"), m);
}

TEST(Record, ManifestKeepsItsForecastAndReadsOneWithout) {
  RunManifest m;
  m.spec_hash = "feed";
  // An older manifest (no forecast key) still reads, and writes none back.
  EXPECT_FALSE(manifest_from_json_text(manifest_to_json_text(m), "manifest.json").forecast);
  EXPECT_FALSE(nlohmann::json::parse(manifest_to_json_text(m)).contains("forecast"));
  RunForecast f;
  f.shard = "2/3";
  f.rows = {{"demo", "agent model=sim", "exact (sim)", 4, {100, 100, 100}, {10, 10, 10}, {8, 8, 8}, ForecastInterval{0.5, 0.5, 0.5}}};
  f.total = {"", "total", "", 4, {100, 100, 100}, {10, 10, 10}, {8, 8, 8}, std::nullopt};
  m.forecast = f;
  const auto j = nlohmann::json::parse(manifest_to_json_text(m));
  EXPECT_EQ(j["forecast"]["configurations"][0]["input_tokens"]["value"], 100);
  EXPECT_TRUE(j["forecast"]["total"]["usd"].is_null());
  EXPECT_EQ(j["forecast"]["shard"], "2/3");
  EXPECT_EQ(manifest_from_json_text(manifest_to_json_text(m), "manifest.json"), m);
}

TEST(Record, AForecastFigureOutOfOrderOrRangeNamesTheField) {
  auto with_total_input = [](const std::string& figure) {
    return R"({"schema_version": 3, "forecast": {"configurations": [], "total": {"configuration": "total", "trials": 1,
      "input_tokens": )" + figure + R"(, "output_tokens": {"value": 1, "low": 1, "high": 1},
      "calls": {"value": 1, "low": 1, "high": 1}}}})";
  };
  EXPECT_EQ(manifest_from_json_text(with_total_input(R"({"value": 5, "low": 4, "high": 6})"), "m.json").forecast->total.input_tokens,
            (ForecastInterval{5, 4, 6}));
  for (const char* bad : {R"({"value": 5, "low": 6, "high": 7})", R"({"value": -1, "low": -1, "high": 0})",
                          R"({"value": 1e13, "low": 1e13, "high": 1e13})", R"({"value": 5, "low": 4})"}) {
    try {
      manifest_from_json_text(with_total_input(bad), "m.json");
      ADD_FAILURE() << "no error for " << bad;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("m.json: in 'forecast': in 'total': in 'input_tokens'"), std::string::npos) << e.what();
    }
  }
}

TEST(Record, BadLineIsReportedWithFileAndLineNumber) {
  auto dir = test::fresh_dir("record_bad");
  test::write_file(dir / "results.jsonl", to_jsonl_line(agent_record()) + "\n{\"truncated\n");
  try {
    read_results_jsonl(dir / "results.jsonl");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("results.jsonl:2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_run_dir(dir / "missing"), InputError);
}

}  // namespace
}  // namespace okfbench::reports
