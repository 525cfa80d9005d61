// What a scope de-duplicates compiles by: the compile key together with the
// cache entry that will receive the result. Two Modules of one file share
// compile keys but not cache entries, so the key alone is not enough; a
// typed pair (STYLE.md point 6) instead of `key + "@" + pointer` text.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace kiln::async {

struct JobKey {
  /// Whatever receives the result (the runtime's cache entry); compared by
  /// address only, never dereferenced.
  const void *owner = nullptr;
  /// The compile key (hex SHA-256 in the runtime; any text in tests).
  std::string key;

  friend bool operator==(const JobKey &, const JobKey &) = default;
};

struct JobKeyHash {
  std::size_t operator()(const JobKey &k) const noexcept {
    // boost::hash_combine's mix: the owner's hash spreads into the key's.
    std::size_t h = std::hash<std::string>()(k.key);
    h ^= std::hash<const void *>()(k.owner) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h;
  }
};

} // namespace kiln::async
