#pragma once
// What the sim model says when it answers: it restates what reached it. This
// models retrieval behaviour, not language: the answer carries a concept's
// statements exactly when that concept reached the model (packed into the
// context, or opened by the agent), so answer quality follows the evidence.
//
// compose_answer(question, read, target_tokens, counter):
//   1. Question terms: lower-cased letter/digit runs of 3+ bytes minus a short
//      English stop list, each once. A term occurs in a text when one of the
//      text's words equals it, or equals it with a final "s" added or removed.
//   2. A source (a packed block or an opened concept) shares the question
//      terms its title, description and text contain. Taken from the one sharing the most
//      down (ties in reading order), a source is relevant when it shares at
//      least half as many terms as the first, or a term that no relevant
//      source before it has. Every relevant source is cited as [id], in the
//      order they reached the model.
//   3. Each source's description and text are cut into statements (statements()): sentences of
//      prose, list items, table rows, fenced code blocks; headings, list
//      items that are only a link, footnote definitions and truncation
//      markers are not statements.
//   4. Statements are chosen until the answer reaches about target_tokens
//      (counted with `counter`). First the main source, the concept that
//      answers: the relevant one whose title and description carry the most
//      question terms (what it is about), then the one sharing the most terms
//      in all, then the first. Its best statement (most question terms, the first on ties),
//      then its other statements in their own order. Then the other relevant
//      sources' statements that carry question terms, most terms first,
//      earlier sources and positions first; then their other statements,
//      source by source. A statement is taken when it brings the count closer
//      to the target, so the answer overshoots by less than half a statement;
//      short evidence gives a short answer (it is never padded).
//   5. The text: per source with chosen statements (the main one first, then
//      reading order) "**title** [id]" and those statements in their original
//      order, then "Sources: [id], [id], ..." with every relevant source.
//      Nothing relevant: a sentence saying so, naming the terms looked for,
//      and without brackets (so it cites nothing).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "retrieval/token_counter.hpp"

namespace okfbench::agents {

// A concept that reached the model.
struct SimSource {
  std::string id;
  std::string title;
  std::string description;
  std::string text;  // the body (markdown) as the model saw it
};

// Lower-cased letter/digit runs (bytes >= 0x80 count as letters).
std::vector<std::string> lower_words(std::string_view text);

std::vector<std::string> question_terms(std::string_view question);

// The `terms` that occur in `text` (whole words, plural forms both ways).
std::vector<std::string> terms_in(std::string_view text, const std::vector<std::string>& terms);

// Statements of a markdown text, in order, inline links reduced to their text
// and footnote references dropped. Fenced code keeps its lines.
struct Statement {
  std::string text;
  bool code = false;
};
std::vector<Statement> statements(std::string_view markdown);

std::string compose_answer(std::string_view question, const std::vector<SimSource>& read, std::size_t target_tokens,
                           const retrieval::TokenCounter& counter);

// Answer length in output tokens for `question`: `mean` when seed is 0, else a
// normal draw with standard deviation `spread` (at least 1), deterministic per
// (seed, question), so both paths answer a question with the same target.
std::size_t answer_target(std::size_t mean, std::size_t spread, std::uint64_t seed, std::string_view question);

}  // namespace okfbench::agents
