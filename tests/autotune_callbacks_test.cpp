// Autotuning from C++ (issue 15): configs given with Kernel::autotune(spec),
// what Triton takes as Python callables as C++ callbacks (pre_hook and
// post_hook around each timing run and launch, early_config_prune,
// perf_model with top_k), a file's own Python callables ignored rather than
// failing the load, and warmup of an autotuned kernel: the choice known for
// its key, or every config.
#include <doctest/doctest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <kiln/kiln.hpp>

#include "tests/text_checks.hpp"

using kiln::test::contains;

namespace {

const char *const kFill = R"(import triton
import triton.language as tl


@triton.jit
def fill(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, offs * 2, mask=offs < n)
)";

kiln::AutotuneSpec four_blocks() {
  kiln::AutotuneSpec spec;
  for (int b : {16, 32, 64, 128})
    spec.configs.push_back({.meta = {{"BLOCK", b}}, .num_warps = 1});
  spec.key = {"n"};
  spec.warmup_ms = 1;
  spec.rep_ms = 2;
  return spec;
}

kiln::Grid grid_of(const kiln::BoundArgs &a) {
  return kiln::Grid{static_cast<uint32_t>(kiln::cdiv(a["n"].as_int(), a["BLOCK"].as_int()))};
}

/// Counts compiles (and remembers their BLOCK) while alive.
struct CompileCounter {
  std::atomic<int> n{0};
  std::set<std::string> specs;
  std::mutex m;
  CompileCounter() {
    kiln::hooks().jit_post_compile_hook = [this](const kiln::CompileEvent &e) {
      ++n;
      std::lock_guard l(m);
      specs.insert(e.compiled->specialization);
    };
  }
  ~CompileCounter() { kiln::hooks().jit_post_compile_hook = nullptr; }
};

} // namespace

TEST_CASE(
    "autotune from C++: configs given with Kernel::autotune tune a kernel without a decorator") {
  kiln::Module m = kiln::Module::from_string(kFill, "fill_cpp.py");
  kiln::Kernel k = m.kernel("fill");
  CHECK_FALSE(k.autotune());
  k.autotune(four_blocks());
  REQUIRE(k.autotune());
  CHECK(k.autotune()->configs.size() == 4);
  CHECK(k.autotune()->key == std::vector<std::string>{"n"});
  CompileCounter compiles;
  std::vector<int32_t> out(1000, -1);
  const kiln::LaunchResult r = k[grid_of](out.data(), 1000);
  REQUIRE(r.kernel);
  CHECK(compiles.n == 4); // every config compiled, then timed
  for (int i = 0; i < 1000; ++i)
    CHECK(out[i] == 2 * i);
  CHECK(k[grid_of](out.data(), 1000).kernel == r.kernel); // the key's choice, no tuning
  CHECK(compiles.n == 4);
}

TEST_CASE("autotune from C++: a spec naming no configs or an unknown parameter is refused") {
  kiln::Module m = kiln::Module::from_string(kFill, "fill_bad.py");
  kiln::Kernel k = m.kernel("fill");
  CHECK_THROWS_WITH_AS(k.autotune(kiln::AutotuneSpec{}), doctest::Contains("no configs"),
                       kiln::ArgumentError);
  kiln::AutotuneSpec spec = four_blocks();
  spec.key = {"size"};
  CHECK_THROWS_WITH_AS(k.autotune(spec),
                       doctest::Contains("the key names 'size', which is not a parameter"),
                       kiln::ArgumentError);
  spec = four_blocks();
  spec.configs[1].meta = {{"BLOCKS", 32}};
  CHECK_THROWS_WITH_AS(k.autotune(spec), doctest::Contains("'BLOCKS'"), kiln::ArgumentError);
  CHECK_FALSE(k.autotune()); // nothing changed
}

TEST_CASE("autotune callbacks: pre_hook and post_hook run around each timing run and each launch, "
          "with the config's values") {
  kiln::Module m = kiln::Module::from_string(kFill, "fill_hooks.py");
  kiln::Kernel k = m.kernel("fill");
  k.autotune(four_blocks());
  std::atomic<int> pre{0}, post{0}, errors{0};
  std::set<int64_t> blocks;
  kiln::AutotuneCallbacks cb;
  cb.pre_hook = [&](const kiln::BoundArgs &a) {
    ++pre;
    blocks.insert(a["BLOCK"].as_int()); // the config's value is bound
  };
  cb.post_hook = [&](const kiln::BoundArgs &, std::exception_ptr e) {
    ++post;
    errors += e != nullptr;
  };
  k.set_autotune_callbacks(cb);
  std::vector<int32_t> out(1000, -1);
  REQUIRE(k[grid_of](out.data(), 1000).kernel);
  CHECK(blocks == std::set<int64_t>{16, 32, 64, 128});
  CHECK(pre > 4); // every config timed, several runs each, then the launch
  CHECK(post == pre);
  CHECK(errors == 0);
  const int before = pre;
  k[grid_of](out.data(), 1000);
  CHECK(pre == before + 1); // a launch of the chosen config
  CHECK(post == pre);
}

TEST_CASE("autotune callbacks: a pre_hook that zeroes an accumulator makes every timing run start "
          "clean") {
  // What Triton users write as Config(pre_hook=init_to_zero("sum_ptr")).
  kiln::Module m = kiln::Module::from_string(R"(import triton
import triton.language as tl


@triton.jit
def accumulate(x_ptr, sum_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.atomic_add(sum_ptr + offs % 4, tl.load(x_ptr + offs, mask=m), mask=m)
)",
                                             "accumulate_hook.py");
  kiln::Kernel k = m.kernel("accumulate");
  k.autotune(four_blocks());
  constexpr int n = 1000;
  std::vector<float> x(n), sum(4, 123.0f);
  for (int i = 0; i < n; ++i)
    x[i] = static_cast<float>(i % 7);
  kiln::AutotuneCallbacks cb;
  cb.pre_hook = [&](const kiln::BoundArgs &) { std::fill(sum.begin(), sum.end(), 0.0f); };
  k.set_autotune_callbacks(cb);
  REQUIRE(k[grid_of](x.data(), sum.data(), n).kernel);
  float want[4] = {};
  for (int i = 0; i < n; ++i)
    want[i % 4] += x[i];
  for (int j = 0; j < 4; ++j)
    CHECK(sum[j] == want[j]);
}

TEST_CASE(
    "autotune callbacks: early_config_prune and perf_model choose what is compiled and timed") {
  kiln::Module m = kiln::Module::from_string(kFill, "fill_prune.py");
  kiln::Kernel k = m.kernel("fill");
  k.autotune(four_blocks());
  std::vector<int32_t> out(1000, -1);
  kiln::AutotuneCallbacks cb;
  // Configs whose block exceeds n are not worth timing; n=20 keeps 16 and 32.
  cb.early_config_prune = [](std::span<const kiln::Config> configs, const kiln::BoundArgs &a) {
    std::vector<size_t> keep;
    for (size_t c = 0; c < configs.size(); ++c)
      if (configs[c].meta[0].second.as_int() <= 2 * a["n"].as_int())
        keep.push_back(c);
    return keep;
  };
  k.set_autotune_callbacks(cb);
  {
    CompileCounter compiles;
    const kiln::LaunchResult r = k[grid_of](out.data(), 20);
    REQUIRE(r.kernel);
    CHECK(compiles.n == 2);
    CHECK((contains(r.kernel->specialization, "BLOCK: constexpr=16") ||
           contains(r.kernel->specialization, "BLOCK: constexpr=32")));
  }
  // A model that prefers the largest block, top 1: only it is compiled, so it is chosen.
  cb.perf_model = [](const kiln::Config &c, const kiln::BoundArgs &) {
    return -static_cast<double>(c.meta[0].second.as_int());
  };
  cb.top_k = 1;
  k.set_autotune_callbacks(cb);
  {
    CompileCounter compiles;
    const kiln::LaunchResult r =
        k[grid_of](out.data(), 1000); // a new key: prune keeps all, the model one
    REQUIRE(r.kernel);
    CHECK(compiles.n == 1);
    CHECK(contains(r.kernel->specialization, "BLOCK: constexpr=128"));
    for (int i = 0; i < 1000; ++i)
      CHECK(out[i] == 2 * i);
  }
  // A pruner that keeps nothing, or a config that does not exist, is the caller's error.
  cb = {};
  cb.early_config_prune = [](std::span<const kiln::Config>, const kiln::BoundArgs &) {
    return std::vector<size_t>{};
  };
  k.set_autotune_callbacks(cb);
  CHECK_THROWS_WITH_AS(k[grid_of](out.data(), 500), doctest::Contains("kept no config"),
                       kiln::ArgumentError);
  cb.early_config_prune = [](std::span<const kiln::Config>, const kiln::BoundArgs &) {
    return std::vector<size_t>{7};
  };
  k.set_autotune_callbacks(cb);
  CHECK_THROWS_WITH_AS(k[grid_of](out.data(), 501), doctest::Contains("kept config 7"),
                       kiln::ArgumentError);
}

TEST_CASE(
    "autotune callbacks: a file's Python pre_hook and prune_configs_by do not stop the load or "
    "the tuning") {
  kiln::Module m = kiln::Module::from_string(R"(import triton
import triton.language as tl


def prune(configs, named_args, **kwargs):
    return configs


@triton.autotune(configs=[triton.Config({"BLOCK": b}, num_warps=1) for b in (16, 32, 64)], key=["n"],
                 prune_configs_by={"early_config_prune": prune}, pre_hook=lambda args: None,
                 warmup=1, rep=2)
@triton.jit
def fill(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, offs * 2, mask=offs < n)
)",
                                             "fill_python_hooks.py");
  kiln::Kernel k = m.kernel("fill");
  REQUIRE(k.autotune());
  CHECK(k.autotune()->callables == std::vector<std::string>{"prune_configs_by", "pre_hook"});
  CompileCounter compiles;
  std::vector<int32_t> out(100, -1);
  REQUIRE(k[grid_of](out.data(), 100).kernel);
  CHECK(compiles.n == 3); // tuned over every config (the Python pruner is not run)
  for (int i = 0; i < 100; ++i)
    CHECK(out[i] == 2 * i);
}

TEST_CASE(
    "autotune warmup: every config without a known choice, the choice once the key is tuned") {
  kiln::Module m = kiln::Module::from_string(kFill, "fill_warm.py");
  kiln::Kernel k = m.kernel("fill");
  k.autotune(four_blocks());
  const kiln::Arg mock[] = {
      kiln::Arg(kiln::Tensor(reinterpret_cast<void *>(4096), kiln::DType::i32)), kiln::Arg(1000)};
  {
    CompileCounter compiles;
    const std::vector<kiln::LaunchResult> all = k.warmup_all(mock);
    CHECK(all.size() == 4);
    CHECK(compiles.n == 4);
    CHECK(k.warmup(mock).kernel == all.front().kernel); // nothing new
  }
  // Tune the key with a launch; a warmup now finds the choice, compiled already.
  std::vector<int32_t> out(1000, -1);
  const kiln::LaunchResult tuned = k[grid_of](out.data(), 1000);
  REQUIRE(tuned.kernel);
  CompileCounter compiles;
  const std::vector<kiln::LaunchResult> chosen = k.warmup_all(mock);
  REQUIRE(chosen.size() == 1);
  CHECK(chosen[0].kernel == tuned.kernel);
  CHECK(compiles.n == 0);
  // Explicit meta-parameters: that one binary, tuning or not.
  const kiln::Arg explicit_args[] = {mock[0], mock[1], kiln::arg("BLOCK", 256)};
  CHECK(k.warmup_all(explicit_args).size() == 1);
  CHECK(compiles.n == 1);
}
