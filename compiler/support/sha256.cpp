#include "compiler/support/sha256.hpp"

#include <openssl/evp.h>

#include "kiln/error.hpp"

namespace kiln {

namespace {

/// SHA-256 fetched from OpenSSL's provider once: EVP_sha256() makes every
/// EVP_DigestInit_ex fetch it again (a locked look-up by name, a few
/// microseconds), and a launch's compile key hashes many small things.
const EVP_MD *sha256_md() {
  static EVP_MD *md = EVP_MD_fetch(nullptr, "SHA256", nullptr); // kept for the process
  return md;
}

} // namespace

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  const EVP_MD *md = sha256_md();
  if (!ctx_ || !md || EVP_DigestInit_ex(static_cast<EVP_MD_CTX *>(ctx_), md, nullptr) != 1)
    throw RuntimeError("OpenSSL could not initialise SHA-256");
}

Sha256::~Sha256() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX *>(ctx_)); }

Sha256 &Sha256::update(const void *data, std::size_t n) {
  EVP_DigestUpdate(static_cast<EVP_MD_CTX *>(ctx_), data, n);
  return *this;
}

Sha256 &Sha256::field(std::string_view s) {
  const uint64_t n = s.size();
  update(&n, sizeof n);
  return update(s);
}

std::array<uint8_t, 32> Sha256::digest() {
  std::array<uint8_t, 32> out{};
  unsigned len = 0;
  EVP_DigestFinal_ex(static_cast<EVP_MD_CTX *>(ctx_), out.data(), &len);
  return out;
}

std::string Sha256::hex_digest() {
  auto d = digest();
  return to_hex(d.data(), d.size());
}

std::string to_hex(const uint8_t *data, std::size_t n) {
  static const char digits[] = "0123456789abcdef";
  std::string s(2 * n, '0');
  for (std::size_t i = 0; i < n; ++i) {
    s[2 * i] = digits[data[i] >> 4];
    s[2 * i + 1] = digits[data[i] & 15];
  }
  return s;
}

std::string sha256_hex(std::string_view data) { return Sha256().update(data).hex_digest(); }

} // namespace kiln
