#include "runtime/redis_cache.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <array>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <cstring>
#include <functional>
#include <iostream>
#include <random>
#include <thread>

#include <hiredis/hiredis.h>
#include <hiredis/read.h>

#include "compiler/support/sha256.hpp"
#include "kiln/error.hpp"
#include "runtime/cached_kernel_json.hpp"

namespace kiln::runtime {

namespace asio = boost::asio;
using asio::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::string_view kMagic = "KILN1";
constexpr std::string_view kRecordMagic = "KILNR1";
constexpr size_t kSigBytes = 32;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

std::string value_key(const std::string &key) {
  return "kiln:v1:" + key;
}
std::string lock_key(const std::string &key) {
  return "kiln:v1:lock:" + key;
}

std::array<uint8_t, kSigBytes> sign(const std::string &hmac_key, std::string_view payload) {
  std::array<uint8_t, kSigBytes> sig{};
  if (hmac_key.empty())
    return sig;
  unsigned len = 0;
  HMAC(EVP_sha256(), hmac_key.data(), static_cast<int>(hmac_key.size()),
       reinterpret_cast<const unsigned char *>(payload.data()), payload.size(), sig.data(), &len);
  return sig;
}

/// Runs `io` until `finished` or `deadline`; past the deadline, closes the
/// socket and lets the aborted handlers run. True when it finished in time.
bool run_until(asio::io_context &io, tcp::socket &socket, const bool &finished,
               Clock::time_point deadline) {
  io.restart();
  while (!finished) {
    if (io.run_one_until(deadline) == 0 && (io.stopped() || Clock::now() >= deadline))
      break;
  }
  if (finished)
    return true;
  boost::system::error_code ignored;
  socket.close(ignored);
  io.restart();
  io.run(); // the cancelled operations' handlers, which touch only what the caller still owns
  return false;
}

} // namespace

// ---- URL ----

RedisUrl RedisUrl::parse(const std::string &url) {
  auto bad = [&](const std::string &what) -> RedisUrl {
    throw ArgumentError("KILN_REDIS_URL='" + url + "': " + what +
                        "; expected redis://[:password@]host:port[/db]");
  };
  constexpr std::string_view scheme = "redis://";
  if (url.compare(0, scheme.size(), scheme) != 0)
    return bad("it does not start with redis://");
  std::string rest = url.substr(scheme.size());
  RedisUrl u;
  if (const size_t at = rest.rfind('@'); at != std::string::npos) {
    std::string auth = rest.substr(0, at);
    rest = rest.substr(at + 1);
    if (auth.empty() || auth[0] != ':')
      return bad("the part before '@' must be ':password'");
    u.password = auth.substr(1);
  }
  std::string hostport = rest;
  if (const size_t slash = rest.find('/'); slash != std::string::npos) {
    hostport = rest.substr(0, slash);
    const std::string db = rest.substr(slash + 1);
    if (!db.empty()) {
      if (db.find_first_not_of("0123456789") != std::string::npos || db.size() > 4)
        return bad("the database '" + db + "' is not a small number");
      u.db = std::stoi(db);
    }
  }
  const size_t colon = hostport.rfind(':');
  u.host = hostport.substr(0, colon);
  if (colon != std::string::npos) {
    const std::string port = hostport.substr(colon + 1);
    if (port.empty() || port.size() > 5 ||
        port.find_first_not_of("0123456789") != std::string::npos || std::stoi(port) < 1 ||
        std::stoi(port) > 65535)
      return bad("the port '" + port + "' is not a number from 1 to 65535");
    u.port = static_cast<uint16_t>(std::stoi(port));
  }
  if (u.host.empty())
    return bad("there is no host");
  return u;
}

std::string RedisUrl::str() const {
  return "redis://" + host + ":" + std::to_string(port) + (db ? "/" + std::to_string(db) : "");
}

// ---- connections ----

struct RedisCache::Reply {
  redisReply *r = nullptr;
  explicit Reply(void *p) : r(static_cast<redisReply *>(p)) {}
  ~Reply() { freeReplyObject(r); }
};

struct RedisCache::Connection {
  asio::io_context io;
  tcp::socket socket{io};
  redisReader *reader = redisReaderCreate();
  bool fresh = true; ///< AUTH and SELECT not sent yet
  ~Connection() { redisReaderFree(reader); }
};

RedisCache::RedisCache(Config c) : config_(std::move(c)) {}
RedisCache::~RedisCache() = default;

void RedisCache::failed(const std::string &why) {
  down_until_ns_.store(
      now_ns() + std::chrono::duration_cast<std::chrono::nanoseconds>(config_.retry_after).count(),
      std::memory_order_relaxed);
  if (!warned_.exchange(true))
    std::cerr << "kiln: warning: the remote cache " << config_.url.str() << " failed (" << why
              << "); kernels are compiled locally meanwhile (this warning is printed once)\n";
}

std::unique_ptr<RedisCache::Connection> RedisCache::take_connection(std::string &why) {
  {
    std::lock_guard lock(pool_mutex_);
    if (!pool_.empty()) {
      std::unique_ptr<Connection> c = std::move(pool_.back());
      pool_.pop_back();
      return c;
    }
  }
  auto c = std::make_unique<Connection>();
  if (!c->reader) {
    why = "out of memory";
    return nullptr;
  }
  tcp::resolver resolver(c->io);
  bool finished = false, ok = false;
  resolver.async_resolve(
      config_.url.host, std::to_string(config_.url.port),
      [&](const boost::system::error_code &ec, const tcp::resolver::results_type &results) {
        if (ec) {
          why = "cannot resolve " + config_.url.host + ": " + ec.message();
          finished = true;
          return;
        }
        asio::async_connect(c->socket, results,
                            [&](const boost::system::error_code &e, const tcp::endpoint &) {
                              finished = true;
                              ok = !e;
                              if (e)
                                why = "cannot connect: " + e.message();
                            });
      });
  if (!run_until(c->io, c->socket, finished, Clock::now() + config_.connect_timeout)) {
    resolver.cancel();
    why = "no connection within " + std::to_string(config_.connect_timeout.count()) + " ms";
    return nullptr;
  }
  if (!ok)
    return nullptr;
  boost::system::error_code ignored;
  c->socket.set_option(tcp::no_delay(true), ignored);
  return c;
}

void RedisCache::give_back(std::unique_ptr<Connection> c) {
  std::lock_guard lock(pool_mutex_);
  if (pool_.size() < config_.pool_size)
    pool_.push_back(std::move(c));
}

std::optional<std::vector<std::shared_ptr<RedisCache::Reply>>>
RedisCache::request(const std::vector<std::vector<std::string>> &commands) {
  if (now_ns() < down_until_ns_.load(std::memory_order_relaxed))
    return std::nullopt; // failed a moment ago: do not pay the deadline again
  bool stale = false;
  auto replies = request_once(commands, stale);
  if (!replies && stale) {
    // A pooled connection the server had closed (a restart, an idle
    // timeout): the others are as old, so start afresh, once.
    {
      std::lock_guard lock(pool_mutex_);
      pool_.clear();
    }
    replies = request_once(commands, stale);
  }
  return replies;
}

std::optional<std::vector<std::shared_ptr<RedisCache::Reply>>>
RedisCache::request_once(const std::vector<std::vector<std::string>> &commands, bool &stale) {
  stale = false;
  std::string why;
  std::unique_ptr<Connection> c = take_connection(why);
  if (!c) {
    failed(why);
    return std::nullopt;
  }
  std::vector<std::vector<std::string>> all;
  size_t setup = 0;
  if (c->fresh) {
    if (!config_.url.password.empty())
      all.push_back({"AUTH", config_.url.password});
    if (config_.url.db)
      all.push_back({"SELECT", std::to_string(config_.url.db)});
    setup = all.size();
  }
  all.insert(all.end(), commands.begin(), commands.end());
  // Pipelined: every command goes out in one write, the replies come back in order.
  std::string wire;
  for (const auto &cmd : all) {
    std::vector<const char *> argv;
    std::vector<size_t> lens;
    for (const std::string &a : cmd) {
      argv.push_back(a.data());
      lens.push_back(a.size());
    }
    char *out = nullptr;
    const int n =
        redisFormatCommandArgv(&out, static_cast<int>(argv.size()), argv.data(), lens.data());
    if (n < 0) {
      failed("cannot format a command");
      return std::nullopt;
    }
    wire.append(out, static_cast<size_t>(n));
    redisFreeCommand(out);
  }

  std::vector<std::shared_ptr<Reply>> replies;
  bool finished = false, ok = false, closed = false;
  const bool reused = !c->fresh;
  std::array<char, 16384> buf;
  std::function<void()> read_more = [&] {
    c->socket.async_read_some(
        asio::buffer(buf), [&](const boost::system::error_code &ec, size_t n) {
          if (ec) {
            why = ec == asio::error::eof ? "the server closed the connection" : ec.message();
            closed = ec == asio::error::eof || ec == asio::error::connection_reset;
            finished = true;
            return;
          }
          if (redisReaderFeed(c->reader, buf.data(), n) != REDIS_OK) {
            why = "unreadable reply";
            finished = true;
            return;
          }
          for (;;) {
            void *r = nullptr;
            if (redisReaderGetReply(c->reader, &r) != REDIS_OK) {
              why = std::string("not a Redis reply (") + c->reader->errstr + ")";
              finished = true;
              return;
            }
            if (!r)
              break;
            replies.push_back(std::make_shared<Reply>(r));
          }
          if (replies.size() >= all.size()) {
            ok = replies.size() == all.size();
            if (!ok)
              why = "more replies than requests";
            finished = true;
            return;
          }
          read_more();
        });
  };
  asio::async_write(
      c->socket, asio::buffer(wire), [&](const boost::system::error_code &ec, size_t) {
        if (ec) {
          why = "cannot send: " + ec.message();
          closed = ec == asio::error::broken_pipe || ec == asio::error::connection_reset;
          finished = true;
          return;
        }
        read_more();
      });
  if (!run_until(c->io, c->socket, finished, Clock::now() + config_.request_timeout))
    why = "no reply within " + std::to_string(config_.request_timeout.count()) + " ms";
  if (!ok) {
    if (reused && closed && replies.empty())
      stale = true; // the caller retries on a new connection before calling it a failure
    else
      failed(why);
    return std::nullopt; // the connection is dropped: its stream may be mid-reply
  }
  for (size_t i = 0; i < setup; ++i)
    if (replies[i]->r->type == REDIS_REPLY_ERROR) {
      failed(std::string(i == 0 && !config_.url.password.empty() ? "AUTH" : "SELECT") +
             " was refused: " + std::string(replies[i]->r->str, replies[i]->r->len));
      return std::nullopt;
    }
  c->fresh = false;
  replies.erase(replies.begin(), replies.begin() + static_cast<std::ptrdiff_t>(setup));
  for (const auto &r : replies)
    if (r->r->type == REDIS_REPLY_ERROR) {
      failed("the server answered " + std::string(r->r->str, r->r->len));
      return std::nullopt;
    }
  give_back(std::move(c));
  return replies;
}

// ---- entries ----

std::string RedisCache::seal(std::string_view magic, std::string_view payload) const {
  const auto sig = sign(config_.hmac_key, payload);
  std::string value(magic);
  value.append(reinterpret_cast<const char *>(sig.data()), sig.size());
  return value.append(payload);
}

std::optional<std::string_view> RedisCache::unseal(std::string_view magic, std::string_view value,
                                                   std::string &why) const {
  const size_t head = magic.size() + kSigBytes;
  if (value.size() < head || value.substr(0, magic.size()) != magic) {
    why = "not a kiln value";
    return std::nullopt;
  }
  const std::string_view payload = value.substr(head);
  if (!config_.hmac_key.empty()) {
    const auto sig = sign(config_.hmac_key, payload);
    if (CRYPTO_memcmp(sig.data(), value.data() + magic.size(), kSigBytes) != 0) {
      why = "its signature does not match KILN_CACHE_HMAC_KEY";
      return std::nullopt;
    }
  }
  return payload;
}

std::string RedisCache::encode(const CachedKernel &entry) const {
  const std::optional<nlohmann::json> meta = metadata_json(entry);
  if (!meta)
    return "";
  const std::string text = meta->dump();
  std::string payload(8, '\0');
  const uint64_t n = text.size();
  for (int i = 0; i < 8; ++i)
    payload[static_cast<size_t>(i)] = static_cast<char>(n >> (8 * i));
  payload += text;
  payload.append(reinterpret_cast<const char *>(entry.kernel.binary.data()),
                 entry.kernel.binary.size());
  return seal(kMagic, payload);
}

std::optional<CachedKernel> RedisCache::decode(const std::string &value, std::string &why) const {
  const std::optional<std::string_view> sealed = unseal(kMagic, value, why);
  if (!sealed)
    return std::nullopt;
  const std::string_view payload = *sealed;
  if (payload.size() < 8) {
    why = "truncated";
    return std::nullopt;
  }
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i)
    n |= uint64_t(static_cast<uint8_t>(payload[static_cast<size_t>(i)])) << (8 * i);
  if (n > payload.size() - 8) {
    why = "truncated";
    return std::nullopt;
  }
  try {
    CachedKernel out = from_metadata_json(nlohmann::json::parse(payload.substr(8, n)));
    const std::string_view binary = payload.substr(8 + n);
    if (sha256_hex(binary) != out.kernel.hash) {
      why = "its binary does not match its hash";
      return std::nullopt;
    }
    out.kernel.binary.assign(binary.begin(), binary.end());
    return out;
  } catch (const std::exception &e) {
    why = std::string("unreadable metadata: ") + e.what();
    return std::nullopt;
  }
}

std::string RedisCache::encode_record(const std::string &text) const {
  return seal(kRecordMagic, text);
}

std::optional<std::string> RedisCache::decode_record(const std::string &value,
                                                     std::string &why) const {
  const std::optional<std::string_view> text = unseal(kRecordMagic, value, why);
  return text ? std::optional<std::string>(*text) : std::nullopt;
}

std::string RedisCache::record_key(const std::string &kind, const std::string &id) {
  return "kiln:v1:" + kind + ":" + id;
}

void RedisCache::rejected(const std::string &key, const std::string &why) {
  if (!warned_.exchange(true))
    std::cerr << "kiln: warning: rejected the remote cache entry " << key << " from "
              << config_.url.str() << ": " << why << " (this warning is printed once)\n";
}

std::vector<std::string> RedisCache::set_command(std::string key, std::string value) const {
  std::vector<std::string> cmd = {"SET", std::move(key), std::move(value)};
  if (config_.ttl.count() > 0) {
    cmd.push_back("PX");
    cmd.push_back(
        std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(config_.ttl).count()));
  }
  return cmd;
}

std::optional<CachedKernel> RedisCache::get(const std::string &key) {
  const auto replies = request({{"GET", value_key(key)}});
  if (!replies)
    return std::nullopt;
  const redisReply *r = (*replies)[0]->r;
  if (r->type != REDIS_REPLY_STRING)
    return std::nullopt; // nil: a plain miss
  std::string why;
  std::optional<CachedKernel> out = decode(std::string(r->str, r->len), why);
  if (!out) {
    rejected(key, why);
    return std::nullopt;
  }
  out->kernel.key = key;
  return out;
}

void RedisCache::put(const std::string &key, const CachedKernel &entry) {
  std::string value = encode(entry);
  if (!value.empty())
    request({set_command(value_key(key), std::move(value))});
}

std::optional<std::string> RedisCache::get_record(const std::string &kind, const std::string &id) {
  const auto replies = request({{"GET", record_key(kind, id)}});
  if (!replies)
    return std::nullopt;
  const redisReply *r = (*replies)[0]->r;
  if (r->type != REDIS_REPLY_STRING)
    return std::nullopt;
  std::string why;
  std::optional<std::string> text = decode_record(std::string(r->str, r->len), why);
  if (!text)
    rejected(kind + " record " + id, why);
  return text;
}

void RedisCache::put_record(const std::string &kind, const std::string &id,
                            const std::string &text) {
  request({set_command(record_key(kind, id), encode_record(text))});
}

namespace {

/// The fleet-wide lock of one key: deleted on release if it is still ours.
class RemoteLock final : public KeyLock {
public:
  RemoteLock(std::function<void()> release) : release_(std::move(release)) {}
  ~RemoteLock() override { release_(); }

private:
  std::function<void()> release_;
};

std::string random_token() {
  std::random_device rd;
  std::string t;
  for (int i = 0; i < 4; ++i)
    t += std::to_string(rd());
  return t;
}

} // namespace

std::unique_ptr<KeyLock> RedisCache::lock(const std::string &key) {
  const std::string token = random_token();
  const auto replies = request(
      {{"SET", lock_key(key), token, "NX", "PX", std::to_string(config_.lock_ttl.count())}});
  if (!replies)
    return nullptr;
  if ((*replies)[0]->r->type == REDIS_REPLY_STATUS) // OK: this machine compiles
    return std::make_unique<RemoteLock>([this, key, token] {
      request({{"EVAL",
                "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) "
                "end return 0",
                "1", lock_key(key), token}});
    });
  // Another machine is compiling it: wait for its entry, up to a bound.
  const auto until = Clock::now() + config_.wait_for_peer;
  while (Clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const auto r = request({{"EXISTS", value_key(key)}, {"EXISTS", lock_key(key)}});
    if (!r)
      return nullptr;
    if ((*r)[0]->r->integer == 1 || (*r)[1]->r->integer == 0)
      return std::make_unique<KeyLock>(); // its entry is there (or it gave up): look again
  }
  return nullptr;
}

} // namespace kiln::runtime
