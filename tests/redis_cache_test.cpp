// The remote cache (issue 12): a real redis-server started on a free
// loopback port (skipped, visibly, where none is installed), and fake
// servers that stall or answer garbage. Entries round-trip with their stage
// files and a second cache folder gets a remote hit (then a disk hit); the
// signature rule (a key set: only values signed with it; no key: only
// unsigned ones); the fleet's single flight (get-or-claim, a peer waits for
// the claimer's entry, up to a bound); Redis never started, stopped mid-run,
// stalled or speaking garbage is a miss within the deadline, the circuit
// breaker keeps later requests off it, and every launch stays correct.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "compiler/support/sha256.hpp"
#include "kiln/error.hpp"
#include "runtime/knobs.hpp"
#include "runtime/redis_cache.hpp"
#include "runtime/tuning_cache.hpp"
#include "tests/cache_child.hpp"
#include "tests/redis_server.hpp"

namespace fs = std::filesystem;
using kiln::runtime::CachedKernel;
using kiln::runtime::Knobs;
using kiln::runtime::PendingGet;
using kiln::runtime::RedisCache;
using kiln::runtime::RedisClient;
using kiln::runtime::RedisCodec;
using kiln::runtime::RedisUrl;
using kiln::runtime::TuningCache;
using kiln::runtime::TuningRecord;
using kiln::testing::child_command;
using kiln::testing::free_port;
using kiln::testing::RedisServer;
using kiln::testing::shell_output;
using kiln::testing::TempDir;

namespace {

/// A loopback server that accepts and then stalls (never answers) or
/// answers every request with garbage.
struct FakeServer {
  enum class Mode { stall, garbage };
  int listener = -1;
  uint16_t port = 0;
  std::atomic<bool> stop{false};
  std::thread thread;
  std::vector<int> clients;
  std::atomic<int> accepted{0}; ///< connections so far
  explicit FakeServer(Mode mode) {
    listener = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(listener, reinterpret_cast<sockaddr *>(&a), sizeof a);
    socklen_t len = sizeof a;
    ::getsockname(listener, reinterpret_cast<sockaddr *>(&a), &len);
    port = ntohs(a.sin_port);
    ::listen(listener, 16);
    thread = std::thread([this, mode] {
      while (!stop) {
        const int c = ::accept(listener, nullptr, nullptr);
        if (c < 0)
          return;
        clients.push_back(c);
        ++accepted;
        if (mode == Mode::garbage) {
          char buf[4096];
          if (::read(c, buf, sizeof buf) > 0) {
            const char junk[] = "?this is not RESP\r\n";
            (void)!::write(c, junk, sizeof junk - 1);
          }
        }
      }
    });
  }
  ~FakeServer() {
    stop = true;
    ::shutdown(listener, SHUT_RDWR);
    ::close(listener);
    thread.join();
    for (int c : clients)
      ::close(c);
  }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port); }
};

CachedKernel sample() {
  CachedKernel c;
  c.kernel.name = "add_kernel";
  c.kernel.target = "cpu:x86_64";
  c.kernel.binary_kind = "cubin";
  c.kernel.binary = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  c.kernel.hash = "";
  c.kernel.entry = "add_kernel";
  c.kernel.shared_bytes = 4096;
  c.kernel.registers = 32;
  c.kernel.params = {{"x_ptr", kiln::DType::f16, true}};
  c.globals.push_back({"m.py", "N", kiln::frontend::ConstValue::of_int(3)});
  // What the compiler sets: the binary's hash, checked on the way back.
  c.kernel.hash = kiln::sha256_hex(std::string_view(
      reinterpret_cast<const char *>(c.kernel.binary.data()), c.kernel.binary.size()));
  return c;
}

RedisCache::Config config(const std::string &url, const std::string &hmac = "") {
  RedisCache::Config c;
  c.client.url = RedisUrl::parse(url);
  c.hmac_key = hmac;
  c.wait_for_peer = std::chrono::milliseconds(500);
  return c;
}

std::unique_ptr<RedisCache> cache(const std::string &url, const std::string &hmac = "") {
  return std::make_unique<RedisCache>(config(url, hmac));
}

RedisCodec codec(const std::string &hmac = "") {
  return RedisCodec(hmac);
}

/// Asks `p` until its entry arrives or `guard` has passed (a deadlock guard,
/// not a timing check); returns whether it arrived, and in `longest` the
/// longest single arrived() call (one waiting for a peer's entry).
bool settle(PendingGet &p, std::chrono::steady_clock::duration &longest,
            std::chrono::milliseconds guard = std::chrono::milliseconds(2000)) {
  longest = {};
  const auto until = std::chrono::steady_clock::now() + guard;
  while (std::chrono::steady_clock::now() < until) {
    const auto t0 = std::chrono::steady_clock::now();
    const bool arrived = p.arrived();
    longest = std::max(longest, std::chrono::steady_clock::now() - t0);
    if (arrived)
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
}

/// Whether `key`'s claim appears in `server` (asked until it does, or for
/// a second: a deadlock guard, not a timing check).
bool claimed(const RedisServer &server, const std::string &key) {
  for (int i = 0; i < 500; ++i) {
    if (server.cli("EXISTS " + RedisCache::claim_key(key)) == "1")
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
}

size_t count(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t pos = 0; (pos = text.find(what, pos)) != std::string::npos; ++pos)
    ++n;
  return n;
}

const std::string kKey = std::string(64, 'b');

struct ChildRun {
  std::string source, out, stages;
  bool correct = false;
};

ChildRun run_child(const std::string &dir, const std::string &env) {
  ChildRun r;
  r.out =
      shell_output(child_command("KILN_NO_CACHE=0 KILN_CACHE_DIR='" + dir + "' " + env) + " 2>&1");
  const std::vector<kiln::testing::ChildResult> results = kiln::testing::child_results(r.out);
  if (!results.empty()) {
    r.source = results[0].source;
    r.correct = results[0].correct;
    r.stages = results[0].stages;
  }
  return r;
}

} // namespace

TEST_CASE("redis: URLs are parsed, and a malformed one is a clear error") {
  const RedisUrl u = RedisUrl::parse("redis://:s3cret@cache.example:6380/2");
  CHECK(u.host == "cache.example");
  CHECK(u.port == 6380);
  CHECK(u.password == "s3cret");
  CHECK(u.db == 2);
  CHECK(u.str() == "redis://cache.example:6380/2"); // no password in messages
  CHECK(RedisUrl::parse("redis://localhost").port == 6379);
  for (const char *bad :
       {"http://x:1", "redis://:1", "redis://x:99999", "redis://x:1/db", "redis://user@x:1"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(RedisUrl::parse(bad), kiln::ArgumentError);
  }
}

TEST_CASE("redis: values round-trip with their stage files, a damaged value is refused") {
  const RedisCodec a = codec("key one");
  CachedKernel in = sample();
  in.kernel.stages = {{"ir", "tile ir"}, {"llir", "define void @k()"}, {"cubin_log", "ok"}};
  const std::string v = a.encode(in);
  std::string why;
  const auto out = a.decode(v, why);
  REQUIRE(out);
  CHECK(out->kernel.binary == in.kernel.binary);
  CHECK(out->kernel.stages == in.kernel.stages);
  CHECK(out->kernel.shared_bytes == 4096);
  CHECK(out->kernel.binary_kind == "cubin");
  CHECK(out->globals.at(0).value == in.globals[0].value);
  std::string flipped = v;
  flipped.back() ^= 1;
  CHECK_FALSE(a.decode(flipped, why));
  CHECK_FALSE(a.decode(v.substr(0, v.size() - 3), why));
  CHECK_FALSE(a.decode("garbage", why));
  // Unsigned: a flipped stage byte fails its hash, a cut value its sizes.
  const RedisCodec none = codec();
  const std::string u = none.encode(in);
  REQUIRE(none.decode(u, why));
  std::string bad_stage = u;
  bad_stage[u.size() - 1] ^= 1; // the last stage's text
  CHECK_FALSE(none.decode(bad_stage, why));
  CHECK(why.find("does not match its hash") != std::string::npos);
  CHECK_FALSE(none.decode(u.substr(0, u.size() - 1), why));
  CHECK(why.find("truncated") != std::string::npos);
  CHECK_FALSE(none.decode(u + "x", why));
}

TEST_CASE("redis: the signature rule: a key set reads only values signed with it, no key only "
          "unsigned ones") {
  const CachedKernel in = sample();
  const RedisCodec one = codec("key one"), two = codec("key two"), none = codec();
  std::string why;
  CHECK(one.decode(one.encode(in), why));
  CHECK_FALSE(two.decode(one.encode(in), why));
  CHECK(why.find("signature does not match") != std::string::npos);
  CHECK_FALSE(one.decode(none.encode(in), why)); // a key is set: unsigned values are refused
  CHECK(why.find("not signed") != std::string::npos);
  CHECK_FALSE(none.decode(one.encode(in), why)); // no key: a signed value cannot be checked
  CHECK(why.find("KILN_CACHE_HMAC_KEY is not set") != std::string::npos);
  CHECK(none.decode(none.encode(in), why));
  // The same for records.
  CHECK(one.decode_record(one.encode_record("{}"), why) == "{}");
  CHECK_FALSE(one.decode_record(none.encode_record("{}"), why));
  CHECK_FALSE(none.decode_record(one.encode_record("{}"), why));
  CHECK_FALSE(two.decode_record(one.encode_record("{}"), why));
}

TEST_CASE("redis: a real server stores and finds entries, and refuses another key's") {
  RedisServer server;
  if (!server.running()) {
    MESSAGE("[SKIP] redis-server is not installed");
    return;
  }
  auto a = cache(server.url(), "fleet key");
  CHECK_FALSE(a->get(kKey));
  a->put(kKey, sample());
  a->flush();
  const auto hit = a->get(kKey);
  REQUIRE(hit);
  CHECK(hit->kernel.binary == sample().kernel.binary);
  CHECK(hit->kernel.key == kKey);
  CHECK(server.cli("EXISTS " + RedisCache::value_key(kKey)) == "1");
  CHECK(RedisCache::value_key(kKey).rfind("kiln:v2:", 0) == 0);
  auto wrong = cache(server.url(), "another key");
  CHECK_FALSE(wrong->get(kKey));
  auto unkeyed = cache(server.url());
  CHECK_FALSE(unkeyed->get(kKey)); // signed, and this process cannot check it
  // A look-up finds it too.
  const std::shared_ptr<PendingGet> p = a->start_get(kKey);
  std::chrono::steady_clock::duration longest;
  REQUIRE(settle(*p, longest));
  CHECK(p->take().kernel.binary == sample().kernel.binary);
}

TEST_CASE("redis: single flight: the first look-up claims the key, a peer waits for its entry") {
  RedisServer server;
  if (!server.running() || server.cli("PING") != "PONG") {
    MESSAGE("[SKIP] redis-server or redis-cli is not installed");
    return;
  }
  auto a = cache(server.url(), "fleet key");
  auto b = cache(server.url(), "fleet key");
  const std::string key = std::string(64, 'c');
  // a asks first: a miss, and the claim is a's (arrived() returns at once).
  std::shared_ptr<PendingGet> pa = a->start_get(key);
  REQUIRE(claimed(server, key));
  CHECK_FALSE(pa->arrived());
  // b finds the claim: its arrived() waits until a's entry is there.
  std::thread publisher([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    a->put(key, sample());
    a->flush();
  });
  const std::shared_ptr<PendingGet> pb = b->start_get(key);
  std::chrono::steady_clock::duration longest;
  CHECK(settle(*pb, longest));
  publisher.join();
  CHECK(pb->take().kernel.binary == sample().kernel.binary);
  // Done with a's look-up: its claim is released.
  pa.reset();
  a->flush();
  CHECK(server.cli("EXISTS " + RedisCache::claim_key(key)) == "0");

  // A claimer that never publishes: a peer waits up to its bound, then
  // compiles itself (arrived() is false).
  const std::string lost = std::string(64, 'd');
  std::shared_ptr<PendingGet> claimer = a->start_get(lost);
  REQUIRE(claimed(server, lost));
  CHECK_FALSE(settle(*b->start_get(lost), longest));
  CHECK(longest >= std::chrono::milliseconds(400)); // one call waited out the 500 ms bound
  // A claimer that gives up (its compile failed) releases the key at once:
  // the next asker claims it.
  claimer.reset();
  a->flush();
  CHECK(server.cli("EXISTS " + RedisCache::claim_key(lost)) == "0");
}

TEST_CASE("redis: a second cache folder gets a remote hit, with stages under KILN_KEEP_STAGES, and "
          "writes it to disk") {
  RedisServer server;
  if (!server.running()) {
    MESSAGE("[SKIP] redis-server is not installed");
    return;
  }
  const TempDir one, two, kept;
  const std::string env = "KILN_REDIS_URL=" + server.url() + " KILN_CACHE_HMAC_KEY=k";
  const ChildRun first = run_child(one.path, env);
  CAPTURE(first.out);
  CHECK(first.source == "compiled");
  CHECK(first.correct);
  const ChildRun second = run_child(two.path, env);
  CAPTURE(second.out);
  CHECK(second.source == "remote");
  CHECK(second.correct);
  CHECK(second.stages.empty()); // not kept without KILN_KEEP_STAGES
  CHECK(run_child(two.path, env).source == "disk");
  const ChildRun stages = run_child(kept.path, env + " KILN_KEEP_STAGES=1");
  CAPTURE(stages.out);
  CHECK(stages.source == "remote");
  CHECK(stages.stages.find("llir") != std::string::npos);
  CHECK(stages.stages.find("ir") != std::string::npos);
  // Another HMAC key, or none: the remote entry is refused (one warning)
  // and the kernel compiled.
  for (const std::string other : {" KILN_CACHE_HMAC_KEY=other", ""}) {
    CAPTURE(other);
    const TempDir three;
    const ChildRun wrong = run_child(three.path, "KILN_REDIS_URL=" + server.url() + other);
    CAPTURE(wrong.out);
    CHECK(wrong.source == "compiled");
    CHECK(wrong.correct);
    CHECK(count(wrong.out, "kiln: warning: refused the remote cache entry") == 1);
  }
}

TEST_CASE(
    "redis: never started, stopped mid-run, stalled or speaking garbage, every launch is right") {
  RedisServer server; // may be absent: then only the fakes and the closed port run
  FakeServer stalled(FakeServer::Mode::stall), garbage(FakeServer::Mode::garbage);
  std::vector<std::pair<std::string, std::string>> cases = {
      {"never started", "redis://127.0.0.1:" + std::to_string(free_port())},
      {"stalled", stalled.url()},
      {"garbage", garbage.url()},
  };
  for (const auto &[what, url] : cases) {
    CAPTURE(what);
    auto c = cache(url);
    const auto t0 = std::chrono::steady_clock::now();
    CHECK_FALSE(c->get(kKey));
    c->put(kKey, sample()); // no throw
    CHECK_FALSE(c->start_get(kKey)->arrived());
    c->flush();
    // Not a timing assertion: a guard that the deadline (not a TCP
    // timeout of minutes) ended the requests.
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
    const TempDir dir;
    const ChildRun r = run_child(dir.path, "KILN_REDIS_URL=" + url);
    CAPTURE(r.out);
    CHECK(r.source == "compiled");
    CHECK(r.correct);
    CHECK(count(r.out, "kiln: warning") <= 1); // one warning, not one per request
  }
  if (!server.running()) {
    MESSAGE("[SKIP] redis-server is not installed: 'stopped mid-run' not run");
    return;
  }
  auto c = cache(server.url());
  c->put(kKey, sample());
  c->flush();
  CHECK(c->get(kKey));
  server.stop();
  CHECK_FALSE(c->get(kKey));
  const TempDir dir;
  const ChildRun r = run_child(dir.path, "KILN_REDIS_URL=" + server.url());
  CHECK(r.source == "compiled");
  CHECK(r.correct);
}

TEST_CASE("redis: the circuit breaker keeps requests off a stalled server, 1 s doubling to 60 s, "
          "reset by a success") {
  FakeServer stalled(FakeServer::Mode::stall);
  RedisClient::Config c;
  c.url = RedisUrl::parse(stalled.url());
  c.request_timeout = std::chrono::milliseconds(30);
  RedisClient client(c);
  CHECK(client.backoff() == std::chrono::milliseconds(0));
  CHECK_FALSE(client.request({{"PING"}}));
  CHECK(client.open());
  CHECK(client.backoff() == std::chrono::milliseconds(1000));
  // While open: no request reaches the server, and none waits.
  const int connections = stalled.accepted;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 100; ++i)
    CHECK_FALSE(client.request({{"PING"}}));
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(30));
  CHECK(stalled.accepted == connections);
  // Each failure in a row doubles the period, up to 60 s.
  std::vector<int64_t> periods;
  for (int i = 0; i < 8; ++i) {
    client.end_period();
    CHECK_FALSE(client.request({{"PING"}}));
    periods.push_back(client.backoff().count());
  }
  CHECK(periods == std::vector<int64_t>{2000, 4000, 8000, 16000, 32000, 60000, 60000, 60000});

  // A success resets it: the next failure opens it for 1 s again.
  RedisServer server;
  if (!server.running()) {
    MESSAGE("[SKIP] redis-server is not installed: the reset is not run");
    return;
  }
  c.url = RedisUrl::parse(server.url());
  RedisClient real(c);
  server.stop();
  CHECK_FALSE(real.request({{"PING"}}));
  real.end_period();
  CHECK_FALSE(real.request({{"PING"}}));
  CHECK(real.backoff() == std::chrono::milliseconds(2000));
  const RedisServer again(server.port);
  REQUIRE(again.running());
  real.end_period();
  CHECK(real.request({{"PING"}}));
  CHECK(real.backoff() == std::chrono::milliseconds(0));
}

TEST_CASE("redis: with Redis stalled, a process pays the deadline once, then compiles without "
          "asking") {
  FakeServer stalled(FakeServer::Mode::stall);
  auto c = cache(stalled.url());
  CHECK_FALSE(c->start_get(kKey)->arrived()); // the look-up is queued; it does not wait
  c->flush();
  for (int i = 0; i < 500 && stalled.accepted == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  // Wait for the look-up's failure to open the breaker (one deadline).
  CHECK_FALSE(c->get(kKey));
  const int connections = stalled.accepted;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 50; ++i) {
    CHECK_FALSE(c->start_get(kKey)->arrived());
    c->put(kKey, sample());
    CHECK_FALSE(c->get(kKey));
  }
  c->flush();
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(150));
  CHECK(stalled.accepted == connections);
}

TEST_CASE("redis: a restarted server is reconnected to at once, without a failure") {
  auto first = std::make_unique<RedisServer>();
  if (!first->running()) {
    MESSAGE("[SKIP] redis-server is not installed");
    return;
  }
  const uint16_t port = first->port;
  auto c = cache(first->url());
  c->put(kKey, sample()); // leaves a pooled connection
  c->flush();
  REQUIRE(c->get(kKey));
  first.reset();
  const RedisServer second(port);
  REQUIRE(second.running());
  // The pooled connection is dead; the request retries on a new one, and
  // this is not a failure (no back-off: the put and get go through).
  CHECK_FALSE(c->get(kKey)); // the new server is empty
  c->put(kKey, sample());
  c->flush();
  CHECK(c->get(kKey));
}

TEST_CASE("redis: records (tuning results) are signed values of their own key space") {
  const RedisCodec a = codec("key one");
  const RedisCodec b = codec("key two");
  CHECK(RedisCache::record_key("tuning", "ab12") == "kiln:v2:tuning:ab12");
  const std::string v = a.encode_record("{\"config\": 1}");
  std::string why;
  CHECK(a.decode_record(v, why) == "{\"config\": 1}");
  CHECK_FALSE(b.decode_record(v, why));
  CHECK(why.find("signature") != std::string::npos);
  // A binary entry is not a record, nor the other way round.
  CHECK_FALSE(a.decode_record(a.encode(sample()), why));
  CHECK_FALSE(a.decode(v, why));
}

TEST_CASE("redis: a tuning record reaches a second cache folder, is checked, and is written to "
          "disk") {
  RedisServer server;
  if (!server.running()) {
    MESSAGE("[SKIP] redis-server is not installed");
    return;
  }
  auto remote = cache(server.url(), "fleet key");
  const TempDir one, two, three;
  const std::vector<std::string> configs = {"BLOCK=16", "BLOCK=32"};
  const std::string id = TuningCache::id("a tuning");
  TuningCache(one.path, {remote.get()})
      .put(id, "fill", TuningRecord{1, configs[1], "n=1", {2.0, 1.0}});
  const TuningCache second(two.path, {remote.get()});
  const auto hit = second.get(id, configs);
  REQUIRE(hit);
  CHECK(hit->config == 1);
  CHECK(hit->remote);
  CHECK(fs::exists(two.path + "/tuning/" + id + ".json"));
  const auto again = second.get(id, configs); // now from its own disk
  REQUIRE(again);
  CHECK_FALSE(again->remote);
  // Checked as the disk's: another config list is not trusted.
  CHECK_FALSE(TuningCache(three.path, {remote.get()}).get(id, {"BLOCK=16", "BLOCK=64"}));
  // Another fleet key: the record is rejected.
  auto wrong = cache(server.url(), "another key");
  CHECK_FALSE(TuningCache(three.path, {wrong.get()}).get(id, configs));
  CHECK_FALSE(fs::exists(three.path + "/tuning/" + id + ".json"));
  // Values expire after the TTL (7 days by default).
  const std::string ttl = server.cli("TTL " + RedisCache::record_key("tuning", id));
  if (!ttl.empty()) {
    CHECK(std::stoll(ttl) > 0);
    CHECK(std::stoll(ttl) <= 7 * 24 * 3600);
  }
}

TEST_CASE("redis: with Redis down, the tuning cache falls back to the disk and stores there") {
  auto down = cache("redis://127.0.0.1:" + std::to_string(free_port()));
  const TempDir dir;
  const TuningCache c(dir.path, {down.get()});
  const std::string id = TuningCache::id("another tuning");
  CHECK_FALSE(c.get(id, {"A", "B"}));
  c.put(id, "fill", TuningRecord{0, "A", "", {1.0, 2.0}});
  const auto hit = c.get(id, {"A", "B"});
  REQUIRE(hit);
  CHECK(hit->config == 0);
}

TEST_CASE("redis: KILN_REDIS_TTL_S sets the expiry of every value (0: never)") {
  RedisServer server;
  if (!server.running() || server.cli("PING") != "PONG") {
    MESSAGE("[SKIP] redis-server or redis-cli is not installed");
    return;
  }
  for (const char *ttl : {"0", "120"}) {
    CAPTURE(ttl);
    const TempDir dir;
    const ChildRun r = run_child(dir.path, std::string("KILN_REDIS_TTL_S=") + ttl +
                                               " KILN_REDIS_URL=" + server.url());
    CAPTURE(r.out);
    CHECK(r.correct);
    const std::string keys = server.cli("--scan --pattern 'kiln:v2:*'");
    REQUIRE(!keys.empty());
    for (size_t pos = 0; pos < keys.size();) {
      const size_t end = std::min(keys.find('\n', pos), keys.size());
      const std::string key = keys.substr(pos, end - pos);
      pos = end + 1;
      CAPTURE(key);
      if (key.find(":claim:") != std::string::npos)
        continue;
      const long long left = std::stoll(server.cli("TTL '" + key + "'"));
      if (std::string(ttl) == "0")
        CHECK(left == -1); // no expiry
      else
        CHECK((left > 0 && left <= 120));
    }
    server.cli("FLUSHALL");
  }
}

TEST_CASE("redis: the deadline knobs reach the cache (a stalled server's warning names them)") {
  FakeServer stalled(FakeServer::Mode::stall);
  const TempDir dir;
  const ChildRun r =
      run_child(dir.path, "KILN_REDIS_TIMEOUT_MS=37 KILN_REDIS_CONNECT_TIMEOUT_MS=500 "
                          "KILN_REDIS_URL=" +
                              stalled.url());
  CAPTURE(r.out);
  CHECK(r.correct);
  CHECK(r.out.find("no reply within 37 ms") != std::string::npos);
}

TEST_CASE("redis: the Redis knobs are read, with defaults, and a bad value is a clear error") {
  struct Env {
    const char *name;
    explicit Env(const char *n, const char *v) : name(n) { ::setenv(n, v, 1); }
    ~Env() { ::unsetenv(name); }
  };
  {
    const Knobs k = Knobs::from_env();
    CHECK(k.redis_connect_timeout_ms == 50);
    CHECK(k.redis_timeout_ms == 200);
    CHECK(k.redis_ttl_s == 7 * 24 * 3600);
    CHECK(k.redis_claim_ttl_ms == 30000);
    CHECK(k.redis_peer_wait_ms == 10000);
  }
  {
    const Env a("KILN_REDIS_CONNECT_TIMEOUT_MS", "20"), b("KILN_REDIS_TIMEOUT_MS", "1000"),
        c("KILN_REDIS_TTL_S", "0"), d("KILN_REDIS_CLAIM_TTL_MS", "1500"),
        e("KILN_REDIS_PEER_WAIT_MS", "0");
    const Knobs k = Knobs::from_env();
    CHECK(k.redis_connect_timeout_ms == 20);
    CHECK(k.redis_timeout_ms == 1000);
    CHECK(k.redis_ttl_s == 0);
    CHECK(k.redis_claim_ttl_ms == 1500);
    CHECK(k.redis_peer_wait_ms == 0);
  }
  for (const auto &[name, value] : std::vector<std::pair<const char *, const char *>>{
           {"KILN_REDIS_CONNECT_TIMEOUT_MS", "0"},
           {"KILN_REDIS_TIMEOUT_MS", "fast"},
           {"KILN_REDIS_TIMEOUT_MS", "99999999999"},
           {"KILN_REDIS_TTL_S", "-1"},
           {"KILN_REDIS_CLAIM_TTL_MS", "0"},
           {"KILN_REDIS_CLAIM_TTL_MS", "3600001"},
           {"KILN_REDIS_CLAIM_TTL_MS", "1s"},
           {"KILN_REDIS_PEER_WAIT_MS", "-5"},
           {"KILN_REDIS_PEER_WAIT_MS", "99999999999"}}) {
    CAPTURE(name);
    CAPTURE(value);
    const Env e(name, value);
    CHECK_THROWS_WITH_AS(Knobs::from_env(), doctest::Contains(name), kiln::ArgumentError);
  }
}

TEST_CASE("redis: KILN_REDIS_CLAIM_TTL_MS and KILN_REDIS_PEER_WAIT_MS reach the cache: the claim's "
          "expiry, and how long a peer waits") {
  Knobs k;
  k.redis_url = "redis://127.0.0.1:1";
  k.cache_hmac_key = "h";
  k.redis_connect_timeout_ms = 7;
  k.redis_timeout_ms = 70;
  k.redis_ttl_s = 5;
  k.redis_claim_ttl_ms = 1500;
  k.redis_peer_wait_ms = 0;
  const RedisCache::Config c = RedisCache::Config::from_knobs(k);
  CHECK(c.client.url.port == 1);
  CHECK(c.hmac_key == "h");
  CHECK(c.client.connect_timeout == std::chrono::milliseconds(7));
  CHECK(c.client.request_timeout == std::chrono::milliseconds(70));
  CHECK(c.ttl == std::chrono::seconds(5));
  CHECK(c.claim_ttl == std::chrono::milliseconds(1500));
  CHECK(c.wait_for_peer == std::chrono::milliseconds(0));

  RedisServer server;
  if (!server.running() || server.cli("PING") != "PONG") {
    MESSAGE("[SKIP] redis-server or redis-cli is not installed");
    return;
  }
  k.redis_url = server.url();
  k.redis_timeout_ms = 200;
  k.redis_connect_timeout_ms = 50;
  RedisCache a(RedisCache::Config::from_knobs(k)), b(RedisCache::Config::from_knobs(k));
  const std::string key = std::string(64, 'e');
  const std::shared_ptr<PendingGet> claimer = a.start_get(key);
  REQUIRE(claimed(server, key));
  const long ttl = std::stol(server.cli("PTTL " + RedisCache::claim_key(key)));
  CHECK(ttl > 0);
  CHECK(ttl <= 1500); // not the 30 s default
  // A peer told not to wait compiles at once (the default would wait 10 s
  // for the claimer's entry).
  std::chrono::steady_clock::duration longest;
  CHECK_FALSE(settle(*b.start_get(key), longest, std::chrono::milliseconds(300)));
  CHECK(longest < std::chrono::seconds(2)); // no call waited for the peer
}
