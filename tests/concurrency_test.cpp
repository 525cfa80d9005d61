// Many host threads launching at once (DESIGN.md §2 "Per-device caches":
// concurrent launches are safe and compile a given key once).
//
// 16 threads start together and each makes 1000 launches that cycle through
// several kernels and specializations, checking every output. A post-compile
// hook counts compiles per key: each distinct key must compile exactly once,
// however the first launches of a key race. Run it under ThreadSanitizer too
// (KILN_SANITIZE=thread): it is the test that exercises the lock-free cache
// lookups, the per-entry compile locks and the table growth.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <latch>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <kiln/hooks.hpp>
#include <kiln/kiln.hpp>

namespace {

kiln::Module shared_module(const char *file) {
  return kiln::Module::from_file(std::string(KILN_SHARED_DIR) + "/kernels/" + file);
}

struct HookGuard {
  HookGuard() { kiln::hooks() = kiln::Hooks{}; }
  ~HookGuard() { kiln::hooks() = kiln::Hooks{}; }
};

constexpr int kMaxN = 256;

/// One thread's buffers; 64-byte aligned so every pointer specializes as `D`.
struct alignas(64) Buffers {
  float fx[kMaxN], fy[kMaxN], fout[kMaxN];
  int32_t ix[kMaxN], iy[kMaxN], iout[kMaxN];
};

/// What one launch does: the kernel and the specialization it asks for.
struct Case {
  enum Kind { AddF32, AddI32, Axpy, Fill } kind;
  int block;
  int n;
};

// n = 200 binds as i32, n = 256 as i32:D, so each (kernel, BLOCK) has two
// keys -- except fill, whose n is do_not_specialize (one key for both).
const std::vector<Case> &cases() {
  static const std::vector<Case> all = [] {
    std::vector<Case> out;
    for (int n : {200, 256}) {
      for (int block : {64, 128, 256}) {
        out.push_back({Case::AddF32, block, n});
        out.push_back({Case::AddI32, block, n});
      }
      out.push_back({Case::Axpy, 128, n});
      out.push_back({Case::Fill, 64, n});
    }
    return out;
  }();
  return all;
}
constexpr std::size_t kDistinctKeys = 2 * (3 * 2 + 1) + 1; // fill: one key for both n

struct Kernels {
  kiln::Module vector_add = shared_module("vector_add.py");
  kiln::Module composition = shared_module("composition.py");
  kiln::Kernel add = vector_add.kernel("add_kernel");
  kiln::Kernel axpy = vector_add.kernel("axpy_kernel");
  kiln::Kernel fill = composition.kernel("fill");
};

/// Runs one case on `b` and says whether the output is right.
bool run_case(const Kernels &k, const Case &c, Buffers &b, int salt, std::atomic<int> &fresh) {
  const auto grid = kiln::Grid(static_cast<uint32_t>(kiln::cdiv(c.n, c.block)));
  const float value = float(salt % 97);
  kiln::LaunchResult r;
  switch (c.kind) {
  case Case::AddF32:
    for (int i = 0; i < kMaxN; ++i) {
      b.fx[i] = float(i + salt % 7);
      b.fy[i] = float(2 * i);
      b.fout[i] = -1.0f;
    }
    r = k.add[grid](b.fx, b.fy, b.fout, c.n, kiln::arg("BLOCK", c.block));
    break;
  case Case::AddI32:
    for (int i = 0; i < kMaxN; ++i) {
      b.ix[i] = i + salt;
      b.iy[i] = -2 * i;
      b.iout[i] = -1;
    }
    r = k.add[grid](b.ix, b.iy, b.iout, c.n, kiln::arg("BLOCK", c.block));
    break;
  case Case::Axpy:
    for (int i = 0; i < kMaxN; ++i) {
      b.fx[i] = float(i);
      b.fy[i] = 1.0f;
    }
    r = k.axpy[grid](value, b.fx, b.fy, c.n, kiln::arg("BLOCK", c.block));
    break;
  case Case::Fill:
    for (int i = 0; i < kMaxN; ++i)
      b.fout[i] = -1.0f;
    r = k.fill[grid](b.fout, value, c.n, kiln::arg("BLOCK", c.block));
    break;
  }
  if (!r.kernel)
    return false;
  if (r.source == kiln::BinarySource::compiled)
    fresh.fetch_add(1, std::memory_order_relaxed);
  for (int i = 0; i < kMaxN; ++i) {
    const bool in = i < c.n;
    bool ok = true;
    switch (c.kind) {
    case Case::AddF32: ok = b.fout[i] == (in ? float(i + salt % 7) + float(2 * i) : -1.0f); break;
    case Case::AddI32: ok = b.iout[i] == (in ? salt - i : -1); break;
    case Case::Axpy: ok = b.fy[i] == (in ? value * float(i) + 1.0f : 1.0f); break;
    case Case::Fill: ok = b.fout[i] == (in ? value : -1.0f); break;
    }
    if (!ok)
      return false;
  }
  return true;
}

} // namespace

TEST_CASE("concurrency: 16 threads x 1000 launches compile each key exactly once") {
  HookGuard guard;
  std::mutex mutex;
  std::map<std::string, int> compiles; // key -> count
  std::map<std::string, std::string> reprs;
  kiln::hooks().jit_post_compile_hook = [&](const kiln::CompileEvent &e) {
    std::lock_guard lock(mutex);
    ++compiles[std::string(e.key)];
    reprs[std::string(e.key)] = std::string(e.repr);
  };

  const Kernels kernels;
  constexpr int kThreads = 16, kLaunches = 1000;
  std::latch start(kThreads);
  std::atomic<int> wrong{0}, errors{0}, fresh{0};
  std::vector<std::string> first_error(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Buffers *b = new Buffers;
      start.arrive_and_wait(); // every thread's first launch races the others'
      for (int i = 0; i < kLaunches; ++i) {
        const std::vector<Case> &all = cases();
        const Case &c = all[(i * 7 + t) % all.size()];
        try {
          if (!run_case(kernels, c, *b, t * kLaunches + i, fresh))
            wrong.fetch_add(1, std::memory_order_relaxed);
        } catch (const std::exception &e) {
          if (errors.fetch_add(1) == 0)
            first_error[t] = e.what();
        }
      }
      delete b;
    });
  }
  for (std::thread &th : threads)
    th.join();

  for (const std::string &e : first_error)
    if (!e.empty())
      FAIL_CHECK("a launch threw: " << e);
  CHECK(errors.load() == 0);
  CHECK(wrong.load() == 0);
  CHECK(compiles.size() == kDistinctKeys);
  for (const auto &[key, count] : compiles) {
    CAPTURE(reprs[key]);
    CHECK(count == 1);
  }
  // Exactly one launch per key saw its own compile.
  CHECK(fresh.load() == static_cast<int>(kDistinctKeys));
  std::set<std::string> distinct;
  for (const auto &[key, repr] : reprs)
    distinct.insert(repr);
  CHECK(distinct.size() == kDistinctKeys);
}

TEST_CASE("concurrency: warmups and launches of one new key from many threads compile it once") {
  HookGuard guard;
  std::atomic<int> compiles{0};
  kiln::hooks().jit_post_compile_hook = [&](const kiln::CompileEvent &) { compiles.fetch_add(1); };
  const kiln::Module m = shared_module("vector_add.py");
  const kiln::Kernel add = m.kernel("add_kernel");
  constexpr int kThreads = 8;
  std::latch start(kThreads);
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  std::vector<const kiln::CompiledKernel *> seen(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      alignas(64) float x[64], y[64], out[64];
      for (int i = 0; i < 64; ++i) {
        x[i] = float(i);
        y[i] = float(t);
      }
      start.arrive_and_wait();
      kiln::LaunchResult r = t % 2 ? add.warmup_with(x, y, out, 64, kiln::arg("BLOCK", 64))
                                   : add[{1}](x, y, out, 64, kiln::arg("BLOCK", 64));
      seen[t] = r.kernel;
      if (t % 2 == 0)
        for (int i = 0; i < 64; ++i)
          bad += out[i] != float(i + t);
    });
  }
  for (std::thread &th : threads)
    th.join();
  CHECK(compiles.load() == 1);
  CHECK(bad.load() == 0);
  for (const kiln::CompiledKernel *k : seen)
    CHECK(k == seen[0]);
  CHECK(seen[0] != nullptr);
}

TEST_CASE("concurrency: lookups stay correct while a kernel's table grows under them") {
  // A kernel's table starts with 64 slots and doubles when half full; 96
  // keys make it grow twice while other threads are probing it lock-free.
  HookGuard guard;
  std::mutex mutex;
  std::map<std::string, int> compiles;
  kiln::hooks().jit_post_compile_hook = [&](const kiln::CompileEvent &e) {
    std::lock_guard lock(mutex);
    ++compiles[std::string(e.key)];
  };
  const kiln::Module m = kiln::Module::from_string(R"(
import triton
import triton.language as tl

@triton.jit
def tiny(x_ptr, V: tl.constexpr):
    pass
)",
                                                   "tiny.py");
  const kiln::Kernel tiny = m.kernel("tiny");
  constexpr int kThreads = 8, kKeys = 96, kRounds = 3;
  std::latch start(kThreads);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      alignas(16) float x[4] = {};
      start.arrive_and_wait();
      for (int round = 0; round < kRounds; ++round)
        for (int i = 0; i < kKeys; ++i) {
          const int v = (i * 5 + t * 11) % kKeys; // threads walk the keys in different orders
          const kiln::LaunchResult r = tiny[kiln::Grid(1)](x, kiln::arg("V", v));
          const std::string want = "(x_ptr: *fp32:D, V: constexpr=" + std::to_string(v) + ")";
          if (!r.kernel || r.kernel->specialization != want)
            wrong.fetch_add(1);
        }
    });
  }
  for (std::thread &th : threads)
    th.join();
  CHECK(wrong.load() == 0);
  CHECK(compiles.size() == kKeys);
  int more_than_once = 0;
  for (const auto &[key, count] : compiles)
    more_than_once += count != 1;
  CHECK(more_than_once == 0);
}
