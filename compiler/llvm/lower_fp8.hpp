// The fp8 element types in LLVM IR: in memory one byte, in registers a
// float (as f16 and bf16 are), converted at loads, stores and casts.
// Float to fp8 rounds to nearest even and saturates to the largest finite
// value (PTX's cvt.rn.satfinite, which Triton uses on sm_90); NaN stays NaN
// (f8e4b15, which has none, gets its largest value).
#pragma once

#include <llvm/IR/IRBuilder.h>

#include "kiln/dtype.hpp"

namespace kiln::llvmgen {

/// An i8 holding an fp8 of type `t` to the float it is (exact).
llvm::Value *fp8_to_float(llvm::IRBuilder<> &b, llvm::Value *byte, DType t);
/// A float to the i8 encoding of the nearest fp8 of type `t`.
llvm::Value *float_to_fp8(llvm::IRBuilder<> &b, llvm::Value *f, DType t);
/// The value of fp8 code `byte` of type `t` (the decoding table's entry).
float fp8_value(uint8_t byte, DType t);

} // namespace kiln::llvmgen
