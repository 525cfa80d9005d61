// Builtins no shared kernel uses, run on the CPU against C++ references.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include <kiln/kiln.hpp>

namespace {

const char *const kJoinSplit = R"(import triton
import triton.language as tl


@triton.jit
def interleave(a_ptr, b_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    ab = tl.join(a, b)
    pairs = offs[:, None] * 2 + tl.arange(0, 2)[None, :]
    tl.store(out_ptr + pairs, ab)


@triton.jit
def deinterleave(x_ptr, a_ptr, b_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    pairs = offs[:, None] * 2 + tl.arange(0, 2)[None, :]
    a, b = tl.split(tl.load(x_ptr + pairs))
    tl.store(a_ptr + offs, a)
    tl.store(b_ptr + offs, b)
)";

} // namespace

TEST_CASE("builtins: tl.join adds a last dim of two, tl.split takes it apart") {
  kiln::Module m = kiln::Module::from_string(kJoinSplit, "pairs.py");
  std::vector<float> a(16), b(16), out(32), a2(16), b2(16);
  for (int i = 0; i < 16; ++i) {
    a[i] = static_cast<float>(i);
    b[i] = i == 3 ? -0.0f : -static_cast<float>(i) - 0.5f;
  }
  m.kernel("interleave")[{1}](a.data(), b.data(), out.data(), kiln::arg("BLOCK", 16));
  for (int i = 0; i < 16; ++i) {
    CHECK(out[2 * i] == a[i]);
    CHECK(out[2 * i + 1] == b[i]);
  }
  m.kernel("deinterleave")[{1}](out.data(), a2.data(), b2.data(), kiln::arg("BLOCK", 16));
  CHECK(a2 == a);
  CHECK(b2 == b);
  CHECK(std::signbit(b2[3])); // -0.0 stays -0.0
}
