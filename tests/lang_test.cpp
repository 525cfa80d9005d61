// Python-level language features real kernels use: min()/max() on tensors,
// and/or/not on blocks, `is None` on runtime arguments, 0-d blocks, dtype
// introspection, isinstance, dtype calls, pointer_type casts, tl.assume and
// tl.range's pipelining options; checked on the CPU.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include <unistd.h>
#include <vector>

#include <kiln/kiln.hpp>

#include "compiler/target.hpp"
#include "runtime/jit_function.hpp"

namespace {

const char *const kLang = R"(import triton
import triton.language as tl


@triton.jit
def _scale(x, factor):
    if isinstance(factor, tl.constexpr):
        return x * factor
    return x + factor


@triton.jit
def minmax_logic(x_ptr, y_ptr, lo_ptr, hi_ptr, both_ptr, either_ptr, neither_ptr, bias_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(lo_ptr + offs, min(x, y, 2.5))
    tl.store(hi_ptr + offs, max(x, y))
    tl.store(both_ptr + offs, ((x > 0) and (y > 0)).to(tl.int32))
    tl.store(either_ptr + offs, ((x > 0) or (y > 0)).to(tl.int32))
    tl.store(neither_ptr + offs, (not ((x > 0) or (y > 0))).to(tl.int32))
    b = 0.0
    if bias_ptr is not None:
        b = tl.load(bias_ptr + offs)
    tl.store(lo_ptr + N + offs, x + b)


@triton.jit
def types(x_ptr, out_ptr, n, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.static_assert(x.dtype.is_fp32())
    tl.static_assert(x.dtype.is_floating())
    tl.static_assert(not x.dtype.is_int64())
    tl.static_assert(n.dtype.int_bitwidth == 32)
    tl.static_assert(x.dtype.primitive_bitwidth == 32)
    tl.static_assert(x_ptr.dtype.element_ty == tl.float32)
    tl.static_assert(x_ptr.type.element_ty == tl.float32)
    tl.static_assert(x.type.element_ty == tl.float32)
    tl.static_assert(N.value == N)
    tl.static_assert(isinstance(N, tl.constexpr))
    tl.static_assert(isinstance(x, tl.tensor))
    tl.static_assert(isinstance((1, 2), tuple))
    tl.assume(n > 0)
    zero = tl.full((), 3, tl.int32)
    acc = tl.zeros((N,), dtype=tl.float32)
    for i in tl.range(0, n, 1, num_stages=2, loop_unroll_factor=2, flatten=False, warp_specialize=False,
                      disallow_acc_multi_buffer=True):
        acc += x
    y = tl.float16(acc + zero)
    bytes_ptr = x_ptr.to(tl.pointer_type(tl.int8))
    first_byte = tl.load(bytes_ptr + 4 * offs).to(tl.int32)
    tl.store(out_ptr + offs, y.to(tl.float32) + _scale(x, 2) + _scale(x, n) + first_byte.to(tl.float32) * 0.0)


@triton.jit
def _store_if_positive(p, v):
    if v <= 0:
        return
    tl.store(p, v)


@triton.jit
def early_exit(x_ptr, out_ptr, n_rows, N: tl.constexpr):
    row = tl.program_id(0)
    if row >= n_rows:
        return
    x = tl.load(x_ptr + row * N + tl.arange(0, N))
    if tl.sum(x) < 0:
        tl.store(out_ptr + row, -1.0)
        return
    _store_if_positive(out_ptr + row, tl.sum(x))
    return


@triton.jit
def _sign_or_limit(v, limit):
    if v > limit:
        return limit, 1
    elif v < -limit:
        return -limit, 2
    t = v * 2.0
    if t == 0.0:
        return 0.0, 3
    return t, 0


@triton.jit
def returns(x_ptr, out_ptr, kind_ptr):
    i = tl.program_id(0)
    v, k = _sign_or_limit(tl.load(x_ptr + i), 5.0)
    tl.store(out_ptr + i, v)
    tl.store(kind_ptr + i, k)


@triton.jit
def guarded(x_ptr, out_ptr, n, CHECK: tl.constexpr):
    i = tl.program_id(0)
    if CHECK:
        if i >= n:
            return
    tl.store(out_ptr + i, tl.load(x_ptr + i) + 1.0)


@triton.jit
def show(x_ptr, n, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    tl.device_print("x:", x)
    tl.device_print("n", n, hex=True)
)";

} // namespace

TEST_CASE("lang: min()/max() on tensors, and/or/not on blocks, `is not None` folding") {
  kiln::Module m = kiln::Module::from_string(kLang, "lang.py");
  constexpr int N = 8;
  std::vector<float> x = {-1, 2, 3, -4, 5, 0, 7, -8}, y = {1, -2, 3, 4, -5, 0, 1, -1},
                     bias(N, 0.5f);
  std::vector<float> lo(2 * N), hi(N);
  std::vector<int32_t> both(N), either(N), neither(N);
  auto k = m.kernel("minmax_logic");
  k[{1}](x.data(), y.data(), lo.data(), hi.data(), both.data(), either.data(), neither.data(),
         bias.data(), kiln::arg("N", N));
  for (int i = 0; i < N; ++i) {
    CHECK(lo[i] == std::min({x[i], y[i], 2.5f}));
    CHECK(hi[i] == std::max(x[i], y[i]));
    CHECK(both[i] == (x[i] > 0 && y[i] > 0));
    CHECK(either[i] == (x[i] > 0 || y[i] > 0));
    CHECK(neither[i] == !(x[i] > 0 || y[i] > 0));
    CHECK(lo[N + i] == x[i] + 0.5f);
  }
  // None for bias_ptr: the branch folds away.
  k[{1}](x.data(), y.data(), lo.data(), hi.data(), both.data(), either.data(), neither.data(),
         nullptr, kiln::arg("N", N));
  for (int i = 0; i < N; ++i)
    CHECK(lo[N + i] == x[i]);
}

TEST_CASE("lang: dtype introspection, isinstance, 0-d blocks, dtype calls, pointer_type casts, "
          "tl.range options") {
  kiln::Module m = kiln::Module::from_string(kLang, "lang.py");
  constexpr int N = 8;
  std::vector<float> x(N), out(N);
  for (int i = 0; i < N; ++i)
    x[i] = 0.25f * static_cast<float>(i);
  const int32_t n = 3;
  m.kernel("types")[{1}](x.data(), out.data(), n, kiln::arg("N", N));
  for (int i = 0; i < N; ++i)
    CHECK(out[i] == doctest::Approx(3.0f * x[i] + 3.0f + 2.0f * x[i] + x[i] + 3.0f));
}

TEST_CASE("lang: `if cond: return` exits early, in kernels and inlined helpers") {
  kiln::Module m = kiln::Module::from_string(kLang, "lang.py");
  constexpr int N = 4, rows = 3;
  std::vector<float> x = {1, 2, 3, 4, -1, -2, -3, -4, 0, 0, 0, 0}, out(rows + 2, 7.0f);
  m.kernel("early_exit")[{rows + 2}](x.data(), out.data(), rows, kiln::arg("N", N));
  CHECK(out[0] == 10.0f);
  CHECK(out[1] == -1.0f);
  CHECK(out[2] == 7.0f); // sum 0: the helper returned before storing
  CHECK(out[3] == 7.0f); // programs past n_rows exit first
  CHECK(out[4] == 7.0f);
}

TEST_CASE("lang: tl.device_print prints a line per element on the CPU") {
  kiln::Module m = kiln::Module::from_string(kLang, "lang.py");
  std::vector<float> x = {1.5f, -2.0f};
  // What the kernel writes to stdout, through a temporary file.
  std::fflush(stdout);
  const int saved = dup(1);
  std::FILE *tmp = std::tmpfile();
  REQUIRE(tmp);
  dup2(fileno(tmp), 1);
  m.kernel("show")[{1}](x.data(), 255, kiln::arg("N", 2));
  std::fflush(stdout);
  dup2(saved, 1);
  close(saved);
  std::rewind(tmp);
  std::string out;
  for (int c; (c = std::fgetc(tmp)) != EOF;)
    out += static_cast<char>(c);
  std::fclose(tmp);
  CHECK(out.find("pid (0, 0, 0) idx (  0) x: 1.500000\n") != std::string::npos);
  CHECK(out.find("pid (0, 0, 0) idx (  1) x: -2.000000\n") != std::string::npos);
  CHECK(out.find("pid (0, 0, 0) idx () n 0xff\n") != std::string::npos);
}

TEST_CASE("lang: a helper returns values from every path of runtime ifs") {
  kiln::Module m = kiln::Module::from_string(kLang, "lang.py");
  std::vector<float> x = {7.0f, -9.0f, 0.0f, 1.5f}, out(4);
  std::vector<int32_t> kind(4);
  m.kernel("returns")[{4}](x.data(), out.data(), kind.data());
  CHECK(out == std::vector<float>{5.0f, -5.0f, 0.0f, 3.0f});
  CHECK(kind == std::vector<int32_t>{1, 2, 3, 0});
}

TEST_CASE("lang: an early exit inside a constexpr if skips the rest of the kernel") {
  kiln::Module m = kiln::Module::from_string(kLang, "lang.py");
  std::vector<float> x = {1, 2, 3, 4}, out(4, 0.0f);
  m.kernel("guarded")[{4}](x.data(), out.data(), 2, kiln::arg("CHECK", true));
  CHECK(out == std::vector<float>{2, 3, 0, 0});
  m.kernel("guarded")[{4}](x.data(), out.data(), 2, kiln::arg("CHECK", false));
  CHECK(out == std::vector<float>{2, 3, 4, 5});
}

TEST_CASE("lang: tl.device_print on the cuda target calls vprintf") {
  kiln::Module m = kiln::Module::from_string(kLang, "lang.py");
  const std::vector<kiln::Arg> args = {kiln::Arg::mock(kiln::DType::f32), kiln::Arg(5),
                                       kiln::arg("N", 128)};
  const kiln::CompiledKernel k =
      m.kernel("show").impl()->compile_only(args, kiln::compiler::Target::cuda(90));
  CHECK(k.stages.at("ptx").find("call.uni") != std::string::npos);
  CHECK(k.stages.at("ptx").find("vprintf") != std::string::npos);
}
