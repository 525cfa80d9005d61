// String and dtype constexprs, as real kernels take them
// (`ACTIVATION="leaky_relu"` in the matmul tutorial, `OUT_DTYPE=tl.float16`):
// from the C++ API, from module globals, in the launch key, and in the data
// a warmup file holds.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <kiln/kiln.hpp>

#include "tests/text_checks.hpp"

using kiln::test::contains;

namespace {

const char *const kActivations = R"(import triton
import triton.language as tl

ACC_DTYPE = tl.constexpr(tl.float32)


@triton.jit
def leaky_relu(x):
    return tl.where(x >= 0, x, 0.01 * x)


@triton.jit
def act_kernel(x_ptr, out_ptr, n, ACTIVATION: tl.constexpr, OUT_DTYPE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(ACC_DTYPE)
    if ACTIVATION == "leaky_relu":
        x = leaky_relu(x)
    elif ACTIVATION == "relu":
        x = tl.maximum(x, 0.0)
    tl.store(out_ptr + offs, x.to(OUT_DTYPE), mask=mask)
)";

float half_to_float(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  uint32_t bits = sign;
  if (exp != 0)
    bits |= ((exp + 112) << 23) | (man << 13);
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f; // no subnormals or infinities in this test's values
}

} // namespace

TEST_CASE("constexpr values: a string constexpr picks the code path, a dtype constexpr the output type") {
  kiln::Module m = kiln::Module::from_string(kActivations, "act.py");
  kiln::Kernel k = m.kernel("act_kernel");
  const std::vector<float> x{-2.0f, -0.5f, 0.0f, 1.5f};
  std::vector<float> out(4);
  kiln::LaunchResult r = k[{1}](x.data(), out.data(), 4, kiln::arg("ACTIVATION", "leaky_relu"),
                                kiln::arg("OUT_DTYPE", kiln::DType::f32), kiln::arg("BLOCK", 4));
  REQUIRE(r.kernel);
  CHECK(contains(r.kernel->specialization, "ACTIVATION: constexpr='leaky_relu'"));
  CHECK(contains(r.kernel->specialization, "OUT_DTYPE: constexpr=fp32"));
  CHECK(out == std::vector<float>{-0.02f, -0.005f, 0.0f, 1.5f});

  std::vector<uint16_t> half(4);
  kiln::LaunchResult h = k[{1}](x.data(), kiln::Tensor(half.data(), kiln::DType::f16), 4,
                                kiln::arg("ACTIVATION", "relu"), kiln::arg("OUT_DTYPE", kiln::DType::f16),
                                kiln::arg("BLOCK", 4));
  REQUIRE(h.kernel);
  CHECK(h.kernel != r.kernel);
  CHECK(half_to_float(half[0]) == 0.0f);
  CHECK(half_to_float(half[3]) == 1.5f);
}

TEST_CASE("constexpr values: equal strings hit the cache, different ones compile anew") {
  kiln::Module m = kiln::Module::from_string(kActivations, "act.py");
  kiln::Kernel k = m.kernel("act_kernel");
  const std::vector<float> x{-1.0f};
  std::vector<float> out(1);
  const std::string a = "relu", b = std::string("re") + "lu"; // same text, other storage
  kiln::LaunchResult first = k[{1}](x.data(), out.data(), 1, kiln::arg("ACTIVATION", a.c_str()),
                                    kiln::arg("OUT_DTYPE", kiln::DType::f32), kiln::arg("BLOCK", 1));
  kiln::LaunchResult again = k[{1}](x.data(), out.data(), 1, kiln::arg("ACTIVATION", b.c_str()),
                                    kiln::arg("OUT_DTYPE", kiln::DType::f32), kiln::arg("BLOCK", 1));
  CHECK(again.source == kiln::BinarySource::memory);
  CHECK(again.kernel == first.kernel);
  kiln::LaunchResult other = k[{1}](x.data(), out.data(), 1, kiln::arg("ACTIVATION", "none"),
                                    kiln::arg("OUT_DTYPE", kiln::DType::f32), kiln::arg("BLOCK", 1));
  CHECK(other.kernel != first.kernel);
  CHECK(out[0] == -1.0f);
}

TEST_CASE("constexpr values: strings and dtypes round-trip through the specialization data") {
  kiln::Module m = kiln::Module::from_string(kActivations, "act.py");
  kiln::Kernel k = m.kernel("act_kernel");
  kiln::LaunchResult r = k.warmup_with(kiln::Arg::mock(kiln::DType::f32), kiln::Arg::mock(kiln::DType::f16), 8,
                                       kiln::arg("ACTIVATION", "relu"), kiln::arg("OUT_DTYPE", kiln::DType::f16),
                                       kiln::arg("BLOCK", 8));
  REQUIRE(r.kernel);
  const std::string data = k.serialize_specialization_data(r);
  CHECK(contains(data, "\"relu\""));
  CHECK(contains(data, "\"tl.float16\""));
  kiln::LaunchResult back = k.preload(data);
  REQUIRE(back.kernel);
  CHECK(back.kernel->specialization == r.kernel->specialization);
}

TEST_CASE("constexpr values: a dtype constexpr's .value and comparisons pick code at compile time") {
  // As FlagGems' limits helpers write it.
  kiln::Module m = kiln::Module::from_string(R"(import triton
import triton.language as tl


@triton.jit
def lowest(dtype):
    if dtype.value == tl.float16:
        return -65504.0
    else:
        return -3.4028234663852886e38


@triton.jit
def fill_lowest(out_ptr, DTYPE: tl.constexpr):
    tl.store(out_ptr, lowest(DTYPE))
)",
                                             "limits.py");
  float v = 0;
  m.kernel("fill_lowest")[{1}](&v, kiln::arg("DTYPE", kiln::DType::f16));
  CHECK(v == -65504.0f);
  m.kernel("fill_lowest")[{1}](&v, kiln::arg("DTYPE", kiln::DType::f32));
  CHECK(v == std::numeric_limits<float>::lowest());
}

TEST_CASE("constexpr values: tuple arguments specialize element by element, nested and as constexprs") {
  kiln::Module m = kiln::Module::from_string(R"(import triton
import triton.language as tl


@triton.jit
def axpy_pairs(ptrs, sizes, scale, SHAPE: tl.constexpr):
    x_ptr, (out_ptr, bias) = ptrs
    n = sizes[0]
    offs = tl.arange(0, SHAPE[0] * SHAPE[1])
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * scale + bias + len(SHAPE), mask=mask)
)",
                                             "tuples.py");
  kiln::Kernel k = m.kernel("axpy_pairs");
  std::vector<float> x(10), out(10, -1.0f);
  for (int i = 0; i < 10; ++i)
    x[i] = static_cast<float>(i);
  kiln::LaunchResult r = k[{1}](kiln::tuple(x.data(), kiln::tuple(out.data(), 0.5f)), kiln::tuple(10), 2.0f,
                                kiln::arg("SHAPE", kiln::tuple(4, 4)));
  REQUIRE(r.kernel);
  CHECK(contains(r.kernel->specialization, "ptrs: (*fp32:D, (*fp32:D, fp32))"));
  CHECK(contains(r.kernel->specialization, "sizes: (i32,)"));
  CHECK(contains(r.kernel->specialization, "SHAPE: (constexpr=4, constexpr=4)"));
  REQUIRE(r.kernel->params.size() == 5); // x_ptr, out_ptr, bias, n, scale
  CHECK(r.kernel->params[1].name == "ptrs.1.0");
  for (int i = 0; i < 10; ++i)
    CHECK(out[i] == 2.0f * i + 0.5f + 2.0f);
  // An element equal to 1 is a constexpr, as for a plain parameter: a new key.
  kiln::LaunchResult one = k[{1}](kiln::tuple(x.data(), kiln::tuple(out.data(), 0.5f)), kiln::tuple(1), 2.0f,
                                  kiln::arg("SHAPE", kiln::tuple(4, 4)));
  CHECK(contains(one.kernel->specialization, "sizes: (constexpr=1,)"));
  CHECK(one.kernel != r.kernel);
  CHECK(out[0] == 2.5f);
}

TEST_CASE("constexpr values: tuple specializations round-trip through serialize/preload") {
  const char *source = R"(import triton
import triton.language as tl


@triton.jit
def k(ptrs, n):
    tl.store(ptrs[0], n)
)";
  kiln::Module m = kiln::Module::from_string(source, "tuple_json.py");
  kiln::Kernel k = m.kernel("k");
  kiln::LaunchResult r = k.warmup_with(kiln::tuple(kiln::Arg::mock(kiln::DType::i32)), 5);
  REQUIRE(r.kernel);
  const std::string data = k.serialize_specialization_data(r);
  CHECK(contains(data, "[\"*i32:D\"]"));
  // A fresh module of the same source compiles the same key from the data.
  kiln::Module again = kiln::Module::from_string(source, "tuple_json.py");
  kiln::LaunchResult p = again.kernel("k").preload(data);
  REQUIRE(p.kernel);
  CHECK(p.kernel->key == r.kernel->key);
  CHECK(p.kernel->specialization == r.kernel->specialization);
}
