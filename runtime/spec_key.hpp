// The in-memory cache key of a launch: a few 64-bit words per parameter
// (type, attribute, constexpr value) plus the options, built on the stack.
// Every value enters without loss: numbers as their bits, a jit function as
// its whole 256-bit key, a string as a hash word plus the string itself,
// compared in full on a hash match.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kiln/error.hpp"

namespace kiln::runtime {

/// Real kernels pass many scalars: mamba3's fused forward kernel has 129
/// parameters. The launch path's arrays are sized by this and left
/// uninitialized, so a larger bound costs stack, not time.
inline constexpr unsigned kMaxParams = 256;

/// A key as a cache entry keeps it: owned copies of the words and strings.
struct StoredKey {
  std::vector<uint64_t> words;
  std::vector<std::string> strings;
};

class SpecKey {
public:
  /// A jit function takes four words, a tuple one more per level: room for
  /// every parameter being a function, plus the options.
  static constexpr unsigned kMaxWords = 5 * kMaxParams + 8;
  static constexpr unsigned kMaxStrings = kMaxParams;

  void push(uint64_t w) {
    if (n_ == kMaxWords) [[unlikely]]
      overflow();
    words_[n_++] = w;
  }
  /// A string constexpr: its hash word now, the text compared on a match.
  /// `s` must outlive the key (it is a launch argument).
  void push_string(const char *s) {
    if (ns_ == kMaxStrings) [[unlikely]]
      overflow();
    strings_[ns_++] = s;
    push(string_hash(s));
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

  bool equals(const StoredKey &other) const {
    if (other.words.size() != n_ || other.strings.size() != ns_ ||
        std::memcmp(other.words.data(), words_, n_ * sizeof(uint64_t)) != 0)
      return false;
    for (unsigned i = 0; i < ns_; ++i)
      if (other.strings[i] != strings_[i])
        return false;
    return true;
  }
  StoredKey store() const {
    return StoredKey{std::vector<uint64_t>(words_, words_ + n_),
                     std::vector<std::string>(strings_, strings_ + ns_)};
  }

  /// FNV-1a over the bytes and the length.
  static uint64_t string_hash(const char *s) {
    uint64_t h = 0xcbf29ce484222325ull;
    size_t n = 0;
    for (; s[n]; ++n)
      h = (h ^ static_cast<unsigned char>(s[n])) * 0x100000001b3ull;
    return h ^ n;
  }

private:
  [[noreturn]] static void overflow() {
    throw ArgumentError(
        "a launch has more values (parameters, tuple elements, strings) than kiln keys; at most " +
        std::to_string(kMaxWords) + " words");
  }
  uint64_t words_[kMaxWords];
  const char *strings_[kMaxStrings];
  unsigned n_ = 0;
  unsigned ns_ = 0;
};

} // namespace kiln::runtime
