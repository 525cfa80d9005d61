// How tl.inline_asm_elementwise hands elements to its assembly, shared by
// the frontend (which checks the constraints against it) and the GPU
// lowering (which packs the registers): each call of the asm takes `pack`
// elements of every argument and gives `pack` of every result; elements
// narrower than 32 bits travel several to a register, as in Triton.
#pragma once

#include <algorithm>

#include "compiler/ir/type.hpp"

namespace kiln::ir {

/// Elements of `t` per asm register when an asm call takes `pack` of them.
inline int asm_elements_per_register(const Type &t, int pack) {
  const int bits = bit_width(t);
  return bits < 32 ? std::min(32 / bits, pack) : 1;
}

/// The asm operands (or results) `pack` elements of `t` take.
inline int asm_registers(const Type &t, int pack) {
  return pack / asm_elements_per_register(t, pack);
}

} // namespace kiln::ir
