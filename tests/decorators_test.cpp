// @triton.autotune and @triton.heuristics as real files write them: configs
// built from comprehensions and helper functions, heuristics lambdas over the
// launch arguments. kiln reads them without running Python; a heuristic's
// value is applied at each launch; a launch without a config's
// meta-parameters tunes (or takes the first config where kiln cannot tune).
#include <doctest/doctest.h>

#include <atomic>
#include <set>
#include <string>
#include <vector>

#include <kiln/kiln.hpp>

#include "tests/text_checks.hpp"

using kiln::test::contains;

namespace {

const char *const kAutotunedAdd = R"(import torch
import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()


def get_autotune_config():
    configs = []
    for block in [128, 256, 512]:
        for warps in [4, 8]:
            configs.append(triton.Config({"BLOCK_SIZE": block}, num_warps=warps, num_stages=2))
    return configs


@triton.autotune(configs=get_autotune_config(), key=["n_elements"], reset_to_zero=["out_ptr"])
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def add(x: torch.Tensor, y: torch.Tensor):
    output = torch.empty_like(x)
    n_elements = output.numel()
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)
    add_kernel[grid](x, y, output, n_elements)
    return output
)";

} // namespace

TEST_CASE("decorators: autotune configs built by a helper function are read from the file") {
  kiln::Module m = kiln::Module::from_string(kAutotunedAdd, "add_autotuned.py");
  kiln::Kernel k = m.kernel("add_kernel");
  std::optional<kiln::AutotuneSpec> spec = k.autotune();
  REQUIRE(spec);
  CHECK(spec->error.empty());
  REQUIRE(spec->configs.size() == 6);
  CHECK(spec->configs[0].meta[0].first == "BLOCK_SIZE");
  CHECK(spec->configs[0].meta[0].second.as_int() == 128);
  CHECK(spec->configs[5].meta[0].second.as_int() == 512);
  CHECK(spec->configs[5].num_warps == 8);
  CHECK(spec->configs[5].num_stages == 2);
  CHECK(spec->key == std::vector<std::string>{"n_elements"});
  CHECK(spec->reset_to_zero == std::vector<std::string>{"out_ptr"});
}

TEST_CASE("decorators: a config builder unpacks tuples in its loops and assignments") {
  kiln::Module m = kiln::Module::from_string(R"(import triton
import triton.language as tl


def matmul_configs():
    configs = []
    for (bm, bn), warps in [((64, 64), 4), ((128, 64), 8)]:
        stages, extra = 3, 1
        configs.append(triton.Config({"BM": bm, "BN": bn}, num_warps=warps, num_stages=stages + extra))
    return configs


@triton.autotune(configs=matmul_configs(), key=["n"])
@triton.jit
def k(x_ptr, n, BM: tl.constexpr, BN: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BM), tl.zeros((BM,), tl.float32) + BN)
)",
                                             "unpack_configs.py");
  std::optional<kiln::AutotuneSpec> spec = m.kernel("k").autotune();
  REQUIRE(spec);
  CHECK(spec->error.empty());
  REQUIRE(spec->configs.size() == 2);
  CHECK(spec->configs[1].meta[0].second.as_int() == 128);
  CHECK(spec->configs[1].meta[1].second.as_int() == 64);
  CHECK(spec->configs[1].num_warps == 8);
  CHECK(spec->configs[1].num_stages == 4);
}

TEST_CASE("decorators: reset_to_zero buffers of unknown size (raw pointers): the first config, not "
          "tuned, explicit ones win") {
  kiln::Module m = kiln::Module::from_string(kAutotunedAdd, "add_autotuned.py");
  kiln::Kernel k = m.kernel("add_kernel");
  std::vector<float> x(1000), y(1000), out(1000);
  for (int i = 0; i < 1000; ++i) {
    x[i] = static_cast<float>(i);
    y[i] = 1.0f;
  }
  kiln::LaunchResult r = k[{kiln::cdiv(1000, 128)}](x.data(), y.data(), out.data(), 1000);
  REQUIRE(r.kernel);
  CHECK(contains(r.kernel->specialization, "BLOCK_SIZE: constexpr=128"));
  CHECK(r.kernel->options.num_warps == 4);
  CHECK(r.kernel->options.num_stages == 2);
  for (int i = 0; i < 1000; ++i)
    CHECK(out[i] == static_cast<float>(i) + 1.0f);

  kiln::LaunchResult e = k[{kiln::cdiv(1000, 64)}](x.data(), y.data(), out.data(), 1000, kiln::arg("BLOCK_SIZE", 64),
                                                   kiln::arg("num_warps", 2));
  REQUIRE(e.kernel);
  CHECK(contains(e.kernel->specialization, "BLOCK_SIZE: constexpr=64"));
  CHECK(e.kernel->options.num_warps == 2);
}

TEST_CASE("decorators: reset_to_zero and restore_value buffers of known size are reset between "
          "timing runs") {
  kiln::Module m = kiln::Module::from_string(R"(import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": b}, num_warps=1) for b in (16, 32, 64)], key=["n"],
                 reset_to_zero=["sum_ptr"], restore_value=["x_ptr"], warmup=1, rep=2)
@triton.jit
def accumulate(x_ptr, sum_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.atomic_add(sum_ptr + offs % 4, x, mask=m)
    tl.store(x_ptr + offs, x + 1.0, mask=m)
)",
                                             "accumulate.py");
  kiln::Kernel k = m.kernel("accumulate");
  constexpr int n = 1000;
  std::vector<float> x(n), sum(4, 123.0f);
  for (int i = 0; i < n; ++i)
    x[i] = static_cast<float>(i % 7);
  const std::vector<float> x0 = x;
  auto grid = [](const kiln::BoundArgs &a) {
    return kiln::Grid{static_cast<uint32_t>(kiln::cdiv(a["n"].as_int(), a["BLOCK"].as_int()))};
  };
  kiln::LaunchResult r = k[grid](kiln::Tensor(x.data(), {n}), kiln::Tensor(sum.data(), {4}), n);
  REQUIRE(r.kernel);
  // Many timing runs happened; the buffers show exactly one launch's effect.
  float want[4] = {};
  for (int i = 0; i < n; ++i)
    want[i % 4] += x0[i];
  for (int j = 0; j < 4; ++j)
    CHECK(sum[j] == want[j]);
  for (int i = 0; i < n; ++i)
    CHECK(x[i] == x0[i] + 1.0f);
}

TEST_CASE("decorators: configs from comprehensions over module-level lists") {
  kiln::Module m = kiln::Module::from_string(R"(import triton
import triton.language as tl

BLOCKS = [16, 32]
configs = [
    triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "GROUP": 8}, num_stages=s, num_warps=w)
    for bm in BLOCKS
    for bn in [32, 64]
    for s in ([3, 4] if bm > 16 else [2])
    for w in [4, 8]
    if bm * bn < 2048
] + [triton.Config(dict(BLOCK_M=64, BLOCK_N=64, GROUP=4), num_warps=8)]


@triton.autotune(configs, key=["M", "N"])
@triton.jit
def k(x_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP: tl.constexpr):
    tl.store(x_ptr, BLOCK_M * BLOCK_N + GROUP)
)",
                                             "configs.py");
  std::optional<kiln::AutotuneSpec> spec = m.kernel("k").autotune();
  REQUIRE(spec);
  // bm=16: bn 32, 64 x s [2] x w 2 = 4; bm=32: bn=32 x s 2 x w 2 = 4 (32*64 is dropped); +1
  REQUIRE(spec->configs.size() == 9);
  CHECK(spec->configs[0].num_stages == 2);
  CHECK(spec->configs[4].meta[0].second.as_int() == 32);
  CHECK(spec->configs[4].num_stages == 3);
  CHECK(spec->configs[8].meta[2].second.as_int() == 4);
  CHECK(spec->configs[8].num_stages == std::nullopt);
}

TEST_CASE("decorators: heuristics lambdas set constexprs and options at each launch") {
  kiln::Module m = kiln::Module::from_string(R"(import triton
import triton.language as tl


@triton.heuristics(
    {
        "BLOCK_SIZE": lambda args: triton.next_power_of_2(args["n_cols"]),
        "EVEN": lambda args: args["n_cols"] == args["BLOCK_SIZE"],
        "num_warps": lambda args: min(max(args["BLOCK_SIZE"] // 256, 1), 8),
    }
)
@triton.jit
def scale_rows(x_ptr, out_ptr, n_cols, scale, BLOCK_SIZE: tl.constexpr, EVEN: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    if EVEN:
        x = tl.load(x_ptr + row * n_cols + cols)
        tl.store(out_ptr + row * n_cols + cols, x * scale)
    else:
        mask = cols < n_cols
        x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
        tl.store(out_ptr + row * n_cols + cols, x * scale, mask=mask)
)",
                                             "heuristics.py");
  kiln::Kernel k = m.kernel("scale_rows");
  CHECK(k.heuristics() == std::vector<std::string>{"BLOCK_SIZE", "EVEN", "num_warps"});
  for (int n_cols : {100, 128, 1000}) {
    std::vector<float> x(3 * n_cols), out(3 * n_cols, -1.0f);
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = static_cast<float>(i);
    kiln::LaunchResult r = k[{3}](x.data(), out.data(), n_cols, 0.5f);
    REQUIRE(r.kernel);
    const int block = n_cols == 100 ? 128 : n_cols == 128 ? 128 : 1024;
    CHECK(contains(r.kernel->specialization, "BLOCK_SIZE: constexpr=" + std::to_string(block)));
    CHECK(contains(r.kernel->specialization, std::string("EVEN: constexpr=") + (n_cols == 128 ? "True" : "False")));
    CHECK(r.kernel->options.num_warps == (block >= 1024 ? 4 : 1));
    for (size_t i = 0; i < x.size(); ++i)
      CHECK(out[i] == 0.5f * x[i]);
  }
}

TEST_CASE("decorators: configs built by host code are an error only for a launch that needs them") {
  kiln::Module m = kiln::Module::from_string(R"(import triton
import triton.language as tl
from my_project.tuning import load_configs


@triton.autotune(configs=load_configs("add"), key=["n"])
@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, offs, mask=offs < n)
)",
                                             "host_configs.py");
  kiln::Kernel k = m.kernel("k");
  REQUIRE(k.autotune());
  CHECK(contains(k.autotune()->error, "kiln cannot evaluate the call to 'load_configs'"));
  std::vector<int32_t> v(8, -1);
  k[{1}](v.data(), 8, kiln::arg("BLOCK", 8));
  CHECK(v[7] == 7);
  try {
    k[{1}](v.data(), 8);
    FAIL("a launch without BLOCK did not throw");
  } catch (const kiln::ArgumentError &e) {
    CHECK(contains(e.what(), "k is autotuned over configs kiln could not read"));
    CHECK(contains(e.what(), "load_configs"));
  }
}

TEST_CASE("decorators: a malformed decorator is an error of its kernel only, when it is used") {
  auto use_error = [](const std::string &decorator) {
    const kiln::Module m = kiln::Module::from_string(
        "import triton\nimport triton.language as tl\n\n" + decorator +
            "\n@triton.jit\ndef k(x_ptr, n, BLOCK: tl.constexpr):\n    pass\n\n"
            "@triton.jit\ndef fine(x_ptr):\n    pass\n",
        "bad.py");
    CHECK_NOTHROW(m.kernel("fine")); // one broken kernel does not break its file
    try {
      m.kernel("k");
    } catch (const kiln::CompileError &e) {
      return std::string(e.message());
    }
    return std::string("no error");
  };
  CHECK(contains(use_error("@triton.autotune(configs=[], key=['n'])"), "configs list is empty"));
  CHECK(contains(use_error("@triton.autotune(configs=[triton.Config({'BLOCK': 8})], key=['n'], reset_to_zero=['m'])"),
                 "names 'm', which is not a parameter of 'k'"));
  CHECK(contains(use_error("@triton.autotune(configs=[triton.Config({'BLOCK': 8})], key=['n'], tuner=1)"),
                 "triton.autotune has no argument 'tuner'"));
  CHECK(contains(use_error("@triton.heuristics({'BLOCK': 8})"),
                 "must be a lambda or a function of one argument"));
  CHECK(contains(use_error("@triton.heuristics({'SIZE': lambda a: 8})"), "names no parameter of 'k'"));
  // As in Triton, a tuning key that names no parameter is ignored.
  CHECK(use_error("@triton.autotune(configs=[triton.Config({'BLOCK': 8})], key=['n', 'typo'])") == "no error");
}

TEST_CASE("decorators: applied by calls, as unsloth and others write them") {
  kiln::Module m = kiln::Module::from_string(R"(import triton
import triton.language as tl


def _scale(x_ptr, n, FACTOR: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * FACTOR, mask=offs < n)


_scale = triton.jit(_scale)
_scale = triton.heuristics({"BLOCK": lambda args: triton.next_power_of_2(args["n"])})(_scale)
scale_twice = triton.heuristics({"FACTOR": lambda args: 2.0})(_scale)
scale_tuned = triton.autotune(configs=[triton.Config({"FACTOR": 3.0})], key=["n"])(triton.jit(noinline=False)(_scale))
)",
                                             "call_forms.py");
  std::vector<float> x{1.0f, 2.0f, 3.0f};
  m.kernel("_scale")[{1}](x.data(), 3, kiln::arg("FACTOR", 10.0f));
  CHECK(x == std::vector<float>{10.0f, 20.0f, 30.0f});
  m.kernel("scale_twice")[{1}](x.data(), 3);
  CHECK(x == std::vector<float>{20.0f, 40.0f, 60.0f});
  CHECK(m.kernel("scale_twice").heuristics() == std::vector<std::string>{"FACTOR", "BLOCK"});
}

TEST_CASE("decorators: a launch without the meta-parameters tunes once per key, skipping configs that fail") {
  // BLOCK=128 fails its static_assert, so tuning must pick among the others;
  // which of those is fastest is the machine's business, not the test's.
  kiln::Module m = kiln::Module::from_string(R"(import triton
import triton.language as tl


@triton.autotune(
    configs=[triton.Config({"BLOCK": b}, num_warps=w) for b in (128, 16, 32) for w in (1, 2)],
    key=["n"],
    warmup=1,
    rep=2,
)
@triton.jit
def fill(out_ptr, n, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK <= 64, "BLOCK too large")
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, offs * 2 + BLOCK * 0, mask=offs < n)
)",
                                             "tuned.py");
  kiln::Kernel k = m.kernel("fill");
  REQUIRE(k.autotune());
  std::atomic<int> compiles{0};
  kiln::hooks().jit_post_compile_hook = [&](const kiln::CompileEvent &) { ++compiles; };
  std::vector<int32_t> out(100, -1);
  auto grid = [](const kiln::BoundArgs &a) {
    return kiln::Grid{static_cast<uint32_t>(kiln::cdiv(a["n"].as_int(), a["BLOCK"].as_int()))};
  };
  kiln::LaunchResult r = k[grid](out.data(), 100);
  REQUIRE(r.kernel);
  CHECK(!contains(r.kernel->specialization, "BLOCK: constexpr=128"));
  CHECK(compiles.load() == 4); // the four configs that compile
  for (int i = 0; i < 100; ++i)
    CHECK(out[i] == 2 * i);
  // Same key: straight to the chosen config, nothing compiled or timed.
  kiln::LaunchResult again = k[grid](out.data(), 100);
  CHECK(again.kernel == r.kernel);
  CHECK(compiles.load() == 4);
  kiln::hooks().jit_post_compile_hook = nullptr;
}

TEST_CASE("decorators: a heuristic that asks the host platform needs an explicit value") {
  // `torch.cuda.is_available()` is a fact only the host knows; kiln folds it
  // where a result does not depend on it, and otherwise a value passed at
  // launch stands in for the heuristic, as for other host code.
  kiln::Module m = kiln::Module::from_string(R"(import torch
import triton
import triton.language as tl


@triton.heuristics({"ON_GPU": lambda args: torch.cuda.is_available(),
                    "NEVER": lambda args: torch.cuda.is_available() and torch.version.hip is not None})
@triton.jit
def mark(out_ptr, ON_GPU: tl.constexpr, NEVER: tl.constexpr):
    tl.store(out_ptr, 1 + ON_GPU + 2 * NEVER)
)",
                                             "platform_heuristics.py");
  int32_t v = -1;
  m.kernel("mark")[{1}](&v, kiln::arg("ON_GPU", true));
  CHECK(v == 2);
  try {
    m.kernel("mark")[{1}](&v);
    FAIL("a launch without ON_GPU did not throw");
  } catch (const kiln::ArgumentError &e) {
    CHECK(contains(e.what(), "kiln cannot evaluate the heuristic for 'ON_GPU'"));
    CHECK(contains(e.what(), "torch.cuda.is_available()"));
  }
}

TEST_CASE("decorators: a default that host code computes is named when it is missing, and may be "
          "passed") {
  // vLLM's attention kernels: `FP8_MIN: tl.constexpr = float8_info.min`,
  // float8_info = torch.finfo(current_platform.fp8_dtype()).
  kiln::Module m = kiln::Module::from_string(R"(import torch
import triton
import triton.language as tl

float8_info = torch.finfo(torch.float8_e4m3fn)


@triton.jit
def clamp_low(x_ptr, FP8_MIN: tl.constexpr = float8_info.min):
    tl.store(x_ptr, tl.maximum(tl.load(x_ptr), FP8_MIN))
)",
                                             "host_default.py");
  float x = -1000.0f;
  m.kernel("clamp_low")[{1}](&x, kiln::arg("FP8_MIN", -448.0));
  CHECK(x == -448.0f);
  try {
    m.kernel("clamp_low")[{1}](&x);
    FAIL("a launch without FP8_MIN did not throw");
  } catch (const kiln::ArgumentError &e) {
    CHECK(contains(e.what(), "missing a required argument: 'FP8_MIN'"));
    CHECK(contains(e.what(), "its default (float8_info.min) is computed by host code"));
  }
}

TEST_CASE("decorators: heuristics that host code builds leave the kernel usable with explicit values") {
  // FlagGems reads its heuristics from a config file at import time.
  kiln::Module m = kiln::Module::from_string(R"(import triton
import triton.language as tl
from flag_gems import runtime


@triton.heuristics(runtime.get_heuristic_config("fill"))
@triton.jit
def fill(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, offs, mask=offs < n)
)",
                                             "host_heuristics.py");
  std::vector<int32_t> v(8, -1);
  m.kernel("fill")[{1}](v.data(), 8, kiln::arg("BLOCK", 8));
  CHECK(v[7] == 7);
  try {
    m.kernel("fill")[{1}](v.data(), 8);
    FAIL("a launch without BLOCK did not throw");
  } catch (const kiln::ArgumentError &e) {
    CHECK(contains(e.what(), "missing a required argument: 'BLOCK'"));
    CHECK(contains(e.what(), "its @triton.heuristics could not be read"));
    CHECK(contains(e.what(), "get_heuristic_config"));
  }
}
