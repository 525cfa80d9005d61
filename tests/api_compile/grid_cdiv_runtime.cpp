// Must compile without narrowing errors: the README's grid with a runtime int64 n.
#include "kiln/kiln.hpp"
#include <cstdint>
void launch(const kiln::Kernel &add, float *x, float *y, float *out, int64_t n) {
  add[{kiln::cdiv(n, 1024)}](x, y, out, n, kiln::arg("BLOCK", 1024));
  auto L = add[{kiln::cdiv(n, 1024), 1}];
  L(x, y, out, n);
}
