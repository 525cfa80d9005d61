// tl.philox and the tl.rand* family on the CPU, bit for bit against an
// independent Philox implementation below, which is itself checked against
// the known-answer vectors of the Random123 library (philox4x32_10).
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include <kiln/kiln.hpp>

namespace {

const char *const kRandom = R"(import triton
import triton.language as tl


@triton.jit
def philox_kernel(c_ptr, out_ptr, seed, N: tl.constexpr):
    offs = tl.arange(0, N)
    c0 = tl.load(c_ptr + offs * 4 + 0)
    c1 = tl.load(c_ptr + offs * 4 + 1)
    c2 = tl.load(c_ptr + offs * 4 + 2)
    c3 = tl.load(c_ptr + offs * 4 + 3)
    r0, r1, r2, r3 = tl.philox(seed, c0, c1, c2, c3)
    tl.store(out_ptr + offs * 4 + 0, r0)
    tl.store(out_ptr + offs * 4 + 1, r1)
    tl.store(out_ptr + offs * 4 + 2, r2)
    tl.store(out_ptr + offs * 4 + 3, r3)


@triton.jit
def random_kernel(ints_ptr, four_ptr, uni_ptr, norm_ptr, seed, N: tl.constexpr):
    offs = tl.program_id(0) * N + tl.arange(0, N)
    tl.store(ints_ptr + offs, tl.randint(seed, offs))
    a, b, c, d = tl.randint4x(seed, offs, n_rounds=7)
    tl.store(four_ptr + offs * 4 + 0, a)
    tl.store(four_ptr + offs * 4 + 1, b)
    tl.store(four_ptr + offs * 4 + 2, c)
    tl.store(four_ptr + offs * 4 + 3, d)
    tl.store(uni_ptr + offs, tl.rand(seed, offs))
    tl.store(norm_ptr + offs, tl.randn(seed, offs))


@triton.jit
def random64_kernel(ints_ptr, uni_ptr, seed, N: tl.constexpr):
    offs = tl.arange(0, N).to(tl.int64) + 4294967290
    tl.store(ints_ptr + tl.arange(0, N), tl.randint(seed, offs))
    tl.store(uni_ptr + tl.arange(0, N), tl.uint_to_uniform_float(tl.randint(seed, offs)))


@triton.jit
def dropout_kernel(x_ptr, out_ptr, n_elements, p, seed, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    random = tl.rand(seed, offsets)
    x_keep = random > p
    output = tl.where(x_keep, x / (1 - p), 0.0)
    tl.store(out_ptr + offsets, output, mask=mask)
)";

/// Philox-4xW-R: the round function and key schedule of Salmon et al.
template <class W> std::array<W, 4> philox_ref(std::array<W, 4> c, W k0, W k1, int rounds) {
  constexpr bool wide = sizeof(W) == 8;
  const W ma = wide ? W(0xD2E7470EE14C6C93ull) : W(0xD2511F53u);
  const W mb = wide ? W(0xCA5A826395121157ull) : W(0xCD9E8D57u);
  const W wa = wide ? W(0x9E3779B97F4A7C15ull) : W(0x9E3779B9u);
  const W wb = wide ? W(0xBB67AE8584CAA73Bull) : W(0xBB67AE85u);
  auto mulhilo = [](W a, W b, W &hi) {
    const unsigned __int128 p = static_cast<unsigned __int128>(a) * b;
    hi = static_cast<W>(p >> (8 * sizeof(W)));
    return static_cast<W>(p);
  };
  for (int r = 0; r < rounds; ++r) {
    W hi0, hi1;
    const W lo0 = mulhilo(ma, c[0], hi0), lo1 = mulhilo(mb, c[2], hi1);
    c = {static_cast<W>(hi1 ^ c[1] ^ k0), lo1, static_cast<W>(hi0 ^ c[3] ^ k1), lo0};
    k0 = static_cast<W>(k0 + wa);
    k1 = static_cast<W>(k1 + wb);
  }
  return c;
}

float uniform_ref(uint32_t x) {
  int32_t i = static_cast<int32_t>(x);
  if (i < 0)
    i = static_cast<int32_t>(-static_cast<int64_t>(i) - 1);
  return static_cast<float>(i) * 4.6566127342e-10f;
}

float uniform_ref64(uint64_t x) {
  int64_t i = static_cast<int64_t>(x);
  if (i < 0)
    i = -(i + 1);
  return static_cast<float>(i) * 1.0842020432385337e-19f;
}

} // namespace

TEST_CASE("random: the reference Philox gives Random123's known answers") {
  using A = std::array<uint32_t, 4>;
  CHECK(philox_ref<uint32_t>({0, 0, 0, 0}, 0, 0, 10) ==
        A{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8});
  CHECK(philox_ref<uint32_t>({~0u, ~0u, ~0u, ~0u}, ~0u, ~0u, 10) ==
        A{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd});
  CHECK(philox_ref<uint32_t>({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, 0xa4093822,
                             0x299f31d0, 10) == A{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1});
}

TEST_CASE("random: tl.philox is Philox-4x32-10 with the seed's halves as the key") {
  kiln::Module m = kiln::Module::from_string(kRandom, "random.py");
  constexpr int N = 4;
  std::vector<uint32_t> c = {0,          0,          0,          0,          ~0u, ~0u, ~0u, ~0u,
                             0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 1,   2,   3,   4};
  const uint64_t seeds[] = {0, 0xffffffffffffffffull, 0x299f31d0a4093822ull};
  std::vector<uint32_t> out(4 * N);
  m.kernel("philox_kernel")[{1}](c.data(), out.data(), static_cast<int64_t>(seeds[2]),
                                 kiln::arg("N", N));
  const std::array<uint32_t, 4> kat = {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1};
  for (int j = 0; j < 4; ++j)
    CHECK(out[2 * 4 + j] == kat[j]);
  for (uint64_t seed : seeds) {
    m.kernel("philox_kernel")[{1}](c.data(), out.data(), static_cast<int64_t>(seed),
                                   kiln::arg("N", N));
    for (int i = 0; i < N; ++i) {
      const auto want =
          philox_ref<uint32_t>({c[4 * i], c[4 * i + 1], c[4 * i + 2], c[4 * i + 3]},
                               static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32), 10);
      for (int j = 0; j < 4; ++j)
        CHECK(out[4 * i + j] == want[j]);
    }
  }
}

TEST_CASE("random: randint, randint4x(n_rounds=7), rand and randn per offset") {
  kiln::Module m = kiln::Module::from_string(kRandom, "random.py");
  constexpr int N = 128, P = 3;
  std::vector<uint32_t> ints(N * P), four(4 * N * P);
  std::vector<float> uni(N * P), norm(N * P);
  const int32_t seed = 1234;
  m.kernel("random_kernel")[{P}](ints.data(), four.data(), uni.data(), norm.data(), seed,
                                 kiln::arg("N", N));
  double mean = 0;
  for (uint32_t off = 0; off < N * P; ++off) {
    INFO("offset " << off);
    const auto r = philox_ref<uint32_t>({off, 0, 0, 0}, static_cast<uint32_t>(seed), 0, 10);
    CHECK(ints[off] == r[0]);
    const auto r7 = philox_ref<uint32_t>({off, 0, 0, 0}, static_cast<uint32_t>(seed), 0, 7);
    for (int j = 0; j < 4; ++j)
      CHECK(four[4 * off + j] == r7[j]);
    CHECK(uni[off] == uniform_ref(r[0]));
    CHECK(uni[off] >= 0.0f);
    CHECK(uni[off] < 1.0f);
    const float u1 = std::max(1.0e-7f, uniform_ref(r[0])), u2 = uniform_ref(r[1]);
    const float want = std::sqrt(-2.0f * std::log(u1)) * std::cos(6.283185307179586f * u2);
    CHECK(std::fabs(norm[off] - want) <= 1e-5f * (1.0f + std::fabs(want)));
    mean += uni[off];
  }
  mean /= N * P;
  CHECK(mean > 0.4);
  CHECK(mean < 0.6);
}

TEST_CASE("random: 64-bit offsets use Philox-4x64 with the seed as the key") {
  kiln::Module m = kiln::Module::from_string(kRandom, "random.py");
  constexpr int N = 16;
  std::vector<uint64_t> ints(N);
  std::vector<float> uni(N);
  const int64_t seed = 0x123456789abcdefll;
  m.kernel("random64_kernel")[{1}](ints.data(), uni.data(), seed, kiln::arg("N", N));
  for (int i = 0; i < N; ++i) {
    const uint64_t off = 4294967290ull + i;
    const auto r = philox_ref<uint64_t>({off, 0, 0, 0}, static_cast<uint64_t>(seed), 0, 10);
    CHECK(ints[i] == r[0]);
    CHECK(uni[i] == uniform_ref64(r[0]));
  }
}

TEST_CASE("random: the dropout tutorial kernel keeps what tl.rand says, scaled") {
  kiln::Module m = kiln::Module::from_string(kRandom, "random.py");
  constexpr int n = 1000, BLOCK = 256;
  std::vector<float> x(n), out(n);
  for (int i = 0; i < n; ++i)
    x[i] = 1.0f + static_cast<float>(i);
  const float p = 0.5f;
  const int32_t seed = 42;
  m.kernel("dropout_kernel")[{(n + BLOCK - 1) / BLOCK}](x.data(), out.data(), n, p, seed,
                                                        kiln::arg("BLOCK_SIZE", BLOCK));
  int kept = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const float r = uniform_ref(philox_ref<uint32_t>({i, 0, 0, 0}, 42, 0, 10)[0]);
    CHECK(out[i] == (r > p ? x[i] / (1 - p) : 0.0f));
    kept += r > p;
  }
  CHECK(kept > 400);
  CHECK(kept < 600);
}
