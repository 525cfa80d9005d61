// Block pointers (carried through a loop with tl.advance, boundary_check,
// padding_option) and tensor descriptors on the CPU, against C++ references.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include <kiln/kiln.hpp>

namespace {

const char *const kBlockPtr = R"(import triton
import triton.language as tl


@triton.jit
def row_sums(x_ptr, out_ptr, M, N, stride_m, stride_n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    x_block = tl.make_block_ptr(base=x_ptr, shape=(M, N), strides=(stride_m, stride_n),
                                offsets=(pid * BLOCK_M, 0), block_shape=(BLOCK_M, BLOCK_N), order=(1, 0))
    acc = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for _ in range(0, tl.cdiv(N, BLOCK_N)):
        x = tl.load(x_block, boundary_check=(0, 1), padding_option="zero")
        acc += tl.sum(x, axis=1)
        x_block = tl.advance(x_block, (0, BLOCK_N))
    out_block = tl.make_block_ptr(out_ptr, (M,), (1,), (pid * BLOCK_M,), (BLOCK_M,), (0,))
    tl.store(out_block, acc, boundary_check=(0,))


@triton.jit
def nan_pad(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    b = tl.make_block_ptr(x_ptr, (n,), (1,), (0,), (BLOCK,), (0,))
    x = tl.load(b, boundary_check=(0,), padding_option="nan")
    tl.store(out_ptr + tl.arange(0, BLOCK), x)


@triton.jit
def copy_desc(x_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    src = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    dst = tl.make_tensor_descriptor(y_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    tile = src.load([pid_m * BLOCK_M, pid_n * BLOCK_N])
    dst.store([pid_m * BLOCK_M, pid_n * BLOCK_N], tile * 2.0 + 1.0)
)";

} // namespace

TEST_CASE("block_ptr: row sums through an advancing block pointer with boundary checks") {
  kiln::Module m = kiln::Module::from_string(kBlockPtr, "block_ptr.py");
  constexpr int M = 37, N = 50, BM = 16, BN = 16;
  std::vector<float> x(M * N), out(M + 8, -1.0f);
  for (int i = 0; i < M * N; ++i)
    x[i] = static_cast<float>(i % 13) - 6.0f;
  m.kernel("row_sums")[{(M + BM - 1) / BM}](x.data(), out.data(), M, N, N, 1,
                                            kiln::arg("BLOCK_M", BM), kiln::arg("BLOCK_N", BN));
  for (int r = 0; r < M; ++r) {
    float s = 0;
    for (int c = 0; c < N; ++c)
      s += x[r * N + c];
    CHECK(out[r] == doctest::Approx(s));
  }
  for (int r = M; r < M + 8; ++r)
    CHECK(out[r] == -1.0f); // boundary_check kept the store inside the rows
}

TEST_CASE("block_ptr: padding_option=\"nan\" fills what is out of bounds") {
  kiln::Module m = kiln::Module::from_string(kBlockPtr, "block_ptr.py");
  std::vector<float> x = {1, 2, 3, 4, 5}, out(8);
  m.kernel("nan_pad")[{1}](x.data(), out.data(), 5, kiln::arg("BLOCK", 8));
  for (int i = 0; i < 8; ++i) {
    if (i < 5)
      CHECK(out[i] == x[i]);
    else
      CHECK(std::isnan(out[i]));
  }
}

TEST_CASE("block_ptr: tensor descriptors load and store tiles, dropping what is out of bounds") {
  kiln::Module m = kiln::Module::from_string(kBlockPtr, "block_ptr.py");
  constexpr int M = 20, N = 24, BM = 8, BN = 16;
  std::vector<float> x(M * N), y(M * N + 16, -5.0f);
  for (int i = 0; i < M * N; ++i)
    x[i] = static_cast<float>(i);
  m.kernel("copy_desc")[{(M + BM - 1) / BM, (N + BN - 1) / BN}](
      x.data(), y.data(), M, N, kiln::arg("BLOCK_M", BM), kiln::arg("BLOCK_N", BN));
  for (int i = 0; i < M * N; ++i)
    CHECK(y[i] == 2.0f * x[i] + 1.0f);
  for (int i = M * N; i < M * N + 16; ++i)
    CHECK(y[i] == -5.0f);
}
