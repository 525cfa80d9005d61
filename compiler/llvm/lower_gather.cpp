// tl.gather (and the scans, sorts and flips built from it): the source
// element at a data-dependent index along one axis. CPU: recomputed per
// element like any pure op. GPU: any thread may need any element of the
// source, so the source goes through shared memory and each thread reads
// its result slots from there.
#include "compiler/llvm/lowering.hpp"

#include <llvm/IR/Intrinsics.h>

namespace kiln::llvmgen::detail {

auto Lowering::gather_source_index(const ir::Op &op, const Idx &idx) -> Idx {
  // Clamped into the block: an out-of-range index is the kernel's bug, as in
  // Triton, but must not read outside the buffer.
  const ir::Value *src = op.operands[0], *index = op.operands[1];
  llvm::Value *at = element(index, idx);
  at = index->type.is_signed() ? b_.CreateSExtOrTrunc(at, b_.getInt64Ty())
                               : b_.CreateZExtOrTrunc(at, b_.getInt64Ty());
  Idx si = idx;
  si[op.axis] = b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, at,
                                         b_.getInt64(src->type.shape[op.axis] - 1));
  return si;
}

auto Lowering::gather_element(const ir::Op &op, const Idx &idx) -> llvm::Value * {
  return element(op.operands[0], gather_source_index(op, idx));
}

auto Lowering::lower_gather_gpu(const ir::Op &op) -> void {
  const ir::Value *src = op.operands[0], *index = op.operands[1], *res = op.result();
  const Lowered own = vals_.at(src);
  const Lowered held = own.lazy ? materialize_gpu(src) : own;
  const MapPtr m = map_for(plan_->layout(res), res->type);
  // Conversions of the index first: they use the same shared memory.
  prepare(index, *m);
  llvm::Value *base = to_shared(src, held);
  llvm::Type *et = reg_type(src->type.element());
  Lowered r;
  r.map = m;
  r.buf = alloc_buffer(res->type, m.get());
  for_slots(*m, res->type, [&](int64_t s, const Idx &idx) {
    llvm::Value *lin = linear(src->type, gather_source_index(op, idx));
    b_.CreateStore(b_.CreateLoad(et, shared_element(base, et, lin)), slot_ptr(res->type, r.buf, s));
  });
  vals_[res] = r;
}

} // namespace kiln::llvmgen::detail
