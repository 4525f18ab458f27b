#pragma once
// Keeping API keys out of everything okfbench writes.
//
// A key is only ever sent in a request header. Behind that, three lines of
// defence:
//   - every key okfbench resolves (from a flag, a provider's environment
//     variable or the variable a spec names) is remembered for the life of the
//     process (remember_secret), and redact() replaces each known key by
//     [REDACTED] where text leaves the process: HTTP error messages,
//     cassettes, the response cache, trial records (results.jsonl,
//     results.sqlite) and what reports are written from;
//   - URLs are recorded without their user-info (display_url), since
//     http://user:KEY@host/v1 carries a key;
//   - header values with control characters are refused (check_header_value),
//     so a key cannot smuggle a second header into a request.
// Values shorter than kMinSecretLength are not redacted: they would match
// ordinary text, and no provider issues keys that short.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace okfbench::agents {

inline constexpr std::string_view kRedacted = "[REDACTED]";
inline constexpr std::size_t kMinSecretLength = 4;

// Adds a secret to the process-wide set (thread-safe; empty and short values are ignored).
void remember_secret(std::string_view secret);

// The remembered secrets plus OPENAI_API_KEY and ANTHROPIC_API_KEY from the environment.
std::vector<std::string> known_secrets();

// Replaces every occurrence of each secret (as written, and as escaped inside
// a JSON string) by [REDACTED].
std::string redact(std::string text, const std::vector<std::string>& secrets);
std::string redact(std::string text);  // with known_secrets()

// A JSON document with every string in it (keys too) redacted; the result is
// still valid JSON. Text that is not JSON is redacted as plain text.
std::string redact_json(std::string_view json_text, const std::vector<std::string>& secrets);
std::string redact_json(std::string_view json_text);  // with known_secrets()

// The URL without user-info: "http://user:KEY@host/v1" -> "http://host/v1".
// Other URLs come back unchanged.
std::string display_url(std::string_view url);

// The password in a URL's user-info ("" when there is none), percent-decoded.
std::string url_password(std::string_view url);
// The user name in a URL's user-info ("" when there is none), percent-decoded.
std::string url_username(std::string_view url);

// Throws UsageError naming `field` when `value` holds a control character
// (CR, LF, NUL, TAB, DEL, any byte below 0x20), which would end the header
// and start another.
void check_header_value(std::string_view value, std::string_view field);

// Throws UsageError naming `field` when `name` is not an HTTP token
// (letters, digits and !#$%&'*+-.^_`|~).
void check_header_name(std::string_view name, std::string_view field);

}  // namespace okfbench::agents
