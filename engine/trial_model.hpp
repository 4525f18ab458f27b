#pragma once
// The one place where what the paths produce becomes the trial model
// (reports/record.hpp): the agent loop's log (agents::AgentRun) and the
// context path's pack (retrieval::ContextPack) and answer call. Reports read
// only the record; every trial metric over it is defined in
// reports/trial_metrics.hpp.
#include <vector>

#include "agents/agent.hpp"
#include "agents/wire.hpp"
#include "reports/record.hpp"
#include "retrieval/context.hpp"

namespace okfbench::engine {

// One model call's usage as a turn (no tool calls, new input unset).
reports::TurnRecord record_turn(const agents::Usage& usage);

// Every turn of an agent run with its tool calls, and each turn's new input
// as reports::turn_new_input defines it.
std::vector<reports::TurnRecord> record_turns(const agents::AgentRun& run);

// The pack's concepts in pack order: id, tokens and "seed" or
// "via RELATION from ID".
std::vector<reports::PackedConcept> record_pack(const retrieval::ContextPack& pack);

// Sets each turn's new_input_tokens to reports::turn_new_input, so a stored
// record carries the value every report reads.
void fill_new_input(std::vector<reports::TurnRecord>& turns);

}  // namespace okfbench::engine
