// tl.device_print in LLVM IR: one line per element of each printed value,
// as Triton prints them: `pid (x, y, z) idx (i, j) prefix value`. CPU:
// printf (resolved by the JIT from the process); NVPTX: CUDA's vprintf, each
// thread printing the elements it holds. Lines of concurrent programs
// interleave.
#pragma once

#include <array>
#include <functional>

#include <llvm/IR/IRBuilder.h>

#include "compiler/ir/ir.hpp"

namespace kiln::llvmgen {

using ElementIndex = std::array<llvm::Value *, ir::Type::kMaxRank>;
/// Runs the callback for the index of every element of the value that this
/// program (CPU) or thread (GPU: the elements it holds, each once) prints.
using ForEachElement =
    std::function<void(const ir::Value *, const std::function<void(const ElementIndex &)> &)>;
/// One element (a register value) of an IR value at an index.
using ElementAt = std::function<llvm::Value *(const ir::Value *, const ElementIndex &)>;

/// Lowers a Print op (operands: the values; str: the prefix; i: 1 for hex).
void emit_print(llvm::IRBuilder<> &b, const ir::Op &op, llvm::Value *const pid[3],
                const ForEachElement &each, const ElementAt &element, bool gpu);

} // namespace kiln::llvmgen
