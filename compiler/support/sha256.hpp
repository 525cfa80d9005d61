// SHA-256 through OpenSSL's EVP interface, incrementally or in one call.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace kiln {

class Sha256 {
public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256 &) = delete;
  Sha256 &operator=(const Sha256 &) = delete;

  Sha256 &update(const void *data, std::size_t n);
  Sha256 &update(std::string_view s) { return update(s.data(), s.size()); }
  /// Length-prefixed, so that ("ab","c") and ("a","bc") hash differently.
  Sha256 &field(std::string_view s);
  std::array<uint8_t, 32> digest();
  std::string hex_digest();

private:
  void *ctx_;
};

std::string sha256_hex(std::string_view data);
std::string to_hex(const uint8_t *data, std::size_t n);

} // namespace kiln
