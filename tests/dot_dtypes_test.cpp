// tl.dot's dtypes as Triton 3.6 defines them, on the CPU backend: the
// kernels of bench/dot_kernels.py (which the GPU cases and the lit test
// dot_dtypes.py run on tensor cores) against plain C++ loops. int8 -> int32
// is exact; f16 accumulators are compared with a reference that rounds to
// f16 after each k step, within a tolerance (the CPU rounds once at the
// end); tf32x3 with float64 sums. What Triton rejects (acc dtypes that are
// not out_dtype, uint8 operands, out_dtype=bfloat16, 8-bit K < 32) is a
// compile error with a message that says what to write instead.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <kiln/kiln.hpp>

#include "tests/text_checks.hpp"

using kiln::test::contains;

namespace {

kiln::Module dot_kernels() {
  return kiln::Module::from_file(std::string(KILN_SOURCE_DIR) + "/bench/dot_kernels.py");
}

/// Deterministic values: integers in [lo, hi] (an LCG's high bits) divided
/// by `div`, as T.
template <class T> std::vector<T> values(size_t n, int lo, int hi, uint32_t seed, float div = 1) {
  std::vector<T> v(n);
  for (T &x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<T>((lo + static_cast<int>((seed >> 8) % static_cast<uint32_t>(hi - lo + 1))) /
                       div);
  }
  return v;
}

/// Launches a matmul of bench/dot_kernels.py: A M x K row-major, B K x N
/// row-major, C M x N; blocks BM x BN x BK.
template <class A, class C>
void launch(kiln::Module &m, const char *name, const std::vector<A> &a, const std::vector<A> &b,
            kiln::DType in, std::vector<C> &c, kiln::DType out, int M, int N, int K, int BM, int BN,
            int BK) {
  m.kernel(name)[{(M + BM - 1) / BM, (N + BN - 1) / BN}](
      kiln::Tensor(const_cast<A *>(a.data()), in), kiln::Tensor(const_cast<A *>(b.data()), in),
      kiln::Tensor(c.data(), out), M, N, K, K, 1, N, 1, N, 1, kiln::arg("BM", BM),
      kiln::arg("BN", BN), kiln::arg("BK", BK));
}

} // namespace

TEST_CASE("dot dtypes: int8 x int8 accumulates exactly in int32") {
  kiln::Module m = dot_kernels();
  for (auto [M, N, K, BM, BN, BK] :
       {std::array{100, 70, 200, 32, 32, 64}, std::array{64, 64, 64, 64, 64, 32}}) {
    CAPTURE(M);
    std::vector<int8_t> a = values<int8_t>(M * K, -128, 127, 1),
                        b = values<int8_t>(K * N, -128, 127, 2);
    // The extremes: -128 * -128 summed K times still fits int32.
    a[0] = b[0] = -128;
    std::vector<int32_t> c(M * N);
    launch(m, "matmul_i8", a, b, kiln::DType::i8, c, kiln::DType::i32, M, N, K, BM, BN, BK);
    int wrong = 0;
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        int64_t s = 0;
        for (int k = 0; k < K; ++k)
          s += int64_t{a[i * K + k]} * b[k * N + j];
        wrong += c[i * N + j] != s;
      }
    CHECK(wrong == 0);
  }
}

TEST_CASE("dot dtypes: out_dtype=float16 accumulates in float16") {
  kiln::Module m = dot_kernels();
  constexpr int M = 64, N = 48, K = 96, BM = 32, BN = 16, BK = 32;
  const std::vector<_Float16> a = values<_Float16>(M * K, -64, 64, 3, 32),
                              b = values<_Float16>(K * N, -64, 64, 4, 32);
  std::vector<_Float16> c(M * N);
  launch(m, "matmul_f16_acc", a, b, kiln::DType::f16, c, kiln::DType::f16, M, N, K, BM, BN, BK);
  double worst = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      // As mma.sync .f16 accumulates: f16 after each instruction's 16 products.
      _Float16 acc = 0;
      for (int k0 = 0; k0 < K; k0 += 16) {
        float s = static_cast<float>(acc);
        for (int k = k0; k < k0 + 16; ++k)
          s += static_cast<float>(a[i * K + k]) * static_cast<float>(b[k * N + j]);
        acc = static_cast<_Float16>(s);
      }
      const double want = static_cast<double>(acc), got = static_cast<double>(c[i * N + j]);
      worst = std::max(worst, std::fabs(got - want));
    }
  // Partial sums reach ~48 (ulp 1/32) before cancelling: where each side
  // rounds (the CPU once a dot of BK = 32, the reference every 16) moves a
  // result by a few such ulps, however small it ends.
  CHECK(worst < 0.125);
}

TEST_CASE("dot dtypes: tf32x3 is float32-accurate") {
  kiln::Module m = dot_kernels();
  constexpr int M = 48, N = 40, K = 70, BM = 16, BN = 32, BK = 16;
  const std::vector<float> a = values<float>(M * K, -1000, 1000, 5, 997),
                           b = values<float>(K * N, -1000, 1000, 6, 991);
  std::vector<float> c(M * N);
  launch(m, "matmul_tf32x3", a, b, kiln::DType::f32, c, kiln::DType::f32, M, N, K, BM, BN, BK);
  double worst = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double s = 0;
      for (int k = 0; k < K; ++k)
        s += double{a[i * K + k]} * b[k * N + j];
      worst = std::max(worst, std::fabs(c[i * N + j] - s));
    }
  CHECK(worst < 1e-5);
}

namespace {

/// Compiles (and runs, on the CPU) `c = <call>` over a 16 x KK by KK x 16
/// dot of `in` operands, storing c to a pointer of `c_dtype`: "ok", or the
/// compile error's message.
std::string dot_rule(kiln::DType in, const std::string &call, kiln::DType c_dtype, int kk = 32) {
  const std::string src = "import triton\nimport triton.language as tl\n\n\n"
                          "@triton.jit\n"
                          "def k(a_ptr, b_ptr, c_ptr, KK: tl.constexpr):\n"
                          "    r = tl.arange(0, 16)\n"
                          "    rk = tl.arange(0, KK)\n"
                          "    a = tl.load(a_ptr + r[:, None] * KK + rk[None, :])\n"
                          "    b = tl.load(b_ptr + rk[:, None] * 16 + r[None, :])\n"
                          "    c = " +
                          call +
                          "\n"
                          "    tl.static_assert(c.dtype == c_ptr.dtype.element_ty)\n"
                          "    tl.store(c_ptr + r[:, None] * 16 + r[None, :], c)\n";
  kiln::Module m = kiln::Module::from_string(src, "rules.py");
  std::vector<uint64_t> buf(16 * 64);
  try {
    m.kernel("k")[{1}](kiln::Tensor(buf.data(), in), kiln::Tensor(buf.data(), in),
                       kiln::Tensor(buf.data(), c_dtype), kiln::arg("KK", kk));
  } catch (const kiln::CompileError &e) {
    return e.message();
  }
  return "ok";
}

using kiln::DType;

} // namespace

TEST_CASE("dot dtypes: result dtypes as Triton's semantic.py") {
  CHECK(dot_rule(DType::i8, "tl.dot(a, b)", DType::i32) == "ok");
  // int8: int32 whatever out_dtype says (Triton ignores it without acc).
  CHECK(dot_rule(DType::i8, "tl.dot(a, b, out_dtype=tl.float16)", DType::i32) == "ok");
  CHECK(dot_rule(DType::f16, "tl.dot(a, b)", DType::f32) == "ok");
  CHECK(dot_rule(DType::f16, "tl.dot(a, b, out_dtype=tl.float16)", DType::f16) == "ok");
  CHECK(dot_rule(DType::bf16, "tl.dot(a, b)", DType::f32) == "ok");
  // float32 and bfloat16 operands give float32 whatever out_dtype says.
  CHECK(dot_rule(DType::bf16, "tl.dot(a, b, out_dtype=tl.float16)", DType::f32) == "ok");
  CHECK(dot_rule(DType::f32, "tl.dot(a, b, out_dtype=tl.float16)", DType::f32) == "ok");
  CHECK(dot_rule(DType::f64, "tl.dot(a, b)", DType::f64) == "ok");
}

TEST_CASE("dot dtypes: acc= must be out_dtype, as Triton asserts") {
  CHECK(dot_rule(DType::i8, "tl.dot(a, b, tl.zeros((16, 16), tl.int32), out_dtype=tl.int32)",
                 DType::i32) == "ok");
  CHECK(dot_rule(DType::f16, "tl.dot(a, b, tl.zeros((16, 16), tl.float16), out_dtype=tl.float16)",
                 DType::f16) == "ok");
  CHECK(dot_rule(DType::f16, "tl.dot(a, b, tl.zeros((16, 16), tl.float32))", DType::f32) == "ok");
  // Not silently cast: an int32 acc of an int8 dot needs out_dtype=tl.int32.
  CHECK(dot_rule(DType::i8, "tl.dot(a, b, tl.zeros((16, 16), tl.int32))", DType::i32) ==
        "tl.dot's acc of int32 needs out_dtype=tl.int32 (as in Triton: acc's dtype must be "
        "out_dtype, float32 unless given)");
  CHECK(dot_rule(DType::f16, "tl.dot(a, b, tl.zeros((16, 16), tl.float16))", DType::f16) ==
        "tl.dot's acc of float16 needs out_dtype=tl.float16 (as in Triton: acc's dtype must be "
        "out_dtype, float32 unless given)");
  CHECK(dot_rule(DType::f16, "tl.dot(a, b, tl.zeros((16, 16), tl.float32), out_dtype=tl.float16)",
                 DType::f16) ==
        "tl.dot's acc of float32 needs out_dtype=tl.float32 (as in Triton: acc's dtype must be "
        "out_dtype, float32 unless given)");
  CHECK(dot_rule(DType::f32, "tl.dot(a, b, tl.zeros((16, 16), tl.float16), out_dtype=tl.float16)",
                 DType::f32) ==
        "tl.dot's acc is <16x16xf16>, but a dot of float32 operands accumulates in float32");
  CHECK(dot_rule(DType::i8, "tl.dot(a, b, tl.zeros((16, 16), tl.float32))", DType::i32) ==
        "tl.dot's acc is <16x16xf32>, but a dot of int8 operands accumulates in int32");
}

TEST_CASE("dot dtypes: what Triton rejects is a compile error") {
  CHECK(dot_rule(DType::u8, "tl.dot(a, b)", DType::i32) ==
        "tl.dot of integers takes int8 operands only (as Triton), got uint8");
  CHECK(dot_rule(DType::i32, "tl.dot(a, b)", DType::i32) ==
        "tl.dot of integers takes int8 operands only (as Triton), got int32");
  CHECK(contains(dot_rule(DType::f16, "tl.dot(a, b, out_dtype=tl.bfloat16)", DType::bf16),
                 "out_dtype=bfloat16 is unsupported"));
  CHECK(dot_rule(DType::f16, "tl.dot(a, b, out_dtype=tl.int32)", DType::i32) ==
        "tl.dot of float16 operands accumulates in float16 or float32, not out_dtype=int32");
  CHECK(
      dot_rule(DType::f32, "tl.dot(a, b, input_precision='ieee', allow_tf32=False)", DType::f32) ==
      "tl.dot takes input_precision or allow_tf32 (deprecated), not both");
  CHECK(dot_rule(DType::i8, "tl.dot(a, b)", DType::i32, 16) ==
        "tl.dot of 8-bit operands needs K >= 32 (as Triton on NVIDIA), got <16x16xi8> and "
        "<16x16xi8>");
}

TEST_CASE("dot dtypes: a 3-D dot multiplies each batch on its own, with acc=") {
  kiln::Module m = dot_kernels();
  constexpr int B = 4, M = 16, N = 32, K = 16;
  const std::vector<float> a = values<float>(B * M * K, -8, 8, 7, 4),
                           b = values<float>(B * K * N, -8, 8, 11, 4);
  for (int twice : {0, 1}) {
    CAPTURE(twice);
    std::vector<float> c(B * M * N, -1.0f);
    m.kernel("batched_dot")[{1}](kiln::Tensor(const_cast<float *>(a.data()), kiln::DType::f32),
                                 kiln::Tensor(const_cast<float *>(b.data()), kiln::DType::f32),
                                 kiln::Tensor(c.data(), kiln::DType::f32), kiln::arg("B", B),
                                 kiln::arg("M", M), kiln::arg("N", N), kiln::arg("K", K),
                                 kiln::arg("TWICE", twice != 0));
    // Quarter-integers: every product and sum is exact in fp32.
    for (int t = 0; t < B; ++t)
      for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
          float want = 0;
          for (int k = 0; k < K; ++k)
            want += a[(t * M + i) * K + k] * b[(t * K + k) * N + j];
          REQUIRE(c[(t * M + i) * N + j] == (twice ? 2 : 1) * want);
        }
  }
  // Batches must agree, as Triton asserts.
  std::vector<float> c(B * M * N);
  CHECK_THROWS_WITH_AS(m.kernel("batched_dot_mismatch")[{1}](
                           kiln::Tensor(const_cast<float *>(a.data()), kiln::DType::f32),
                           kiln::Tensor(const_cast<float *>(b.data()), kiln::DType::f32),
                           kiln::Tensor(c.data(), kiln::DType::f32)),
                       doctest::Contains("tl.dot's batch dimensions differ"), kiln::CompileError);
}
