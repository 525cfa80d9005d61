// One element of an OpKind::Math op (a tl.math / libdevice function) in LLVM
// IR, for the CPU and for NVPTX.
//
// Precision. CPU: LLVM intrinsics where the target has an instruction
// (trunc, rint, round, copysign, ctlz, ctpop, bitreverse) and glibc's libm
// otherwise (tanhf, asinf, atan2f, lgammaf, ...; the JIT resolves them from
// the process, and LLVM may call libmvec's vector forms), which is within
// the few ulp libdevice documents; erfinv, sinpi and cospi, which libm
// lacks, are computed here in double (erfinv: Giles' approximation refined
// by two Newton steps on libm's erf). NVPTX: CUDA's libdevice functions
// (__nv_tanhf, ...), the same code Triton calls, linked into the module by
// nvptx/libdevice.hpp.
#pragma once

#include <vector>

#include <llvm/IR/IRBuilder.h>

#include "compiler/ir/math_fn.hpp"

namespace kiln::llvmgen {

/// `fn` of `args` (registers: f16/bf16 as float, unrounded on return; the
/// caller rounds to the element type). Results of MathResult::Int32
/// functions are i32.
llvm::Value *emit_math(llvm::IRBuilder<> &b, bool gpu, ir::MathFn fn,
                       const std::vector<llvm::Value *> &args);

} // namespace kiln::llvmgen
