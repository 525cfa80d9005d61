// The remote cache (DESIGN.md section 5): Redis, shared by a fleet of
// machines, off unless KILN_REDIS_URL is set.
//
// Every request has deadlines (connect, then the whole request) enforced
// with Boost.Asio's asynchronous socket operations and timers; a Redis that
// is down, slow or speaks garbage is a miss, costs at most the deadline,
// logs one warning per process, and is left alone for a second before the
// next try, so a dead server does not tax every compile. RESP is written by
// hiredis's command formatter and read by its reader (redisReader).
//
// An entry is one value: "KILN1", an HMAC-SHA256 of the rest (zeros when
// no KILN_CACHE_HMAC_KEY is set), the metadata JSON's length and text, and
// the binary. With a key set, an entry whose signature does not match is
// rejected. Records (tuning results) are values of their own key space,
// "KILNR1", the signature, then the text. Values expire after
// KILN_REDIS_TTL_S (a fleet's Redis is not an archive); 0 keeps them. A short-lived `SET NX PX`
// lock per key is the fleet's single flight: one machine compiles, the others wait (up to a bound)
// for its entry to appear, then compile themselves.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "runtime/cache_level.hpp"

namespace kiln::runtime {

/// redis://[:password@]host:port[/db]
struct RedisUrl {
  std::string host;
  uint16_t port = 6379;
  std::string password;
  int db = 0;
  /// Throws ArgumentError naming what is wrong and the expected form.
  static RedisUrl parse(const std::string &url);
  std::string str() const; ///< without the password
};

/// Thread-safe: concurrent requests use separate pooled connections.
class RedisCache final : public CacheLevel {
public:
  struct Config {
    RedisUrl url;
    std::string hmac_key; ///< empty: entries are not signed
    std::chrono::milliseconds connect_timeout{50};
    std::chrono::milliseconds request_timeout{200};
    size_t pool_size = 4;
    std::chrono::milliseconds lock_ttl{30000};      ///< how long a compiling machine holds the key
    std::chrono::milliseconds wait_for_peer{10000}; ///< how long others wait for its entry
    std::chrono::milliseconds retry_after{1000};    ///< after a failure, no request for this long
    std::chrono::seconds ttl{7 * 24 * 3600};        ///< values expire after this; 0: never
  };
  explicit RedisCache(Config c);
  ~RedisCache() override;

  BinarySource source() const override { return BinarySource::remote; }
  std::optional<CachedKernel> get(const std::string &key) override;
  void put(const std::string &key, const CachedKernel &entry) override;
  std::unique_ptr<KeyLock> lock(const std::string &key) override;
  std::optional<std::string> get_record(const std::string &kind, const std::string &id) override;
  void put_record(const std::string &kind, const std::string &id, const std::string &text) override;

  /// The value stored for `entry` and back (exposed for tests).
  std::string encode(const CachedKernel &entry) const;
  std::optional<CachedKernel> decode(const std::string &value, std::string &why) const;
  /// The same for a record's text.
  std::string encode_record(const std::string &text) const;
  std::optional<std::string> decode_record(const std::string &value, std::string &why) const;
  /// The Redis key of a record (exposed for tests).
  static std::string record_key(const std::string &kind, const std::string &id);

  struct Reply; ///< a hiredis reply
  struct Connection;

private:
  /// Sends `commands` pipelined on one connection and returns one reply per
  /// command, or nullopt after any failure (which it reports once).
  std::optional<std::vector<std::shared_ptr<Reply>>>
  request(const std::vector<std::vector<std::string>> &commands);
  std::optional<std::vector<std::shared_ptr<Reply>>>
  request_once(const std::vector<std::vector<std::string>> &commands, bool &stale);
  void failed(const std::string &why);
  /// "SET key value [PX ttl]".
  std::vector<std::string> set_command(std::string key, std::string value) const;
  /// `magic`, the signature of `payload`, `payload`; and back.
  std::string seal(std::string_view magic, std::string_view payload) const;
  std::optional<std::string_view> unseal(std::string_view magic, std::string_view value,
                                         std::string &why) const;
  /// Reports a value it rejected (once per process, with the other warnings).
  void rejected(const std::string &key, const std::string &why);
  std::unique_ptr<Connection> take_connection(std::string &why);
  void give_back(std::unique_ptr<Connection> c);

  Config config_;
  std::mutex pool_mutex_;
  std::vector<std::unique_ptr<Connection>> pool_;
  std::atomic<int64_t> down_until_ns_{0};
  std::atomic<bool> warned_{false};
};

} // namespace kiln::runtime
