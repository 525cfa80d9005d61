// The process-wide hooks (DESIGN.md §2 "Hooks", the seed's knobs.runtime.*)
// and per-kernel pre-run hooks. Compile counting follows Triton's
// test_cache.py: a hook counts compiles, and each case asserts exact counts
// -- one for a first launch, none for a repeat, one more for each new
// specialization (STYLE.md point 8).
//
// Hooks are process-wide, so every case installs them through a guard that
// resets them when the case ends (passing or not), and loads its own Module
// so that no other case's compiles are in its cache.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <kiln/hooks.hpp>
#include <kiln/kiln.hpp>

namespace {

kiln::Module vector_add() { return kiln::Module::from_file(std::string(KILN_SHARED_DIR) + "/kernels/vector_add.py"); }

/// Clears every process-wide hook when the test case ends.
struct HookGuard {
  HookGuard() { kiln::hooks() = kiln::Hooks{}; }
  ~HookGuard() { kiln::hooks() = kiln::Hooks{}; }
  HookGuard(const HookGuard &) = delete;
  HookGuard &operator=(const HookGuard &) = delete;
};

/// What a copy of a CompileEvent keeps (the event's views die with the call).
struct Seen {
  std::string kernel, key, repr, data;
  const kiln::CompiledKernel *compiled = nullptr;
  bool warmup = false;
};

Seen copy(const kiln::CompileEvent &e) {
  return {std::string(e.kernel), std::string(e.key), std::string(e.repr), std::string(e.specialization_data),
          e.compiled, e.warmup};
}

struct Vectors {
  std::vector<float> x, y, out;
  explicit Vectors(int n) : x(n), y(n), out(n, -1.0f) {
    for (int i = 0; i < n; ++i) {
      x[i] = float(i);
      y[i] = 0.5f * float(i);
    }
  }
  bool added() const {
    for (size_t i = 0; i < x.size(); ++i)
      if (out[i] != x[i] + y[i])
        return false;
    return true;
  }
  bool untouched() const {
    for (float v : out)
      if (v != -1.0f)
        return false;
    return true;
  }
};

uint32_t blocks(int n, int block) { return static_cast<uint32_t>(kiln::cdiv(n, block)); }

} // namespace

TEST_CASE("hooks: jit_post_compile_hook counts compiles exactly") {
  HookGuard guard;
  std::vector<Seen> compiles;
  kiln::hooks().jit_post_compile_hook = [&](const kiln::CompileEvent &e) { compiles.push_back(copy(e)); };

  const kiln::Module m = vector_add();
  const kiln::Kernel add = m.kernel("add_kernel");
  Vectors v(100);
  add[{blocks(100, 64)}](v.x.data(), v.y.data(), v.out.data(), 100, kiln::arg("BLOCK", 64));
  CHECK(v.added());
  CHECK(compiles.size() == 1);

  for (int i = 0; i < 3; ++i)
    add[{blocks(100, 64)}](v.x.data(), v.y.data(), v.out.data(), 100, kiln::arg("BLOCK", 64));
  CHECK(compiles.size() == 1); // repeats hit the memory cache

  // Another n of the same specialization (i32, not divisible by 16).
  add[{blocks(99, 64)}](v.x.data(), v.y.data(), v.out.data(), 99, kiln::arg("BLOCK", 64));
  CHECK(compiles.size() == 1);

  add[{blocks(100, 32)}](v.x.data(), v.y.data(), v.out.data(), 100, kiln::arg("BLOCK", 32));
  CHECK(compiles.size() == 2); // a new constexpr
  add[{blocks(96, 64)}](v.x.data(), v.y.data(), v.out.data(), 96, kiln::arg("BLOCK", 64));
  CHECK(compiles.size() == 3); // n divisible by 16: i32:D
  add[{1}](v.x.data(), v.y.data(), v.out.data(), 100, kiln::arg("BLOCK", 64), kiln::arg("num_warps", 8));
  CHECK(compiles.size() == 4); // new options

  // A warmup of a known specialization compiles nothing; of a new one, once.
  add.warmup_with(v.x.data(), v.y.data(), v.out.data(), 100, kiln::arg("BLOCK", 64));
  CHECK(compiles.size() == 4);
  add.warmup_with(kiln::Arg::mock(kiln::DType::f16), kiln::Arg::mock(kiln::DType::f16),
                  kiln::Arg::mock(kiln::DType::f16), 100, kiln::arg("BLOCK", 64));
  REQUIRE(compiles.size() == 5);
  CHECK(compiles.back().warmup);
  CHECK_FALSE(compiles.front().warmup);

  // Every compile had its own key.
  for (size_t i = 0; i < compiles.size(); ++i)
    for (size_t j = i + 1; j < compiles.size(); ++j)
      CHECK(compiles[i].key != compiles[j].key);
}

TEST_CASE("hooks: re-fetching a Kernel from its Module does not compile again") {
  // Triton's JITFunction lives as long as its module, and so does its cache.
  // Module::kernel(name) is the natural way to get at a kernel at a launch
  // site; it must not throw the compiled kernels away between calls.
  HookGuard guard;
  int compiles = 0;
  kiln::hooks().jit_post_compile_hook = [&](const kiln::CompileEvent &) { ++compiles; };
  const kiln::Module m = vector_add();
  Vectors v(64);
  for (int i = 0; i < 3; ++i)
    m.kernel("add_kernel")[{1}](v.x.data(), v.y.data(), v.out.data(), 64, kiln::arg("BLOCK", 64));
  CHECK(v.added());
  CHECK_MESSAGE(compiles == 1, "three launches through m.kernel(\"add_kernel\") compiled " << compiles << " times");
}

TEST_CASE("hooks: the compile event names the kernel, its key, a repr and valid specialization data") {
  HookGuard guard;
  std::vector<Seen> before, after;
  kiln::hooks().jit_cache_hook = [&](const kiln::CompileEvent &e) {
    before.push_back(copy(e));
    return false;
  };
  kiln::hooks().jit_post_compile_hook = [&](const kiln::CompileEvent &e) { after.push_back(copy(e)); };

  const kiln::Module m = vector_add();
  const kiln::Kernel add = m.kernel("add_kernel");
  Vectors v(64);
  const kiln::LaunchResult r = add[{1}](v.x.data(), v.y.data(), v.out.data(), 64, kiln::arg("BLOCK", 64));
  REQUIRE(r.kernel);
  CHECK(r.source == kiln::BinarySource::compiled);
  REQUIRE(before.size() == 1);
  REQUIRE(after.size() == 1);
  const Seen &e = after[0];

  CHECK(e.kernel == "add_kernel");
  CHECK(e.key == r.kernel->key);
  CHECK(e.key.size() == 64);
  CHECK(e.compiled == r.kernel);
  CHECK_FALSE(e.warmup);
  CHECK(e.repr ==
        "add_kernel[num_warps=4, num_ctas=1, num_stages=3, enable_fp_fusion=true]"
        "(x_ptr: *fp32:D, y_ptr: *fp32:D, out_ptr: *fp32:D, n: i32:D, BLOCK: constexpr=64)");
  CHECK(e.repr == kiln::Kernel::repr(*r.kernel));

  nlohmann::json data;
  REQUIRE_NOTHROW(data = nlohmann::json::parse(e.data));
  CHECK(data["kernel"] == "add_kernel");
  CHECK(data["key"] == e.key);
  CHECK(data["args"]["x_ptr"] == "*fp32:D");
  CHECK(data["args"]["n"] == "i32:D");
  CHECK(data["args"]["BLOCK"] == 64);
  CHECK(data["options"]["num_warps"] == 4);
  CHECK(data["options"]["num_stages"] == 3);

  // The cache hook saw the same request, before there was a binary.
  CHECK(before[0].kernel == e.kernel);
  CHECK(before[0].key == e.key);
  CHECK(before[0].repr == e.repr);
  CHECK(before[0].data == e.data);
  CHECK(before[0].compiled == nullptr);
}

TEST_CASE("hooks: a jit_cache_hook returning true skips the compile and the launch") {
  HookGuard guard;
  bool skip = true;
  int asked = 0, compiled = 0;
  std::string asked_key;
  kiln::hooks().jit_cache_hook = [&](const kiln::CompileEvent &e) {
    ++asked;
    asked_key = std::string(e.key);
    return skip;
  };
  kiln::hooks().jit_post_compile_hook = [&](const kiln::CompileEvent &) { ++compiled; };
  int launches = 0;
  kiln::hooks().launch_enter_hook = [&](const kiln::LaunchEvent &) { ++launches; };

  const kiln::Module m = vector_add();
  const kiln::Kernel add = m.kernel("add_kernel");
  Vectors v(64);
  const kiln::LaunchResult skipped = add[{1}](v.x.data(), v.y.data(), v.out.data(), 64, kiln::arg("BLOCK", 64));
  CHECK(skipped.kernel == nullptr);
  CHECK_FALSE(skipped.future.valid());
  CHECK(v.untouched()); // nothing ran
  CHECK(asked == 1);
  CHECK(compiled == 0);
  CHECK(launches == 0);

  // Still not in the cache: the next launch asks again.
  CHECK(add[{1}](v.x.data(), v.y.data(), v.out.data(), 64, kiln::arg("BLOCK", 64)).kernel == nullptr);
  CHECK(asked == 2);
  CHECK(v.untouched());

  skip = false;
  const kiln::LaunchResult r = add[{1}](v.x.data(), v.y.data(), v.out.data(), 64, kiln::arg("BLOCK", 64));
  REQUIRE(r.kernel);
  CHECK(v.added());
  CHECK(asked == 3);
  CHECK(compiled == 1);
  CHECK(launches == 1);
  CHECK(asked_key == r.kernel->key);

  // Once compiled, a launch is a memory hit: the cache hook is not asked.
  add[{1}](v.x.data(), v.y.data(), v.out.data(), 64, kiln::arg("BLOCK", 64));
  CHECK(asked == 3);
  CHECK(compiled == 1);
}

TEST_CASE("hooks: launch_enter and launch_exit see the grid, the bound args and the binary") {
  HookGuard guard;
  struct Launch {
    kiln::Grid grid;
    std::vector<kiln::Arg> args;
    const kiln::CompiledKernel *compiled;
    kiln::BinarySource source;
    bool out_written;
  };
  std::vector<Launch> enters, exits;
  const kiln::Module m = vector_add();
  const kiln::Kernel add = m.kernel("add_kernel");
  Vectors v(200);
  auto record = [&](std::vector<Launch> &into) {
    return [&into, &v](const kiln::LaunchEvent &e) {
      CHECK(e.kernel == "add_kernel");
      CHECK(e.device == kiln::current_device());
      CHECK(e.stream == nullptr);
      into.push_back({e.grid, std::vector<kiln::Arg>(e.args.begin(), e.args.end()), e.compiled, e.source,
                      v.out[0] != -1.0f});
    };
  };
  kiln::hooks().launch_enter_hook = record(enters);
  kiln::hooks().launch_exit_hook = record(exits);

  const kiln::LaunchResult r =
      add[{blocks(200, 64)}](v.x.data(), v.y.data(), v.out.data(), kiln::arg("n", 200), kiln::arg("BLOCK", 64));
  REQUIRE(r.kernel);
  CHECK(v.added());
  REQUIRE(enters.size() == 1);
  REQUIRE(exits.size() == 1);
  const Launch &in = enters[0];
  CHECK(in.grid == kiln::Grid(4));
  REQUIRE(in.args.size() == 5); // in parameter order, keywords placed
  CHECK(in.args[0].as_pointer() == v.x.data());
  CHECK(in.args[1].as_pointer() == v.y.data());
  CHECK(in.args[2].as_pointer() == v.out.data());
  CHECK(in.args[3].as_int() == 200);
  CHECK(in.args[4].as_int() == 64);
  CHECK(in.args[2].dtype() == kiln::DType::f32);
  CHECK(in.compiled == r.kernel);
  CHECK(in.source == kiln::BinarySource::compiled);
  CHECK_FALSE(in.out_written); // enter runs before the kernel
  CHECK(exits[0].out_written); // exit after it
  CHECK(exits[0].grid == in.grid);

  add[{2, 1, 1}](v.x.data(), v.y.data(), v.out.data(), 200, kiln::arg("BLOCK", 128));
  add[{2, 1, 1}](v.x.data(), v.y.data(), v.out.data(), 200, kiln::arg("BLOCK", 128));
  REQUIRE(enters.size() == 3);
  CHECK(enters[1].source == kiln::BinarySource::compiled);
  CHECK(enters[2].source == kiln::BinarySource::memory);
  CHECK(enters[2].grid == kiln::Grid(2, 1, 1));
  CHECK(enters[2].args[4].as_int() == 128);

  // Warmups and empty grids launch nothing.
  add.warmup_with(v.x.data(), v.y.data(), v.out.data(), 200, kiln::arg("BLOCK", 64));
  add[kiln::Grid(0)](v.x.data(), v.y.data(), v.out.data(), 200, kiln::arg("BLOCK", 64));
  CHECK(enters.size() == 3);
  CHECK(exits.size() == 3);
}

TEST_CASE("hooks: a kernel's pre-run hooks see the bound args, defaults included") {
  HookGuard guard;
  // Pre-run hooks cannot be removed, so this kernel is this case's own.
  const kiln::Module m = kiln::Module::from_string(R"(
import triton
import triton.language as tl

@triton.jit
def scale(x_ptr, n, factor=2.0, BLOCK: tl.constexpr = 64):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) * factor, mask=mask)
)",
                                                   "pre_run.py");
  const kiln::Kernel k = m.kernel("scale");
  struct Call {
    const void *x;
    int64_t n;
    double factor;
    int64_t block;
    size_t count;
  };
  std::vector<Call> calls;
  int second = 0;
  std::vector<float> x(100, 1.0f);
  k.add_pre_run_hook([&](const kiln::BoundArgs &b) {
    calls.push_back({b["x_ptr"].as_pointer(), b["n"].as_int(), b["factor"].as_float(), b["BLOCK"].as_int(),
                     b.values().size()});
    if (calls.size() == 1)
      CHECK(x[0] == 1.0f); // before the kernel runs
    CHECK_THROWS_AS(b["no_such_param"], kiln::ArgumentError);
  });
  k.add_pre_run_hook([&](const kiln::BoundArgs &) { ++second; });

  k[{2}](x.data(), 100);
  CHECK(x[99] == 2.0f);
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].x == x.data());
  CHECK(calls[0].n == 100);
  CHECK(calls[0].factor == 2.0);
  CHECK(calls[0].block == 64);
  CHECK(calls[0].count == 4);
  CHECK(second == 1);

  // As in the seed, first thing in every run: warmup and an empty grid too.
  k.warmup_with(x.data(), 100);
  CHECK(calls.size() == 2);
  k[{0}](x.data(), 100);
  CHECK(calls.size() == 3);
  x.assign(100, 1.0f);
  k[{1}](x.data(), 64, kiln::arg("factor", 3.0));
  REQUIRE(calls.size() == 4);
  CHECK(calls[3].factor == 3.0);
  CHECK(calls[3].n == 64);
  CHECK(x[0] == 3.0f);
  CHECK(second == 4);
}

TEST_CASE("hooks: pre-run hooks run before the compile, so a hook sees a failing launch") {
  HookGuard guard;
  const kiln::Module m =
      kiln::Module::from_string("import triton\nimport triton.language as tl\n\n@triton.jit\n"
                                "def broken(x_ptr, BLOCK: tl.constexpr):\n"
                                "    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)\n",
                                "pre_run_first.py");
  const kiln::Kernel k = m.kernel("broken");
  int calls = 0;
  k.add_pre_run_hook([&](const kiln::BoundArgs &) { ++calls; });
  std::vector<float> x(4);
  // BLOCK=3 is not a power of two: the compile fails, after the hook ran.
  CHECK_THROWS(k[{1}](x.data(), kiln::arg("BLOCK", 3)));
  CHECK(calls == 1);
}

TEST_CASE("hooks: a kernel's launch_metadata callback reaches the launch hooks, with the "
          "specialization") {
  HookGuard guard;
  const kiln::Module m = vector_add();
  const kiln::Kernel add = m.kernel("add_kernel");
  int asked = 0;
  // Triton's launch_metadata=: a name with the sizes, for a profiler.
  add.set_launch_metadata([&](const kiln::LaunchEvent &e) {
    ++asked;
    return std::string(e.kernel) + " n=" + std::to_string(e.args[3].as_int());
  });
  std::vector<std::string> metadata, specs;
  Vectors v(100);
  // No launch hook: the callback is never called.
  add[{blocks(100, 64)}](v.x.data(), v.y.data(), v.out.data(), 100, kiln::arg("BLOCK", 64));
  CHECK(asked == 0);

  kiln::hooks().launch_enter_hook = [&](const kiln::LaunchEvent &e) {
    metadata.push_back(e.launch_metadata());
    specs.emplace_back(e.specialization());
  };
  add[{blocks(100, 64)}](v.x.data(), v.y.data(), v.out.data(), 100, kiln::arg("BLOCK", 64));
  CHECK(v.added());
  REQUIRE(metadata.size() == 1);
  CHECK(metadata[0] == "add_kernel n=100");
  CHECK(specs[0] ==
        "(x_ptr: *fp32:D, y_ptr: *fp32:D, out_ptr: *fp32:D, n: i32, BLOCK: constexpr=64)");
  CHECK(asked == 1);

  // A kernel without one gives empty metadata.
  m.kernel("axpy_kernel")[{1}](2.0f, v.x.data(), v.y.data(), 4, kiln::arg("BLOCK", 4));
  REQUIRE(metadata.size() == 2);
  CHECK(metadata[1].empty());
}

// Issue 13: the seed's hooks get the JITFunction itself; kiln's events carry
// the Kernel handle, usable after the hook returns (a copy shares the kernel).
TEST_CASE("hooks: the pre-run, launch and compile hooks carry the kernel handle") {
  HookGuard guard;
  const kiln::Module m = vector_add();
  const kiln::Kernel add = m.kernel("add_kernel");
  std::vector<kiln::Kernel> entered, exited, compiled, cached, pre_run;
  // A hook that keeps the handle its event carries.
  auto keep_in = [](std::vector<kiln::Kernel> &into) {
    return [&into](const auto &e) {
      REQUIRE(e.handle != nullptr);
      into.push_back(*e.handle);
      return false; // jit_cache_hook: do not skip the compile
    };
  };
  kiln::hooks().launch_enter_hook = keep_in(entered);
  kiln::hooks().launch_exit_hook = keep_in(exited);
  kiln::hooks().jit_post_compile_hook = keep_in(compiled);
  kiln::hooks().jit_cache_hook = keep_in(cached);
  add.add_pre_run_hook([&](const kiln::BoundArgs &b) {
    REQUIRE(b.handle() != nullptr);
    pre_run.push_back(*b.handle());
  });
  Vectors v(100);
  add[{blocks(100, 64)}](v.x.data(), v.y.data(), v.out.data(), 100, kiln::arg("BLOCK", 64));
  CHECK(v.added());
  for (const auto *seen : {&entered, &exited, &compiled, &cached, &pre_run}) {
    REQUIRE(seen->size() == 1);
    // The same function as `add`: its name, its cache key, its own object.
    CHECK(seen->front().name() == "add_kernel");
    CHECK(seen->front().impl() == add.impl());
  }
  // The handle from the hook launches the kernel like the original.
  Vectors w(100);
  entered.front()[{blocks(100, 64)}](w.x.data(), w.y.data(), w.out.data(), 100,
                                     kiln::arg("BLOCK", 64));
  CHECK(w.added());
  CHECK(entered.size() == 2);
}
