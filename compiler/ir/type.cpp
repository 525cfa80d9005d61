#include "compiler/ir/type.hpp"

namespace kiln::ir {

int64_t Type::numel() const {
  int64_t n = 1;
  for (int d = 0; d < rank; ++d)
    n *= shape[d];
  return n;
}

Type Type::with_shape(const int64_t *dims, int n) const {
  Type t = element();
  t.rank = static_cast<uint8_t>(n);
  for (int d = 0; d < n; ++d)
    t.shape[d] = dims[d];
  return t;
}

bool Type::same_shape(const Type &o) const {
  if (rank != o.rank)
    return false;
  for (int d = 0; d < rank; ++d)
    if (shape[d] != o.shape[d])
      return false;
  return true;
}

std::string Type::str() const {
  std::string e(dtype_short_name(elem));
  if (pointer)
    e = "ptr<" + e + ">";
  if (rank == 0)
    return e;
  std::string s = "<";
  for (int d = 0; d < rank; ++d)
    s += std::to_string(shape[d]) + "x";
  return s + e + ">";
}

int bit_width(const Type &t) {
  if (t.pointer)
    return 64;
  return t.elem == DType::i1 ? 1 : static_cast<int>(dtype_size(t.elem) * 8);
}

} // namespace kiln::ir
