// The tl.math / libdevice functions on the CPU against the C++ library, each
// reached the ways real kernels spell it (tl.extra.libdevice.x, tl.math.x,
// tl.x), and the NVPTX path linking CUDA's libdevice for them.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <kiln/kiln.hpp>

#include "compiler/target.hpp"
#include "runtime/jit_function.hpp"

namespace {

const char *const kMath = R"(import triton
import triton.language as tl


@triton.jit
def unary_math(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)  # in (-0.9, 0.9)
    o = out_ptr + offs
    tl.store(o + 0 * N, tl.extra.libdevice.tanh(x))
    tl.store(o + 1 * N, tl.math.sinh(x))
    tl.store(o + 2 * N, tl.extra.cuda.libdevice.cosh(x))
    tl.store(o + 3 * N, tl.extra.libdevice.tan(x))
    tl.store(o + 4 * N, tl.extra.libdevice.asin(x))
    tl.store(o + 5 * N, tl.extra.libdevice.acos(x))
    tl.store(o + 6 * N, tl.extra.libdevice.atan(x))
    tl.store(o + 7 * N, tl.extra.libdevice.asinh(x))
    tl.store(o + 8 * N, tl.extra.libdevice.acosh(x * x + 1.5))
    tl.store(o + 9 * N, tl.extra.libdevice.atanh(x))
    tl.store(o + 10 * N, tl.extra.libdevice.log1p(x))
    tl.store(o + 11 * N, tl.extra.libdevice.expm1(x))
    tl.store(o + 12 * N, tl.extra.libdevice.log10(x + 1.0))
    tl.store(o + 13 * N, tl.extra.libdevice.exp10(x))
    tl.store(o + 14 * N, tl.extra.libdevice.cbrt(x))
    tl.store(o + 15 * N, tl.extra.libdevice.erfc(x))
    tl.store(o + 16 * N, tl.extra.libdevice.erfinv(x))
    tl.store(o + 17 * N, tl.extra.libdevice.lgamma(x + 2.0))
    tl.store(o + 18 * N, tl.extra.libdevice.tgamma(x + 2.0))
    tl.store(o + 19 * N, tl.extra.libdevice.rsqrt(x + 1.0))
    tl.store(o + 20 * N, tl.math.exp(x))
    tl.store(o + 21 * N, tl.math.log(x + 1.0))
    tl.store(o + 22 * N, tl.extra.libdevice.sinpi(x * 4.0))
    tl.store(o + 23 * N, tl.extra.libdevice.cospi(x * 4.0))
    tl.store(o + 24 * N, tl.sigmoid(x))


@triton.jit
def binary_math(x_ptr, y_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    o = out_ptr + offs
    tl.store(o + 0 * N, tl.extra.libdevice.atan2(x, y))
    tl.store(o + 1 * N, tl.extra.libdevice.hypot(x, y))
    tl.store(o + 2 * N, tl.extra.libdevice.pow(tl.abs(x), y))
    tl.store(o + 3 * N, tl.extra.libdevice.copysign(x, y))
    tl.store(o + 4 * N, tl.extra.libdevice.fmod(x, y))
    tl.store(o + 5 * N, tl.extra.libdevice.remainder(x, y))
    tl.store(o + 6 * N, tl.extra.libdevice.fdim(x, y))
    tl.store(o + 7 * N, tl.extra.libdevice.pow(x, 2.0))


@triton.jit
def rounding(x_ptr, out_ptr, flags_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    o = out_ptr + offs
    tl.store(o + 0 * N, tl.extra.libdevice.trunc(x))
    tl.store(o + 1 * N, tl.extra.libdevice.rint(x))
    tl.store(o + 2 * N, tl.extra.libdevice.nearbyint(x))
    tl.store(o + 3 * N, tl.extra.libdevice.round(x))
    tl.store(o + 4 * N, tl.math.floor(x))
    tl.store(o + 5 * N, tl.math.ceil(x))
    f = flags_ptr + offs
    tl.store(f + 0 * N, tl.extra.libdevice.isnan(x))
    tl.store(f + 1 * N, tl.extra.libdevice.isinf(x))
    tl.store(f + 2 * N, tl.extra.libdevice.signbit(x))
    tl.store(f + 3 * N, tl.extra.libdevice.finitef(x))
    tl.store(f + 4 * N, tl.extra.libdevice.llrint(x).to(tl.int32))


@triton.jit
def tanh_f64(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.extra.libdevice.tanh(x) + tl.extra.libdevice.erfinv(x * 0.5))


@triton.jit
def int_bits(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    o = out_ptr + offs
    tl.store(o + 0 * N, tl.extra.libdevice.clz(x))
    tl.store(o + 1 * N, tl.extra.libdevice.popc(x))
    tl.store(o + 2 * N, tl.extra.libdevice.brev(x))


@triton.jit
def extras(x_ptr, i_ptr, f_ptr, n_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    i = tl.load(i_ptr + offs)
    f = f_ptr + offs
    tl.store(f + 0 * N, tl.extra.libdevice.ldexp(x, i % 8))
    tl.store(f + 1 * N, tl.extra.libdevice.normcdf(x))
    tl.store(f + 2 * N, tl.extra.libdevice.erfcinv(x * 0.5 + 1.0))
    tl.store(f + 3 * N, tl.extra.libdevice.erfcx(x))
    tl.store(f + 4 * N, tl.extra.libdevice.rhypot(x, 2.0))
    tl.store(f + 5 * N, tl.extra.libdevice.norm3d(x, 2.0, x))
    n = n_ptr + offs
    tl.store(n + 0 * N, tl.extra.libdevice.float2int_rn(x * 3.0))
    tl.store(n + 1 * N, tl.extra.libdevice.float2int_rz(x * 3.0))
    tl.store(n + 2 * N, tl.extra.libdevice.float2int_rd(x * 3.0))
    tl.store(n + 3 * N, tl.extra.libdevice.float2int_ru(x * 3.0))
    tl.store(n + 4 * N, tl.extra.libdevice.ffs(i))
    tl.store(n + 5 * N, tl.extra.libdevice.mulhi(i, 123456789))
    tl.store(n + 6 * N, tl.extra.libdevice.hadd(i, 2147483647))
    tl.store(n + 7 * N, tl.extra.libdevice.rhadd(i, 3))


@triton.jit
def softmax_rows(x_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr):
    rows = tl.arange(0, R)[:, None]
    cols = tl.arange(0, C)[None, :]
    x = tl.load(x_ptr + rows * C + cols)
    tl.store(out_ptr + rows * C + cols, tl.softmax(x, 1))
)";

/// Relative closeness for the float results (libm is within ~1 ulp; the
/// tolerance allows the few ulp libdevice documents).
bool close(double got, double want, double rtol = 4e-6, double atol = 1e-6) {
  if (std::isnan(want))
    return std::isnan(got);
  return std::fabs(got - want) <= atol + rtol * std::fabs(want);
}

/// erfinv by bisection on std::erf in double: an independent reference.
double erfinv_ref(double y) {
  double lo = -10, hi = 10;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (std::erf(mid) < y ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

std::vector<float> inputs(int n) {
  std::vector<float> x(n);
  for (int i = 0; i < n; ++i)
    x[i] = -0.9f + 1.8f * static_cast<float>(i) / static_cast<float>(n - 1);
  return x;
}

} // namespace

TEST_CASE("math: libdevice unary functions match the C++ library on the CPU") {
  kiln::Module m = kiln::Module::from_string(kMath, "math.py");
  constexpr int N = 64;
  const std::vector<float> x = inputs(N);
  std::vector<float> out(25 * N);
  m.kernel("unary_math")[{1}](x.data(), out.data(), kiln::arg("N", N));
  using F = double (*)(double);
  const F ref[] = {
      [](double v) { return std::tanh(v); },
      [](double v) { return std::sinh(v); },
      [](double v) { return std::cosh(v); },
      [](double v) { return std::tan(v); },
      [](double v) { return std::asin(v); },
      [](double v) { return std::acos(v); },
      [](double v) { return std::atan(v); },
      [](double v) { return std::asinh(v); },
      [](double v) { return std::acosh(v * v + 1.5); },
      [](double v) { return std::atanh(v); },
      [](double v) { return std::log1p(v); },
      [](double v) { return std::expm1(v); },
      [](double v) { return std::log10(v + 1.0); },
      [](double v) { return std::pow(10.0, v); },
      [](double v) { return std::cbrt(v); },
      [](double v) { return std::erfc(v); },
      [](double v) { return erfinv_ref(v); },
      [](double v) { return std::lgamma(v + 2.0); },
      [](double v) { return std::tgamma(v + 2.0); },
      [](double v) { return 1.0 / std::sqrt(v + 1.0); },
      [](double v) { return std::exp(v); },
      [](double v) { return std::log(v + 1.0); },
      [](double v) { return std::sin(M_PI * static_cast<float>(v * 4.0)); },
      [](double v) { return std::cos(M_PI * static_cast<float>(v * 4.0)); },
      [](double v) { return 1.0 / (1.0 + std::exp(-v)); },
  };
  for (int f = 0; f < 25; ++f)
    for (int i = 0; i < N; ++i) {
      // x * x + 1.5 and friends round in float first, as the kernel does.
      const double want =
          f == 8 ? std::acosh(static_cast<float>(static_cast<float>(x[i] * x[i]) + 1.5f))
                 : ref[f](x[i]);
      INFO("function " << f << " at x = " << x[i]);
      CHECK(close(out[f * N + i], want, 4e-6, f == 22 || f == 23 ? 2e-6 : 1e-7));
    }
}

TEST_CASE("math: sinpi / cospi are exact at integers and half-integers") {
  kiln::Module m = kiln::Module::from_string(kMath, "math.py");
  constexpr int N = 64;
  std::vector<float> x(N, 0.0f), out(25 * N);
  for (int i = 0; i < N; ++i)
    x[i] = (static_cast<float>(i % 16) - 8.0f) / 8.0f; // *4 in the kernel: multiples of 0.5
  m.kernel("unary_math")[{1}](x.data(), out.data(), kiln::arg("N", N));
  for (int i = 0; i < N; ++i) {
    const float t = x[i] * 4.0f;
    if (t == std::floor(t))
      CHECK(out[22 * N + i] == 0.0f);
    else
      CHECK(out[23 * N + i] == 0.0f);
  }
}

TEST_CASE("math: libdevice binary functions match the C++ library on the CPU") {
  kiln::Module m = kiln::Module::from_string(kMath, "math.py");
  constexpr int N = 32;
  std::vector<float> x(N), y(N), out(8 * N);
  for (int i = 0; i < N; ++i) {
    x[i] = -3.7f + 0.25f * static_cast<float>(i);
    y[i] = (i % 2 ? -1.0f : 1.0f) * (0.6f + 0.1f * static_cast<float>(i % 7));
  }
  m.kernel("binary_math")[{1}](x.data(), y.data(), out.data(), kiln::arg("N", N));
  for (int i = 0; i < N; ++i) {
    INFO("x = " << x[i] << ", y = " << y[i]);
    CHECK(close(out[0 * N + i], std::atan2(x[i], y[i])));
    CHECK(close(out[1 * N + i], std::hypot(x[i], y[i])));
    CHECK(close(out[2 * N + i], std::pow(std::fabs(x[i]), y[i])));
    CHECK(out[3 * N + i] == std::copysign(x[i], y[i]));
    CHECK(out[4 * N + i] == std::fmod(x[i], y[i]));
    CHECK(out[5 * N + i] == std::remainder(x[i], y[i]));
    CHECK(out[6 * N + i] == std::fdim(x[i], y[i]));
    CHECK(close(out[7 * N + i], static_cast<double>(x[i]) * x[i]));
  }
}

TEST_CASE("math: rounding functions and the int32 predicates of libdevice") {
  kiln::Module m = kiln::Module::from_string(kMath, "math.py");
  constexpr int N = 16;
  const std::vector<float> x = {2.5f, -2.5f, 0.5f, 1.5f,     -0.5f,     3.7f, -3.7f,  -0.0f,
                                0.0f, 1e9f,  NAN,  INFINITY, -INFINITY, 7.0f, -7.49f, 100.5f};
  std::vector<float> out(6 * N);
  std::vector<int32_t> flags(5 * N);
  m.kernel("rounding")[{1}](x.data(), out.data(), flags.data(), kiln::arg("N", N));
  for (int i = 0; i < N; ++i) {
    INFO("x = " << x[i]);
    const float want[] = {std::trunc(x[i]), std::rint(x[i]),  std::nearbyint(x[i]),
                          std::round(x[i]), std::floor(x[i]), std::ceil(x[i])};
    for (int f = 0; f < 6; ++f) {
      if (std::isnan(x[i]))
        CHECK(std::isnan(out[f * N + i]));
      else
        CHECK(out[f * N + i] == want[f]);
    }
    CHECK(flags[0 * N + i] == (std::isnan(x[i]) ? 1 : 0));
    CHECK(flags[1 * N + i] == (std::isinf(x[i]) ? 1 : 0));
    CHECK(flags[2 * N + i] == (std::signbit(x[i]) ? 1 : 0));
    CHECK(flags[3 * N + i] == (std::isfinite(x[i]) ? 1 : 0));
    if (std::isfinite(x[i]) && std::fabs(x[i]) < 1e9f)
      CHECK(flags[4 * N + i] == static_cast<int32_t>(std::rint(x[i])));
  }
}

TEST_CASE("math: float64 tanh and erfinv compute in double") {
  kiln::Module m = kiln::Module::from_string(kMath, "math.py");
  constexpr int N = 16;
  std::vector<double> x(N), out(N);
  for (int i = 0; i < N; ++i)
    x[i] = -1.9 + 0.25 * i;
  m.kernel("tanh_f64")[{1}](x.data(), out.data(), kiln::arg("N", N));
  for (int i = 0; i < N; ++i)
    CHECK(close(out[i], std::tanh(x[i]) + erfinv_ref(x[i] * 0.5), 1e-13, 1e-14));
}

TEST_CASE("math: clz, popc and brev on int32") {
  kiln::Module m = kiln::Module::from_string(kMath, "math.py");
  constexpr int N = 4;
  std::vector<int32_t> x = {1, -1, 0x00F0F000, 0}, out(3 * N);
  m.kernel("int_bits")[{1}](x.data(), out.data(), kiln::arg("N", N));
  const int32_t clz[] = {31, 0, 8, 32}, popc[] = {1, 32, 8, 0};
  for (int i = 0; i < N; ++i) {
    CHECK(out[i] == clz[i]);
    CHECK(out[N + i] == popc[i]);
    uint32_t r = 0, v = static_cast<uint32_t>(x[i]);
    for (int b = 0; b < 32; ++b)
      r |= ((v >> b) & 1u) << (31 - b);
    CHECK(static_cast<uint32_t>(out[2 * N + i]) == r);
  }
}

TEST_CASE("math: tl.softmax along a row matches exp / sum") {
  kiln::Module m = kiln::Module::from_string(kMath, "math.py");
  constexpr int R = 4, C = 8;
  std::vector<float> x(R * C), out(R * C);
  for (int i = 0; i < R * C; ++i)
    x[i] = std::sin(static_cast<float>(i)) * 3.0f;
  m.kernel("softmax_rows")[{1}](x.data(), out.data(), kiln::arg("R", R), kiln::arg("C", C));
  for (int r = 0; r < R; ++r) {
    double mx = -INFINITY, sum = 0;
    for (int c = 0; c < C; ++c)
      mx = std::max<double>(mx, x[r * C + c]);
    for (int c = 0; c < C; ++c)
      sum += std::exp(x[r * C + c] - mx);
    for (int c = 0; c < C; ++c)
      CHECK(close(out[r * C + c], std::exp(x[r * C + c] - mx) / sum));
  }
}

TEST_CASE("math: libdevice functions compile for sm_90, linked from CUDA's libdevice") {
  kiln::Module m = kiln::Module::from_string(kMath, "math.py");
  const std::vector<kiln::Arg> args = {kiln::Arg::mock(kiln::DType::f32),
                                       kiln::Arg::mock(kiln::DType::f32),
                                       kiln::Arg::mock(kiln::DType::f32), kiln::arg("N", 256)};
  const kiln::CompiledKernel k =
      m.kernel("binary_math").impl()->compile_only(args, kiln::compiler::Target::cuda(90));
  const std::string &ptx = k.stages.at("ptx");
  CHECK(ptx.find(".entry binary_math") != std::string::npos);
  // libdevice is inlined: no calls to __nv_ functions are left.
  CHECK(ptx.find("__nv_") == std::string::npos);
}

TEST_CASE("math: libdevice functions built from others, and rounding-mode conversions") {
  kiln::Module m = kiln::Module::from_string(kMath, "math.py");
  constexpr int N = 16;
  std::vector<float> x(N), f(6 * N);
  std::vector<int32_t> in(N), n(8 * N);
  for (int k = 0; k < N; ++k) {
    x[k] = -1.7f + 0.23f * static_cast<float>(k);
    in[k] = k == 0 ? 0 : (k * 104729) ^ (k << 20);
  }
  m.kernel("extras")[{1}](x.data(), in.data(), f.data(), n.data(), kiln::arg("N", N));
  for (int k = 0; k < N; ++k) {
    const double v = x[k];
    INFO("x = " << v << ", i = " << in[k]);
    CHECK(f[k] == std::ldexp(x[k], in[k] % 8));
    CHECK(close(f[N + k], 0.5 * std::erfc(-v / std::sqrt(2.0))));
    CHECK(close(f[2 * N + k], erfinv_ref(1.0 - static_cast<float>(v * 0.5 + 1.0)), 1e-5, 1e-6));
    CHECK(close(f[3 * N + k], std::exp(v * v) * std::erfc(v), 1e-5));
    CHECK(close(f[4 * N + k], 1.0 / std::hypot(v, 2.0)));
    CHECK(close(f[5 * N + k], std::sqrt(2 * v * v + 4.0)));
    const float t = x[k] * 3.0f;
    CHECK(n[k] == static_cast<int32_t>(std::nearbyint(t)));
    CHECK(n[N + k] == static_cast<int32_t>(std::trunc(t)));
    CHECK(n[2 * N + k] == static_cast<int32_t>(std::floor(t)));
    CHECK(n[3 * N + k] == static_cast<int32_t>(std::ceil(t)));
    CHECK(n[4 * N + k] == __builtin_ffs(in[k]));
    CHECK(n[5 * N + k] == static_cast<int32_t>((int64_t{in[k]} * 123456789) >> 32));
    CHECK(n[6 * N + k] == static_cast<int32_t>((int64_t{in[k]} + 2147483647) >> 1));
    CHECK(n[7 * N + k] == static_cast<int32_t>((int64_t{in[k]} + 3 + 1) >> 1));
  }
}
