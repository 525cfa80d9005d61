// A Redis client for the remote cache (DESIGN.md section 5): pipelined
// requests on a small pool of connections, with a connect and a request
// deadline enforced by Boost.Asio's asynchronous socket operations and
// timers; RESP is written by hiredis's command formatter and read by its
// reader (redisReader).
//
// A Redis that is down, slow or speaks garbage costs one request at most the
// deadline, then a circuit breaker keeps requests away from it: none for 1 s
// after a failure, doubling on each failure in a row up to 60 s, back to
// none at the first success. It logs one warning per process, not one per
// request.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

struct redisReply; // hiredis's

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
class RedisClient {
public:
  struct Config {
    RedisUrl url;
    std::chrono::milliseconds connect_timeout{50};
    std::chrono::milliseconds request_timeout{200};
    size_t pool_size = 4;
    std::chrono::milliseconds breaker_first{1000}; ///< no request this long after a failure
    std::chrono::milliseconds breaker_max{60000};  ///< the longest the doubling goes
  };
  /// One hiredis reply, owned.
  struct Reply {
    redisReply *r = nullptr;
    explicit Reply(void *p) : r(static_cast<redisReply *>(p)) {}
    ~Reply();
    Reply(const Reply &) = delete;
    Reply &operator=(const Reply &) = delete;
  };
  using Replies = std::vector<std::shared_ptr<Reply>>;

  explicit RedisClient(Config c);
  ~RedisClient();

  /// Sends `commands` pipelined on one connection and returns one reply per
  /// command, or nullopt after a failure (reported once per process) or
  /// while the breaker is open (then without touching the network). An
  /// error reply to any command is a failure.
  std::optional<Replies> request(const std::vector<std::vector<std::string>> &commands);
  /// Reports a failure the caller found in a reply (one it cannot read):
  /// the breaker opens as for a failed request.
  void failed(const std::string &why);
  /// Whether the breaker is open now (requests return nullopt at once).
  bool open() const;
  /// The breaker's current period (0: no failure since the last success).
  std::chrono::milliseconds backoff() const {
    return std::chrono::milliseconds(backoff_ms_.load(std::memory_order_relaxed));
  }
  /// Ends the current period now, as if it had passed (tests, which would
  /// otherwise sleep through it).
  void end_period() { open_until_ns_.store(0, std::memory_order_relaxed); }
  const Config &config() const { return config_; }

  struct Connection;

private:
  std::optional<Replies> request_once(const std::vector<std::vector<std::string>> &commands,
                                      bool &stale);
  void succeeded();
  std::unique_ptr<Connection> take_connection(std::string &why);
  void give_back(std::unique_ptr<Connection> c);

  Config config_;
  std::mutex pool_mutex_;
  std::vector<std::unique_ptr<Connection>> pool_;
  std::atomic<int64_t> open_until_ns_{0}; ///< the breaker: no request before then
  std::atomic<int64_t> backoff_ms_{0};    ///< its last period; 0: no failure since a success
  std::atomic<bool> warned_{false};
};

} // namespace kiln::runtime
