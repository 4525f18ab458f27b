#pragma once
// Cost attribution: one model call's input tokens split by where they came
// from. Origins (reports/docs/attribution.md):
//   tools               the tool definitions
//   system              the system prompt
//   question            the user message that asks the question (on the
//                       context path: what of it is not a packed block)
//   pack:ID             a packed block of the context path, by concept
//   history:assistant   earlier replies of the model, sent again
//   history:tool:NAME   earlier results of tool NAME, sent again
//   new:tool:NAME       results of tool NAME this request sends first
//   history:user        any other user message
//   framing             the provider's per-request framing (reply priming)
// Tokens are counted as sim bills them (agents/sim_model.hpp: OpenAI's
// counting with the exact o200k BPE, one block per tool and per message), so
// for sim the parts sum exactly to the turn's input; for a real provider they
// are okfbench's count, shown beside the provider's total.
#include <cstddef>
#include <vector>

#include "agents/sim_model.hpp"
#include "agents/wire.hpp"
#include "reports/record.hpp"

namespace okfbench::engine {

// `first_new` is the index, among the request's messages after the system
// prompt, of the first message the previous request did not carry (0 for the
// first request). `pack` names the packed blocks on the context path (empty
// on the agent path); their tokens are the pack's counts, and the question
// part of the user message is what remains of its block. `counting` counts
// the blocks (any SimModel: counting does not depend on its options).
std::vector<reports::InputShare> attribute_request(const agents::ChatRequest& request, std::size_t first_new,
                                                   const std::vector<reports::PackedConcept>& pack,
                                                   agents::SimModel& counting);

}  // namespace okfbench::engine
