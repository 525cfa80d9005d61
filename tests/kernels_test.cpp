// End-to-end tests of every kernel in shared/kernels on the CPU backend.
//
// Each kernel is loaded through the public API (Module::from_file, kernel[grid](...)),
// launched over a table of sizes -- tiny ones (n = 1, n below the block),
// exact multiples of the block and tails -- on every grid axis it uses and for
// each dtype it is generic over, and compared with a plain C++ reference
// written here. Output buffers are larger than what a kernel may write and
// start out filled with a sentinel, so the references leave the sentinel in
// place and a store that ignores its mask shows up as a mismatch.
//
// A launch that throws (a compile error, say) fails that one row of a table,
// not the whole test case, so one run reports every broken size.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <kiln/kiln.hpp>

namespace {

// ---- loading and launching ----

kiln::Module load(const std::string &file) {
  return kiln::Module::from_file(std::string(KILN_SHARED_DIR) + "/kernels/" + file + ".py");
}

uint32_t blocks(int64_t n, int64_t block) {
  return static_cast<uint32_t>(kiln::cdiv(n, block));
}

/// Launches `kernel` on `grid`. A kiln::Error becomes a failed check naming
/// the kernel and the message, and nullopt, so the caller skips comparing.
template <class... A>
std::optional<kiln::LaunchResult> launch(const kiln::Kernel &kernel, kiln::Grid grid, A &&...args) {
  try {
    return kernel[grid](std::forward<A>(args)...);
  } catch (const kiln::Error &e) {
    const std::string message = kernel.name() + " threw: " + e.what();
    FAIL_CHECK(message);
    return std::nullopt;
  }
}

// ---- comparing ----

/// |got - want| <= atol + rtol * |want|, as numpy.allclose; NaN matches NaN.
struct Tolerance {
  double rtol = 0, atol = 0;
};
constexpr Tolerance kExact{};
constexpr Tolerance kFloat{1e-5, 1e-6};     // one or two roundings (FMA contraction allowed)
constexpr Tolerance kReduction{1e-3, 1e-3}; // sums whose order the kernel picks
constexpr Tolerance kHalf{2e-2, 2e-2};      // fp16 results

template <class T> double as_double(T v) {
  return static_cast<double>(v);
}

bool near(double got, double want, Tolerance tol) {
  if (std::isnan(got) || std::isnan(want))
    return std::isnan(got) && std::isnan(want);
  if (tol.rtol == 0 && tol.atol == 0)
    return got == want;
  return std::abs(got - want) <= tol.atol + tol.rtol * std::abs(want);
}

/// One check over a whole buffer; on failure the message counts the wrong
/// elements and lists the first few as [index] want W got G.
template <class T>
void expect_near(const char *what, const std::vector<T> &got, const std::vector<T> &want,
                 Tolerance tol) {
  REQUIRE(got.size() == want.size());
  std::size_t wrong = 0;
  std::ostringstream first;
  first.precision(9);
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (near(as_double(got[i]), as_double(want[i]), tol))
      continue;
    if (wrong++ < 6)
      first << " [" << i << "] want " << as_double(want[i]) << " got " << as_double(got[i]) << ";";
  }
  std::ostringstream message;
  message << what << ": " << wrong << " of " << got.size() << " elements wrong:" << first.str();
  CHECK_MESSAGE(wrong == 0, message.str());
}

// ---- data ----

/// Deterministic inputs: normal floats, uniform ints in [lo, hi], uniform reals in [lo, hi).
template <class T> std::vector<T> normal(std::size_t n, uint32_t seed, double scale = 1.0) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> dist(0.0, scale);
  std::vector<T> v(n);
  for (T &x : v)
    x = static_cast<T>(dist(rng));
  return v;
}

template <class T>
std::vector<T> uniform_ints(std::size_t n, int64_t lo, int64_t hi, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> dist(lo, hi);
  std::vector<T> v(n);
  for (T &x : v)
    x = static_cast<T>(dist(rng));
  return v;
}

template <class T> std::vector<T> uniform_reals(std::size_t n, T lo, T hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<T> dist(lo, hi);
  std::vector<T> v(n);
  for (T &x : v)
    x = dist(rng);
  return v;
}

/// Random values of an element type: normals for floats, the full range for ints.
template <class T> std::vector<T> random_values(std::size_t n, uint32_t seed) {
  if constexpr (std::is_floating_point_v<T>)
    return normal<T>(n, seed);
  else
    return uniform_ints<T>(n, std::numeric_limits<T>::min(), std::numeric_limits<T>::max(), seed);
}

/// What an output buffer starts as: anything a kernel might plausibly write
/// is unlikely to equal it.
template <class T> constexpr T sentinel() {
  if constexpr (std::is_floating_point_v<T>)
    return T(-777.25);
  else
    return T(0x5A5A);
}

/// Elements past the last one a kernel may write, to catch unmasked stores.
constexpr std::size_t kGuard = 64;

// ---- fp16 and bf16, bit by bit ----

/// fp32 -> fp16 bits, rounding to nearest even; overflow gives inf, NaN stays a quiet NaN.
constexpr uint16_t f16_bits(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  const auto sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) // NaN
    return static_cast<uint16_t>(sign | 0x7E00u | ((a >> 13) & 0x3FFu));
  if (a >= 0x477FF000u) // >= 65520 (the tie between 65504 and 2^16) and inf
    return static_cast<uint16_t>(sign | 0x7C00u);
  if (a >= 0x38800000u) { // a normal fp16 (>= 2^-14): rebias 127 -> 15, round 23 -> 10 bits
    uint32_t v = a - (112u << 23);
    v += 0xFFFu + ((v >> 13) & 1u);
    return static_cast<uint16_t>(sign | (v >> 13));
  }
  const uint32_t e = a >> 23; // a subnormal fp16, in units of 2^-24
  if (e < 102)                // below 2^-25: rounds to zero
    return sign;
  const uint32_t m = (a & 0x7FFFFFu) | 0x800000u;
  const uint32_t shift = 126 - e; // 14..24
  uint32_t q = m >> shift;
  const uint32_t rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
  if (rem > half || (rem == half && (q & 1u)))
    ++q; // may carry into the smallest normal, which is the right encoding
  return static_cast<uint16_t>(sign | q);
}

constexpr float f16_to_float(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16, e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
  if (e == 0x1F)
    return std::bit_cast<float>(sign | 0x7F800000u | (m << 13));
  if (e == 0)
    return (sign ? -1.0f : 1.0f) * static_cast<float>(m) * 0x1p-24f;
  return std::bit_cast<float>(sign | ((e + 112) << 23) | (m << 13));
}

/// fp32 -> bf16 bits, rounding to nearest even (kernel-cases' bf16_bits); NaN stays a quiet NaN.
constexpr uint16_t bf16_bits(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u)
    return static_cast<uint16_t>((u >> 16) | 0x40u);
  return static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

static_assert(f16_bits(1.0f) == 0x3C00 && f16_bits(-2.0f) == 0xC000 && f16_bits(0.1f) == 0x2E66);
static_assert(f16_bits(65504.0f) == 0x7BFF && f16_bits(65519.0f) == 0x7BFF &&
              f16_bits(65520.0f) == 0x7C00);
static_assert(f16_bits(1.0f + 0x1p-11f) == 0x3C00 &&
              f16_bits(1.0f + 0x3p-11f) == 0x3C02); // ties to even
static_assert(f16_bits(0x1p-24f) == 0x0001 && f16_bits(0x1p-25f) == 0 &&
              f16_bits(0x3p-25f) == 0x0002);
static_assert(f16_bits(0x1.8p-25f) == 0x0001 &&
              f16_bits(0x1.ffcp-15f) == 0x0400); // subnormal carry to normal
static_assert(f16_bits(-0.0f) == 0x8000 && f16_bits(1e-30f) == 0 && f16_bits(1e30f) == 0x7C00);
static_assert(f16_to_float(0x3C00) == 1.0f && f16_to_float(0x0001) == 0x1p-24f &&
              f16_to_float(0x7BFF) == 65504.0f);
static_assert(bf16_bits(1.0f) == 0x3F80 && bf16_bits(1.0f + 0x1p-8f) == 0x3F80 &&
              bf16_bits(1.0f + 0x3p-8f) == 0x3F82);

bool f16_is_nan(uint16_t h) {
  return (h & 0x7C00u) == 0x7C00u && (h & 0x3FFu) != 0;
}
bool bf16_is_nan(uint16_t h) {
  return (h & 0x7F80u) == 0x7F80u && (h & 0x7Fu) != 0;
}

kiln::Tensor tensor(std::vector<uint16_t> &v, kiln::DType t) {
  return kiln::Tensor(v.data(), t, {static_cast<int64_t>(v.size())});
}

// =====================================================================
// vector_add.py
// =====================================================================

struct Size1D {
  int32_t n;
  int32_t block;
};

/// Tiny, below one block, exactly one block, one past, and a long tail.
constexpr Size1D kAddSizes[] = {{1, 1024},    {7, 1024},     {1023, 1024}, {1024, 1024},
                                {1025, 1024}, {10007, 1024}, {300, 64}};

/// x + y with the wrap-around of two's complement for ints.
template <class T> T wrapping_add(T a, T b) {
  if constexpr (std::is_integral_v<T>)
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(a) +
                          static_cast<std::make_unsigned_t<T>>(b));
  else
    return a + b;
}

TEST_CASE_TEMPLATE("kernels: add_kernel adds two vectors", T, float, double, int32_t, int64_t) {
  const kiln::Kernel add = load("vector_add").kernel("add_kernel");
  // offset 1 makes every pointer one element off its 16-byte alignment: another specialization
  for (const std::size_t offset : {0, 1}) {
    for (const auto [n, block] : kAddSizes) {
      CAPTURE(offset);
      CAPTURE(n);
      CAPTURE(block);
      const std::vector<T> x = random_values<T>(n + offset, 1), y = random_values<T>(n + offset, 2);
      std::vector<T> out(n + offset + kGuard, sentinel<T>()), want = out;
      for (int32_t i = 0; i < n; ++i)
        want[offset + i] = wrapping_add(x[offset + i], y[offset + i]);
      if (launch(add, {blocks(n, block)}, x.data() + offset, y.data() + offset, out.data() + offset,
                 n, kiln::arg("BLOCK", block)))
        expect_near("out", out, want, kExact);
    }
  }
}

TEST_CASE_TEMPLATE("kernels: axpy_kernel updates y in place", T, float, double) {
  const kiln::Kernel axpy = load("vector_add").kernel("axpy_kernel");
  const Size1D sizes[] = {{1, 256}, {100, 256}, {256, 256}, {257, 256}, {10007, 256}};
  for (const float a : {1.5f, -0.25f}) {
    for (const auto [n, block] : sizes) {
      CAPTURE(a);
      CAPTURE(n);
      const std::vector<T> x = normal<T>(n, 3);
      std::vector<T> y = normal<T>(n, 4);
      y.resize(n + kGuard, sentinel<T>());
      std::vector<T> want = y;
      for (int32_t i = 0; i < n; ++i)
        want[i] = static_cast<T>(a) * x[i] + y[i];
      if (launch(axpy, {blocks(n, block)}, a, x.data(), y.data(), n, kiln::arg("BLOCK", block)))
        expect_near("y", y, want, kFloat);
    }
  }
}

TEST_CASE("kernels: empty_kernel runs on 1-D, 2-D and 3-D grids and touches nothing") {
  const kiln::Kernel empty = load("vector_add").kernel("empty_kernel");
  std::vector<float> x(100, sentinel<float>());
  const std::vector<float> before = x;
  for (const kiln::Grid grid :
       {kiln::Grid{1}, kiln::Grid{4}, kiln::Grid{2, 3}, kiln::Grid{2, 3, 4}}) {
    CAPTURE(grid.x);
    CAPTURE(grid.y);
    CAPTURE(grid.z);
    if (const auto r = launch(empty, grid, x.data(), 100, kiln::arg("BLOCK", 128)))
      CHECK(r->kernel != nullptr);
    expect_near("x", x, before, kExact);
  }
}

// =====================================================================
// softmax.py
// =====================================================================

TEST_CASE("kernels: softmax_kernel normalizes each row") {
  const kiln::Kernel softmax = load("softmax").kernel("softmax_kernel");
  struct Case {
    int32_t rows, n_cols, block, in_pad, out_pad;
  };
  const Case cases[] = {
      {37, 781, 1024, 0, 0}, {1, 1, 16, 0, 0},    {4, 1024, 1024, 0, 0},
      {3, 17, 32, 5, 2},     {2, 100, 128, 3, 0}, {5, 1, 1, 0, 1},
  };
  for (const auto [rows, n_cols, block, in_pad, out_pad] : cases) {
    CAPTURE(rows);
    CAPTURE(n_cols);
    CAPTURE(block);
    const int32_t in_stride = n_cols + in_pad, out_stride = n_cols + out_pad;
    const std::vector<float> in = normal<float>(std::size_t(rows) * in_stride, 5, 3.0);
    std::vector<float> out(std::size_t(rows) * out_stride + kGuard, sentinel<float>()), want = out;
    for (int32_t r = 0; r < rows; ++r) {
      const float *x = &in[std::size_t(r) * in_stride];
      const double mx = *std::max_element(x, x + n_cols);
      double den = 0;
      for (int32_t c = 0; c < n_cols; ++c)
        den += std::exp(x[c] - mx);
      for (int32_t c = 0; c < n_cols; ++c)
        want[std::size_t(r) * out_stride + c] = static_cast<float>(std::exp(x[c] - mx) / den);
    }
    if (launch(softmax, {uint32_t(rows)}, out.data(), in.data(), in_stride, out_stride, n_cols,
               kiln::arg("BLOCK", block)))
      expect_near("out", out, want, kReduction);
  }
}

// =====================================================================
// layernorm.py
// =====================================================================

TEST_CASE("kernels: layernorm_fwd normalizes rows and stores mean and rstd") {
  const kiln::Kernel layernorm = load("layernorm").kernel("layernorm_fwd");
  struct Case {
    int32_t rows, n_cols, stride, block;
  };
  const Case cases[] = {
      {19, 3001, 3001, 512}, {4, 512, 512, 512},   {3, 1, 4, 512},
      {2, 100, 130, 128},    {1, 1000, 1000, 256}, {5, 1024, 1024, 256},
  };
  const float eps = 1e-5f;
  for (const auto [rows, n_cols, stride, block] : cases) {
    CAPTURE(rows);
    CAPTURE(n_cols);
    CAPTURE(block);
    const std::size_t size = std::size_t(rows) * stride;
    std::vector<float> x = normal<float>(size, 6, 2.0);
    for (float &v : x)
      v += 0.5f; // a mean away from zero
    const std::vector<float> w = normal<float>(n_cols, 7), b = normal<float>(n_cols, 8);
    std::vector<float> y(size + kGuard, sentinel<float>()), want_y = y;
    std::vector<float> mean(rows + kGuard, sentinel<float>()), want_mean = mean;
    std::vector<float> rstd(rows + kGuard, sentinel<float>()), want_rstd = rstd;
    for (int32_t r = 0; r < rows; ++r) {
      const float *xr = &x[std::size_t(r) * stride];
      double m = 0, var = 0;
      for (int32_t c = 0; c < n_cols; ++c)
        m += xr[c];
      m /= n_cols;
      for (int32_t c = 0; c < n_cols; ++c)
        var += (xr[c] - m) * (xr[c] - m);
      var /= n_cols;
      const double rs = 1.0 / std::sqrt(var + eps);
      want_mean[r] = static_cast<float>(m);
      want_rstd[r] = static_cast<float>(rs);
      for (int32_t c = 0; c < n_cols; ++c)
        want_y[std::size_t(r) * stride + c] = static_cast<float>((xr[c] - m) * rs * w[c] + b[c]);
    }
    if (launch(layernorm, {uint32_t(rows)}, x.data(), y.data(), w.data(), b.data(), mean.data(),
               rstd.data(), stride, n_cols, eps, kiln::arg("BLOCK", block))) {
      expect_near("y", y, want_y, kReduction);
      expect_near("mean", mean, want_mean, kReduction);
      expect_near("rstd", rstd, want_rstd, kReduction);
    }
  }
}

// =====================================================================
// matmul.py
// =====================================================================

/// Shapes, tiles and memory layouts for C = A @ B. `b_col_major` stores B
/// transposed (stride_bk = 1), `c_pad` widens C's rows, so the kernel must
/// honour every stride it is given.
struct MatmulCase {
  int32_t M, N, K, BM, BN, BK;
  bool b_col_major;
  int32_t c_pad;
};
constexpr MatmulCase kMatmulCases[] = {
    {100, 130, 70, 32, 32, 32, false, 0}, // kernel-cases' shape: tails on every axis
    {1, 1, 1, 32, 32, 32, false, 0},      // one element
    {32, 32, 32, 32, 32, 32, false, 0},   // exactly one tile
    {64, 96, 64, 32, 32, 32, false, 0},   // several whole tiles
    {33, 17, 65, 32, 32, 32, true, 3},    // B column-major, C padded
    {100, 130, 70, 16, 64, 16, false, 5}, // non-square tiles
};

struct MatmulLayout {
  int32_t sam, sak, sbk, sbn, scm, scn;
  std::size_t a_size, b_size, c_size;
};

MatmulLayout layout_of(const MatmulCase &c) {
  MatmulLayout l{};
  l.sam = c.K, l.sak = 1;
  if (c.b_col_major)
    l.sbk = 1, l.sbn = c.K;
  else
    l.sbk = c.N, l.sbn = 1;
  l.scm = c.N + c.c_pad, l.scn = 1;
  l.a_size = std::size_t(c.M) * c.K;
  l.b_size = std::size_t(c.K) * c.N;
  l.c_size = std::size_t(c.M) * l.scm;
  return l;
}

/// Fills `want` (laid out as C) with A @ B, computed in double from A and B as floats.
void matmul_reference(const MatmulCase &c, const MatmulLayout &l, const std::vector<float> &a,
                      const std::vector<float> &b, std::vector<float> &want) {
  for (int32_t i = 0; i < c.M; ++i)
    for (int32_t j = 0; j < c.N; ++j) {
      double acc = 0;
      for (int32_t k = 0; k < c.K; ++k)
        acc += double(a[std::size_t(i) * l.sam + std::size_t(k) * l.sak]) *
               b[std::size_t(k) * l.sbk + std::size_t(j) * l.sbn];
      want[std::size_t(i) * l.scm + std::size_t(j) * l.scn] = static_cast<float>(acc);
    }
}

TEST_CASE("kernels: matmul_kernel multiplies fp16 matrices into fp16 on a 2-D grid") {
  const kiln::Kernel matmul = load("matmul").kernel("matmul_kernel");
  for (const MatmulCase &c : kMatmulCases) {
    CAPTURE(c.M);
    CAPTURE(c.N);
    CAPTURE(c.K);
    CAPTURE(c.BM);
    CAPTURE(c.BN);
    CAPTURE(c.b_col_major);
    const MatmulLayout l = layout_of(c);
    std::vector<uint16_t> a16(l.a_size), b16(l.b_size);
    std::vector<float> a(l.a_size), b(l.b_size);
    const std::vector<float> ra = normal<float>(l.a_size, 9), rb = normal<float>(l.b_size, 10);
    for (std::size_t i = 0; i < l.a_size; ++i)
      a[i] = f16_to_float(a16[i] = f16_bits(ra[i]));
    for (std::size_t i = 0; i < l.b_size; ++i)
      b[i] = f16_to_float(b16[i] = f16_bits(rb[i]));
    std::vector<uint16_t> c16(l.c_size + kGuard, f16_bits(42.0f));
    std::vector<float> want(c16.size(), 42.0f);
    matmul_reference(c, l, a, b, want);
    if (launch(matmul, {blocks(c.M, c.BM), blocks(c.N, c.BN)}, tensor(a16, kiln::DType::f16),
               tensor(b16, kiln::DType::f16), tensor(c16, kiln::DType::f16), c.M, c.N, c.K, l.sam,
               l.sak, l.sbk, l.sbn, l.scm, l.scn, kiln::arg("BM", c.BM), kiln::arg("BN", c.BN),
               kiln::arg("BK", c.BK))) {
      std::vector<float> got(c16.size());
      std::transform(c16.begin(), c16.end(), got.begin(), f16_to_float);
      expect_near("c", got, want, kHalf);
    }
  }
}

TEST_CASE("kernels: matmul_kernel multiplies fp32 matrices on a 2-D grid") {
  const kiln::Kernel matmul = load("matmul").kernel("matmul_kernel");
  for (const MatmulCase &c : kMatmulCases) {
    CAPTURE(c.M);
    CAPTURE(c.N);
    CAPTURE(c.K);
    CAPTURE(c.BM);
    CAPTURE(c.BN);
    CAPTURE(c.b_col_major);
    const MatmulLayout l = layout_of(c);
    const std::vector<float> a = normal<float>(l.a_size, 11), b = normal<float>(l.b_size, 12);
    std::vector<float> out(l.c_size + kGuard, sentinel<float>()), want = out;
    matmul_reference(c, l, a, b, want);
    // a K-long dot product in fp32, summed in an order the kernel picks
    if (launch(matmul, {blocks(c.M, c.BM), blocks(c.N, c.BN)}, a.data(), b.data(), out.data(), c.M,
               c.N, c.K, l.sam, l.sak, l.sbk, l.sbn, l.scm, l.scn, kiln::arg("BM", c.BM),
               kiln::arg("BN", c.BN), kiln::arg("BK", c.BK)))
      expect_near("c", out, want, Tolerance{1e-4, 1e-4});
  }
}

// =====================================================================
// reductions.py
// =====================================================================

TEST_CASE("kernels: reduce_rows sums, maxes and argmins rows, ties to the first index") {
  const kiln::Kernel reduce_rows = load("reductions").kernel("reduce_rows");
  struct Case {
    int32_t M, N, stride, BM, BN;
    bool ties; ///< small integer values, so that minima repeat; row 0 is constant
  };
  const Case cases[] = {
      {50, 60, 60, 16, 64, false}, {1, 1, 1, 16, 16, false},    {16, 64, 64, 16, 64, false},
      {33, 5, 8, 16, 8, true},     {7, 100, 100, 4, 128, true}, {50, 60, 61, 16, 64, true},
  };
  for (const auto [M, N, stride, BM, BN, ties] : cases) {
    CAPTURE(M);
    CAPTURE(N);
    CAPTURE(BM);
    CAPTURE(BN);
    CAPTURE(ties);
    const std::size_t size = std::size_t(M) * stride;
    std::vector<float> x = ties ? uniform_ints<float>(size, -2, 2, 13) : normal<float>(size, 14);
    if (ties)
      std::fill(x.begin(), x.begin() + N, 1.0f);
    std::vector<float> sum(M + kGuard, sentinel<float>()), want_sum = sum;
    std::vector<float> maxes(M + kGuard, sentinel<float>()), want_max = maxes;
    std::vector<int32_t> argmin(M + kGuard, sentinel<int32_t>()), want_argmin = argmin;
    for (int32_t r = 0; r < M; ++r) {
      const float *row = &x[std::size_t(r) * stride];
      double s = 0;
      for (int32_t c = 0; c < N; ++c)
        s += row[c];
      want_sum[r] = static_cast<float>(s);
      want_max[r] = *std::max_element(row, row + N);
      want_argmin[r] =
          static_cast<int32_t>(std::min_element(row, row + N) - row); // the first minimum
    }
    if (launch(reduce_rows, {blocks(M, BM)}, x.data(), sum.data(), maxes.data(), argmin.data(), M,
               N, stride, kiln::arg("BM", BM), kiln::arg("BN", BN))) {
      expect_near("sum", sum, want_sum, ties ? kExact : kReduction);
      expect_near("max", maxes, want_max, kExact);
      expect_near("argmin", argmin, want_argmin, kExact);
    }
  }
}

TEST_CASE("kernels: column_sum sums columns, looping over row tiles") {
  const kiln::Kernel column_sum = load("reductions").kernel("column_sum");
  struct Case {
    int32_t M, N, stride, BM, BN;
  };
  const Case cases[] = {
      {50, 60, 60, 16, 32},  {1, 1, 1, 16, 32},    {64, 64, 64, 16, 32},
      {100, 33, 40, 32, 16}, {5, 200, 200, 8, 64}, {3, 16, 16, 16, 16},
  };
  for (const auto [M, N, stride, BM, BN] : cases) {
    CAPTURE(M);
    CAPTURE(N);
    CAPTURE(BM);
    CAPTURE(BN);
    const std::vector<float> x = normal<float>(std::size_t(M) * stride, 15);
    std::vector<float> out(N + kGuard, sentinel<float>()), want = out;
    for (int32_t c = 0; c < N; ++c) {
      double s = 0;
      for (int32_t r = 0; r < M; ++r)
        s += x[std::size_t(r) * stride + c];
      want[c] = static_cast<float>(s);
    }
    if (launch(column_sum, {blocks(N, BN)}, x.data(), out.data(), M, N, stride, kiln::arg("BM", BM),
               kiln::arg("BN", BN)))
      expect_near("out", out, want, kReduction);
  }
}

TEST_CASE_TEMPLATE("kernels: prefix_sum scans each block", T, int32_t, float) {
  const kiln::Kernel prefix_sum = load("reductions").kernel("prefix_sum");
  const Size1D sizes[] = {{1000, 1024}, {1, 1024}, {1024, 1024}, {2500, 1024}, {7, 8}, {300, 64}};
  for (const auto [n, block] : sizes) {
    CAPTURE(n);
    CAPTURE(block);
    // small integers: exact as floats too
    const std::vector<T> x = uniform_ints<T>(n, -5, 4, 16);
    std::vector<T> out(n + kGuard, sentinel<T>()), want = out;
    for (int32_t i = 0; i < n; ++i) // each program scans its own block
      want[i] = static_cast<T>(x[i] + (i % block == 0 ? T(0) : want[i - 1]));
    if (launch(prefix_sum, {blocks(n, block)}, x.data(), out.data(), n, kiln::arg("BLOCK", block)))
      expect_near("out", out, want, kExact);
  }
}

// =====================================================================
// atomics.py
// =====================================================================

TEST_CASE("kernels: histogram counts values, clamping out-of-range ones into the end bins") {
  const kiln::Kernel histogram = load("atomics").kernel("histogram");
  struct Case {
    int32_t n, n_bins, block;
  };
  const Case cases[] = {
      {5000, 32, 512}, {1, 32, 512}, {511, 32, 512},    {512, 32, 512},
      {513, 7, 512},   {100, 1, 64}, {200000, 16, 256}, // 782 programs racing on 16 counters
  };
  for (const auto [n, n_bins, block] : cases) {
    CAPTURE(n);
    CAPTURE(n_bins);
    CAPTURE(block);
    std::vector<int32_t> x = uniform_ints<int32_t>(n, -3, n_bins + 8, 17);
    x[0] = -1000; // far below the range: bin 0
    std::vector<int32_t> hist(n_bins + kGuard, sentinel<int32_t>());
    std::fill_n(hist.begin(), n_bins, 0);
    std::vector<int32_t> want = hist;
    for (const int32_t v : x)
      ++want[std::clamp(v, 0, n_bins - 1)];
    if (launch(histogram, {blocks(n, block)}, x.data(), hist.data(), n, n_bins,
               kiln::arg("BLOCK", block)))
      expect_near("hist", hist, want, kExact);
  }
}

TEST_CASE("kernels: global_max finds the largest element with atomic_max") {
  const kiln::Kernel global_max = load("atomics").kernel("global_max");
  struct Case {
    int32_t n, block;
    int64_t lo, hi;
  };
  const Case cases[] = {
      {5000, 512, -3, 40},
      {1, 512, -3, 40},
      {511, 512, -3, 40},
      {513, 512, -3, 40},
      {1000, 256, -1000, -10},              // all negative: masked lanes must not contribute
      {3, 4, INT32_MIN + 1, INT32_MIN + 5}, // near the identity of max
      {200000, 128, -1000000, 1000000},     // 1563 programs racing on one word
  };
  for (const auto [n, block, lo, hi] : cases) {
    CAPTURE(n);
    CAPTURE(block);
    CAPTURE(lo);
    const std::vector<int32_t> x = uniform_ints<int32_t>(n, lo, hi, 18);
    std::vector<int32_t> out(1 + kGuard, sentinel<int32_t>());
    out[0] = INT32_MIN;
    std::vector<int32_t> want = out;
    want[0] = *std::max_element(x.begin(), x.end());
    if (launch(global_max, {blocks(n, block)}, x.data(), out.data(), n, kiln::arg("BLOCK", block)))
      expect_near("out", out, want, kExact);
  }
}

// =====================================================================
// composition.py
// =====================================================================

TEST_CASE("kernels: normalize inlines stats/square and calls the noinline inv_std") {
  const kiln::Kernel normalize = load("composition").kernel("normalize");
  const Size1D sizes[] = {{700, 1024}, {1, 1024}, {1024, 1024}, {5, 8}, {100, 128}};
  for (const auto [n, block] : sizes) {
    CAPTURE(n);
    CAPTURE(block);
    std::vector<float> x = normal<float>(n, 19, 3.0);
    for (float &v : x)
      v += 1.0f;
    std::vector<float> out(n + kGuard, sentinel<float>()), want = out;
    double mean = 0, var = 0;
    for (const float v : x)
      mean += v;
    mean /= n;
    for (const float v : x)
      var += (v - mean) * (v - mean);
    var /= n;
    for (int32_t i = 0; i < n; ++i) // SCALE = 2, EPS = 1e-6
      want[i] = static_cast<float>((x[i] - mean) / std::sqrt(var + 1e-6) * 2);
    if (launch(normalize, {1}, x.data(), out.data(), n, kiln::arg("BLOCK", block)))
      expect_near("out", out, want, kReduction);
  }
}

TEST_CASE("kernels: fill stores a value into the first n elements") {
  const kiln::Kernel fill = load("composition").kernel("fill");
  const Size1D sizes[] = {{1000, 256}, {1, 256}, {256, 256}, {257, 256}, {17, 16}};
  for (const float value : {3.25f, -0.5f}) {
    for (const auto [n, block] : sizes) {
      CAPTURE(value);
      CAPTURE(n);
      CAPTURE(block);
      std::vector<float> out(n + kGuard, sentinel<float>()), want = out;
      std::fill_n(want.begin(), n, value);
      if (launch(fill, {blocks(n, block)}, out.data(), value, n, kiln::arg("BLOCK", block)))
        expect_near("out", out, want, kExact);
    }
  }
}

TEST_CASE("kernels: fill with do_not_specialize n compiles once for every n") {
  // n = 1 and multiples of 16 would each get their own binary if n were specialized
  const kiln::Kernel fill = load("composition").kernel("fill");
  std::vector<float> out(2048 + kGuard);
  const kiln::CompiledKernel *first = nullptr;
  for (const int32_t n : {1000, 1, 16, 17, 2048}) {
    CAPTURE(n);
    std::fill(out.begin(), out.end(), sentinel<float>());
    std::vector<float> want = out;
    std::fill_n(want.begin(), n, 1.75f);
    const auto r = launch(fill, {blocks(n, 128)}, out.data(), 1.75f, n, kiln::arg("BLOCK", 128));
    if (!r)
      return;
    expect_near("out", out, want, kExact);
    if (!first) {
      first = r->kernel;
      continue;
    }
    CHECK(r->kernel == first);
    CHECK(r->source == kiln::BinarySource::memory);
  }
}

TEST_CASE("kernels: apply_activation calls the jit function passed as ACT") {
  const kiln::Module module = load("composition");
  const kiln::Kernel apply = module.kernel("apply_activation");
  struct Activation {
    const char *name;
    float (*ref)(float);
  };
  const Activation activations[] = {
      {"relu", [](float v) { return std::max(v, 0.0f); }},
      {"square", [](float v) { return v * v; }}, // a second ACT: its own specialization, not relu's
  };
  const Size1D sizes[] = {{1500, 512}, {1, 512}, {512, 512}, {513, 512}};
  for (const Activation &act : activations) {
    const kiln::Kernel fn = module.kernel(act.name);
    const std::string activation = act.name;
    for (const auto [n, block] : sizes) {
      CAPTURE(activation);
      CAPTURE(n);
      const std::vector<float> x = normal<float>(n, 20);
      std::vector<float> out(n + kGuard, sentinel<float>()), want = out;
      std::transform(x.begin(), x.end(), want.begin(), act.ref);
      if (launch(apply, {blocks(n, block)}, x.data(), out.data(), n, kiln::arg("ACT", fn),
                 kiln::arg("BLOCK", block)))
        expect_near("out", out, want, kExact);
    }
  }
}

// =====================================================================
// control_flow.py
// =====================================================================

int32_t collatz(int64_t v) {
  int32_t steps = 0;
  for (; v != 1; ++steps)
    v = v % 2 == 0 ? v / 2 : 3 * v + 1;
  return steps;
}

TEST_CASE("kernels: collatz_steps runs a data-dependent while loop per program") {
  const kiln::Kernel collatz_steps = load("control_flow").kernel("collatz_steps");
  std::vector<int32_t> counting(100);
  for (int32_t i = 0; i < 100; ++i)
    counting[i] = i + 1;
  const std::vector<std::vector<int32_t>> inputs = {
      {1, 2, 3, 6, 7, 27, 97, 871}, {1}, {27}, counting};
  for (const std::vector<int32_t> &x : inputs) {
    const auto n = static_cast<int32_t>(x.size());
    CAPTURE(n);
    std::vector<int32_t> out(n + kGuard, sentinel<int32_t>()), want = out;
    std::transform(x.begin(), x.end(), want.begin(), collatz);
    if (launch(collatz_steps, {uint32_t(n)}, x.data(), out.data(), n, kiln::arg("BLOCK", 1)))
      expect_near("out", out, want, kExact);
  }
}

TEST_CASE("kernels: poly unrolls Horner's rule for DEGREE 0 to 5") {
  const kiln::Kernel poly = load("control_flow").kernel("poly");
  const Size1D sizes[] = {{300, 256}, {1, 256}, {256, 256}, {7, 8}};
  for (int32_t degree = 0; degree <= 5; ++degree) {
    for (const auto [n, block] : sizes) {
      CAPTURE(degree);
      CAPTURE(n);
      CAPTURE(block);
      const std::vector<float> x = uniform_reals(n, 0.0f, 1.0f, 21);
      std::vector<float> out(n + kGuard, sentinel<float>()), want = out;
      for (int32_t i = 0; i < n; ++i) { // sum_{k <= DEGREE} (k + 1) x^k
        double s = 0;
        for (int32_t k = 0; k <= degree; ++k)
          s += (k + 1) * std::pow(double(x[i]), k);
        want[i] = static_cast<float>(s);
      }
      if (launch(poly, {blocks(n, block)}, x.data(), out.data(), n, kiln::arg("DEGREE", degree),
                 kiln::arg("BLOCK", block)))
        expect_near("out", out, want, kFloat);
    }
  }
}

// =====================================================================
// dtypes.py
// =====================================================================

TEST_CASE("kernels: convert rounds fp32 to fp16 and bf16 to nearest even") {
  const kiln::Kernel convert = load("dtypes").kernel("convert");
  // rounding ties, the ends of fp16's range, subnormals, signed zero, inf, NaN
  std::vector<float> x = {
      1.0f + 0x1p-11f, 1.0f + 0x3p-11f, 2049.0f,   2051.0f,       1.0f + 0x1p-8f, 1.0f + 0x3p-8f,
      65504.0f,        65519.0f,        65520.0f,  -70000.0f,     0x1p-14f,       0x1p-24f,
      0x1p-25f,        0x1.8p-25f,      0x3p-25f,  -0x1.ffcp-15f, 1e-10f,         0.0f,
      -0.0f,           INFINITY,        -INFINITY, NAN,           3.4e38f,        0.1f,
      -0.3f,           1e-5f,           -6e-8f,
  };
  const std::vector<float> big = normal<float>(1200, 22, 100.0),
                           small = normal<float>(1200, 23, 1e-5);
  for (std::size_t i = 0; i < big.size(); ++i)
    x.push_back(i % 3 == 0 ? small[i] : big[i]);
  const Size1D sizes[] = {{999, 256}, {1, 256}, {256, 256}, {257, 256}, {27, 32}};
  for (const auto [n, block] : sizes) {
    CAPTURE(n);
    CAPTURE(block);
    std::vector<uint16_t> h(n + kGuard, 0x5A5A), b(n + kGuard, 0x5A5A);
    if (!launch(convert, {blocks(n, block)}, x.data(), tensor(h, kiln::DType::f16),
                tensor(b, kiln::DType::bf16), n, kiln::arg("BLOCK", block)))
      continue;
    int wrong_h = 0, wrong_b = 0;
    std::ostringstream first;
    first << std::hex;
    for (int32_t i = 0; i < n + int32_t(kGuard); ++i) {
      const bool in = i < n, nan = in && std::isnan(x[i]);
      const uint16_t want_h = in ? f16_bits(x[i]) : 0x5A5A, want_b = in ? bf16_bits(x[i]) : 0x5A5A;
      if (nan ? !f16_is_nan(h[i]) : h[i] != want_h) {
        if (wrong_h++ < 6)
          first << " fp16[" << std::dec << i << std::hex << "] of " << (in ? x[i] : 0.0f)
                << " want 0x" << want_h << " got 0x" << h[i] << ";";
      }
      if (nan ? !bf16_is_nan(b[i]) : b[i] != want_b) {
        if (wrong_b++ < 6)
          first << " bf16[" << std::dec << i << std::hex << "] of " << (in ? x[i] : 0.0f)
                << " want 0x" << want_b << " got 0x" << b[i] << ";";
      }
    }
    std::ostringstream message;
    message << wrong_h << " fp16 and " << wrong_b << " bf16 elements wrong:" << first.str();
    CHECK_MESSAGE(wrong_h + wrong_b == 0, message.str());
  }
}

TEST_CASE_TEMPLATE("kernels: int_ops divides like C and shifts and masks bits", T, int32_t,
                   int64_t) {
  const kiln::Kernel int_ops = load("dtypes").kernel("int_ops");
  // every sign combination first, then random operands with |b| in [1, 50]
  std::vector<T> a = {-7,
                      7,
                      -7,
                      7,
                      0,
                      -1,
                      5,
                      -5,
                      -49,
                      1000,
                      -1000,
                      std::numeric_limits<T>::max(),
                      std::numeric_limits<T>::min()};
  std::vector<T> b = {2, -2, -2, 2, -3, 50, 5, 5, 50, -1, 7, 3, 2};
  const std::vector<T> ra = uniform_ints<T>(1000, -1000, 999, 24),
                       rb = uniform_ints<T>(1000, 1, 50, 25);
  for (std::size_t i = 0; i < ra.size(); ++i) {
    a.push_back(ra[i]);
    b.push_back(i % 2 ? rb[i] : static_cast<T>(-rb[i]));
  }
  const Size1D sizes[] = {{999, 256}, {1, 256}, {256, 256}, {257, 256}, {13, 16}};
  for (const auto [n, block] : sizes) {
    CAPTURE(n);
    CAPTURE(block);
    std::vector<T> q(n + kGuard, sentinel<T>()), r = q, s = q;
    std::vector<T> want_q = q, want_r = q, want_s = q;
    for (int32_t i = 0; i < n; ++i) {
      want_q[i] = static_cast<T>(a[i] / b[i]); // C++ truncates toward zero, as Triton does
      want_r[i] = static_cast<T>(a[i] % b[i]);
      want_s[i] = static_cast<T>((((a[i] << 3) ^ (b[i] >> 1)) & 0xFFFF) | (a[i] & 7));
    }
    if (launch(int_ops, {blocks(n, block)}, a.data(), b.data(), q.data(), r.data(), s.data(), n,
               kiln::arg("BLOCK", block))) {
      expect_near("q", q, want_q, kExact);
      expect_near("r", r, want_r, kExact);
      expect_near("s", s, want_s, kExact);
    }
  }
}

// =====================================================================
// the launch path
// =====================================================================

TEST_CASE("kernels: a second identical launch hits the in-memory cache") {
  // int16 pointers and BLOCK=64 are used by no other test, so the first launch compiles
  const kiln::Kernel add = load("vector_add").kernel("add_kernel");
  const int32_t n = 100;
  const std::vector<int16_t> x = uniform_ints<int16_t>(n, -1000, 1000, 26),
                             y = uniform_ints<int16_t>(n, -1000, 1000, 27);
  std::vector<int16_t> want(n + kGuard, sentinel<int16_t>());
  for (int32_t i = 0; i < n; ++i)
    want[i] = static_cast<int16_t>(x[i] + y[i]);
  for (const kiln::BinarySource expected :
       {kiln::BinarySource::compiled, kiln::BinarySource::memory}) {
    const std::string launch_of = kiln::binary_source_name(expected);
    CAPTURE(launch_of);
    std::vector<int16_t> out(n + kGuard, sentinel<int16_t>());
    const auto r =
        launch(add, {blocks(n, 64)}, x.data(), y.data(), out.data(), n, kiln::arg("BLOCK", 64));
    if (!r)
      return;
    // a disk cache, once there is one, may serve the first launch instead of a compile
    if (expected == kiln::BinarySource::compiled)
      CHECK((r->source == kiln::BinarySource::compiled || r->source == kiln::BinarySource::disk));
    else
      CHECK(r->source == kiln::BinarySource::memory);
    REQUIRE(r->kernel != nullptr);
    CHECK(r->kernel->target.rfind("cpu", 0) == 0);
    expect_near("out", out, want, kExact);
  }
}

TEST_CASE("kernels: a grid with a zero axis launches nothing") {
  const kiln::Kernel add = load("vector_add").kernel("add_kernel");
  const int32_t n = 1000;
  const std::vector<float> x = normal<float>(n, 28), y = normal<float>(n, 29);
  std::vector<float> out(n, sentinel<float>());
  const std::vector<float> before = out;
  for (const kiln::Grid grid :
       {kiln::Grid{0}, kiln::Grid{0, 4}, kiln::Grid{4, 0}, kiln::Grid{4, 4, 0}}) {
    CAPTURE(grid.x);
    CAPTURE(grid.y);
    CAPTURE(grid.z);
    launch(add, grid, x.data(), y.data(), out.data(), n, kiln::arg("BLOCK", 1024));
    expect_near("out", out, before, kExact);
  }
}

} // namespace
