#include "reports/otlp.hpp"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "core/error.hpp"
#include "tests/reports/fixtures.hpp"

namespace okfbench::reports {
namespace {

using nlohmann::json;

// small_run with timings: the agent trials took 40 ms (30 in model calls, 8 in tools).
std::vector<TrialRecord> timed_run() {
  auto records = fixtures::small_run();
  for (auto& r : records) r.timings = {40.0, 8.0, 30.0};
  records[3].turns[1].tool_calls[0].error = "no concept runbooks/slow-queries";
  records[4].error_class = "transient";
  return records;
}

json spans_of(const std::string& text) { return json::parse(text)["resourceSpans"][0]["scopeSpans"][0]["spans"]; }

std::map<std::string, json> attributes_of(const json& span) {
  std::map<std::string, json> out;
  for (const auto& a : span["attributes"]) out[a["key"]] = a["value"];
  return out;
}

TEST(Otlp, GoldenFile) { fixtures::expect_golden("otlp.json", otlp_json(fixtures::manifest(), timed_run())); }

// The OTLP JSON mapping: lowerCamelCase field names, ids as lowercase hex of
// 16 and 8 bytes, times as decimal strings of nanoseconds, enums as integers.
TEST(Otlp, FollowsTheJsonEncoding) {
  auto doc = json::parse(otlp_json(fixtures::manifest(), timed_run()));
  const auto& resource = doc["resourceSpans"][0]["resource"]["attributes"];
  EXPECT_EQ(resource[0], (json{{"key", "service.name"}, {"value", {{"stringValue", "okfbench"}}}}));
  EXPECT_EQ(doc["resourceSpans"][0]["scopeSpans"][0]["scope"]["name"], "okfbench");
  const auto& spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"];
  const std::regex trace("[0-9a-f]{32}"), span("[0-9a-f]{16}"), nanos("[0-9]{19}");
  for (const auto& s : spans) {
    EXPECT_TRUE(std::regex_match(s["traceId"].get<std::string>(), trace)) << s;
    EXPECT_TRUE(std::regex_match(s["spanId"].get<std::string>(), span)) << s;
    ASSERT_TRUE(s["startTimeUnixNano"].is_string());
    EXPECT_TRUE(std::regex_match(s["startTimeUnixNano"].get<std::string>(), nanos)) << s;
    EXPECT_LE(std::stoll(s["startTimeUnixNano"].get<std::string>()), std::stoll(s["endTimeUnixNano"].get<std::string>()));
    EXPECT_TRUE(s["kind"].is_number_integer());
    if (s.contains("parentSpanId")) {
      EXPECT_TRUE(std::regex_match(s["parentSpanId"].get<std::string>(), span));
    }
  }
  // 2026-11-29T12:00:00Z is 1795953600 s after the epoch (Python: calendar.timegm((2026, 11, 29, 12, 0, 0))).
  EXPECT_EQ(spans[0]["startTimeUnixNano"], "1795953600000000000");
}

TEST(Otlp, OneTracePerTrialWithASpanPerModelAndToolCall) {
  auto records = timed_run();
  auto spans = spans_of(otlp_json(fixtures::manifest(), records));
  std::map<std::string, std::vector<json>> by_trace;
  for (const auto& s : spans) by_trace[s["traceId"]].push_back(s);
  ASSERT_EQ(by_trace.size(), records.size());
  // Agent q1 (records[2]): root, 4 model calls, 3 tool calls.
  const json* root = nullptr;
  for (const auto& s : spans) {
    if (attributes_of(s)["okfbench.trial_key"] == json{{"stringValue", "a-q1"}}) root = &s;
  }
  ASSERT_NE(root, nullptr);
  const auto& trace = by_trace[(*root)["traceId"]];
  ASSERT_EQ(trace.size(), 8u);
  EXPECT_EQ((*root)["name"], "invoke_agent okfbench");
  EXPECT_FALSE(root->contains("parentSpanId"));
  std::vector<std::string> names;
  for (const auto& s : trace) {
    names.push_back(s["name"]);
    if (&s != &trace.front()) {
      EXPECT_EQ(s["parentSpanId"], (*root)["spanId"]);
    }
  }
  EXPECT_EQ(names, (std::vector<std::string>{"invoke_agent okfbench", "chat sim", "execute_tool search", "chat sim", "execute_tool open",
                                             "chat sim", "execute_tool open", "chat sim"}));
  auto chat3 = attributes_of(trace[5]);
  EXPECT_EQ(chat3["gen_ai.operation.name"], (json{{"stringValue", "chat"}}));
  EXPECT_EQ(chat3["gen_ai.system"], (json{{"stringValue", "sim"}}));
  EXPECT_EQ(chat3["gen_ai.request.model"], (json{{"stringValue", "sim"}}));
  EXPECT_EQ(chat3["gen_ai.usage.input_tokens"], (json{{"intValue", "2187"}}));
  EXPECT_EQ(chat3["gen_ai.usage.output_tokens"], (json{{"intValue", "50"}}));
  EXPECT_EQ(chat3["gen_ai.usage.cache_read.input_tokens"], (json{{"intValue", "1024"}}));
  auto tool = attributes_of(trace[4]);
  EXPECT_EQ(tool["gen_ai.tool.name"], (json{{"stringValue", "open"}}));
  EXPECT_EQ(tool["okfbench.tool.result_bytes"], (json{{"intValue", "3000"}}));
  // 30 ms over 4 model calls, 8 ms over 3 tool calls, one after another; the root lasts 40 ms.
  auto nanos = [](const json& s, const char* field) { return std::stoll(s[field].get<std::string>()); };
  EXPECT_EQ(nanos(trace[1], "endTimeUnixNano") - nanos(trace[1], "startTimeUnixNano"), 7'500'000);
  EXPECT_EQ(nanos(trace[2], "endTimeUnixNano") - nanos(trace[2], "startTimeUnixNano"), 2'666'666);
  EXPECT_EQ(nanos(trace[2], "startTimeUnixNano"), nanos(trace[1], "endTimeUnixNano"));
  EXPECT_EQ(nanos(trace[0], "endTimeUnixNano") - nanos(trace[0], "startTimeUnixNano"), 40'000'000);
}

TEST(Otlp, FailuresAreErrorStatuses) {
  auto spans = spans_of(otlp_json(fixtures::manifest(), timed_run()));
  int errors = 0;
  for (const auto& s : spans) {
    if (!s.contains("status")) continue;
    ++errors;
    EXPECT_EQ(s["status"]["code"], 2);
    auto a = attributes_of(s);
    if (s["name"] == "execute_tool open") {
      EXPECT_EQ(s["status"]["message"], "no concept runbooks/slow-queries");
      EXPECT_EQ(a["error.type"], (json{{"stringValue", "tool_error"}}));
    } else {
      EXPECT_EQ(s["status"]["message"], "model timeout after 3 retries");
      EXPECT_EQ(a["error.type"], (json{{"stringValue", "transient"}}));
    }
  }
  EXPECT_EQ(errors, 2);
}

TEST(Otlp, IdsComeFromTheTrialKey) {
  auto records = timed_run();
  auto first = otlp_json(fixtures::manifest(), records);
  EXPECT_EQ(first, otlp_json(fixtures::manifest(), records));
  // Python: hashlib.sha256(b"okfbench trace c-q1").hexdigest()[:32], and b"okfbench span c-q1/trial" [:16].
  EXPECT_EQ(spans_of(first)[0]["traceId"], "a8076b7262aae1394c832551f17a5a02");
  EXPECT_EQ(spans_of(first)[0]["spanId"], "354e5912a0eb7f5f");
  records[0].trial_key = "another";
  auto spans = spans_of(otlp_json(fixtures::manifest(), records));
  EXPECT_NE(spans[0]["traceId"], spans_of(first)[0]["traceId"]);
  EXPECT_EQ(spans.back()["traceId"], spans_of(first).back()["traceId"]);
}

TEST(Otlp, ProviderPrefixIsTheSystem) {
  auto records = timed_run();
  records.resize(1);
  records[0].config.model = "openai:gpt-4.1-mini";
  auto spans = spans_of(otlp_json(fixtures::manifest(), records));
  ASSERT_EQ(spans.size(), 3u);  // root, pack, the one-shot model call
  EXPECT_EQ(spans[1]["name"], "okfbench.context.pack");
  EXPECT_EQ(spans[2]["name"], "chat gpt-4.1-mini");
  auto a = attributes_of(spans[2]);
  EXPECT_EQ(a["gen_ai.system"], (json{{"stringValue", "openai"}}));
  EXPECT_EQ(a["gen_ai.request.model"], (json{{"stringValue", "gpt-4.1-mini"}}));
}

TEST(Otlp, BadDatesAndDurationsAreInputErrors) {
  auto m = fixtures::manifest();
  m.date = "29/11/2026";
  EXPECT_THROW(otlp_json(m, timed_run()), InputError);
  m.date = "2026-02-30T00:00:00Z";
  EXPECT_THROW(otlp_json(m, timed_run()), InputError);
  auto records = timed_run();
  records[0].timings.total_ms = -1;
  try {
    otlp_json(fixtures::manifest(), records);
    FAIL() << "a negative duration was exported";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("trial c-q1: timings.total_ms"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace okfbench::reports
