// The math functions of each target in LLVM IR: one element of an
// OpKind::Math op (a tl.math / libdevice function), and the plain calls of
// the target's math library that the shared lowering needs (erf, and on
// NVPTX pow and the fp64 transcendentals). The lowering asks its target
// which library it has (TargetLowering::math_library); nothing else names
// libm or libdevice functions.
//
// Precision. Both: LLVM intrinsics where the target has an instruction
// (trunc, rint, round, copysign, ctlz, ctpop, bitreverse). CPU: glibc's
// libm otherwise (tanhf, asinf, atan2f, lgammaf, ...; the JIT resolves them
// from the process, and LLVM may call libmvec's vector forms), which is
// within the few ulp libdevice documents; erfinv, sinpi and cospi, which
// libm lacks, are computed here in double (erfinv: Giles' approximation
// refined by two Newton steps on libm's erf). NVPTX: CUDA's libdevice
// functions (__nv_tanhf, ...), the same code Triton calls, linked into the
// module by nvptx/libdevice.hpp.
#pragma once

#include <string_view>
#include <vector>

#include <llvm/IR/IRBuilder.h>

#include "compiler/ir/math_fn.hpp"

namespace kiln::llvmgen {

enum class MathLibrary : unsigned char {
  Libm,      ///< the host's C library: tanhf / tanh
  Libdevice, ///< CUDA's libdevice: __nv_tanhf / __nv_tanh
};

/// `fn` of `args` (registers: f16/bf16/fp8 as float, unrounded on return;
/// the caller rounds to the element type). Results of MathResult::Int32
/// functions are i32.
llvm::Value *emit_math(llvm::IRBuilder<> &b, MathLibrary lib, ir::MathFn fn,
                       const std::vector<llvm::Value *> &args);

/// A call of the library's function `name` (C's name for double: "erf",
/// "pow"), in the float or double form by the type of args[0]; the call
/// reads no memory, so LLVM may hoist, vectorize or drop it.
llvm::Value *call_math_library(llvm::IRBuilder<> &b, MathLibrary lib, std::string_view name,
                               const std::vector<llvm::Value *> &args);

} // namespace kiln::llvmgen
