// The CPU backend's lowering: tile IR to LLVM IR for the host.
//
// A program (one grid point) is one call of `<kernel>.program`; the entry
// `<kernel>(void **args, const uint32_t grid[3], uint64_t begin, uint64_t end)`
// runs the programs with linear ids in [begin, end), so the driver can hand
// chunks of the grid to oneTBB. `args[i]` points at the i-th runtime
// parameter's value, as cuLaunchKernel's kernelParams do.
//
// Block values are either materialized (a row-major array in the program's
// stack frame) or lazy: pure elementwise, shape and creation ops are
// recomputed per element inside the loop of whoever consumes them, so that
// `x_ptr + pid * BLOCK + tl.arange(0, BLOCK)` stays an address expression
// LLVM sees as contiguous and vectorizes (Triton's "values that depend only
// on arange/program_id/scalars can be recomputed for free").
#pragma once

#include <memory>

#include "compiler/ir/ir.hpp"
#include "kiln/options.hpp"

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace kiln::cpu {

/// Lowers `program` into a new module of `ctx`. The kernel's entry symbol is
/// the kernel's name.
std::unique_ptr<llvm::Module> lower_to_llvm(const ir::Program &program, const Options &options,
                                            llvm::LLVMContext &ctx);

} // namespace kiln::cpu
