// Must not compile: `long long` has no kiln::DType (int64_t is `long` here).
#include "kiln/kiln.hpp"
void launch(const kiln::Kernel &k, long long *x) {
  k[{1}](x);
}
