#include "runtime/redis_client.hpp"

#include <algorithm>
#include <array>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <functional>
#include <iostream>

#include <hiredis/hiredis.h>
#include <hiredis/read.h>

#include "kiln/error.hpp"

namespace kiln::runtime {

namespace asio = boost::asio;
using asio::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
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

RedisClient::Reply::~Reply() {
  freeReplyObject(r);
}

struct RedisClient::Connection {
  asio::io_context io;
  tcp::socket socket{io};
  redisReader *reader = redisReaderCreate();
  bool fresh = true; ///< AUTH and SELECT not sent yet
  ~Connection() { redisReaderFree(reader); }
};

RedisClient::RedisClient(Config c) : config_(std::move(c)) {}
RedisClient::~RedisClient() = default;

bool RedisClient::open() const {
  return now_ns() < open_until_ns_.load(std::memory_order_relaxed);
}

void RedisClient::failed(const std::string &why) {
  // The breaker: the first failure keeps requests away for breaker_first,
  // each failure of the probe that follows doubles that, up to breaker_max.
  // Requests that were in flight when it opened fail too: they do not
  // double it again.
  const int64_t now = now_ns();
  int64_t until = open_until_ns_.load(std::memory_order_relaxed);
  if (now >= until) {
    const int64_t last = backoff_ms_.load(std::memory_order_relaxed);
    const int64_t next = last == 0 ? config_.breaker_first.count()
                                   : std::min<int64_t>(last * 2, config_.breaker_max.count());
    if (open_until_ns_.compare_exchange_strong(until, now + next * 1'000'000))
      backoff_ms_.store(next, std::memory_order_relaxed);
  }
  if (!warned_.exchange(true))
    std::cerr << "kiln: warning: the remote cache " << config_.url.str() << " failed (" << why
              << "); kernels are compiled locally, and Redis is asked again after "
              << config_.breaker_first.count()
              << " ms, then after twice as long on each failure in a row up to "
              << config_.breaker_max.count() / 1000 << " s (this warning is printed once)\n";
}

void RedisClient::succeeded() {
  if (backoff_ms_.load(std::memory_order_relaxed) != 0)
    backoff_ms_.store(0, std::memory_order_relaxed);
}

std::unique_ptr<RedisClient::Connection> RedisClient::take_connection(std::string &why) {
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

void RedisClient::give_back(std::unique_ptr<Connection> c) {
  std::lock_guard lock(pool_mutex_);
  if (pool_.size() < config_.pool_size)
    pool_.push_back(std::move(c));
}

std::optional<RedisClient::Replies>
RedisClient::request(const std::vector<std::vector<std::string>> &commands) {
  if (open())
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

std::optional<RedisClient::Replies>
RedisClient::request_once(const std::vector<std::vector<std::string>> &commands, bool &stale) {
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

  Replies replies;
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
  succeeded();
  return replies;
}

} // namespace kiln::runtime
