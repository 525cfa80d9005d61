// tl.dot: loops on the CPU; on the GPU tensor cores where the layout plan
// chose them (llvm/lower_mma.cpp), else FMAs over operands in shared memory.
#include "compiler/llvm/lowering.hpp"

#include <llvm/IR/Intrinsics.h>

#include "kiln/error.hpp"

namespace kiln::llvmgen::detail {

auto Lowering::lower_dot_gpu(const ir::Op &op) -> void {
  // The layout plan gave the result the mma layout where tensor cores apply.
  if (plan_->layout(op.result())->kind == gpu::Encoding::Kind::Mma)
    return plan_->wgmma(op) ? lower_dot_wgmma(op) : lower_dot_mma(op);
  const ir::Value *a = op.operands[0], *bm = op.operands[1], *acc = op.operands[2],
                  *res = op.result();
  // A 3-D dot is a batch of 2-D ones along dim 0: each batch has its own
  // K x M and K x N panels in shared memory.
  const int r = a->type.rank, bd = r - 3; // bd: the batch dim, or -1
  const int64_t Bn = r == 3 ? a->type.shape[0] : 1, M = a->type.shape[r - 2],
                K = a->type.shape[r - 1], N = bm->type.shape[r - 1];
  const Type ot = res->type.element(), it = a->type.element();
  llvm::Type *rt = reg_type(ot);
  const MapPtr C = map_for(plan_->layout(res), res->type);
  const MapPtr A = map_for(plan_->layout(a), a->type), B = map_for(plan_->layout(bm), bm->type);
  prepare(a, *A);
  prepare(bm, *B);
  prepare(acc, *C);
  llvm::Value *abase = scratch(static_cast<unsigned>(Bn * (K * M + K * N) * type_bytes(rt)));
  llvm::Value *bbase = b_.CreateConstInBoundsGEP1_64(rt, abase, Bn * K * M);
  // Element (batch, k, j) of a K x J panel.
  auto panel = [&](const Idx &i, llvm::Value *k, llvm::Value *j, int64_t J) {
    llvm::Value *row = bd < 0 ? k : b_.CreateAdd(b_.CreateMul(i[bd], b_.getInt64(K)), k);
    return b_.CreateAdd(b_.CreateMul(row, b_.getInt64(J)), j);
  };
  target_->barrier();
  for_slots(*A, a->type, [&](int64_t, const Idx &i) {
    b_.CreateStore(cast(element(a, i), it, ot),
                   b_.CreateInBoundsGEP(rt, abase, panel(i, i[r - 1], i[r - 2], M)));
  });
  for_slots(*B, bm->type, [&](int64_t, const Idx &i) {
    b_.CreateStore(cast(element(bm, i), it, ot),
                   b_.CreateInBoundsGEP(rt, bbase, panel(i, i[r - 2], i[r - 1], N)));
  });
  target_->barrier();
  std::vector<llvm::Value *> init(C->slots());
  std::vector<Idx> ci(C->slots());
  for_slots(*C, res->type, [&](int64_t s, const Idx &i) {
    init[s] = element(acc, i);
    ci[s] = i;
  });
  // Slots that share a row (a batch's column) share its a (b) value at each
  // k. Element index bits: [batch | m | n].
  const int nbits = gpu::log2_exact(N), mbits = gpu::log2_exact(M);
  const int64_t nmask = (int64_t{1} << nbits) - 1;
  auto row_key = [&](int64_t s) { return C->reg_offset(s) >> nbits; };
  auto col_key = [&](int64_t s) {
    return ((C->reg_offset(s) >> (nbits + mbits)) << nbits) | (C->reg_offset(s) & nmask);
  };
  std::map<int64_t, size_t> row_of, col_of;
  for (int64_t s = 0; s < C->slots(); ++s) {
    row_of.emplace(row_key(s), row_of.size());
    col_of.emplace(col_key(s), col_of.size());
  }
  llvm::BasicBlock *pre = b_.GetInsertBlock(), *head = new_bb("dot.k"), *exit = new_bb("dot.end");
  b_.CreateBr(head);
  b_.SetInsertPoint(head);
  llvm::PHINode *k = b_.CreatePHI(b_.getInt64Ty(), 2);
  k->addIncoming(b_.getInt64(0), pre);
  std::vector<llvm::PHINode *> phis;
  for (llvm::Value *v : init) {
    phis.push_back(b_.CreatePHI(rt, 2));
    phis.back()->addIncoming(v, pre);
  }
  std::vector<llvm::Value *> av(row_of.size()), bv(col_of.size()), next(C->slots());
  for (int64_t s = 0; s < C->slots(); ++s) {
    const Idx &i = ci[s];
    llvm::Value *&x = av[row_of.at(row_key(s))];
    if (!x)
      x = b_.CreateLoad(rt, b_.CreateInBoundsGEP(rt, abase, panel(i, k, i[r - 2], M)));
    llvm::Value *&y = bv[col_of.at(col_key(s))];
    if (!y)
      y = b_.CreateLoad(rt, b_.CreateInBoundsGEP(rt, bbase, panel(i, k, i[r - 1], N)));
    next[s] = ot.is_float() ? b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {rt}, {x, y, phis[s]})
                            : b_.CreateAdd(phis[s], b_.CreateMul(x, y));
  }
  llvm::Value *kn = b_.CreateAdd(k, b_.getInt64(1));
  llvm::BasicBlock *latch = b_.GetInsertBlock();
  k->addIncoming(kn, latch);
  for (int64_t s = 0; s < C->slots(); ++s)
    phis[s]->addIncoming(next[s], latch);
  b_.CreateCondBr(b_.CreateICmpULT(kn, b_.getInt64(K)), head, exit);
  b_.SetInsertPoint(exit);
  Lowered l;
  l.map = C;
  l.buf = alloc_buffer(res->type, C.get());
  for (int64_t s = 0; s < C->slots(); ++s)
    b_.CreateStore(fresult(next[s], ot), slot_ptr(res->type, l.buf, s));
  vals_[res] = l;
}

auto Lowering::lower_dot(const ir::Op &op) -> void {
  if (distributed_)
    return lower_dot_gpu(op);
  const ir::Value *a = op.operands[0], *bm = op.operands[1], *acc = op.operands[2],
                  *res = op.result();
  const int r = a->type.rank;
  const int64_t Bn = r == 3 ? a->type.shape[0] : 1, M = a->type.shape[r - 2],
                K = a->type.shape[r - 1], N = bm->type.shape[r - 1];
  const Type ot = res->type.element(), it = a->type.element();
  llvm::Value *abuf = as_buffer(a), *bbuf = as_buffer(bm);
  llvm::Value *out = materialize(acc, alloc_buffer(res->type));
  llvm::Type *ert = reg_type(ot);
  auto at = [&](llvm::Value *base, llvm::Value *row, int64_t cols, llvm::Value *col) {
    return b_.CreateAdd(base, b_.CreateAdd(b_.CreateMul(row, b_.getInt64(cols)), col));
  };
  // Batch by batch (a 3-D dot); m-k-n order: the innermost loop runs along
  // contiguous rows of b and out.
  loop(Bn, [&](llvm::Value *batch) {
    llvm::Value *a0 = b_.CreateMul(batch, b_.getInt64(M * K)),
                *b0 = b_.CreateMul(batch, b_.getInt64(K * N)),
                *o0 = b_.CreateMul(batch, b_.getInt64(M * N));
    loop(M, [&](llvm::Value *m) {
      loop(K, [&](llvm::Value *k) {
        llvm::Value *av = b_.CreateLoad(reg_type(it), buf_ptr(a->type, abuf, at(a0, m, K, k)));
        av = cast(av, it, ot);
        loop(N, [&](llvm::Value *n) {
          llvm::Value *bv = b_.CreateLoad(reg_type(it), buf_ptr(bm->type, bbuf, at(b0, k, N, n)));
          bv = cast(bv, it, ot);
          llvm::Value *optr = buf_ptr(res->type, out, at(o0, m, N, n));
          llvm::Value *cur = b_.CreateLoad(ert, optr);
          llvm::Value *sum =
              ot.is_float() ? b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {ert}, {av, bv, cur})
                            : b_.CreateAdd(cur, b_.CreateMul(av, bv));
          b_.CreateStore(sum, optr);
        });
      });
    });
  });
  if (is_half(ot.elem))
    loop(Bn * M * N, [&](llvm::Value *i) {
      llvm::Value *p = buf_ptr(res->type, out, i);
      b_.CreateStore(round_half(b_.CreateLoad(ert, p), ot.elem), p);
    });
  set(res, nullptr, out);
}

} // namespace kiln::llvmgen::detail
