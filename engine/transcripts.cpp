#include "engine/transcripts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "agents/secrets.hpp"
#include "engine/attribution.hpp"
#include "core/digest.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"

namespace okfbench::engine {

namespace {

using Clock = std::chrono::steady_clock;

// The messages after a leading system prompt.
std::vector<agents::Message> conversation_of(const agents::ChatRequest& request) {
  auto begin = request.messages.begin();
  if (begin != request.messages.end() && begin->role == agents::Role::system) ++begin;
  return {begin, request.messages.end()};
}

bool starts_with(const std::vector<agents::Message>& all, const std::vector<agents::Message>& prefix) {
  return prefix.size() <= all.size() && std::equal(prefix.begin(), prefix.end(), all.begin());
}

}  // namespace

TranscriptMode parse_transcript_mode(std::string_view text) {
  if (text == "all") return TranscriptMode::all;
  if (text == "errors") return TranscriptMode::errors;
  if (text == "none") return TranscriptMode::none;
  throw UsageError(fmt::format("--transcripts {}: expected all, errors or none", text));
}

TranscriptRecorder::TranscriptRecorder(agents::ChatModel& inner, std::vector<std::string> secrets,
                                       const retrieval::TokenCounter& counter)
    : inner_(inner), secrets_(std::move(secrets)), counting_({}, counter) {}

reports::TranscriptMessage TranscriptRecorder::message(const agents::Message& m) const {
  reports::TranscriptMessage out;
  out.role = agents::to_string(m.role);
  out.content = agents::redact(m.content, secrets_);
  for (const auto& call : m.tool_calls) {
    out.tool_calls.push_back({agents::redact(call.id, secrets_), agents::redact(call.name, secrets_),
                              agents::redact(call.arguments, secrets_)});
  }
  out.tool_call_id = agents::redact(m.tool_call_id, secrets_);
  out.name = agents::redact(m.name, secrets_);
  return out;
}

std::string TranscriptRecorder::prompt_hash(const agents::ChatRequest& request) {
  reports::TranscriptPrompt prompt;
  prompt.system = agents::redact(agents::system_prompt(request), secrets_);
  for (const auto& t : request.tools) {
    prompt.tools.push_back({agents::redact(t.name, secrets_), agents::redact(t.description, secrets_),
                            agents::redact(t.parameters, secrets_)});
  }
  nlohmann::json content = {{"system", prompt.system}, {"tools", prompt.tools}};
  prompt.hash = sha256_hex(json_text(content));
  const bool known = std::any_of(prompts_.begin(), prompts_.end(), [&](const auto& p) { return p.hash == prompt.hash; });
  if (!known) prompts_.push_back(prompt);
  return prompt.hash;
}

agents::ChatResponse TranscriptRecorder::chat(const agents::ChatRequest& request) {
  reports::TranscriptTurn turn;
  turn.prompt_hash = prompt_hash(request);
  const std::vector<agents::Message> conversation = conversation_of(request);
  std::size_t from = 0;
  if (starts_with(conversation, sent_)) {
    from = sent_.size();
  } else {
    turn.restart = true;
  }
  for (std::size_t i = from; i < conversation.size(); ++i) turn.added.push_back(message(conversation[i]));
  sent_ = conversation;
  const auto start = Clock::now();
  try {
    agents::ChatResponse response = inner_.chat(request);
    turn.ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    turn.reply = message(response.message);
    turn.stop = agents::to_string(response.stop);
    turn.input_tokens = response.usage.input_tokens;
    turn.cached_tokens = response.usage.cached_input_tokens;
    turn.cache_write_tokens = response.usage.cache_write_tokens;
    turn.output_tokens = response.usage.output_tokens;
    attributions_.push_back(attribute_request(request, from, pack_, counting_));
    sent_.push_back(response.message);
    turns_.push_back(std::move(turn));
    return response;
  } catch (const std::exception& e) {
    turn.ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    turn.error = agents::redact(e.what(), secrets_);
    turns_.push_back(std::move(turn));
    throw;
  }
}

void TranscriptRecorder::attribute(std::vector<reports::TurnRecord>& turns) const {
  if (turns.size() != attributions_.size()) return;
  for (std::size_t i = 0; i < turns.size(); ++i) turns[i].attribution = attributions_[i];
}

void TranscriptRecorder::note_conversation(const std::vector<agents::Message>& conversation) {
  unsent_.clear();
  std::vector<agents::Message> rest = conversation;
  if (!rest.empty() && rest.front().role == agents::Role::system) rest.erase(rest.begin());
  if (!starts_with(rest, sent_)) return;
  for (std::size_t i = sent_.size(); i < rest.size(); ++i) unsent_.push_back(message(rest[i]));
}

reports::Transcript TranscriptRecorder::transcript(const std::string& trial_key, const std::string& answer,
                                                   const std::string& error) const {
  reports::Transcript t;
  t.trial_key = trial_key;
  t.turns = turns_;
  t.unsent = unsent_;
  t.answer = agents::redact(answer, secrets_);
  t.error = agents::redact(error, secrets_);
  return t;
}

}  // namespace okfbench::engine
