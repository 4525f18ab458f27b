#pragma once
// A run as OpenTelemetry traces in the OTLP JSON encoding (what an OTLP/HTTP
// collector accepts with Content-Type application/json, and what Jaeger,
// Phoenix and Langfuse import): one trace per trial, a root span for the
// trial, a child span per model call and per tool call, named and attributed
// after the GenAI semantic conventions.
//
// {"resourceSpans": [{"resource": {"attributes": [service.name "okfbench",
//   service.version, okfbench.spec_hash, okfbench.git_sha]},
//   "scopeSpans": [{"scope": {"name": "okfbench", "version"}, "spans": [...]}]}]}
//
// Spans, in trial order and within a trial in the order things happened:
//   root        "invoke_agent okfbench" (agent) or "okfbench.context" (context),
//               kind INTERNAL; okfbench.* trial attributes, the summed usage,
//               the grades (okfbench.grade.<grader>), status ERROR when the
//               trial failed (its message, error.type = the error class)
//   retrieval   context trials: "okfbench.context.pack", the pack's token
//               count and concept count
//   model call  "chat <model>", kind CLIENT; gen_ai.operation.name "chat",
//               gen_ai.system, gen_ai.request.model, gen_ai.usage.input_tokens,
//               gen_ai.usage.output_tokens, gen_ai.usage.cache_read.input_tokens,
//               gen_ai.usage.cache_creation.input_tokens (each only when known)
//   tool call   "execute_tool <name>", kind INTERNAL; gen_ai.operation.name
//               "execute_tool", gen_ai.tool.name, gen_ai.tool.call.arguments,
//               okfbench.tool.result_bytes, status ERROR with the tool's error
// A model "openai:gpt-4.1-mini" has gen_ai.system "openai" and request model
// "gpt-4.1-mini"; one without a provider prefix ("sim") is its own system.
//
// Ids are derived from the trial key, so exporting a run twice gives the same
// file: traceId = the first 16 bytes of SHA-256("okfbench trace " + key),
// spanId = the first 8 of SHA-256("okfbench span " + key + "/" + path), path
// "trial", "pack", "turn/N", "turn/N/tool/M", as lowercase hex.
//
// Times are nanoseconds since the Unix epoch as decimal strings. A record
// keeps a trial's durations (total, model, retrieval), not when it started
// nor how long each call took: every trace starts at the run's start
// (manifest `date`), the root lasts total_ms, model calls split model_ms
// equally and tool calls split retrieval_ms equally, one after another in
// order. Such spans carry okfbench.timing = "apportioned" so nobody reads them
// as measured per call.
#include <string>
#include <vector>

#include "reports/record.hpp"

namespace okfbench::reports {

// Throws InputError when the manifest's date is not ISO 8601 UTC
// (YYYY-MM-DDTHH:MM:SSZ).
std::string otlp_json(const RunManifest& manifest, const std::vector<TrialRecord>& records);

}  // namespace okfbench::reports
