#pragma once
// SHA-256 (OpenSSL), for checking the tokenizer vocabularies and keying the
// embedding cache.
#include <string>
#include <string_view>

namespace okfbench::retrieval {

// Lowercase hex. Throws InputError if OpenSSL fails.
std::string sha256_hex(std::string_view data);

}  // namespace okfbench::retrieval
