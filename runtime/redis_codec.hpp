// What the remote cache stores under a key, and back: one value per key,
// whole, so that a reader sees an entry as one machine wrote it.
//
// A value is a magic ("KILN2" for a compiled kernel, "KILNR2" for a record),
// 'S' and an HMAC-SHA256 of the rest under KILN_CACHE_HMAC_KEY, or 'U' when
// no key is set, then the payload. An entry's payload is the length of its
// metadata JSON (8 bytes, little-endian), the JSON (the disk cache's, with
// the size of each part), the binary, then every stage file (the disk
// entry's files, so a remote hit under KILN_KEEP_STAGES has its stages).
//
// The rule for signatures: with a key set, only values signed with it are
// read (an unsigned or wrongly signed one is refused); without a key, only
// unsigned ones (a signed value is refused: a fleet that signs its entries
// expects them checked, and this process cannot check them).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "runtime/cache_level.hpp"

namespace kiln::runtime {

/// Immutable, so safe to use from several threads at once.
class RedisCodec {
public:
  explicit RedisCodec(std::string hmac_key) : hmac_key_(std::move(hmac_key)) {}

  /// "" when the entry cannot be written down faithfully (see metadata_json).
  std::string encode(const CachedKernel &entry) const;
  /// nullopt, with `why`, for a value it refuses or cannot read.
  std::optional<CachedKernel> decode(std::string_view value, std::string &why) const;
  std::string encode_record(std::string_view text) const;
  std::optional<std::string> decode_record(std::string_view value, std::string &why) const;

private:
  std::string seal(std::string_view magic, std::string_view payload) const;
  std::optional<std::string_view> unseal(std::string_view magic, std::string_view value,
                                         std::string &why) const;

  std::string hmac_key_; ///< empty: values are not signed
};

} // namespace kiln::runtime
