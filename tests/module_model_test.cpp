// Triton's module model (shared/LANGUAGE.md, "Files"): a kernel file is any
// Python file; only jit functions and what they reach are compiled. Files
// here are written the way real Triton files are (host wrappers, torch
// imports, a main program, helpers in sibling modules) and run on the CPU.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <unistd.h>
#include <vector>

#include <kiln/kiln.hpp>

#include "tests/text_checks.hpp"

using kiln::test::contains;

namespace {

namespace fs = std::filesystem;

/// A fresh folder under the system's temp dir, removed at the end of the test.
class TempDir {
public:
  TempDir() {
    path_ = fs::temp_directory_path() / ("kiln_modules_" + std::to_string(::getpid()) + "_" +
                                         std::to_string(counter_++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  /// Writes `text` to `rel` (folders created), returns its full path.
  std::string write(const std::string &rel, const std::string &text) const {
    const fs::path p = path_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }
  std::string str() const { return path_.string(); }

private:
  fs::path path_;
  static inline int counter_ = 0;
};

const char *const kHostCodeFile = R"(import math
import torch
import numpy as np
import triton
import triton.language as tl
from typing import Optional

DEVICE = torch.device("cuda")
SCALE = tl.constexpr(2.0)
NUM_SMS = torch.cuda.get_device_properties(0).multi_processor_count


@triton.jit
def scaled_add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x * SCALE + y, mask=mask)


def scaled_add(x: torch.Tensor, y: torch.Tensor, out: Optional[torch.Tensor] = None):
    if out is None:
        out = torch.empty_like(x)
    n_elements = out.numel()
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)
    scaled_add_kernel[grid](x, y, out, n_elements, BLOCK_SIZE=1024)
    return out


class ScaledAdd(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y, *, inplace: bool = False, **kwargs):
        with torch.no_grad():
            return scaled_add(x, y, x if inplace else None)


try:
    from triton.language.extra.cuda import libdevice
except ImportError:
    libdevice = None


async def _serve(queue):
    async for item in queue:
        yield [v ** 2 for v in item if v is not None]


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.rand(98432, device=DEVICE)
    out = scaled_add(x, x)
    match out.shape:
        case (n,) if n > 0:
            print(f"{n=} max={out.max().item():.3f} {'ok' if (m := out.min()) >= 0 else 'bad'}")
        case _:
            raise SystemExit(1)
)";

} // namespace

TEST_CASE("module model: host code around a kernel is never an error by itself") {
  // Plain defs, `import torch`, values computed by host code and the main
  // program load; the kernel compiles and runs.
  kiln::Module m = kiln::Module::from_string(kHostCodeFile, "scaled_add.py");
  CHECK(m.function_names() == std::vector<std::string>{"scaled_add_kernel"});
  std::vector<float> x(100), y(100), out(100, -1.0f);
  for (int i = 0; i < 100; ++i) {
    x[i] = static_cast<float>(i);
    y[i] = 0.5f;
  }
  m.kernel("scaled_add_kernel")[{kiln::cdiv(100, 32)}](x.data(), y.data(), out.data(), 100,
                                                       kiln::arg("BLOCK_SIZE", 32));
  for (int i = 0; i < 100; ++i)
    CHECK(out[i] == doctest::Approx(2.0f * i + 0.5f));
}

TEST_CASE(
    "module model: a constexpr either way a host test goes is a constexpr, unequal ones are not") {
  // vLLM's gumbel sampler: HAS_TRITON probes Triton's drivers, host code
  // kiln does not run; both branches hold the same number.
  kiln::Module m = kiln::Module::from_string(R"(from importlib.util import find_spec
import triton
import triton.language as tl

HAS_TRITON = find_spec("triton") is not None
if HAS_TRITON:
    try:
        from triton.backends import backends
        if len([b for b in backends.values() if b.driver.is_active()]) != 1:
            HAS_TRITON = False
    except ImportError:
        HAS_TRITON = False

_MIN = tl.constexpr(0.25) if HAS_TRITON else 0.25
_ODD = tl.constexpr(0.25) if HAS_TRITON else 0.5


@triton.jit
def add_min(x_ptr):
    tl.store(x_ptr, tl.load(x_ptr) + _MIN)


@triton.jit
def add_odd(x_ptr):
    tl.store(x_ptr, tl.load(x_ptr) + _ODD)
)",
                                             "either_way.py");
  float x = 1.0f;
  m.kernel("add_min")[{1}](&x);
  CHECK(x == 1.25f);
  CHECK_THROWS_AS(m.kernel("add_odd")[{1}](&x), kiln::CompileError);
}

TEST_CASE("module model: `fn = triton.jit(_fn)` makes a jit function, with options") {
  kiln::Module m = kiln::Module::from_string(R"(import triton
import triton.language as tl


def _twice(x):
    return x * 2


def _fill_kernel(out_ptr, v, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.full((BLOCK,), twice(v), tl.float32))


twice = triton.jit(_twice, noinline=True)
fill_kernel = triton.jit(_fill_kernel, do_not_specialize=["v"])
)",
                                             "call_form.py");
  CHECK(m.function_names() == std::vector<std::string>{"twice", "fill_kernel"});
  kiln::Kernel k = m.kernel("fill_kernel");
  CHECK(k.params()[1].do_not_specialize);
  std::vector<float> out(8);
  k[{1}](out.data(), 1.5f, kiln::arg("BLOCK", 8));
  for (float v : out)
    CHECK(v == 3.0f);
}

TEST_CASE("module model: libdevice and tl.math under every spelling real files use") {
  kiln::Module m = kiln::Module::from_string(R"(import triton
import triton.language as tl
from triton.language.extra import libdevice
from triton.language.extra.cuda import libdevice as cuda_libdevice
from triton.language.math import sqrt as tl_sqrt
import triton.language.extra.libdevice as ld

fast_exp = libdevice.exp


@triton.jit
def math_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    a = fast_exp(x) + cuda_libdevice.exp(x) + tl.extra.libdevice.exp(x)
    b = tl.math.sqrt(x) + tl_sqrt(x) + triton.language.extra.cuda.libdevice.sqrt(x) + ld.sqrt(x)
    tl.store(out_ptr + offs, a + b)
)",
                                             "math_aliases.py");
  std::vector<float> x{0.25f, 1.0f, 4.0f, 9.0f}, out(4);
  m.kernel("math_kernel")[{1}](x.data(), out.data(), kiln::arg("BLOCK", 4));
  for (int i = 0; i < 4; ++i)
    CHECK(out[i] == doctest::Approx(3 * std::exp(x[i]) + 4 * std::sqrt(x[i])).epsilon(1e-5));
}

TEST_CASE("module model: jit helpers and constexprs from sibling modules and packages") {
  TempDir dir;
  dir.write("mylib/__init__.py", "");
  dir.write("mylib/utils.py", R"(import triton
import triton.language as tl

OFFSET = tl.constexpr(10)


@triton.jit
def add_offset(x):
    return x + OFFSET
)");
  dir.write("mylib/ops/__init__.py", "");
  dir.write("mylib/ops/activations.py", R"(import triton
import triton.language as tl


@triton.jit
def relu(x):
    return tl.where(x > 0, x, 0.0)
)");
  const std::string kernel_path = dir.write("mylib/ops/kernel.py", R"(import torch
import triton
import triton.language as tl
from ..utils import add_offset
from mylib.utils import OFFSET as BASE
from . import activations
from .activations import relu as my_relu


@triton.jit
def offset_relu_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = activations.relu(x) + my_relu(x)
    tl.store(out_ptr + offs, add_offset(y) + BASE)
)");
  kiln::Module m = kiln::Module::from_file(kernel_path);
  std::vector<float> x{-1.0f, 0.5f, 2.0f, -3.0f}, out(4);
  m.kernel("offset_relu_kernel")[{1}](x.data(), out.data(), kiln::arg("BLOCK", 4));
  for (int i = 0; i < 4; ++i)
    CHECK(out[i] == 2 * std::max(x[i], 0.0f) + 20.0f);
}

TEST_CASE("module model: an imported helper's source is part of the kernel's cache key") {
  TempDir dir;
  const std::string helper = R"(import triton


@triton.jit
def scale(x):
    return x * 2
)";
  dir.write("helpers.py", helper);
  const std::string kernel_path = dir.write("k.py", R"(import triton
import triton.language as tl
from helpers import scale


@triton.jit
def k(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, scale(tl.load(x_ptr + offs)))
)");
  const std::string before = kiln::Module::from_file(kernel_path).kernel("k").cache_key();
  CHECK(kiln::Module::from_file(kernel_path).kernel("k").cache_key() == before);
  dir.write("helpers.py", std::string(helper).replace(helper.find("* 2"), 3, "* 3"));
  CHECK(kiln::Module::from_file(kernel_path).kernel("k").cache_key() != before);
}

TEST_CASE("module model: the search path from the API finds modules outside the file's folder") {
  TempDir lib, app;
  lib.write("shared_helpers.py", "import triton\n\n@triton.jit\ndef neg(x):\n    return -x\n");
  const std::string src = R"(import triton
import triton.language as tl
from shared_helpers import neg


@triton.jit
def k(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, neg(tl.load(x_ptr + offs)))
)";
  const std::string path = app.write("k.py", src);
  std::vector<float> x{1.0f, -2.0f};
  // Not on the path: loading works (the import could be host code), the
  // kernel's read of `neg` says why it has no value.
  kiln::Module without = kiln::Module::from_file(path);
  try {
    without.kernel("k").warmup_with(kiln::Arg::mock(kiln::DType::f32), kiln::arg("BLOCK", 2));
    FAIL("compiling k did not throw");
  } catch (const kiln::CompileError &e) {
    CHECK(contains(e.message(), "'k' reads 'neg', which"));
    CHECK(contains(e.message(), "the module 'shared_helpers', which is not a file on kiln's module search path"));
  }
  kiln::Module with = kiln::Module::from_file(path, {lib.str()});
  with.kernel("k")[{1}](x.data(), kiln::arg("BLOCK", 2));
  CHECK(x == std::vector<float>{-1.0f, 2.0f});
}

TEST_CASE("module model: a module that cannot be loaded is an error only when a kernel reads from it") {
  TempDir dir;
  dir.write("broken.py", "import triton\n\n@triton.jit\ndef f(x):\n    return (x +\n");
  const std::string path = dir.write("k.py", R"(import triton
import triton.language as tl
from broken import f


@triton.jit
def unrelated(x_ptr):
    tl.store(x_ptr, 1.0)


@triton.jit
def uses_f(x_ptr):
    tl.store(x_ptr, f(1.0))
)");
  kiln::Module m = kiln::Module::from_file(path);
  float v = 0;
  m.kernel("unrelated")[{1}](&v);
  CHECK(v == 1.0f);
  try {
    m.kernel("uses_f").warmup_with(kiln::Arg::mock(kiln::DType::f32));
    FAIL("compiling uses_f did not throw");
  } catch (const kiln::CompileError &e) {
    CHECK(contains(e.message(), "which kiln could not load"));
    CHECK(contains(e.message(), "was never closed"));
  }
}

TEST_CASE("module model: tl.extra.cuda.gdc_wait / gdc_launch_dependents are no-ops without dependent launches") {
  kiln::Module m = kiln::Module::from_string(R"(import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, USE_GDC: tl.constexpr):
    if USE_GDC:
        tl.extra.cuda.gdc_wait()
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if USE_GDC:
        tl.extra.cuda.gdc_launch_dependents()
    tl.store(out_ptr + offs, x + 1, mask=offs < n)
)",
                                             "pdl.py");
  std::vector<float> x{1.0f, 2.0f}, out(2);
  m.kernel("add_kernel")[{1}](x.data(), out.data(), 2, kiln::arg("BLOCK", 2), kiln::arg("USE_GDC", true));
  CHECK(out == std::vector<float>{2.0f, 3.0f});
}

TEST_CASE("module model: constexpr globals from torch.finfo, torch.iinfo and float('inf')") {
  // As FlagGems writes them: limits of a dtype computed by torch at import.
  kiln::Module m = kiln::Module::from_string(R"(import torch
import torch as th
import triton
import triton.language as tl

F32_MIN = tl.constexpr(torch.finfo(torch.float32).min)
F16_MAX = tl.constexpr(th.finfo(th.half).max)
BF16_EPS = tl.constexpr(torch.finfo(torch.bfloat16).eps)
I8_MIN = tl.constexpr(torch.iinfo(torch.int8).min)
I64_MAX = tl.constexpr(torch.iinfo(torch.int64).max)
NEG_INF = tl.constexpr(float("-inf"))
TINY = tl.constexpr(torch.finfo(torch.float32).tiny)


@triton.jit
def limits(out_ptr, big_ptr):
    tl.store(out_ptr + 0, F32_MIN)
    tl.store(out_ptr + 1, F16_MAX)
    tl.store(out_ptr + 2, BF16_EPS)
    tl.store(out_ptr + 3, I8_MIN)
    tl.store(out_ptr + 4, NEG_INF)
    tl.store(out_ptr + 5, TINY)
    tl.store(big_ptr, I64_MAX)
)",
                                             "limits.py");
  std::vector<float> out(6);
  int64_t big = 0;
  m.kernel("limits")[{1}](out.data(), &big);
  CHECK(out[0] == std::numeric_limits<float>::lowest());
  CHECK(out[1] == 65504.0f);
  CHECK(out[2] == 0.0078125f);
  CHECK(out[3] == -128.0f);
  CHECK(std::isinf(out[4]));
  CHECK(out[4] < 0);
  CHECK(out[5] == std::numeric_limits<float>::min());
  CHECK(big == std::numeric_limits<int64_t>::max());
}

TEST_CASE(
    "module model: torch values kiln cannot evaluate are errors of the kernel that reads them") {
  kiln::Module m = kiln::Module::from_string(R"(import torch
import triton
import triton.language as tl

BAD = tl.constexpr(torch.finfo(torch.int32).max)
WORSE = tl.constexpr(float("one"))


@triton.jit
def reads_bad(out_ptr):
    tl.store(out_ptr, BAD)


@triton.jit
def reads_worse(out_ptr):
    tl.store(out_ptr, WORSE)


@triton.jit
def reads_torch(out_ptr):
    tl.store(out_ptr, tl.full((), 1, torch.float32))


@triton.jit
def fine(out_ptr):
    tl.store(out_ptr, 1.0)
)",
                                             "bad_limits.py");
  float out = 0;
  m.kernel("fine")[{1}](&out);
  CHECK(out == 1.0f);
  auto message = [&](const char *kernel) {
    try {
      m.kernel(kernel)[{1}](&out);
    } catch (const kiln::CompileError &e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(contains(message("reads_bad"), "torch.finfo() takes a floating point dtype"));
  CHECK(contains(message("reads_worse"), "could not convert string to float: 'one'"));
  CHECK(contains(message("reads_torch"), "the module 'torch'"));
}

TEST_CASE("module model: a helper taking a tensor descriptor or a pointer, as the attention "
          "tutorial writes it") {
  kiln::Module m = kiln::Module::from_string(R"(import triton
import triton.language as tl


@triton.jit
def _maybe_make_tensor_desc(desc_or_ptr, shape, strides, block_shape):
    if isinstance(desc_or_ptr, tl.tensor_descriptor):
        return desc_or_ptr
    else:
        return tl.make_tensor_descriptor(desc_or_ptr, shape, strides, block_shape)


@triton.jit
def copy_rows(src, dst, M, N: tl.constexpr, BM: tl.constexpr):
    d_src = _maybe_make_tensor_desc(src, [M, N], [N, 1], [BM, N])
    d_src = _maybe_make_tensor_desc(d_src, [M, N], [N, 1], [BM, N])
    d_dst = _maybe_make_tensor_desc(dst, [M, N], [N, 1], [BM, N])
    tl.static_assert(isinstance(d_src, tl.tensor_descriptor))
    tl.static_assert(not isinstance(d_src, tuple))
    tl.static_assert(not isinstance(src, tl.tensor_descriptor))
    bp = tl.make_block_ptr(src, (M, N), (N, 1), (0, 0), (BM, N), (1, 0))
    tl.static_assert(isinstance(bp, tl.tensor))
    off = tl.program_id(0) * BM
    d_dst.store([off, 0], d_src.load([off, 0]) * 2)
)",
                                             "desc_or_ptr.py");
  std::vector<float> src(8 * 4), dst(8 * 4, -1);
  for (size_t i = 0; i < src.size(); ++i)
    src[i] = static_cast<float>(i);
  m.kernel("copy_rows")[{2}](src.data(), dst.data(), 8, kiln::arg("N", 4), kiln::arg("BM", 4));
  for (size_t i = 0; i < src.size(); ++i)
    CHECK(dst[i] == 2 * src[i]);
}

TEST_CASE("module model: triton.language.core and .standard imports, x.numel and tensors for "
          "constexpr-annotated "
          "helper parameters") {
  // FlagGems' sorts import from Triton's submodules; the attention tutorial
  // passes a tensor to a helper parameter annotated tl.constexpr, which
  // Triton does not check.
  kiln::Module m = kiln::Module::from_string(R"(import triton
import triton.language as tl
import triton.language.core as core

try:
    from triton.language.standard import _log2, zeros_like
except ImportError:
    pass


@triton.jit
def _shift(x, offs: tl.constexpr, n_dims: core.constexpr):
    return x + offs + zeros_like(x) + n_dims


@triton.jit
def sizes(out_ptr, N: tl.constexpr):
    x = core.arange(0, N)
    n_dims: core.constexpr = _log2(x.numel)
    tl.static_assert(x.numel == N)
    tl.store(out_ptr + x, _shift(x, x, n_dims))
)",
                                             "flaggems_style.py");
  std::vector<int32_t> out(16);
  m.kernel("sizes")[{1}](out.data(), kiln::arg("N", 16));
  for (int i = 0; i < 16; ++i)
    CHECK(out[i] == 2 * i + 4);
}

TEST_CASE("module model: FlagGems idioms: heuristics by named function, stale do_not_specialize "
          "names, tl.tensor "
          "hints, `if ptr:` and .to on a constexpr copy") {
  kiln::Module m = kiln::Module::from_string(R"(import triton
import triton.language as tl


def block_for(args):
    return triton.next_power_of_2(args["n"])


@triton.heuristics(values={"BLOCK": block_for, "HAS_BIAS": lambda args: args["bias_ptr"] is not None})
@triton.jit(do_not_specialize=["n", "row_stride"])
def scale_kernel(x_ptr: tl.tensor, out_ptr, bias_ptr, weight_ptr, n, BLOCK: tl.constexpr, HAS_BIAS: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    if weight_ptr:
        x = x * tl.load(weight_ptr)
    if HAS_BIAS:
        x = x + tl.load(bias_ptr)
    block = BLOCK
    tl.store(out_ptr + offs, x + block.to(tl.float32), mask=mask)
)",
                                             "flaggems_idioms.py");
  kiln::Kernel k = m.kernel("scale_kernel");
  CHECK(k.params()[4].do_not_specialize);
  std::vector<float> x{1, 2, 3, 4, 5}, out(5);
  float w = 3, bias = 0.5f;
  k[{1}](x.data(), out.data(), &bias, &w, 5);
  for (int i = 0; i < 5; ++i)
    CHECK(out[i] == doctest::Approx(x[i] * 3 + 0.5f + 8)); // BLOCK = next_power_of_2(5)
  k[{1}](x.data(), out.data(), nullptr, nullptr, 5);
  for (int i = 0; i < 5; ++i)
    CHECK(out[i] == doctest::Approx(x[i] + 8));
}

TEST_CASE("module model: @tl.constexpr functions run at compile time on dtypes and constexprs, "
          "with the plain "
          "helpers they call") {
  // As FlagGems' sorts and scans write them.
  const std::string file = R"(import triton
import triton.language as tl


def unwrap_if_constexpr(o):
    return o.value if isinstance(o, tl.constexpr) else o


@tl.constexpr
def get_int_t(num_bits: tl.constexpr, signed: tl.constexpr) -> tl.dtype:
    num_bits = unwrap_if_constexpr(num_bits)
    signed = unwrap_if_constexpr(signed)
    return tl.core.get_int_dtype(num_bits, signed)


@triton.constexpr_function
def accum_type(inp_dtype):
    if inp_dtype.is_bf16() or inp_dtype.is_fp16():
        return tl.float32
    if inp_dtype.is_int():
        return tl.int64
    return inp_dtype


@triton.jit
def to_bits(x_ptr, out_ptr, sum_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    num_bits: tl.constexpr = x.dtype.primitive_bitwidth
    ux = tl.cast(x, get_int_t(num_bits, False), bitcast=True)
    tl.store(out_ptr + tl.arange(0, N), ux)
    acc_dtype: tl.constexpr = accum_type(x_ptr.type.element_ty)
    tl.store(sum_ptr, tl.sum(x.to(acc_dtype), axis=0))


@triton.jit
def bad_tensor_arg(x_ptr):
    x = tl.load(x_ptr)
    tl.store(x_ptr, get_int_t(x, False))


@triton.jit
def bad_plain_call(x_ptr):
    tl.store(x_ptr, unwrap_if_constexpr(1))
)";
  kiln::Module m = kiln::Module::from_string(file, "constexpr_fns.py");
  CHECK(m.function_names() ==
        std::vector<std::string>{"to_bits", "bad_tensor_arg", "bad_plain_call"});
  std::vector<float> x{1.0f, -2.0f, 0.5f, 4.0f};
  std::vector<uint32_t> bits(4);
  float sum = 0;
  m.kernel("to_bits")[{1}](x.data(), bits.data(), &sum, kiln::arg("N", 4));
  for (int i = 0; i < 4; ++i) {
    uint32_t want;
    std::memcpy(&want, &x[i], 4);
    CHECK(bits[i] == want);
  }
  CHECK(sum == 3.5f);
  auto message = [&](const char *kernel) {
    try {
      m.kernel(kernel)[{1}](x.data());
    } catch (const kiln::CompileError &e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(contains(message("bad_tensor_arg"),
                 "'get_int_t' runs at compile time (a constexpr function), so its "
                 "argument 'num_bits' must be a compile-time value"));
  CHECK(contains(message("bad_plain_call"), "binds to a plain Python function (not @triton.jit)"));

  // Their source, and their helpers', is part of the kernel's cache key.
  std::string changed = file;
  changed.replace(changed.find("o.value if"), 10, "(o).value if");
  kiln::Module m2 = kiln::Module::from_string(changed, "constexpr_fns.py");
  CHECK(m2.kernel("to_bits").cache_key() != m.kernel("to_bits").cache_key());
}

TEST_CASE("module model: `from .utils import *` binds the jit helpers and constexprs of a sibling "
          "module") {
  // gemlite's layout: triton_kernels/gemm_kernels.py star-imports its jit
  // helpers (dequantize, linear_tile) from triton_kernels/utils.py, which
  // star-imports dtypes from the package above.
  TempDir dir;
  dir.write("gemlib/__init__.py", "");
  dir.write("gemlib/dtypes.py", R"(from enum import Enum
import triton.language as tl

DTYPE_BITS = tl.constexpr(16)


class DType(Enum):
    FP16 = 0
)");
  dir.write("gemlib/kernels/__init__.py", "");
  dir.write("gemlib/kernels/utils.py", R"(import torch, triton, math
import triton.language as tl
from ..dtypes import *

_PRIVATE_SHIFT = tl.constexpr(100)


@triton.jit
def linear_tile(pid, N, BLOCK: tl.constexpr):
    return pid * BLOCK


@triton.jit
def scale_by(x, s):
    return x * s + DTYPE_BITS


def next_power_of_2(v):
    return 1 if v == 0 else 2 ** math.ceil(math.log2(v))
)");
  dir.write("gemlib/kernels/limited.py", R"(import triton
import triton.language as tl

__all__ = ["public_add"]


@triton.jit
def public_add(x):
    return x + 1.0


@triton.jit
def not_exported(x):
    return x - 1.0
)");
  const std::string path =
      dir.write("gemlib/kernels/gemm_kernels.py", R"(import torch, math, random, copy
import triton
import triton.language as tl
from .utils import *
from .limited import *


@triton.jit
def scale_kernel(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    start = linear_tile(tl.program_id(0), N, BLOCK)
    offs = start + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < N)
    tl.store(out_ptr + offs, public_add(scale_by(x, 2.0)), mask=offs < N)


@triton.jit
def reads_private(x_ptr):
    tl.store(x_ptr, 1.0 + _PRIVATE_SHIFT)


@triton.jit
def reads_unexported(x_ptr):
    tl.store(x_ptr, not_exported(1.0))


@triton.jit
def reads_host_helper(x_ptr):
    tl.store(x_ptr, next_power_of_2(3))
)");
  kiln::Module m = kiln::Module::from_file(path);
  std::vector<float> x{1.0f, 2.0f, 3.0f, 4.0f, 5.0f}, out(5);
  m.kernel("scale_kernel")[{2}](x.data(), out.data(), 5, kiln::arg("BLOCK", 4));
  for (int i = 0; i < 5; ++i)
    CHECK(out[i] == x[i] * 2.0f + 16.0f + 1.0f);
  // Names a star import does not bind: '_' names, names outside __all__;
  // host functions are bound but kernels cannot call them.
  const std::pair<const char *, const char *> refused[] = {
      {"reads_private", "_PRIVATE_SHIFT"},
      {"reads_unexported", "not_exported"},
      {"reads_host_helper", "a plain Python function"},
  };
  for (const auto &[kernel, message] : refused) {
    CAPTURE(kernel);
    try {
      m.kernel(kernel).warmup_with(kiln::Arg::mock(kiln::DType::f32));
      FAIL("compiling did not throw");
    } catch (const kiln::CompileError &e) {
      CHECK(contains(e.message(), message));
    }
  }
}

TEST_CASE("module model: globals that host code computes from triton modules and platform tests") {
  // xformers binds libdevice functions through a host helper that tries
  // importlib on each place Triton versions kept libdevice in; torchao
  // guards PTX paths with `IS_ROCM = tl.constexpr(is_ROCM())`. kiln runs
  // such host code at compile time where its value is certain, and names
  // the global (and why) where it is not.
  TempDir dir;
  dir.write("fxlib/__init__.py", "");
  dir.write("fxlib/triton/__init__.py", "");
  dir.write("fxlib/ops/__init__.py", "");
  dir.write("fxlib/triton/importing.py", R"(import importlib.util


def libdevice_find(name):
    """rsqrt = libdevice_find("rsqrt") works on every Triton version."""
    locs = (
        "triton.language.extra.libdevice",
        "triton.language.extra.cuda.libdevice",
        "triton.language.math",
    )
    for loc in locs:
        if spec := importlib.util.find_spec(loc):
            module = importlib.util.module_from_spec(spec)
            assert spec.loader is not None
            spec.loader.exec_module(module)
            return getattr(module, name)
    raise ImportError(f"Could not find a library to import {name}")
)");
  dir.write("fxlib/utils.py", R"(import torch


def is_ROCM():
    return torch.cuda.is_available() and torch.version.hip is not None


def num_gpus():
    return torch.cuda.device_count()
)");
  const std::string path = dir.write("fxlib/ops/rmsnorm_kernels.py", R"(import importlib
import torch
import triton
import triton.language as tl

from fxlib.triton.importing import libdevice_find
from fxlib.utils import is_ROCM, num_gpus

rsqrt = libdevice_find("rsqrt")
pow = libdevice_find("pow")
tanh = getattr(importlib.import_module("triton.language.math"), "tanh")
IS_ROCM = tl.constexpr(is_ROCM())
NUM_GPUS = tl.constexpr(num_gpus())
HAS_CUDA = tl.constexpr(torch.cuda.is_available())


@triton.jit
def _rms_norm_kernel(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    rstd = rsqrt(tl.sum(x * x, axis=0) / N)
    y = x * rstd
    if not IS_ROCM:
        y = pow(y, 2.0) + tanh(0.0 * y)
    tl.store(out_ptr + offs, y)


@triton.jit
def reads_gpu_count(x_ptr):
    tl.store(x_ptr, NUM_GPUS * 1.0)


@triton.jit
def reads_has_cuda(x_ptr):
    tl.store(x_ptr, HAS_CUDA * 1.0)
)");
  kiln::Module m = kiln::Module::from_file(path);
  std::vector<float> x{1.0f, 2.0f, 3.0f, 4.0f}, out(4);
  m.kernel("_rms_norm_kernel")[{1}](x.data(), out.data(), kiln::arg("N", 4));
  const float rstd = 1.0f / std::sqrt((1.0f + 4.0f + 9.0f + 16.0f) / 4.0f);
  for (int i = 0; i < 4; ++i)
    CHECK(out[i] == doctest::Approx(x[i] * x[i] * rstd * rstd).epsilon(1e-5));
  const std::pair<const char *, std::vector<const char *>> refused[] = {
      {"reads_gpu_count", {"'NUM_GPUS'", "rmsnorm_kernels.py:13", "device_count"}},
      {"reads_has_cuda", {"'HAS_CUDA'", "torch.cuda.is_available()", "only the host knows"}},
  };
  for (const auto &[kernel, messages] : refused) {
    CAPTURE(std::string(kernel));
    try {
      m.kernel(kernel).warmup_with(kiln::Arg::mock(kiln::DType::f32));
      FAIL("compiling did not throw");
    } catch (const kiln::CompileError &e) {
      for (const char *text : messages) {
        CAPTURE(e.message());
        CHECK(contains(e.message(), text));
      }
    }
  }
}
