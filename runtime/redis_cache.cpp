#include "runtime/redis_cache.hpp"

#include <algorithm>
#include <iostream>
#include <random>

#include <hiredis/hiredis.h>

namespace kiln::runtime {

using Clock = std::chrono::steady_clock;

namespace {

constexpr std::string_view kPrefix = "kiln:v2:";

/// KEYS: the value, the claim; ARGV: this process's token, the claim's
/// lifetime in ms. {1, value}: a hit; {2}: claimed for this process; {3}:
/// another process holds the claim. One script, so no two processes both
/// see a miss and both claim.
constexpr const char *kGetOrClaim =
    "local v = redis.call('GET', KEYS[1]) if v then return {1, v} end "
    "if redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then return {2} end "
    "return {3}";
/// Deletes the claim if it is still this process's.
constexpr const char *kRelease =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end "
    "return 0";

std::string random_token() {
  std::random_device rd;
  std::string t;
  for (int i = 0; i < 4; ++i)
    t += std::to_string(rd());
  return t;
}

} // namespace

struct RedisCache::Lookup {
  enum class State { asking, hit, claimed, peer, miss };
  std::string key, token;
  std::mutex mutex;
  std::condition_variable changed;
  State state = State::asking; ///< under mutex
  bool abandoned = false;      ///< under mutex
  std::optional<CachedKernel> entry;
  Clock::time_point give_up_at{}; ///< for a peer's entry; set when first seen
  Clock::time_point ask_at{};     ///< the next ask while a peer holds the claim

  void set(State s) {
    {
      std::lock_guard lock(mutex);
      state = s;
    }
    changed.notify_all();
  }
};

class RedisCache::Handle final : public PendingGet {
public:
  Handle(RedisCache &cache, std::shared_ptr<Lookup> l) : cache_(cache), l_(std::move(l)) {}
  ~Handle() override { cache_.abandon(l_); }
  bool arrived(bool may_wait) override {
    std::unique_lock lock(l_->mutex);
    // The cache's thread ends a peer's wait by its bound (or at stop).
    if (may_wait)
      l_->changed.wait(lock, [&] { return l_->state != Lookup::State::peer; });
    return l_->state == Lookup::State::hit;
  }
  CachedKernel take() override {
    std::lock_guard lock(l_->mutex);
    CachedKernel out = std::move(*l_->entry);
    l_->entry.reset();
    return out;
  }

private:
  RedisCache &cache_;
  std::shared_ptr<Lookup> l_;
};

RedisCache::Config RedisCache::Config::from_knobs(const Knobs &k) {
  Config c;
  c.client.url = RedisUrl::parse(k.redis_url);
  c.client.connect_timeout = std::chrono::milliseconds(k.redis_connect_timeout_ms);
  c.client.request_timeout = std::chrono::milliseconds(k.redis_timeout_ms);
  c.hmac_key = k.cache_hmac_key;
  c.ttl = std::chrono::seconds(k.redis_ttl_s);
  c.claim_ttl = std::chrono::milliseconds(k.redis_claim_ttl_ms);
  c.wait_for_peer = std::chrono::milliseconds(k.redis_peer_wait_ms);
  return c;
}

RedisCache::RedisCache(Config c)
    : config_(std::move(c)), client_(config_.client), codec_(config_.hmac_key),
      thread_([this] { work(); }) {}

RedisCache::~RedisCache() {
  {
    std::lock_guard lock(queue_mutex_);
    stop_ = true;
  }
  queue_cv_.notify_all();
  thread_.join();
}

std::string RedisCache::value_key(const std::string &key) {
  return std::string(kPrefix) + key;
}
std::string RedisCache::claim_key(const std::string &key) {
  return std::string(kPrefix) + "claim:" + key;
}
std::string RedisCache::record_key(const std::string &kind, const std::string &id) {
  return std::string(kPrefix) + kind + ":" + id;
}

void RedisCache::refused(const std::string &what, const std::string &why) {
  if (!refused_warned_.exchange(true))
    std::cerr << "kiln: warning: refused the remote cache entry " << what << " from "
              << config_.client.url.str() << ": " << why
              << "; it counts as a miss (this warning is printed once)\n";
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

// ---- synchronous requests ----

std::optional<CachedKernel> RedisCache::get(const std::string &key) {
  const auto replies = client_.request({{"GET", value_key(key)}});
  if (!replies)
    return std::nullopt;
  const redisReply *r = (*replies)[0]->r;
  if (r->type != REDIS_REPLY_STRING)
    return std::nullopt; // nil: a plain miss
  std::string why;
  std::optional<CachedKernel> out = codec_.decode(std::string_view(r->str, r->len), why);
  if (!out) {
    refused(key, why);
    return std::nullopt;
  }
  out->kernel.key = key;
  return out;
}

std::optional<std::string> RedisCache::get_record(const std::string &kind, const std::string &id) {
  const auto replies = client_.request({{"GET", record_key(kind, id)}});
  if (!replies)
    return std::nullopt;
  const redisReply *r = (*replies)[0]->r;
  if (r->type != REDIS_REPLY_STRING)
    return std::nullopt;
  std::string why;
  std::optional<std::string> text = codec_.decode_record(std::string_view(r->str, r->len), why);
  if (!text)
    refused(kind + " record " + id, why);
  return text;
}

void RedisCache::put_record(const std::string &kind, const std::string &id,
                            const std::string &text) {
  client_.request({set_command(record_key(kind, id), codec_.encode_record(text))});
}

// ---- the cache's thread ----

void RedisCache::enqueue_write(std::vector<std::string> command) {
  {
    std::lock_guard lock(queue_mutex_);
    writes_.push_back(std::move(command));
  }
  queue_cv_.notify_all();
}

void RedisCache::put(const std::string &key, const CachedKernel &entry) {
  if (client_.open())
    return; // Redis failed a moment ago: do not pile up writes for it
  std::string value = codec_.encode(entry);
  if (!value.empty())
    enqueue_write(set_command(value_key(key), std::move(value)));
}

std::shared_ptr<PendingGet> RedisCache::start_get(const std::string &key) {
  auto l = std::make_shared<Lookup>();
  l->key = key;
  l->token = random_token();
  if (client_.open()) {
    l->state = Lookup::State::miss; // no request while the breaker is open
  } else {
    {
      std::lock_guard lock(queue_mutex_);
      asking_.push_back(l);
    }
    queue_cv_.notify_all();
  }
  return std::make_shared<Handle>(*this, std::move(l));
}

void RedisCache::abandon(const std::shared_ptr<Lookup> &l) {
  bool release = false;
  {
    std::lock_guard lock(l->mutex);
    l->abandoned = true;
    release = l->state == Lookup::State::claimed;
  }
  // Its compile is over (stored, or failed): let others compile the key
  // rather than wait for an entry that may never come.
  if (release)
    enqueue_write({"EVAL", kRelease, "1", claim_key(l->key), l->token});
}

void RedisCache::flush() {
  std::unique_lock lock(queue_mutex_);
  // Every write queued now goes out in the round trip that takes it, so
  // two ends of round trips from now it has gone (or failed): each is
  // bounded by the client's deadlines.
  const uint64_t target = round_ + (busy_ ? 2 : 1);
  flushed_cv_.wait(lock, [&] { return (writes_.empty() && !busy_) || round_ >= target || stop_; });
}

void RedisCache::work() {
  std::unique_lock lock(queue_mutex_);
  for (;;) {
    const auto due = [&] {
      if (stop_ || !writes_.empty() || !asking_.empty())
        return true;
      const auto now = Clock::now();
      for (const auto &l : waiting_)
        if (l->ask_at <= now)
          return true;
      return false;
    };
    if (waiting_.empty()) {
      queue_cv_.wait(lock, due);
    } else {
      auto next = waiting_.front()->ask_at;
      for (const auto &l : waiting_)
        next = std::min(next, l->ask_at);
      queue_cv_.wait_until(lock, next, due);
    }
    if (stop_) {
      // Whatever is still waiting for a peer compiles itself.
      for (auto &l : asking_)
        l->set(Lookup::State::miss);
      for (auto &l : waiting_)
        l->set(Lookup::State::miss);
      asking_.clear();
      waiting_.clear();
      if (writes_.empty())
        break;
    }
    std::vector<std::vector<std::string>> writes = std::move(writes_);
    writes_.clear();
    std::vector<std::shared_ptr<Lookup>> asks = std::move(asking_);
    asking_.clear();
    const auto now = Clock::now();
    std::erase_if(waiting_, [&](std::shared_ptr<Lookup> &l) {
      if (l->ask_at > now)
        return false;
      asks.push_back(std::move(l));
      return true;
    });
    busy_ = true;
    lock.unlock();
    std::vector<std::shared_ptr<Lookup>> again;
    try {
      send(std::move(writes), asks, again);
    } catch (const std::exception &e) { // out of memory, or the like: every look-up compiles
      client_.failed(e.what());
      for (auto &l : asks)
        l->set(Lookup::State::miss);
      again.clear();
    }
    lock.lock();
    busy_ = false;
    ++round_;
    for (auto &l : again)
      waiting_.push_back(std::move(l));
    flushed_cv_.notify_all();
  }
  flushed_cv_.notify_all();
}

void RedisCache::send(std::vector<std::vector<std::string>> writes,
                      const std::vector<std::shared_ptr<Lookup>> &asks,
                      std::vector<std::shared_ptr<Lookup>> &again) {
  std::vector<std::shared_ptr<Lookup>> live;
  for (const auto &l : asks) {
    std::lock_guard lock(l->mutex);
    if (!l->abandoned)
      live.push_back(l);
  }
  const size_t first_ask = writes.size();
  const std::string claim_ms = std::to_string(config_.claim_ttl.count());
  for (const auto &l : live)
    writes.push_back(
        {"EVAL", kGetOrClaim, "2", value_key(l->key), claim_key(l->key), l->token, claim_ms});
  if (writes.empty())
    return;
  const std::optional<RedisClient::Replies> replies = client_.request(writes);
  for (size_t i = 0; i < live.size(); ++i) {
    if (replies)
      answer(live[i], *(*replies)[first_ask + i], again);
    else
      live[i]->set(Lookup::State::miss);
  }
}

void RedisCache::answer(const std::shared_ptr<Lookup> &lookup, const RedisClient::Reply &reply,
                        std::vector<std::shared_ptr<Lookup>> &again) {
  Lookup &l = *lookup;
  const redisReply *r = reply.r;
  const bool shaped = r->type == REDIS_REPLY_ARRAY && r->elements >= 1 &&
                      r->element[0]->type == REDIS_REPLY_INTEGER &&
                      (r->element[0]->integer != 1 ||
                       (r->elements == 2 && r->element[1]->type == REDIS_REPLY_STRING));
  if (!shaped || r->element[0]->integer < 1 || r->element[0]->integer > 3) {
    client_.failed("an answer to the look-up script that is not one");
    l.set(Lookup::State::miss);
    return;
  }
  switch (r->element[0]->integer) {
  case 1: {
    std::string why;
    std::optional<CachedKernel> hit =
        codec_.decode(std::string_view(r->element[1]->str, r->element[1]->len), why);
    if (!hit) {
      refused(l.key, why);
      l.set(Lookup::State::miss);
      return;
    }
    hit->kernel.key = l.key;
    {
      std::lock_guard lock(l.mutex);
      l.entry = std::move(hit);
      l.state = Lookup::State::hit;
    }
    l.changed.notify_all();
    return;
  }
  case 2: {
    bool release = false;
    {
      std::lock_guard lock(l.mutex);
      l.state = Lookup::State::claimed;
      release = l.abandoned; // its compile ended meanwhile
    }
    l.changed.notify_all();
    if (release)
      enqueue_write({"EVAL", kRelease, "1", claim_key(l.key), l.token});
    return;
  }
  default: {
    const auto now = Clock::now();
    std::unique_lock lock(l.mutex);
    if (l.give_up_at == Clock::time_point{})
      l.give_up_at = now + config_.wait_for_peer;
    if (now >= l.give_up_at) {
      lock.unlock();
      l.set(Lookup::State::miss); // the peer is too slow: compile here
      return;
    }
    l.ask_at = std::min(now + config_.ask_every, l.give_up_at);
    l.state = Lookup::State::peer;
    lock.unlock();
    l.changed.notify_all();
    again.push_back(lookup);
    return;
  }
  }
}

} // namespace kiln::runtime
