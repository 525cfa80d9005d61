// What differs between targets below the shared lowering (llvm/lowering.hpp):
// the kernel's entry and program ids, math the target does its own way,
// masked and vector memory access, and, for targets that spread a block
// over threads, barriers, warp shuffles and shared memory.
//
// A target is one implementation of this interface in its own folder
// (nvptx/nvptx_target.cpp, cpu/cpu_target.cpp); how a target spreads block
// elements over threads is data (gpu/layout.hpp), not code here.
#pragma once

#include <memory>
#include <stdexcept>
#include <vector>

#include "compiler/gpu/mma_layout.hpp"
#include "compiler/ir/ir.hpp"
#include "compiler/llvm/math_library.hpp"
#include "kiln/dtype.hpp"

namespace llvm {
class Value;
} // namespace llvm

namespace kiln::llvmgen::detail {

class Lowering;

enum class Shuffle : unsigned char { Butterfly, Up };

class TargetLowering {
public:
  virtual ~TargetLowering() = default;

  /// Whether a program's block values are spread over threads with
  /// layouts (NVPTX) rather than held whole by one thread (CPU).
  virtual bool distributes_blocks() const = 0;

  /// Defines the kernel's entry point(s): sets the program ids and the
  /// parameters, then lowers the kernel's body through the Lowering.
  virtual void define_kernel(const ir::Function &k) = 0;

  /// The library the target's math functions come from (libm, libdevice):
  /// tl.math functions, erf, and what unary_math / binary_math call.
  virtual MathLibrary math_library() const = 0;

  /// An elementwise op the target computes its own way (fast approximate
  /// instructions, a math library), or null for the shared lowering's
  /// LLVM intrinsics. `t` is the element type (f16/bf16 are held as float).
  virtual llvm::Value *unary_math(ir::UnaryOp u, llvm::Value *x, const ir::Type &t) = 0;
  virtual llvm::Value *binary_math(ir::BinaryOp op, llvm::Value *x, llvm::Value *y,
                                   const ir::Type &t) = 0;
  /// Whether bf16 converts to and from float by instructions (LLVM's
  /// bfloat type) rather than by the shared bit arithmetic.
  virtual bool native_bf16() const { return false; }
  /// An i8 fp8 code of type `t` to the float it is, or a float to the code
  /// (rounded to nearest even, saturating; llvm/lower_fp8.hpp), by the
  /// target's conversion instructions; null for the shared arithmetic. The
  /// result must be the shared lowering's, bit for bit (NaNs: any NaN).
  virtual llvm::Value *fp8_to_float(llvm::Value * /*code*/, DType /*t*/) { return nullptr; }
  virtual llvm::Value *float_to_fp8(llvm::Value * /*f*/, DType /*t*/) { return nullptr; }

  /// A load of one element of type `t` where `mask` holds, else `other`, as
  /// one instruction; null to let the shared lowering branch.
  virtual llvm::Value *masked_load(llvm::Value *ptr, llvm::Value *mask, llvm::Value *other,
                                   DType t) = 0;
  /// The store of one memory value where `mask` holds; false to branch.
  virtual bool masked_store(llvm::Value *ptr, llvm::Value *mask, llvm::Value *mem_value) = 0;
  /// One access of consecutive elements (at most 16 bytes, aligned);
  /// `mask` (may be null) stands for them all.
  virtual std::vector<llvm::Value *> vector_load(llvm::Value *ptr, llvm::Value *mask,
                                                 const std::vector<llvm::Value *> &others,
                                                 DType t) = 0;
  virtual void vector_store(llvm::Value *ptr, llvm::Value *mask,
                            const std::vector<llvm::Value *> &mem_values) = 0;
  /// Adds consecutive floats of type `t` (f32, f16 or bf16; at most 16
  /// bytes, aligned to their size, halves in pairs) to memory at `ptr`
  /// where `mask` holds, as reductions: the old values are not wanted;
  /// false where the target has no such instruction.
  virtual bool vector_atomic_add(llvm::Value * /*ptr*/, llvm::Value * /*mask*/,
                                 const std::vector<llvm::Value *> & /*mem_values*/, DType /*t*/) {
    return false;
  }

  // Collectives, for targets that distribute blocks.
  /// This thread's index in its CTA, read anew (not merged with earlier reads).
  virtual llvm::Value *reread_thread_id() { unsupported(); }
  virtual void barrier() = 0;
  virtual llvm::Value *shuffle(Shuffle kind, llvm::Value *v, int amount) = 0;
  /// The block's scratch shared memory, at least `bytes` of it (each user
  /// starts with a barrier, so users never overlap).
  virtual llvm::Value *shared_memory(unsigned bytes) = 0;
  virtual unsigned shared_bytes() const = 0;

  // Tensor cores, for targets whose layout plan gives dots the mma layout
  // (gpu/mma_layout.hpp); others never reach them.
  /// ldmatrix: `count` (1, 2, 4) 8x8 matrices of 16-bit elements from
  /// shared memory, each lane giving one row's address; a 32-bit word per
  /// matrix, transposed if `trans`.
  virtual std::vector<llvm::Value *> load_matrices(llvm::Value *row, int count, bool trans) {
    (void)row, (void)count, (void)trans;
    throw std::logic_error("kiln internal error: tensor cores on a target without them");
  }
  /// One mma.sync of kind `k` (not TF32X3: three TF32 ones): A, B as 32-bit
  /// words, C as 4 floats (f16 values for F16F16) or 4 int32s (I8); gives D.
  virtual std::vector<llvm::Value *> mma(gpu::MmaKind k, const std::vector<llvm::Value *> &a,
                                         const std::vector<llvm::Value *> &b,
                                         const std::vector<llvm::Value *> &c) {
    (void)k, (void)a, (void)b, (void)c;
    throw std::logic_error("kiln internal error: tensor cores on a target without them");
  }
  /// cvt.rna.tf32.f32: `f` rounded to tf32 (to nearest, ties away), as a float.
  virtual llvm::Value *round_tf32(llvm::Value *f) {
    (void)f;
    throw std::logic_error("kiln internal error: tensor cores on a target without them");
  }
  /// cp.async: 16 bytes from global `src` to shared `dst`, zeros where
  /// `pred` is false (src is then not read); completes in groups.
  virtual void async_copy(llvm::Value *dst, llvm::Value *src, llvm::Value *pred, int bytes) {
    (void)dst, (void)src, (void)pred, (void)bytes;
    throw std::logic_error("kiln internal error: asynchronous copies on a target without them");
  }
  /// Closes the group of copies issued since the last one.
  virtual void async_commit() {}
  /// Waits until at most `pending` groups are still in flight (this thread's).
  virtual void async_wait(int pending) { (void)pending; }

  // sm_90's warpgroup tensor cores (llvm/lower_wgmma.cpp).
  /// Orders this thread's generic-proxy writes to shared memory (st.shared,
  /// cp.async) before later reads of the async proxy (wgmma operands).
  virtual void fence_async_shared() { unsupported(); }
  /// wgmma.fence, wgmma.commit_group, wgmma.wait_group: the accumulator
  /// registers `d` pass through the fence and the wait, so that nothing
  /// writes them before the fence nor reads them before the wait.
  virtual std::vector<llvm::Value *> wgmma_fence(const std::vector<llvm::Value *> &d) {
    (void)d;
    unsupported();
  }
  virtual void wgmma_commit() { unsupported(); }
  virtual std::vector<llvm::Value *> wgmma_wait(int pending, const std::vector<llvm::Value *> &d) {
    (void)pending, (void)d;
    unsupported();
  }
  /// One wgmma.mma_async m64nNk16 (k32 for I8) into `d`: f32 or int32
  /// registers (N = 2 * d.size()) or, for F16F16, f16x2 words (N = 4 *
  /// d.size()). A from shared memory (`a`: one 64-bit descriptor,
  /// `trans_a`: stored M-major) or registers (`a`: four 32-bit words), B
  /// from descriptor `b` (`trans_b`: stored N-major; I8 takes neither
  /// transposed); gives the new `d` (pending until wgmma_wait).
  /// `add` false: D = A * B, `d` ignored (a first step into zeros).
  virtual std::vector<llvm::Value *> wgmma(gpu::MmaKind k, const std::vector<llvm::Value *> &d,
                                           const std::vector<llvm::Value *> &a, llvm::Value *b,
                                           bool trans_a, bool trans_b, bool add) {
    (void)k, (void)d, (void)a, (void)b, (void)trans_a, (void)trans_b, (void)add;
    unsupported();
  }
  /// 16-bit memory values, two a 32-bit word (the first in the low half):
  /// halves rounded from floats by one paired conversion where the target has it.
  virtual std::vector<llvm::Value *> pack_words(const std::vector<llvm::Value *> &vals) {
    (void)vals;
    unsupported();
  }

private:
  [[noreturn]] static void unsupported() {
    throw std::logic_error("kiln internal error: wgmma on a target without it");
  }
};

std::unique_ptr<TargetLowering> make_nvptx_target(Lowering &l);
std::unique_ptr<TargetLowering> make_cpu_target(Lowering &l);

} // namespace kiln::llvmgen::detail
