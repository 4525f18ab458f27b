#include "core/digest.hpp"

#include <openssl/evp.h>

#include "core/error.hpp"

namespace okfbench {

struct Sha256::Context {
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> md{EVP_MD_CTX_new(), EVP_MD_CTX_free};
};

Sha256::Sha256() : context_(std::make_unique<Context>()) {
  if (!context_->md || EVP_DigestInit_ex(context_->md.get(), EVP_sha256(), nullptr) != 1)
    throw InputError("OpenSSL could not start a SHA-256 digest");
}
Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::add(std::string_view data) {
  if (EVP_DigestUpdate(context_->md.get(), data.data(), data.size()) != 1)
    throw InputError("OpenSSL could not compute a SHA-256 digest");
}

Sha256Digest Sha256::finish() {
  Sha256Digest out{};
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(context_->md.get(), out.data(), &length) != 1 || length != out.size())
    throw InputError("OpenSSL could not compute a SHA-256 digest");
  return out;
}

Sha256Digest sha256(std::string_view data) {
  Sha256 digest;
  digest.add(data);
  return digest.finish();
}

std::string sha256_hex(std::string_view data) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned char byte : sha256(data)) {
    out += hex[byte >> 4];
    out += hex[byte & 15];
  }
  return out;
}

}  // namespace okfbench
