// The fp8 dtypes on the CPU: conversions from float32 (round to nearest
// even, saturating) and back against an independent C++ reference for all
// five of Triton's kinds, bit casts, and an fp8 tl.dot.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <kiln/kiln.hpp>

namespace {

const char *const kFp8 = R"(import triton
import triton.language as tl


@triton.jit
def roundtrip(x_ptr, f8_ptr, back_ptr, bits_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = x.to(f8_ptr.dtype.element_ty)
    tl.static_assert(y.dtype.is_fp8())
    tl.store(f8_ptr + offs, y)
    z = tl.load(f8_ptr + offs)
    tl.store(back_ptr + offs, z.to(tl.float32))
    tl.store(bits_ptr + offs, z.to(tl.uint8, bitcast=True))


@triton.jit
def fp8_dot(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b))
)";

struct Fmt {
  kiln::DType dtype;
  int e, m, bias;
  bool ieee, fn, fnuz;
};

const Fmt kFormats[] = {
    {kiln::DType::f8e4nv, 4, 3, 7, false, true, false},
    {kiln::DType::f8e5, 5, 2, 15, true, false, false},
    {kiln::DType::f8e4b15, 4, 3, 15, false, false, false},
    {kiln::DType::f8e4b8, 4, 3, 8, false, false, true},
    {kiln::DType::f8e5b16, 5, 2, 16, false, false, true},
};

/// The value of a code, NaN for NaN codes and inf for inf codes.
double decode(const Fmt &f, int code) {
  const int emax = (1 << f.e) - 1, mmax = (1 << f.m) - 1, e = (code >> f.m) & emax, m = code & mmax;
  const bool neg = code & 0x80;
  if ((f.fnuz && code == 0x80) || (f.fn && e == emax && m == mmax) || (f.ieee && e == emax && m))
    return std::numeric_limits<double>::quiet_NaN();
  if (f.ieee && e == emax)
    return neg ? -INFINITY : INFINITY;
  const double mag = e ? std::ldexp(1.0 + m / double(1 << f.m), e - f.bias)
                       : std::ldexp(m / double(1 << f.m), 1 - f.bias);
  return neg ? -mag : mag;
}

/// The nearest finite code (ties to the even code), by search.
int encode(const Fmt &f, float v) {
  if (std::isnan(v))
    return f.fnuz ? 0x80 : 0x7F;
  // Saturating: beyond the largest finite value (inf too) is that value.
  double largest = 0;
  for (int c = 0; c < 0x80; ++c)
    if (std::isfinite(decode(f, c)))
      largest = std::max(largest, decode(f, c));
  const double a = std::min(std::fabs(static_cast<double>(v)), largest);
  int best = 0;
  for (int c = 1; c < 0x80; ++c) {
    const double d = decode(f, c);
    if (!std::isfinite(d))
      continue;
    const double db = std::fabs(decode(f, best) - a), dc = std::fabs(d - a);
    if (dc < db || (dc == db && (c & 1) == 0 && a <= d))
      best = c;
    if (dc == db && (best & 1) && !(c & 1))
      best = c;
  }
  if (std::signbit(v) && !(f.fnuz && best == 0))
    best |= 0x80;
  return best;
}

} // namespace

TEST_CASE("fp8: float32 to each fp8 kind and back, against a reference, with saturation") {
  kiln::Module m = kiln::Module::from_string(kFp8, "fp8.py");
  std::vector<float> x;
  for (int i = -300; i <= 300; ++i)
    x.push_back(std::ldexp(static_cast<float>(i), -6) * (i % 3 == 0 ? 1.0f : 0.7f));
  for (float v : {1e6f, -1e6f, INFINITY, -INFINITY, NAN, -0.0f, 1e-9f, 448.0f, 464.0f, 57344.0f,
                  1.875f, 240.0f})
    x.push_back(v);
  x.resize(1024, 0.3f);
  const int N = static_cast<int>(x.size());
  for (const Fmt &f : kFormats) {
    INFO("dtype " << kiln::dtype_name(f.dtype));
    std::vector<uint8_t> f8(N), bits(N);
    std::vector<float> back(N);
    m.kernel("roundtrip")[{1}](x.data(), kiln::Tensor(f8.data(), f.dtype), back.data(), bits.data(),
                               kiln::arg("N", N));
    for (int i = 0; i < N; ++i) {
      INFO("x = " << x[i]);
      const int want = encode(f, x[i]);
      CHECK(int(f8[i]) == want);
      CHECK(bits[i] == f8[i]);
      const double v = decode(f, want);
      if (std::isnan(v))
        CHECK(std::isnan(back[i]));
      else
        CHECK(back[i] == static_cast<float>(v));
    }
  }
}

TEST_CASE("fp8: tl.dot of float8e4nv blocks accumulates in float32") {
  kiln::Module m = kiln::Module::from_string(kFp8, "fp8.py");
  constexpr int M = 16, N = 16, K = 32;
  const Fmt &f = kFormats[0];
  std::vector<uint8_t> a(M * K), b(K * N);
  for (int i = 0; i < M * K; ++i)
    a[i] = static_cast<uint8_t>(encode(f, static_cast<float>((i % 7) - 3) * 0.5f));
  for (int i = 0; i < K * N; ++i)
    b[i] = static_cast<uint8_t>(encode(f, static_cast<float>((i % 5) - 2) * 0.25f));
  std::vector<float> c(M * N);
  m.kernel("fp8_dot")[{1}](kiln::Tensor(a.data(), f.dtype), kiln::Tensor(b.data(), f.dtype),
                           c.data(), kiln::arg("M", M), kiln::arg("N", N), kiln::arg("K", K));
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double s = 0;
      for (int k = 0; k < K; ++k)
        s += decode(f, a[i * K + k]) * decode(f, b[k * N + j]);
      CHECK(c[i * N + j] == static_cast<float>(s));
    }
}
