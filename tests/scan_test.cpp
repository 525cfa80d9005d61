// tl.reduce and tl.associative_scan with jit combine functions (also over
// tuples), tl.sort, tl.flip, tl.gather, tl.histogram, tl.interleave and
// cumsum/cumprod(reverse=True) on the CPU against C++ references.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <numeric>
#include <vector>

#include <kiln/kiln.hpp>

#include "compiler/target.hpp"
#include "runtime/jit_function.hpp"

namespace {

const char *const kScan = R"(import triton
import triton.language as tl


@triton.jit
def _add(a, b):
    return a + b


@triton.jit
def _max_with_index(v1, i1, v2, i2):
    # Ties keep the lower index, as tl.argmax does.
    gt = (v1 > v2) | ((v1 == v2) & (i1 < i2))
    return tl.where(gt, v1, v2), tl.where(gt, i1, i2)


@triton.jit
def _linear(a1, b1, a2, b2):
    # x -> a2 * (a1 * x + b1) + b2: first-order recurrences as a scan.
    return a1 * a2, b1 * a2 + b2


@triton.jit
def reduce_rows(x_ptr, sum_ptr, max_ptr, arg_ptr, total_ptr, R: tl.constexpr, C: tl.constexpr):
    rows = tl.arange(0, R)
    cols = tl.arange(0, C)
    x = tl.load(x_ptr + rows[:, None] * C + cols[None, :])
    tl.store(sum_ptr + rows, tl.reduce(x, 1, _add))
    idx = tl.broadcast_to(cols[None, :], (R, C))
    v, i = tl.reduce((x, idx), axis=1, combine_fn=_max_with_index)
    tl.store(max_ptr + rows, v)
    tl.store(arg_ptr + rows, i)
    tl.store(total_ptr, tl.reduce(x, None, _add))
    col_sums = tl.reduce(x, 0, _add, keep_dims=True)
    tl.store(total_ptr + 1 + cols[None, :], col_sums)


@triton.jit
def scans(x_ptr, a_ptr, fwd_ptr, rev_ptr, rec_ptr, cs_ptr, cp_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    a = tl.load(a_ptr + offs)
    tl.store(fwd_ptr + offs, tl.associative_scan(x, 0, _add))
    tl.store(rev_ptr + offs, tl.associative_scan(x, 0, _add, reverse=True))
    _, h = tl.associative_scan((a, x), 0, _linear)
    tl.store(rec_ptr + offs, h)
    tl.store(cs_ptr + offs, tl.cumsum(x, 0, reverse=True))
    tl.store(cp_ptr + offs, tl.cumprod(a, axis=0, reverse=True))


@triton.jit
def sort_flip(x_ptr, asc_ptr, desc_ptr, flip_ptr, R: tl.constexpr, C: tl.constexpr):
    offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    x = tl.load(x_ptr + offs)
    tl.store(asc_ptr + offs, tl.sort(x))
    tl.store(desc_ptr + offs, tl.sort(x, descending=True))
    tl.store(flip_ptr + offs, tl.flip(x, 1))


@triton.jit
def gather_hist(x_ptr, idx_ptr, g_ptr, h_ptr, il_ptr, N: tl.constexpr, BINS: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    idx = tl.load(idx_ptr + offs)
    tl.store(g_ptr + offs, tl.gather(x, idx, 0))
    bins = tl.histogram(idx, BINS, mask=offs < N - 2)
    tl.store(h_ptr + tl.arange(0, BINS), bins)
    tl.store(il_ptr + tl.arange(0, 2 * N), tl.interleave(x, x * 2.0))


@triton.jit
def cat_topk_swizzle(x_ptr, cat_ptr, top_ptr, sw_ptr, N: tl.constexpr, K: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.store(cat_ptr + tl.arange(0, 2 * N), tl.cat(x, -x, can_reorder=True))
    tl.store(top_ptr + tl.arange(0, K), tl.topk(x, K))
    pid = tl.program_id(0)
    i, j = tl.swizzle2d(pid // 6, pid % 6, 5, 6, 2)
    tl.store(sw_ptr + pid * 2, i)
    tl.store(sw_ptr + pid * 2 + 1, j)


@triton.jit
def positional(x_ptr, xs_ptr, s_ptr, m_ptr, a_ptr, c_ptr):
    # keep_dims (and return_indices, reverse) by position, as lmdeploy's
    # bitonic sort calls tl.xor_sum(ix, axis, True).
    offs = tl.arange(0, 8)
    x = tl.load(x_ptr + offs)
    h = tl.reshape(x, [2, 2, 2])
    tl.store(xs_ptr + offs, tl.reshape(tl.broadcast_to(tl.xor_sum(h, 2, True), (2, 2, 2)), [8]))
    tl.store(s_ptr + offs, tl.reshape(tl.broadcast_to(h.sum(2, True), (2, 2, 2)), [8]))
    tl.store(m_ptr + offs, tl.reshape(tl.broadcast_to(tl.max(h, 2, False, True, True), (2, 2, 2)), [8]))
    tl.store(a_ptr + offs, tl.reshape(tl.broadcast_to(tl.argmax(h, 2, True, True), (2, 2, 2)), [8]))
    tl.store(c_ptr + offs, tl.cumsum(x, 0, True))


@triton.jit
def too_many(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 8))
    tl.store(x_ptr, tl.sum(x, 0, False, tl.int32, 5))
)";

} // namespace

TEST_CASE("scan: tl.reduce with a combine_fn, over one block, a tuple, and axis=None") {
  kiln::Module m = kiln::Module::from_string(kScan, "scan.py");
  constexpr int R = 4, C = 16;
  std::vector<int32_t> x(R * C), sums(R), maxs(R), args(R), total(1 + C);
  for (int i = 0; i < R * C; ++i)
    x[i] = (i * 37) % 23 - 11;
  x[2 * C + 5] = 40; // a tie in row 2: the first index wins
  x[2 * C + 9] = 40;
  m.kernel("reduce_rows")[{1}](x.data(), sums.data(), maxs.data(), args.data(), total.data(),
                               kiln::arg("R", R), kiln::arg("C", C));
  for (int r = 0; r < R; ++r) {
    const auto row = x.begin() + r * C;
    CHECK(sums[r] == std::accumulate(row, row + C, 0));
    CHECK(maxs[r] == *std::max_element(row, row + C));
    CHECK(args[r] == std::max_element(row, row + C) - row);
  }
  CHECK(args[2] == 5);
  CHECK(total[0] == std::accumulate(x.begin(), x.end(), 0));
  for (int c = 0; c < C; ++c) {
    int s = 0;
    for (int r = 0; r < R; ++r)
      s += x[r * C + c];
    CHECK(total[1 + c] == s);
  }
}

TEST_CASE("scan: tl.associative_scan forward, reverse, and a two-value recurrence, cumsum/cumprod "
          "reverse") {
  kiln::Module m = kiln::Module::from_string(kScan, "scan.py");
  constexpr int N = 32;
  std::vector<float> x(N), a(N), fwd(N), rev(N), rec(N), cs(N), cp(N);
  for (int i = 0; i < N; ++i) {
    x[i] = static_cast<float>(i % 5) - 1.5f;
    a[i] = 0.5f + 0.03125f * static_cast<float>(i % 4);
  }
  m.kernel("scans")[{1}](x.data(), a.data(), fwd.data(), rev.data(), rec.data(), cs.data(),
                         cp.data(), kiln::arg("N", N));
  double h = 0, run = 0;
  for (int i = 0; i < N; ++i) {
    run += x[i];
    h = a[i] * h + x[i];
    CHECK(fwd[i] == doctest::Approx(run));
    CHECK(rec[i] == doctest::Approx(h).epsilon(1e-5));
  }
  double back = 0, prod = 1;
  for (int i = N - 1; i >= 0; --i) {
    back += x[i];
    prod *= a[i];
    CHECK(rev[i] == doctest::Approx(back));
    CHECK(cs[i] == doctest::Approx(back));
    CHECK(cp[i] == doctest::Approx(prod).epsilon(1e-5));
  }
}

TEST_CASE("scan: tl.sort ascending and descending along the last dim, tl.flip") {
  kiln::Module m = kiln::Module::from_string(kScan, "scan.py");
  constexpr int R = 2, C = 64;
  std::vector<float> x(R * C), asc(R * C), desc(R * C), flip(R * C);
  for (int i = 0; i < R * C; ++i)
    x[i] = std::sin(static_cast<float>(i) * 1.7f) * 100.0f;
  m.kernel("sort_flip")[{1}](x.data(), asc.data(), desc.data(), flip.data(), kiln::arg("R", R),
                             kiln::arg("C", C));
  for (int r = 0; r < R; ++r) {
    std::vector<float> row(x.begin() + r * C, x.begin() + (r + 1) * C);
    std::vector<float> want = row;
    std::sort(want.begin(), want.end());
    CHECK(std::vector<float>(asc.begin() + r * C, asc.begin() + (r + 1) * C) == want);
    std::reverse(want.begin(), want.end());
    CHECK(std::vector<float>(desc.begin() + r * C, desc.begin() + (r + 1) * C) == want);
    std::reverse(row.begin(), row.end());
    CHECK(std::vector<float>(flip.begin() + r * C, flip.begin() + (r + 1) * C) == row);
  }
}

TEST_CASE("scan: tl.gather, tl.histogram with a mask, tl.interleave") {
  kiln::Module m = kiln::Module::from_string(kScan, "scan.py");
  constexpr int N = 16, BINS = 8;
  std::vector<float> x(N), g(N), il(2 * N);
  std::vector<int32_t> idx(N), h(BINS);
  for (int i = 0; i < N; ++i) {
    x[i] = 10.0f * static_cast<float>(i);
    idx[i] = (i * 5 + 3) % BINS;
  }
  m.kernel("gather_hist")[{1}](x.data(), idx.data(), g.data(), h.data(), il.data(),
                               kiln::arg("N", N), kiln::arg("BINS", BINS));
  std::vector<int32_t> want(BINS, 0);
  for (int i = 0; i < N; ++i) {
    CHECK(g[i] == x[idx[i]]);
    if (i < N - 2)
      ++want[idx[i]];
    CHECK(il[2 * i] == x[i]);
    CHECK(il[2 * i + 1] == 2.0f * x[i]);
  }
  CHECK(h == want);
}

TEST_CASE("scan: tl.cat, tl.topk and tl.swizzle2d") {
  kiln::Module m = kiln::Module::from_string(kScan, "scan.py");
  constexpr int N = 16, K = 4;
  std::vector<float> x(N), cat(2 * N), top(K);
  for (int i = 0; i < N; ++i)
    x[i] = static_cast<float>((i * 7) % 16) - 3.5f;
  std::vector<int32_t> sw(2 * 30);
  m.kernel("cat_topk_swizzle")[{30}](x.data(), cat.data(), top.data(), sw.data(), kiln::arg("N", N),
                                     kiln::arg("K", K));
  for (int i = 0; i < N; ++i) {
    CHECK(cat[i] == x[i]);
    CHECK(cat[N + i] == -x[i]);
  }
  std::vector<float> want = x;
  std::sort(want.begin(), want.end(), std::greater<float>());
  CHECK(top == std::vector<float>(want.begin(), want.begin() + K));
  // Triton's swizzle2d on a 5x6 grid with groups of 2 rows.
  for (int pid = 0; pid < 30; ++pid) {
    const int i = pid / 6, j = pid % 6, size_i = 5, size_j = 6, size_g = 2;
    const int ij = i * size_j + j, size_gj = size_g * size_j, off_i = ij / size_gj * size_g;
    const int rows = std::min(size_i - off_i, size_g), in_group = ij % size_gj;
    CHECK(sw[2 * pid] == off_i + in_group % rows);
    CHECK(sw[2 * pid + 1] == in_group / rows);
  }
}

TEST_CASE("scan: on the cuda target, a sort of a loaded block goes through shared memory") {
  // lang refused this on the GPU; main's layouts gather through shared memory.
  kiln::Module m = kiln::Module::from_string(kScan, "scan.py");
  const kiln::Arg p = kiln::Arg::mock(kiln::DType::f32);
  const std::vector<kiln::Arg> args = {p, p, p, p, kiln::arg("R", 2), kiln::arg("C", 64)};
  const kiln::CompiledKernel k =
      m.kernel("sort_flip").impl()->compile_only(args, kiln::compiler::Target::cuda(90));
  CHECK(k.stages.at("ptx").find(".shared") != std::string::npos);
}

TEST_CASE("scan: reductions and scans read keep_dims, return_indices and reverse by position, as "
          "Triton's signatures place them") {
  kiln::Module m = kiln::Module::from_string(kScan, "scan.py");
  const std::vector<int32_t> x = {1, 2, 4, 8, 16, 32, 64, 3};
  std::vector<int32_t> xs(8), s(8), mx(8), am(8), cs(8);
  m.kernel("positional")[{1}](x.data(), xs.data(), s.data(), mx.data(), am.data(), cs.data());
  int32_t suffix = 0;
  for (int i = 7; i >= 0; --i)
    cs[i] -= (suffix += x[i]); // reverse cumsum: each entry the sum from it to the end
  for (int i = 0; i < 8; ++i) {
    const int32_t a = x[i & ~1], b = x[i | 1]; // the pair along the innermost axis
    CHECK(xs[i] == (a ^ b));
    CHECK(s[i] == a + b);
    CHECK(mx[i] == std::max(a, b));
    CHECK(am[i] == (b > a ? 1 : 0));
    CHECK(cs[i] == 0);
  }
  std::vector<int32_t> y(8);
  CHECK_THROWS_WITH_AS(m.kernel("too_many")[{1}](y.data()),
                       doctest::Contains("tl.sum takes 4 arguments but 5 were given"),
                       kiln::CompileError);
}
