// The launch hot path allocates nothing (DESIGN.md §2: "no string building,
// no heap allocation, no lock on a cache hit").
//
// This binary replaces every global operator new and delete with versions
// that count, on the current thread, while a thread_local flag is set -- so
// only the launches under test are counted, not doctest's bookkeeping nor
// other threads. The launches go through the dispatch path the latency
// benchmark uses (JitFunction::run with LaunchSpec::dispatch_only): bind,
// specialize, key, cache lookup, globals check, grid, argument packing --
// everything but the driver call. When a launch does allocate, the test
// prints the stack of the first allocation (build with -g for line numbers,
// or run `addr2line -e alloc_tests` on the addresses).
#include <doctest/doctest.h>

#include <execinfo.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>

#include <kiln/kiln.hpp>

#include "runtime/jit_function.hpp"

namespace {

thread_local bool t_counting = false;
thread_local long t_allocations = 0;
thread_local bool t_traced = false;

void note_allocation(std::size_t size) {
  if (!t_counting)
    return;
  ++t_allocations;
  if (!t_traced) {
    t_traced = true;
    t_counting = false; // backtrace() may allocate the first time
    void *frames[32];
    const int n = backtrace(frames, 32);
    std::fprintf(stderr, "alloc_tests: operator new(%zu) during a counted launch, at:\n", size);
    backtrace_symbols_fd(frames, n, STDERR_FILENO);
    t_counting = true;
  }
}

void *allocate(std::size_t size) {
  note_allocation(size);
  if (void *p = std::malloc(size ? size : 1))
    return p;
  throw std::bad_alloc();
}

void *allocate_aligned(std::size_t size, std::align_val_t align) {
  note_allocation(size);
  const std::size_t a = static_cast<std::size_t>(align);
  void *p = nullptr;
  if (posix_memalign(&p, a < sizeof(void *) ? sizeof(void *) : a, size ? size : 1) == 0)
    return p;
  throw std::bad_alloc();
}

/// Counts allocations on this thread for its lifetime.
class Counting {
public:
  /// With `trace`, the stack of the first allocation goes to stderr.
  explicit Counting(bool trace = true) {
    t_allocations = 0;
    t_traced = !trace;
    t_counting = true;
  }
  ~Counting() { t_counting = false; }
  long allocations() const { return t_allocations; }
};

} // namespace

// ---- the replaced global allocation functions ----

void *operator new(std::size_t n) { return allocate(n); }
void *operator new[](std::size_t n) { return allocate(n); }
void *operator new(std::size_t n, const std::nothrow_t &) noexcept {
  try {
    return allocate(n);
  } catch (...) {
    return nullptr;
  }
}
void *operator new[](std::size_t n, const std::nothrow_t &) noexcept {
  try {
    return allocate(n);
  } catch (...) {
    return nullptr;
  }
}
void *operator new(std::size_t n, std::align_val_t a) { return allocate_aligned(n, a); }
void *operator new[](std::size_t n, std::align_val_t a) { return allocate_aligned(n, a); }
void *operator new(std::size_t n, std::align_val_t a, const std::nothrow_t &) noexcept {
  try {
    return allocate_aligned(n, a);
  } catch (...) {
    return nullptr;
  }
}
void *operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t &) noexcept {
  try {
    return allocate_aligned(n, a);
  } catch (...) {
    return nullptr;
  }
}

void operator delete(void *p) noexcept { std::free(p); }
void operator delete[](void *p) noexcept { std::free(p); }
void operator delete(void *p, std::size_t) noexcept { std::free(p); }
void operator delete[](void *p, std::size_t) noexcept { std::free(p); }
void operator delete(void *p, const std::nothrow_t &) noexcept { std::free(p); }
void operator delete[](void *p, const std::nothrow_t &) noexcept { std::free(p); }
void operator delete(void *p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void *p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void *p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void *p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void *p, std::align_val_t, const std::nothrow_t &) noexcept { std::free(p); }
void operator delete[](void *p, std::align_val_t, const std::nothrow_t &) noexcept { std::free(p); }

// ---- the tests ----

namespace {

using LaunchSpec = kiln::runtime::JitFunction::LaunchSpec;

constexpr int kLaunches = 1000;

/// Warms `args` up, then makes kLaunches dispatch-only launches of the same
/// specialization and returns how many allocations they made.
long allocations_per_dispatch(const kiln::Kernel &k, std::span<const kiln::Arg> args, kiln::Grid grid) {
  const kiln::LaunchResult warm = k.warmup(args);
  REQUIRE(warm.kernel);
  // One uncounted dispatch first: anything lazily created on first use
  // (the device cache, say) is not the steady state.
  const LaunchSpec spec{.grid = grid, .dispatch_only = true};
  REQUIRE(k.impl()->run(args, spec).kernel == warm.kernel);
  long total = 0;
  bool same = true;
  {
    Counting counting;
    for (int i = 0; i < kLaunches; ++i)
      same &= k.impl()->run(args, spec).kernel == warm.kernel;
    total = counting.allocations();
  }
  CHECK(same);
  return total;
}

} // namespace

TEST_CASE("alloc: the counter sees operator new in all its forms") {
  // keep() stops the compiler from eliding a new/delete pair.
  auto keep = [](auto *p) {
    asm volatile("" : : "r"(p) : "memory");
    return p;
  };
  struct alignas(64) Wide {
    char c[64];
  };
  Counting counting(/*trace=*/false);
  delete keep(new int(1));
  delete[] keep(new int[4]);
  delete keep(new (std::nothrow) int(2));
  delete keep(new Wide);
  delete[] keep(new Wide[2]);
  delete keep(new (std::nothrow) Wide);
  const std::string s(100, 'x'); // a heap string
  keep(s.data());
  CHECK(counting.allocations() == 7);
}

TEST_CASE("alloc: dispatching a warm 4-argument kernel allocates nothing") {
  const kiln::Module m = kiln::Module::from_file(std::string(KILN_SHARED_DIR) + "/kernels/vector_add.py");
  const kiln::Kernel add = m.kernel("add_kernel");
  alignas(64) static float x[1024], y[1024], out[1024];
  SUBCASE("positional, with a keyword constexpr") {
    const kiln::Arg args[] = {x, y, out, 1000, kiln::arg("BLOCK", 256)};
    CHECK(allocations_per_dispatch(add, args, kiln::Grid(4)) == 0);
  }
  SUBCASE("keywords and options") {
    const kiln::Arg args[] = {kiln::arg("out_ptr", out), kiln::arg("x_ptr", x), kiln::arg("y_ptr", y),
                              kiln::arg("n", 1000), kiln::arg("BLOCK", 256), kiln::arg("num_warps", 8)};
    CHECK(allocations_per_dispatch(add, args, kiln::Grid(4)) == 0);
  }
  SUBCASE("a cache miss does allocate: the counter sees the runtime's allocations") {
    const kiln::Arg args[] = {x, y, out, 1000, kiln::arg("BLOCK", 512)};
    const LaunchSpec spec{.grid = kiln::Grid(2), .dispatch_only = true};
    Counting counting(/*trace=*/false);
    REQUIRE(add.impl()->run(args, spec).kernel);
    CHECK(counting.allocations() > 0);
  }
  SUBCASE("a grid function") {
    const kiln::Arg args[] = {x, y, out, 1000, kiln::arg("BLOCK", 256)};
    const kiln::GridFn grid = [](const kiln::BoundArgs &a) {
      return kiln::Grid(static_cast<uint32_t>(kiln::cdiv(a["n"].as_int(), a["BLOCK"].as_int())));
    };
    add.warmup(args);
    const LaunchSpec spec{.grid = kiln::Grid(), .grid_fn = &grid, .dispatch_only = true};
    add.impl()->run(args, spec);
    Counting counting;
    for (int i = 0; i < kLaunches; ++i)
      add.impl()->run(args, spec);
    CHECK(counting.allocations() == 0);
  }
}

TEST_CASE("alloc: dispatching a warm 16-argument kernel allocates nothing") {
  const kiln::Module m = kiln::Module::from_string(R"(
import triton
import triton.language as tl


@triton.jit
def wide(a_ptr, b_ptr, c_ptr, d_ptr, out_ptr, n, m, k, stride_a, stride_b, alpha, beta, flag,
         idx: tl.int64, SCALE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs * stride_a, mask=mask, other=0.0)
    b = tl.load(b_ptr + offs * stride_b, mask=mask, other=0.0)
    c = tl.load(c_ptr + offs, mask=mask, other=0.0)
    d = tl.load(d_ptr + offs, mask=mask, other=0.0)
    r = alpha * a + beta * b + c * d * SCALE + m + k + idx
    r = tl.where(flag, r, 0.0)
    tl.store(out_ptr + offs, r, mask=mask)
)",
                                                   "wide.py");
  const kiln::Kernel wide = m.kernel("wide");
  REQUIRE(wide.params().size() == 16);
  alignas(64) static float a[512], b[512], c[512], d[512], out[512];
  const kiln::Arg args[] = {a,    b,   c,     d,   out, 500, 3,       17, 1,
                            1,    1.5, 2.0f,  true, int64_t{40}, kiln::arg("SCALE", 2),
                            kiln::arg("BLOCK", 128)};
  CHECK(allocations_per_dispatch(wide, args, kiln::Grid(4)) == 0);

  // The binary is right, too (a real launch, not counted).
  for (int i = 0; i < 512; ++i) {
    a[i] = float(i);
    b[i] = 2.0f;
    c[i] = 1.0f;
    d[i] = 0.5f;
    out[i] = -1.0f;
  }
  wide.run(args, kiln::Grid(4));
  CHECK(out[0] == 1.5f * 0 + 2.0f * 2 + 1.0f * 0.5f * 2 + 3 + 17 + 40);
  CHECK(out[499] == 1.5f * 499 + 2.0f * 2 + 1.0f * 0.5f * 2 + 3 + 17 + 40);
  CHECK(out[500] == -1.0f);
}

TEST_CASE("alloc: a full launch of a warm kernel on a one-program grid allocates nothing") {
  // Beyond the dispatch path: the CPU driver's call for a grid of one runs
  // the entry point inline (no TBB tasks), so the whole launch is heap-free.
  const kiln::Module m = kiln::Module::from_file(std::string(KILN_SHARED_DIR) + "/kernels/vector_add.py");
  const kiln::Kernel add = m.kernel("add_kernel");
  alignas(64) static float x[256], y[256], out[256];
  add[{1}](x, y, out, 200, kiln::arg("BLOCK", 256));
  Counting counting;
  for (int i = 0; i < kLaunches; ++i)
    add[{1}](x, y, out, 200, kiln::arg("BLOCK", 256));
  CHECK(counting.allocations() == 0);
}

TEST_CASE("alloc: a full launch of a warm kernel on a many-program grid makes no operator new call") {
  // runtime/driver.hpp: Driver::launch "must not allocate". The CPU driver
  // splits the grid with tbb::parallel_for, whose tasks come from TBB's own
  // allocator rather than operator new; this checks the operator new side,
  // on the launching thread (the counter is thread_local).
  const kiln::Module m = kiln::Module::from_file(std::string(KILN_SHARED_DIR) + "/kernels/vector_add.py");
  const kiln::Kernel add = m.kernel("add_kernel");
  alignas(64) static float x[4096], y[4096], out[4096];
  add[{16}](x, y, out, 4096, kiln::arg("BLOCK", 256));
  Counting counting;
  for (int i = 0; i < 200; ++i)
    add[{16}](x, y, out, 4096, kiln::arg("BLOCK", 256));
  CHECK(counting.allocations() == 0);
}

TEST_CASE("alloc: a launch of an autotuned kernel whose key is tuned allocates nothing") {
  // The choice is a lock-free look-up (runtime/choice_table.hpp), the
  // config's values are bound on the stack.
  const kiln::Module m = kiln::Module::from_string(R"(
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": b}, num_warps=1) for b in (16, 32)], key=["n"],
                 warmup=1, rep=2)
@triton.jit
def fill(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, offs * 2, mask=offs < n)
)",
                                                   "fill_tuned_alloc.py");
  const kiln::Kernel fill = m.kernel("fill");
  alignas(64) static int32_t out[16];
  REQUIRE(fill[{1}](out, 8).kernel); // tunes
  Counting counting;
  for (int i = 0; i < kLaunches; ++i)
    fill[{1}](out, 8);
  CHECK(counting.allocations() == 0);
  CHECK(out[7] == 14);
}
