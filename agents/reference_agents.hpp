#pragma once
// Two scripted reference agents that are not sim: each has a retrieval
// policy and a usage count of its own, so that `okfbench calibrate` can be
// developed and checked against agents whose behaviour and billing it does
// not know. `okfbench mock-server --agent scout|diver` serves one over the
// OpenAI and Anthropic wire formats; `okfbench run --record DIR` records it.
// Like sim they read only the request (the conversation since the last user
// message), so they are deterministic and need no state between calls.
//
// scout: a broad searcher. Its keywords are the question's words of 4+
//   letters outside its own stop list. It searches the keywords (k = 8),
//   opens the best hit it has not opened, one per turn, and searches again
//   for the keywords no opened body contains plus one word from the title of
//   a hit it saw but did not open, at most 4 searches; never follows links.
//   A question of more than 9 words gets its first search repeated before the
//   answer ("double-checking"). Answer: each opened concept's title and its
//   first two sentences, then the sources. Usage: content counted as
//   ceil(bytes / 4) (a heuristic tokenizer), plus 4 a message, 2 a tool
//   call, 10 + ceil(schema bytes / 4) a tool and 25 a request.
// diver: a deep reader. With `browse` it browses the root first. It searches
//   the question as written (k = 3), opens every hit in one turn, lists the
//   neighbours of the first two it opened in one turn, opens (in one turn) up
//   to two neighbours whose titles share a keyword, re-opens the first
//   concept before answering, and answers with every sentence of what it
//   opened up to about 3,000 bytes. Usage: content counted with the given
//   counter, plus 7 a message, 5 a tool call, 15 + the counted schema a tool
//   and 40 a request.
// Both fall back to answering when a tool they need is missing. Given a
// one-shot prompt (agents/context_prompt.hpp, no tools) each answers from the
// packed blocks that share a keyword with the question, each block as
// "title (id): " and its first sentences, then the sources: scout the first
// such block with one sentence, diver the first three with two sentences
// each; "The context does not answer this." when no block shares one. So on
// the context path they answer far shorter than after their tool loops, as
// real models often do.
// Sentences are prose split at ". ", "! ", "? " and new lines, markdown marks
// dropped, at least 13 bytes.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "agents/model.hpp"
#include "retrieval/token_counter.hpp"

namespace okfbench::agents {

// "scout" and "diver".
std::vector<std::string> reference_agent_names();

// Throws UsageError for an unknown name. `counter` must outlive the model.
std::unique_ptr<ChatModel> make_reference_agent(std::string_view name, const retrieval::TokenCounter& counter);

}  // namespace okfbench::agents
