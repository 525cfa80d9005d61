// The bounded in-memory kernel table (issue 17.5, KILN_MEMORY_CACHE_MAX):
// clock eviction keeps the count bounded, spares recently used and in-use
// entries, and an entry that readers may hold is freed only after their read
// sections end (GracePeriod). Built on KernelCache directly, so ASan and
// TSan see the table itself without a compiler in the way.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "kiln/error.hpp"
#include "runtime/grace_period.hpp"
#include "runtime/kernel_cache.hpp"
#include "runtime/knobs.hpp"

namespace {

using kiln::runtime::CacheEntry;
using kiln::runtime::GracePeriod;
using kiln::runtime::KernelCache;
using kiln::runtime::LoadedKernel;
using kiln::runtime::SpecKey;

SpecKey key_of(uint64_t i) {
  SpecKey k;
  k.push(i);
  k.push(~i);
  return k;
}

/// Finds or inserts key `i`, publishing a kernel named after it (as a
/// compile would: under the entry's lock, `owned` before `ready`).
void insert(KernelCache &c, uint64_t i) {
  const SpecKey k = key_of(i);
  const KernelCache::Pin e = c.find_or_insert(k, k.hash());
  std::lock_guard lock(e->compile_mutex);
  if (e->ready.load())
    return;
  auto lk = std::make_shared<LoadedKernel>();
  lk->compiled.name = "k" + std::to_string(i);
  e->owned = lk;
  e->ready.store(lk.get(), std::memory_order_release);
}

/// The name of key `i`'s kernel as a launch would read it, or "" on a miss.
std::string lookup(const KernelCache &c, uint64_t i) {
  const SpecKey k = key_of(i);
  std::shared_ptr<LoadedKernel> held;
  {
    const GracePeriod::Reader reading;
    if (const CacheEntry *e = c.find(k, k.hash()); e && e->ready.load(std::memory_order_acquire))
      held = e->owned;
  }
  return held ? held->compiled.name : "";
}

} // namespace

TEST_CASE("kernel cache: many distinct keys with a small bound keep the count bounded") {
  KernelCache c(4);
  for (uint64_t i = 0; i < 200; ++i) {
    insert(c, i);
    CHECK(c.size() <= 4);
    CHECK(lookup(c, i) == "k" + std::to_string(i)); // the newest is always there
  }
  CHECK(c.evictions() == 196);
  // No reader is in a section: the next insert frees everything retired.
  insert(c, 1000);
  CHECK(c.retired() == 0);
  // Evicted keys come back as misses, and insert again.
  int present = 0;
  for (uint64_t i = 0; i < 200; ++i)
    present += !lookup(c, i).empty();
  CHECK(present <= 4);
}

TEST_CASE("kernel cache: without a bound nothing is evicted") {
  KernelCache c;
  for (uint64_t i = 0; i < 300; ++i)
    insert(c, i);
  CHECK(c.size() == 300);
  CHECK(c.evictions() == 0);
  for (uint64_t i = 0; i < 300; ++i)
    CHECK(lookup(c, i) == "k" + std::to_string(i));
}

TEST_CASE("kernel cache: a key used since the clock last passed is spared") {
  KernelCache c(3);
  for (uint64_t i = 0; i < 3; ++i)
    insert(c, i);
  for (uint64_t round = 0; round < 20; ++round) {
    CHECK(lookup(c, 0) == "k0"); // hot: set its referenced bit before each insert
    insert(c, 100 + round);
  }
  CHECK(lookup(c, 0) == "k0");
  CHECK(c.size() == 3);
}

TEST_CASE("kernel cache: pinned and compiling entries are never evicted, the bound waits") {
  KernelCache c(2);
  const SpecKey a = key_of(1), b = key_of(2);
  {
    const KernelCache::Pin pa = c.find_or_insert(a, a.hash()); // a launch compiling `a`
    const KernelCache::Pin pb = c.find_or_insert(b, b.hash());
    insert(c, 3); // both in use: the table grows past its bound rather than free one
    CHECK(c.size() == 3);
    CHECK(c.evictions() == 0);
    CHECK(c.find(a, a.hash()) == &*pa);
  }
  // Released, they may go (a compile in flight in a scope, its future
  // set, is kept the same way: KernelCache::evictable).
  insert(c, 4);
  CHECK(c.size() <= 3);
  CHECK(c.evictions() >= 1);
}

TEST_CASE("kernel cache: an entry read concurrently while eviction runs is not freed under "
          "its reader") {
  // Readers copy the kernel out of entries that a writer keeps evicting
  // (a bound of 2 over 16 keys); ASan reports a use after free if an entry
  // were freed while a reader's section could still see it.
  KernelCache c(2);
  for (uint64_t i = 0; i < 2; ++i)
    insert(c, i);
  std::atomic<bool> stop{false};
  std::atomic<long> hits{0}, wrong{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 4; ++t)
    readers.emplace_back([&, t] {
      for (uint64_t i = static_cast<uint64_t>(t); !stop.load(std::memory_order_relaxed); ++i) {
        const uint64_t key = i % 16;
        const std::string name = lookup(c, key);
        if (name.empty())
          continue;
        ++hits;
        if (name != "k" + std::to_string(key))
          ++wrong;
      }
    });
  std::thread writer([&] {
    for (uint64_t i = 0; i < 20000; ++i)
      insert(c, i % 16);
    stop = true;
  });
  writer.join();
  for (auto &r : readers)
    r.join();
  CHECK(wrong == 0);
  CHECK(hits > 0);
  CHECK(c.size() <= 2);
  CHECK(c.evictions() > 1000);
  insert(c, 99); // readers gone: everything retired is freed
  CHECK(c.retired() == 0);
}

TEST_CASE("grace period: a retired object outlives the read sections that could see it") {
  const uint64_t before = GracePeriod::retire_stamp();
  CHECK(GracePeriod::oldest_reader() > before); // nobody reading here
  std::atomic<int> phase{0};
  std::thread reader([&] {
    const GracePeriod::Reader reading;
    phase = 1;
    while (phase.load() != 2)
      std::this_thread::yield();
  });
  while (phase.load() != 1)
    std::this_thread::yield();
  const uint64_t stamp = GracePeriod::retire_stamp();
  CHECK(GracePeriod::oldest_reader() <= stamp); // the open section may hold it
  {
    const GracePeriod::Reader later; // entered after the stamp: cannot see it
    const GracePeriod::Reader nested;
  }
  phase = 2;
  reader.join();
  CHECK(GracePeriod::oldest_reader() > stamp);
}

TEST_CASE("KILN_MEMORY_CACHE_MAX is range-checked, with an error naming it") {
  struct Env {
    explicit Env(const char *v) { ::setenv("KILN_MEMORY_CACHE_MAX", v, 1); }
    ~Env() { ::unsetenv("KILN_MEMORY_CACHE_MAX"); }
  };
  CHECK(kiln::runtime::Knobs::from_env().memory_cache_max == 0);
  {
    const Env e("64");
    CHECK(kiln::runtime::Knobs::from_env().memory_cache_max == 64);
  }
  for (const char *bad : {"ten", "-1", "99999999999", "4x"}) {
    CAPTURE(bad);
    const Env e(bad);
    CHECK_THROWS_WITH_AS(kiln::runtime::Knobs::from_env(),
                         doctest::Contains("KILN_MEMORY_CACHE_MAX"), kiln::ArgumentError);
  }
}
