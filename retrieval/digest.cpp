#include "retrieval/digest.hpp"

#include <openssl/evp.h>

#include <array>

#include "retrieval/error.hpp"

namespace okfbench::retrieval {

std::string sha256_hex(std::string_view data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), digest.data(), &len, EVP_sha256(), nullptr) != 1) {
    throw InputError("OpenSSL could not compute a SHA-256 digest");
  }
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out += hex[digest[i] >> 4];
    out += hex[digest[i] & 15];
  }
  return out;
}

}  // namespace okfbench::retrieval
