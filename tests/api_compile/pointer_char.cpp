// Must not compile: `char *` is neither a string constexpr (const char *) nor an element type.
#include "kiln/kiln.hpp"
void launch(const kiln::Kernel &k, char *x) {
  k[{1}](x);
}
