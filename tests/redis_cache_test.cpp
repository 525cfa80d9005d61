// The remote cache (issue 12): a real redis-server started on a free
// loopback port (skipped, visibly, where none is installed), and fake
// servers that stall or answer garbage. Entries round-trip and a second
// cache folder gets a remote hit (then a disk hit); a wrong HMAC is
// rejected; Redis never started, stopped mid-run, stalled or speaking
// garbage is a miss within the deadline, and every launch stays correct.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

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
using kiln::runtime::RedisCache;
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

RedisCache cache(const std::string &url, const std::string &hmac = "") {
  RedisCache::Config c;
  c.url = RedisUrl::parse(url);
  c.hmac_key = hmac;
  c.wait_for_peer = std::chrono::milliseconds(500);
  return RedisCache(std::move(c));
}

const std::string kKey = std::string(64, 'b');

struct ChildRun {
  std::string source, out;
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

TEST_CASE("redis: values round-trip, and a wrong HMAC or a damaged value is rejected") {
  const RedisCache a = cache("redis://127.0.0.1:1", "key one");
  const RedisCache b = cache("redis://127.0.0.1:1", "key two");
  const CachedKernel in = sample();
  const std::string v = a.encode(in);
  std::string why;
  const auto out = a.decode(v, why);
  REQUIRE(out);
  CHECK(out->kernel.binary == in.kernel.binary);
  CHECK(out->kernel.shared_bytes == 4096);
  CHECK(out->kernel.binary_kind == "cubin");
  CHECK(out->globals.at(0).value == in.globals[0].value);
  CHECK_FALSE(b.decode(v, why));
  CHECK(why.find("HMAC") != std::string::npos);
  std::string flipped = v;
  flipped.back() ^= 1;
  CHECK_FALSE(a.decode(flipped, why));
  const RedisCache unsigned_cache = cache("redis://127.0.0.1:1");
  CHECK_FALSE(
      a.decode(unsigned_cache.encode(in), why)); // a key is set: unsigned entries are refused
  CHECK_FALSE(a.decode("garbage", why));
}

TEST_CASE("redis: a real server stores, finds, single-flights, and rejects another key's entries") {
  RedisServer server;
  if (!server.running()) {
    MESSAGE("[SKIP] redis-server is not installed");
    return;
  }
  RedisCache a = cache(server.url(), "fleet key");
  CHECK_FALSE(a.get(kKey));
  a.put(kKey, sample());
  const auto hit = a.get(kKey);
  REQUIRE(hit);
  CHECK(hit->kernel.binary == sample().kernel.binary);
  CHECK(hit->kernel.key == kKey);
  RedisCache wrong = cache(server.url(), "another key");
  CHECK_FALSE(wrong.get(kKey));

  // Single flight: the first asker holds the lock; a second waits for the
  // entry (here: until the holder lets go) and then looks again.
  const std::string other = std::string(64, 'c');
  {
    std::unique_ptr<kiln::runtime::KeyLock> held = a.lock(other);
    REQUIRE(held);
    RedisCache peer = cache(server.url(), "fleet key");
    std::thread publisher([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      a.put(other, sample());
    });
    CHECK(peer.lock(other)); // returned once the entry appeared
    publisher.join();
    CHECK(peer.get(other));
  }
  // Released: the next asker gets the lock at once.
  CHECK(a.lock(other));
}

TEST_CASE("redis: a second cache folder gets a remote hit, and writes it to disk") {
  RedisServer server;
  if (!server.running()) {
    MESSAGE("[SKIP] redis-server is not installed");
    return;
  }
  const TempDir one, two;
  const std::string env = "KILN_REDIS_URL=" + server.url() + " KILN_CACHE_HMAC_KEY=k";
  const ChildRun first = run_child(one.path, env);
  CAPTURE(first.out);
  CHECK(first.source == "compiled");
  CHECK(first.correct);
  const ChildRun second = run_child(two.path, env);
  CAPTURE(second.out);
  CHECK(second.source == "remote");
  CHECK(second.correct);
  CHECK(run_child(two.path, env).source == "disk");
  // Another HMAC key: the remote entry is rejected and the kernel compiled.
  const TempDir three;
  const ChildRun wrong =
      run_child(three.path, "KILN_REDIS_URL=" + server.url() + " KILN_CACHE_HMAC_KEY=other");
  CAPTURE(wrong.out);
  CHECK(wrong.source == "compiled");
  CHECK(wrong.correct);
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
    RedisCache c = cache(url);
    const auto t0 = std::chrono::steady_clock::now();
    CHECK_FALSE(c.get(kKey));
    c.put(kKey, sample()); // no throw
    CHECK_FALSE(c.lock(kKey));
    // Not a timing assertion: a guard that the deadline (not a TCP
    // timeout of minutes) ended the requests.
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
    const TempDir dir;
    const ChildRun r = run_child(dir.path, "KILN_REDIS_URL=" + url);
    CAPTURE(r.out);
    CHECK(r.source == "compiled");
    CHECK(r.correct);
    // One warning, not one per request.
    size_t warnings = 0;
    for (size_t pos = 0; (pos = r.out.find("kiln: warning", pos)) != std::string::npos; ++pos)
      ++warnings;
    CHECK(warnings <= 1);
  }
  if (!server.running()) {
    MESSAGE("[SKIP] redis-server is not installed: 'stopped mid-run' not run");
    return;
  }
  RedisCache c = cache(server.url());
  c.put(kKey, sample());
  CHECK(c.get(kKey));
  server.stop();
  CHECK_FALSE(c.get(kKey));
  const TempDir dir;
  const ChildRun r = run_child(dir.path, "KILN_REDIS_URL=" + server.url());
  CHECK(r.source == "compiled");
  CHECK(r.correct);
}

TEST_CASE("redis: a restarted server is reconnected to at once, without a failure") {
  auto first = std::make_unique<RedisServer>();
  if (!first->running()) {
    MESSAGE("[SKIP] redis-server is not installed");
    return;
  }
  const uint16_t port = first->port;
  RedisCache c = cache(first->url());
  c.put(kKey, sample()); // leaves a pooled connection
  REQUIRE(c.get(kKey));
  first.reset();
  const RedisServer second(port);
  REQUIRE(second.running());
  // The pooled connection is dead; the request retries on a new one, and
  // this is not a failure (no back-off: the put and get go through).
  CHECK_FALSE(c.get(kKey)); // the new server is empty
  c.put(kKey, sample());
  CHECK(c.get(kKey));
}

TEST_CASE("redis: records (tuning results) are signed values of their own key space") {
  const RedisCache a = cache("redis://127.0.0.1:1", "key one");
  const RedisCache b = cache("redis://127.0.0.1:1", "key two");
  CHECK(RedisCache::record_key("tuning", "ab12") == "kiln:v1:tuning:ab12");
  const std::string v = a.encode_record("{\"config\": 1}");
  std::string why;
  CHECK(a.decode_record(v, why) == "{\"config\": 1}");
  CHECK_FALSE(b.decode_record(v, why));
  CHECK(why.find("HMAC") != std::string::npos);
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
  RedisCache remote = cache(server.url(), "fleet key");
  const TempDir one, two, three;
  const std::vector<std::string> configs = {"BLOCK=16", "BLOCK=32"};
  const std::string id = TuningCache::id("a tuning");
  TuningCache(one.path, {&remote}).put(id, "fill", TuningRecord{1, configs[1], "n=1", {2.0, 1.0}});
  const TuningCache second(two.path, {&remote});
  const auto hit = second.get(id, configs);
  REQUIRE(hit);
  CHECK(hit->config == 1);
  CHECK(hit->remote);
  CHECK(fs::exists(two.path + "/tuning/" + id + ".json"));
  const auto again = second.get(id, configs); // now from its own disk
  REQUIRE(again);
  CHECK_FALSE(again->remote);
  // Checked as the disk's: another config list is not trusted.
  CHECK_FALSE(TuningCache(three.path, {&remote}).get(id, {"BLOCK=16", "BLOCK=64"}));
  // Another fleet key: the record is rejected.
  RedisCache wrong = cache(server.url(), "another key");
  CHECK_FALSE(TuningCache(three.path, {&wrong}).get(id, configs));
  CHECK_FALSE(fs::exists(three.path + "/tuning/" + id + ".json"));
  // Values expire after the TTL (7 days by default).
  const std::string ttl = server.cli("TTL " + RedisCache::record_key("tuning", id));
  if (!ttl.empty()) {
    CHECK(std::stoll(ttl) > 0);
    CHECK(std::stoll(ttl) <= 7 * 24 * 3600);
  }
}

TEST_CASE("redis: with Redis down, the tuning cache falls back to the disk and stores there") {
  RedisCache down = cache("redis://127.0.0.1:" + std::to_string(free_port()));
  const TempDir dir;
  const TuningCache c(dir.path, {&down});
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
    const std::string keys = server.cli("--scan --pattern 'kiln:v1:*'");
    REQUIRE(!keys.empty());
    for (size_t pos = 0; pos < keys.size();) {
      const size_t end = std::min(keys.find('\n', pos), keys.size());
      const std::string key = keys.substr(pos, end - pos);
      pos = end + 1;
      CAPTURE(key);
      if (key.find(":lock:") != std::string::npos)
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
  }
  {
    const Env a("KILN_REDIS_CONNECT_TIMEOUT_MS", "20"), b("KILN_REDIS_TIMEOUT_MS", "1000"),
        c("KILN_REDIS_TTL_S", "0");
    const Knobs k = Knobs::from_env();
    CHECK(k.redis_connect_timeout_ms == 20);
    CHECK(k.redis_timeout_ms == 1000);
    CHECK(k.redis_ttl_s == 0);
  }
  for (const auto &[name, value] :
       std::vector<std::pair<const char *, const char *>>{{"KILN_REDIS_CONNECT_TIMEOUT_MS", "0"},
                                                          {"KILN_REDIS_TIMEOUT_MS", "fast"},
                                                          {"KILN_REDIS_TIMEOUT_MS", "99999999999"},
                                                          {"KILN_REDIS_TTL_S", "-1"}}) {
    CAPTURE(name);
    CAPTURE(value);
    const Env e(name, value);
    CHECK_THROWS_WITH_AS(Knobs::from_env(), doctest::Contains(name), kiln::ArgumentError);
  }
}
