// Tensor descriptors made on the host (kiln::TensorDescriptor, Triton's
// triton.tools.tensor_descriptor.TensorDescriptor) passed to kernels, on the
// CPU against C++ references: loads and stores of blocks, zero and NaN
// padding, the launch key, warmup records, and the checks Triton makes.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include <kiln/kiln.hpp>

namespace {

// Written as a user's file is: torch on the host, a wrapper that builds the
// descriptors, a kernel that only sees them.
const char *const kSource = R"(import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor


@triton.jit
def matmul_desc_kernel(a_desc, b_desc, c_desc, M, N, K,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # b_desc holds B transposed ([N, K]), as tutorial 09 keeps it; a 1-D grid.
    pid = tl.program_id(0)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    off_m = (pid // num_pid_n) * BLOCK_M
    off_n = (pid % num_pid_n) * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BLOCK_K)):
        a = a_desc.load([off_m, k * BLOCK_K])
        bt = b_desc.load([off_n, k * BLOCK_K])
        acc = tl.dot(a, bt.T, acc)
    c_desc.store([off_m, off_n], acc.to(c_desc.dtype))


def matmul(a, b):
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    a_desc = TensorDescriptor.from_tensor(a, [16, 32])
    b_desc = TensorDescriptor.from_tensor(b.T.contiguous(), [16, 32])
    c_desc = TensorDescriptor.from_tensor(c, [16, 16])
    grid = (triton.cdiv(M, 16) * triton.cdiv(N, 16),)
    matmul_desc_kernel[grid](a_desc, b_desc, c_desc, M, N, K, 16, 16, 32)
    return c


@triton.jit
def first_block(x_desc, out_ptr, n_out_ptr, BLOCK: tl.constexpr):
    tl.store(out_ptr + tl.arange(0, BLOCK), x_desc.load([0]))
    tl.store(n_out_ptr, x_desc.shape[0])


@triton.jit
def in_kernel_nan(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    d = tl.make_tensor_descriptor(x_ptr, [n], [1], [BLOCK], padding_option="nan")
    tl.store(out_ptr + tl.arange(0, BLOCK), d.load([0]))


@triton.jit
def as_pointer(x_desc, out_ptr):
    tl.store(out_ptr, tl.load(x_desc))
)";

kiln::Module module() {
  return kiln::Module::from_string(kSource, "descriptors.py");
}

using Padding = kiln::TensorDescriptor::Padding;

} // namespace

TEST_CASE("tensor descriptors: a matmul through host descriptors, ragged on every dim") {
  constexpr int M = 40, N = 36, K = 68; // none a multiple of its block
  std::vector<float> a(M * K), bt(N * K), c(M * N, -7.0f);
  for (int i = 0; i < M * K; ++i)
    a[i] = static_cast<float>(i % 7) - 3.0f;
  for (int i = 0; i < N * K; ++i)
    bt[i] = static_cast<float>(i % 5) * 0.5f;
  const kiln::TensorDescriptor ad =
      kiln::TensorDescriptor::from_tensor(kiln::Tensor(a.data(), {M, K}), {16, 32});
  const kiln::TensorDescriptor bd =
      kiln::TensorDescriptor::from_tensor(kiln::Tensor(bt.data(), {N, K}), {16, 32});
  const kiln::TensorDescriptor cd =
      kiln::TensorDescriptor::from_tensor(kiln::Tensor(c.data(), {M, N}), {16, 16});
  const kiln::Module m = module(); // owns the compiled kernel r points to
  const kiln::LaunchResult r =
      m.kernel("matmul_desc_kernel")[{9}](ad, bd, cd, M, N, K, kiln::arg("BLOCK_M", 16),
                                          kiln::arg("BLOCK_N", 16), kiln::arg("BLOCK_K", 32));
  REQUIRE(r.kernel != nullptr);
  CHECK(kiln::Kernel::repr(*r.kernel).find("a_desc: tensordesc<fp32[16, 32]>") !=
        std::string::npos);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float want = 0;
      for (int k = 0; k < K; ++k)
        want += a[i * K + k] * bt[j * K + k];
      CHECK(c[i * N + j] == doctest::Approx(want));
    }
}

TEST_CASE("tensor descriptors: zero and NaN padding, the shape in the kernel") {
  kiln::Module m = module();
  std::array<float, 16> x{}, out{};
  int64_t n_out = 0;
  for (int i = 0; i < 10; ++i)
    x[i] = static_cast<float>(i + 1);
  const std::array<int64_t, 1> shape{10}, strides{1}, block{16};
  for (Padding p : {Padding::zero, Padding::nan}) {
    const kiln::TensorDescriptor d(kiln::Tensor(x.data(), {16}), shape, strides, block, p);
    m.kernel("first_block")[{1}](d, out.data(), &n_out, kiln::arg("BLOCK", 16));
    for (int i = 0; i < 10; ++i)
      CHECK(out[i] == x[i]);
    for (int i = 10; i < 16; ++i)
      CHECK((p == Padding::nan ? std::isnan(out[i]) : out[i] == 0.0f));
    CHECK(n_out == 10);
  }
  // The in-kernel descriptor's padding_option="nan" (once read and ignored).
  out.fill(1.0f);
  m.kernel("in_kernel_nan")[{1}](x.data(), out.data(), 10, kiln::arg("BLOCK", 16));
  CHECK(out[9] == 10.0f);
  CHECK(std::isnan(out[10]));
}

TEST_CASE("tensor descriptors: block shape, dtype and the D of shapes and strides key the binary, "
          "the values do not") {
  kiln::Module m = module();
  kiln::Kernel k = m.kernel("first_block");
  std::array<float, 64> x{}, out{};
  std::array<double, 64> xd{};
  int64_t n_out = 0;
  auto launch = [&](const kiln::TensorDescriptor &d, int block) {
    return k[{1}](d, out.data(), &n_out, kiln::arg("BLOCK", block));
  };
  using S = kiln::BinarySource;
  const kiln::LaunchResult first =
      launch(kiln::TensorDescriptor::from_tensor(kiln::Tensor(x.data(), {64}), {16}), 16);
  CHECK(first.source == S::compiled);
  CHECK(kiln::Kernel::repr(*first.kernel).find("x_desc: tensordesc<fp32[16]>:D") !=
        std::string::npos);
  // Another multiple of 16 is the same binary; 40 is not a multiple (its
  // bounds mask is not uniform over a 16-byte vector), so another binary.
  CHECK(
      launch(kiln::TensorDescriptor::from_tensor(kiln::Tensor(x.data(), {48}), {16}), 16).source ==
      S::memory);
  const kiln::LaunchResult ragged =
      launch(kiln::TensorDescriptor::from_tensor(kiln::Tensor(x.data(), {40}), {16}), 16);
  CHECK(ragged.source == S::compiled);
  CHECK(kiln::Kernel::repr(*ragged.kernel).find("x_desc: tensordesc<fp32[16]>,") !=
        std::string::npos);
  CHECK(
      launch(kiln::TensorDescriptor::from_tensor(kiln::Tensor(x.data(), {24}), {16}), 16).source ==
      S::memory);
  CHECK(
      launch(kiln::TensorDescriptor::from_tensor(kiln::Tensor(x.data(), {64}), {32}), 32).source ==
      S::compiled);
  const std::array<int64_t, 1> shape{64}, strides{1}, block{16};
  CHECK(launch(kiln::TensorDescriptor(kiln::Tensor(x.data(), {64}), shape, strides, block,
                                      Padding::nan),
               16)
            .source == S::compiled);
  CHECK(
      launch(kiln::TensorDescriptor::from_tensor(kiln::Tensor(xd.data(), {64}), {16}), 16).source ==
      S::compiled);
}

TEST_CASE("tensor descriptors: a 2-D descriptor's D is per shape dim and leading stride") {
  kiln::Module m = module();
  kiln::Kernel k = m.kernel("matmul_desc_kernel");
  // Specializations as warmup records write them: each spelling compiles
  // its own binary and round-trips through the record.
  std::vector<std::string> keys;
  for (const char *a : {"tensordesc<fp16[16, 32]>", "tensordesc<fp16[16, 32]>:D",
                        "tensordesc<fp16[16, 32]>:D_D", "tensordesc<fp16[16, 32]>:DD_"}) {
    const std::string record =
        std::string(R"({"kernel": "matmul_desc_kernel", "args": {"a_desc": ")") + a +
        R"(", "b_desc": "tensordesc<fp16[16, 32]>:D",
        "c_desc": "tensordesc<fp32[16, 16]>:D", "M": "i32", "N": "i32", "K": "i32",
        "BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 32}})";
    const kiln::LaunchResult r = k.preload(record);
    REQUIRE(r.kernel != nullptr);
    CHECK(kiln::Kernel::repr(*r.kernel).find(std::string("a_desc: ") + a + ",") !=
          std::string::npos);
    const kiln::LaunchResult again = k.preload(k.serialize_specialization_data(r));
    REQUIRE(again.kernel != nullptr);
    CHECK(again.kernel->key == r.kernel->key);
    keys.push_back(r.kernel->key);
  }
  std::sort(keys.begin(), keys.end());
  CHECK(std::unique(keys.begin(), keys.end()) == keys.end());
  for (const char *bad :
       {"tensordesc<fp16[16, 32]>:DX_", "tensordesc<fp16[16, 32]>:DD", "tensordesc<fp16[16, 32]>D"})
    CHECK_THROWS_WITH_AS(
        k.preload(std::string(R"({"kernel": "matmul_desc_kernel", "args": {"a_desc": ")") + bad +
                  R"("}})"),
        doctest::Contains("a D or _ for each of its 2 shape dims"), kiln::ArgumentError);
  // A stride of a 1-byte dtype is a multiple of 16 bytes, so of 16 elements.
  CHECK_THROWS_WITH_AS(
      k.preload(
          R"({"kernel": "matmul_desc_kernel", "args": {"a_desc": "tensordesc<fp8e4nv[16, 32]>:DD_"}})"),
      doctest::Contains("write D for it"), kiln::ArgumentError);
}

TEST_CASE("tensor descriptors: warmup records round-trip the descriptor type") {
  kiln::Module m = module();
  kiln::Kernel k = m.kernel("matmul_desc_kernel");
  std::vector<kiln::Arg> args;
  const kiln::LaunchResult r = k.preload(
      R"({"kernel": "matmul_desc_kernel", "args": {"a_desc": "tensordesc<fp16[16, 32]>",
          "b_desc": "tensordesc<fp16[16, 32]>", "c_desc": "tensordesc<fp32[16, 16],nan>",
          "M": "i32", "N": "i32", "K": "i32", "BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 32}})");
  REQUIRE(r.kernel != nullptr);
  const std::string data = k.serialize_specialization_data(r);
  CHECK(data.find("\"tensordesc<fp32[16, 16],nan>\"") != std::string::npos);
  const kiln::LaunchResult again = k.preload(data);
  REQUIRE(again.kernel != nullptr);
  CHECK(again.kernel->key == r.kernel->key);
  CHECK_THROWS_WITH_AS(
      k.preload(
          R"({"kernel": "matmul_desc_kernel", "args": {"a_desc": "tensordesc<fp16[16 32]>"}})"),
      doctest::Contains("not a descriptor type"), kiln::ArgumentError);
}

TEST_CASE("tensor descriptors: what Triton refuses is refused with its reason") {
  alignas(16) std::array<float, 256> x{};
  const kiln::Tensor t(x.data(), {16, 16});
  auto make = [&](const kiln::Tensor &base, std::vector<int64_t> shape,
                  std::vector<int64_t> strides, std::vector<int64_t> block,
                  Padding p = Padding::zero) {
    return kiln::TensorDescriptor(base, shape, strides, block, p);
  };
  using kiln::ArgumentError;
  CHECK_THROWS_WITH_AS(make(kiln::Tensor(x.data() + 1, kiln::DType::f32), {15}, {1}, {16}),
                       doctest::Contains("16-byte aligned"), ArgumentError);
  CHECK_THROWS_WITH_AS(make(t, {16, 15}, {15, 1}, {16, 16}),
                       doctest::Contains("multiples of 16 bytes"), ArgumentError);
  CHECK_THROWS_WITH_AS(make(t, {16, 16}, {16, 2}, {16, 16}), doctest::Contains("contiguous"),
                       ArgumentError);
  CHECK_THROWS_WITH_AS(make(t, {16, 16}, {16, 1}, {16, 12}), doctest::Contains("powers of two"),
                       ArgumentError);
  CHECK_THROWS_WITH_AS(make(t, {16}, {16, 1}, {16}), doctest::Contains("one entry per dim"),
                       ArgumentError);
  std::array<int32_t, 16> ints{};
  CHECK_THROWS_WITH_AS(make(kiln::Tensor(ints.data(), {16}), {16}, {1}, {16}, Padding::nan),
                       doctest::Contains("floating-point"), ArgumentError);
  CHECK_THROWS_WITH_AS(
      kiln::TensorDescriptor::from_tensor(kiln::Tensor(x.data(), kiln::DType::f32), {16}),
      doctest::Contains("with a shape"), ArgumentError);

  // A kernel that uses a descriptor as a pointer fails to compile, naming it.
  kiln::Module m = module();
  float out = 0;
  const kiln::TensorDescriptor d = kiln::TensorDescriptor::from_tensor(t, {16, 16});
  CHECK_THROWS_AS(m.kernel("as_pointer")[{1}](d, &out), kiln::CompileError);
}
