// Tile IR to LLVM IR, for the host CPU and for NVPTX. The two share every
// scalar operation and the treatment of block values; they differ in who
// computes which element and in how programs start.
//
// Block values are either materialized (an array) or lazy: pure elementwise,
// shape and creation ops are recomputed per element inside the loop of
// whoever consumes them, so that `x_ptr + pid * BLOCK + tl.arange(0, BLOCK)`
// stays an address expression LLVM sees as contiguous (Triton's "values that
// depend only on arange/program_id/scalars can be recomputed for free").
//
// CPU: one program is one call of `<kernel>.program`; the entry
// `<kernel>(void **args, const uint32_t grid[3], uint64_t begin, uint64_t end,
// void *scratch)` runs the programs with linear ids in [begin, end), so the
// driver can hand chunks of the grid to oneTBB. `args[i]` points at the i-th runtime
// parameter's value, as cuLaunchKernel's kernelParams do; args[n] (after the
// n parameters) points at a {int32 failed; int32 out_of_bounds; const char
// *message; int64 offset, extent; const int64 *extents} record that a failed
// device_assert fills (debug builds), or, in debug builds, a load or store
// outside the tensor its pointer parameter came from (extents[i]: the size
// of parameter i's tensor in bytes, -1 when the launch does not know it). A block is a
// row-major array: in the program's stack frame when small, else at a fixed
// offset of `scratch` (LoweringResult::scratch_bytes per program, 64-byte
// aligned, owned by the calling worker thread and reused by its programs);
// each op is a loop LLVM vectorizes.
//
// NVPTX: one program is one CTA of num_warps * 32 threads; the kernel takes
// the runtime parameters directly; in debug builds n int64 sizes in bytes of
// the parameters' tensors (-1: unknown) follow them, then a pointer to a
// device record {int32 claimed; int32 argument; int32 line; int32 is_store;
// int64 offset, extent} that the first load or store outside its tensor
// fills (claimed by atom.exch) and the driver reads after the launch. A
// layout pass (gpu/layout_plan.hpp) gives every block value a layout (which
// thread and register slot holds which element, gpu/layout.hpp); a consumer
// reads a held value in place when the layouts agree and converts it through
// shared memory when they do not. Reductions go through warp shuffles, then
// shared memory across warps; scans through shfl.up; tl.dot on tensor cores
// (mma.sync with ldmatrix from swizzled shared memory, wgmma on sm_90) or,
// where they do not apply, with FMAs.
//
// The code lives in llvm/lowering.hpp and the files it lists; what differs
// between targets is a TargetLowering (llvm/target_lowering.hpp).
#pragma once

#include <memory>

#include "compiler/ir/ir.hpp"
#include "kiln/options.hpp"

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace kiln::llvmgen {

enum class LoweringTarget : unsigned char { Cpu, Nvptx };

struct LoweringResult {
  std::unique_ptr<llvm::Module> module;
  unsigned shared_bytes = 0; ///< dynamic shared memory the kernel uses (NVPTX)
  uint64_t scratch_bytes = 0; ///< per-program scratch memory for big blocks (CPU)
  std::string
      ir_with_layouts; ///< NVPTX: the tile IR with each value's layout and the conversions made
};

/// Lowers `program` into a new module of `ctx`; the kernel's entry symbol is
/// the kernel's name. Throws kiln::Error for what the target cannot do yet.
/// `sm`: NVPTX's compute capability * 10 (tensor cores from 80 on);
/// `wgmma`: sm_90's warpgroup instructions may run the dots that fit them.
LoweringResult lower_tile_ir(const ir::Program &program, const Options &options,
                             LoweringTarget target, llvm::LLVMContext &ctx, int sm = 0,
                             bool wgmma = false);

} // namespace kiln::llvmgen
