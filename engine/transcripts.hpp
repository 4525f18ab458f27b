#pragma once
// Recording one trial's conversation as a reports::Transcript: a model
// decorator, outermost in the trial's model stack, that sees every request
// as sent and every reply or failure, and attributes each request's input
// tokens by origin (engine/attribution.hpp). Every text it keeps (messages, tool
// arguments and results, the system prompt, tool definitions) passes through
// agents::redact first, so no known key reaches the file.
#include <string>
#include <vector>

#include "agents/model.hpp"
#include "agents/sim_model.hpp"
#include "agents/wire.hpp"
#include "reports/record.hpp"
#include "reports/transcript.hpp"
#include "retrieval/token_counter.hpp"

namespace okfbench::engine {

// Which trials keep their transcript (okfbench run --transcripts).
enum class TranscriptMode { all, errors, none };

// Parses "all", "errors" or "none"; throws UsageError otherwise.
TranscriptMode parse_transcript_mode(std::string_view text);

class TranscriptRecorder : public agents::ChatModel {
 public:
  // `inner` and `counter` must outlive the calls; the recorded transcript
  // and attribution stay readable after `inner` is gone.
  TranscriptRecorder(agents::ChatModel& inner, std::vector<std::string> secrets, const retrieval::TokenCounter& counter);
  agents::ChatResponse chat(const agents::ChatRequest& request) override;
  std::string name() const override { return inner_.name(); }

  // The context path's pack, for the attribution of the request that carries it.
  void set_pack(std::vector<reports::PackedConcept> pack) { pack_ = std::move(pack); }

  // Sets each turn's attribution from the calls that answered, in order
  // (`turns` are the record's turns: one per answered call). Leaves them
  // alone when the counts differ.
  void attribute(std::vector<reports::TurnRecord>& turns) const;

  // Messages of the whole conversation (as run_agent returns it) that no
  // request carried: the tool results of a last turn the model never saw.
  void note_conversation(const std::vector<agents::Message>& conversation);

  // The transcript so far (answer and error are the trial's) and the prompts its turns name.
  reports::Transcript transcript(const std::string& trial_key, const std::string& answer, const std::string& error) const;
  const std::vector<reports::TranscriptPrompt>& prompts() const { return prompts_; }

 private:
  reports::TranscriptMessage message(const agents::Message& m) const;
  std::string prompt_hash(const agents::ChatRequest& request);

  agents::ChatModel& inner_;
  std::vector<std::string> secrets_;
  std::vector<reports::TranscriptPrompt> prompts_;
  std::vector<reports::TranscriptTurn> turns_;
  std::vector<reports::TranscriptMessage> unsent_;
  std::vector<std::vector<reports::InputShare>> attributions_;  // per answered call
  std::vector<reports::PackedConcept> pack_;
  agents::SimModel counting_;  // counts prompt blocks as sim bills them
  // What the next request is expected to start with: the previous request's
  // messages after the system prompt, then its reply.
  std::vector<agents::Message> sent_;
};

}  // namespace okfbench::engine
