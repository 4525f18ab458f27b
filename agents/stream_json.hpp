#pragma once
// Streamed replies (server-sent events) of both wires, written from the
// non-streamed reply the wire's own writer produced, so a streamed and a
// non-streamed answer carry the same text, tool calls and usage.
//
// OpenAI Chat Completions (https://platform.openai.com/docs/api-reference/chat-streaming):
//   data: {"object": "chat.completion.chunk", "choices": [{"delta": {"role": "assistant"}}]}
//   data: ... one chunk per piece of text, per tool call head and per piece of its arguments
//   data: ... a chunk with the finish_reason
//   data: {"choices": [], "usage": {...}}        only with stream_options.include_usage
//   data: [DONE]
// Anthropic Messages (https://docs.anthropic.com/en/docs/build-with-claude/streaming):
//   event: message_start        the message, no content yet, with usage: input and cache
//                               counts and output_tokens 1, as the API sends
//   event: content_block_start / content_block_delta (text_delta, input_json_delta) /
//          content_block_stop   per block
//   event: message_delta        stop_reason and the final output_tokens
//   event: message_stop
// Each returned string is one whole event, its blank line included.
#include <string>
#include <string_view>
#include <vector>

namespace okfbench::agents {

// `completion` is a chat.completion object (openai::response_to_json).
std::vector<std::string> openai_stream_events(std::string_view completion, bool include_usage);

// `message` is a Messages reply (anthropic::response_to_json).
std::vector<std::string> anthropic_stream_events(std::string_view message);

// The other direction, for our own clients: a whole streamed body (every
// event) rebuilt into the non-streamed reply, for the wire's own parser to
// read (openai::response_from_json, anthropic::response_from_json), so a
// streamed reply is checked exactly as a non-streamed one. Throws InputError
// when the stream is cut (no [DONE] / message_stop), carries an error event,
// or an event is not JSON.
std::string openai_completion_from_stream(std::string_view body);
std::string anthropic_message_from_stream(std::string_view body);

// Splits text into the pieces a stream sends it in (about 16 bytes, cut at
// spaces where possible and never inside a UTF-8 sequence); joined, they are the text.
std::vector<std::string> stream_pieces(std::string_view text);

}  // namespace okfbench::agents
