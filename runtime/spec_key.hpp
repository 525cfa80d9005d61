// The in-memory cache key of a launch: a few 64-bit words per parameter
// (type, attribute, constexpr value) plus the options, built on the stack.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "kiln/error.hpp"

namespace kiln::runtime {

inline constexpr unsigned kMaxParams = 64;

class SpecKey {
public:
  static constexpr unsigned kMaxWords = 2 * kMaxParams + 2;

  void push(uint64_t w) {
    // Callers check the parameter count first; this cannot overflow.
    words_[n_++] = w;
  }
  unsigned size() const { return n_; }
  const uint64_t *data() const { return words_; }

  /// splitmix64-style mixing; keys are short, so one pass is enough.
  uint64_t hash() const {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ n_;
    for (unsigned i = 0; i < n_; ++i) {
      uint64_t z = words_[i] + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      h ^= z ^ (z >> 31);
    }
    return h;
  }

  bool equals(const std::vector<uint64_t> &other) const {
    return other.size() == n_ && std::memcmp(other.data(), words_, n_ * sizeof(uint64_t)) == 0;
  }
  std::vector<uint64_t> to_vector() const { return std::vector<uint64_t>(words_, words_ + n_); }

private:
  uint64_t words_[kMaxWords];
  unsigned n_ = 0;
};

} // namespace kiln::runtime
