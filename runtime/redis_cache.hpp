// The remote cache (DESIGN.md section 5): Redis, shared by a fleet of
// machines, off unless KILN_REDIS_URL is set.
//
// A launch that misses memory and disk starts the remote look-up and the
// local compile together (start_get); whichever finishes first wins: a hit
// stops the compile at its next stage boundary, a compile that finishes
// first does not wait for Redis. The look-up is one atomic script (EVAL):
// the entry if it is there, else a short-lived claim on the key (`SET NX
// PX`) for this process, else word that another machine holds the claim;
// then this process waits (up to a bound) for that machine's entry, asking
// again every few milliseconds, and compiles itself if none comes: a fleet
// compiles a key once. Look-ups and writes are sent by one thread of this
// cache, pipelined, so a launch never waits on the network for them; the
// writes still queued at exit are sent then (flush), within the deadlines.
//
// Values (runtime/redis_codec.hpp) are signed with KILN_CACHE_HMAC_KEY and
// expire after KILN_REDIS_TTL_S (a fleet's Redis is not an archive; 0 keeps
// them); records (tuning results) are values of their own key space. A
// Redis that is down, slow or speaks garbage is a miss and costs no launch
// more than the deadline (runtime/redis_client.hpp: deadlines, a circuit
// breaker, one warning per process); a value refused (damaged, or signed
// otherwise) is a miss with one warning per process.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "runtime/cache_level.hpp"
#include "runtime/knobs.hpp"
#include "runtime/redis_client.hpp"
#include "runtime/redis_codec.hpp"

namespace kiln::runtime {

/// Thread-safe. Outlives the look-ups it started.
class RedisCache final : public CacheLevel {
public:
  struct Config {
    RedisClient::Config client;
    std::string hmac_key;                           ///< empty: values are not signed
    std::chrono::milliseconds claim_ttl{30000};     ///< how long a compiling process holds a key
    std::chrono::milliseconds wait_for_peer{10000}; ///< how long others wait for its entry
    std::chrono::milliseconds ask_every{20};        ///< how often they look meanwhile
    std::chrono::seconds ttl{7 * 24 * 3600};        ///< values expire after this; 0: never

    /// What the knobs say (KILN_REDIS_URL, _CONNECT_TIMEOUT_MS, _TIMEOUT_MS,
    /// _TTL_S, _CLAIM_TTL_MS, _PEER_WAIT_MS, KILN_CACHE_HMAC_KEY). Throws
    /// ArgumentError for a malformed URL.
    static Config from_knobs(const Knobs &k);
  };
  explicit RedisCache(Config c);
  /// Sends what is queued (within the deadlines), then stops its thread.
  ~RedisCache() override;

  BinarySource source() const override { return BinarySource::remote; }
  /// A plain GET, answered before it returns (no claim).
  std::optional<CachedKernel> get(const std::string &key) override;
  /// Queued: sent by the cache's thread.
  void put(const std::string &key, const CachedKernel &entry) override;
  std::shared_ptr<PendingGet> start_get(const std::string &key) override;
  std::optional<std::string> get_record(const std::string &kind, const std::string &id) override;
  void put_record(const std::string &kind, const std::string &id, const std::string &text) override;
  /// Waits until every write queued so far has been sent (or has failed).
  void flush() override;

  const RedisCodec &codec() const { return codec_; }
  /// The Redis keys of an entry, of its claim, of a record (exposed for tests).
  static std::string value_key(const std::string &key);
  static std::string claim_key(const std::string &key);
  static std::string record_key(const std::string &kind, const std::string &id);

  struct Lookup;

private:
  class Handle;
  void work();
  /// One round trip: the writes, then a get-or-claim for each look-up;
  /// look-ups that must ask again (a peer holds the claim) go to `again`.
  void send(std::vector<std::vector<std::string>> writes,
            const std::vector<std::shared_ptr<Lookup>> &asks,
            std::vector<std::shared_ptr<Lookup>> &again);
  void answer(const std::shared_ptr<Lookup> &l, const RedisClient::Reply &reply,
              std::vector<std::shared_ptr<Lookup>> &again);
  void abandon(const std::shared_ptr<Lookup> &l);
  void enqueue_write(std::vector<std::string> command);
  /// "SET key value [PX ttl]".
  std::vector<std::string> set_command(std::string key, std::string value) const;
  /// Reports a value it refused (once per process).
  void refused(const std::string &what, const std::string &why);

  Config config_;
  RedisClient client_;
  RedisCodec codec_;
  std::atomic<bool> refused_warned_{false};

  std::mutex queue_mutex_;
  std::condition_variable queue_cv_;   ///< the thread: there is work, or stop
  std::condition_variable flushed_cv_; ///< flush(): a round trip ended
  std::vector<std::vector<std::string>> writes_;
  std::vector<std::shared_ptr<Lookup>> asking_;  ///< new look-ups
  std::vector<std::shared_ptr<Lookup>> waiting_; ///< a peer holds their claim
  uint64_t round_ = 0;                           ///< round trips ended
  bool busy_ = false, stop_ = false;
  std::thread thread_;
};

} // namespace kiln::runtime
