// Reductions (sum, max, min, argmax, argmin, xor, ...) and scans on any
// axis: loops on the CPU; on the GPU in-thread, then warp shuffles, then
// shared memory across warps.
#include "compiler/llvm/lowering.hpp"

#include <algorithm>

#include "kiln/error.hpp"

namespace kiln::llvmgen::detail {

auto Lowering::combine_partial(ir::ReduceOp k, const Partial &a, const Partial &b, const Type &et)
    -> Partial {
  if (k != ir::ReduceOp::ArgMax && k != ir::ReduceOp::ArgMin)
    return {combine(k, a.v, b.v, et)};
  // Strictly better, or as good at a lower index: the first index wins ties, as in Triton.
  llvm::Value *better =
      compare(k == ir::ReduceOp::ArgMax ? ir::ComparePred::Gt : ir::ComparePred::Lt, b.v, a.v, et);
  llvm::Value *tie =
      b_.CreateAnd(compare(ir::ComparePred::Eq, b.v, a.v, et), b_.CreateICmpSLT(b.i, a.i));
  llvm::Value *take = b_.CreateOr(better, tie);
  return {b_.CreateSelect(take, b.v, a.v), b_.CreateSelect(take, b.i, a.i)};
}

auto Lowering::warp_index(const std::vector<int> &wbits) -> llvm::Value * {
  llvm::Value *w = b_.getInt64(0);
  for (size_t k = 0; k < wbits.size(); ++k)
    w = b_.CreateOr(
        w, b_.CreateShl(b_.CreateAnd(b_.CreateLShr(warp64_, wbits[k]), b_.getInt64(1)), k));
  return w;
}

auto Lowering::lower_reduce_gpu(const ir::Op &op) -> void {
  const ir::Value *src = op.operands[0], *res = op.result();
  const auto kind = static_cast<ir::ReduceOp>(op.sub);
  const bool arg = kind == ir::ReduceOp::ArgMax || kind == ir::ReduceOp::ArgMin;
  const Type et = src->type.element();
  const gpu::Shape shape = gpu::shape_of(src->type);
  const MapPtr m = map_for(plan_->layout(src), src->type);
  prepare(src, *m);
  const int off = gpu::dim_offset(shape, op.axis), nb = gpu::log2_exact(shape[op.axis]);
  auto on_axis = [&](int b) { return b >= off && b < off + nb; };
  auto R = std::make_shared<const gpu::BitMap>(gpu::drop_dim(*m, shape, op.axis));
  std::unordered_map<int64_t, int64_t> slot_of; // result index bits of a slot -> result slot
  for (int64_t r = 0; r < R->slots(); ++r)
    slot_of[R->reg_offset(r)] = r;
  std::vector<Partial> acc(R->slots(), Partial{nullptr});
  for_slots(*m, src->type, [&](int64_t s, const Idx &idx) {
    Partial x{element(src, idx), arg ? b_.CreateTrunc(idx[op.axis], b_.getInt32Ty()) : nullptr};
    Partial &a = acc[slot_of.at(gpu::drop_dim_bits(m->reg_offset(s), shape, op.axis))];
    a = a.v ? combine_partial(kind, a, x, et) : x;
  });
  for (int i = 0; i < gpu::BitMap::kLaneBits; ++i)
    if (m->lane[i] >= 0 && on_axis(m->lane[i]))
      for (Partial &a : acc)
        a = combine_partial(kind, a,
                            {target_->shuffle(Shuffle::Butterfly, a.v, 1 << i),
                             arg ? target_->shuffle(Shuffle::Butterfly, a.i, 1 << i) : nullptr},
                            et);
  std::vector<int> wbits;
  for (size_t i = 0; i < m->warp.size(); ++i)
    if (m->warp[i] >= 0 && on_axis(m->warp[i]))
      wbits.push_back(static_cast<int>(i));
  if (!wbits.empty()) {
    const int64_t W = int64_t{1} << wbits.size(), rn = int64_t{1} << R->bits;
    llvm::Type *rt = reg_type(et);
    const unsigned vbytes = static_cast<unsigned>(W * rn * type_bytes(rt));
    llvm::Value *vals = scratch(vbytes + static_cast<unsigned>(arg ? W * rn * 4 : 0));
    llvm::Value *idxs = b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), vals, vbytes);
    llvm::Value *widx = b_.CreateMul(warp_index(wbits), b_.getInt64(rn));
    target_->barrier();
    for (int64_t r = 0; r < R->slots(); ++r) {
      llvm::Value *at = b_.CreateAdd(widx, element_index(*R, r));
      b_.CreateStore(acc[r].v, b_.CreateInBoundsGEP(rt, vals, at));
      if (arg)
        b_.CreateStore(acc[r].i, b_.CreateInBoundsGEP(b_.getInt32Ty(), idxs, at));
    }
    target_->barrier();
    for (int64_t r = 0; r < R->slots(); ++r) {
      llvm::Value *lin = element_index(*R, r);
      for (int64_t w = 0; w < W; ++w) {
        llvm::Value *at = b_.CreateAdd(b_.getInt64(w * rn), lin);
        Partial x{
            b_.CreateLoad(rt, b_.CreateInBoundsGEP(rt, vals, at)),
            arg ? b_.CreateLoad(b_.getInt32Ty(), b_.CreateInBoundsGEP(b_.getInt32Ty(), idxs, at))
                : nullptr};
        acc[r] = w ? combine_partial(kind, acc[r], x, et) : x;
      }
    }
  }
  auto result = [&](const Partial &a) { return arg ? a.i : fresult(a.v, et); };
  if (!res->type.is_block())
    return set(res, result(acc[0]), nullptr);
  Lowered l;
  l.map = R;
  l.buf = alloc_buffer(res->type, R.get());
  for (int64_t r = 0; r < R->slots(); ++r)
    b_.CreateStore(result(acc[r]), slot_ptr(res->type, l.buf, r));
  vals_[res] = l;
}

auto Lowering::lower_reduce(const ir::Op &op) -> void {
  if (distributed_)
    return lower_reduce_gpu(op);
  const ir::Value *src = op.operands[0], *res = op.result();
  const auto kind = static_cast<ir::ReduceOp>(op.sub);
  const bool arg = kind == ir::ReduceOp::ArgMax || kind == ir::ReduceOp::ArgMin;
  const Type et = src->type.element();
  const int axis = op.axis;
  const int64_t n = src->type.shape[axis];
  llvm::Value *buf = res->type.is_block() ? alloc_buffer(res->type) : nullptr;
  llvm::Value *out = nullptr;
  each(res->type, [&](const Idx &ridx) {
    // Source index: the result's index with the reduced axis inserted.
    auto src_idx = [&](llvm::Value *k) {
      Idx si{};
      int r = 0;
      for (int d = 0; d < src->type.rank; ++d)
        si[d] = d == axis ? k : ridx[r++];
      return si;
    };
    // Start from element 0 so no identity value is needed (max of -inf, argmin ties).
    llvm::Value *first = element(src, src_idx(b_.getInt64(0)));
    llvm::Value *acc = first, *best = b_.getInt32(0);
    if (n > 1) {
      llvm::BasicBlock *pre = b_.GetInsertBlock();
      llvm::BasicBlock *head = new_bb("reduce"), *exit = new_bb("reduce.end");
      b_.CreateBr(head);
      b_.SetInsertPoint(head);
      llvm::PHINode *k = b_.CreatePHI(b_.getInt64Ty(), 2);
      llvm::PHINode *pacc = b_.CreatePHI(first->getType(), 2);
      llvm::PHINode *pbest = arg ? b_.CreatePHI(b_.getInt32Ty(), 2) : nullptr;
      k->addIncoming(b_.getInt64(1), pre);
      pacc->addIncoming(first, pre);
      if (arg)
        pbest->addIncoming(b_.getInt32(0), pre);
      llvm::Value *x = element(src, src_idx(k));
      llvm::Value *nacc, *nbest = nullptr;
      if (arg) {
        // Strictly better only: ties keep the first index, as Triton does.
        llvm::Value *better = compare(
            kind == ir::ReduceOp::ArgMax ? ir::ComparePred::Gt : ir::ComparePred::Lt, x, pacc, et);
        nacc = b_.CreateSelect(better, x, pacc);
        nbest = b_.CreateSelect(better, b_.CreateTrunc(k, b_.getInt32Ty()), pbest);
      } else {
        nacc = combine(kind, pacc, x, et);
        if (et.is_float() && (kind == ir::ReduceOp::Sum || kind == ir::ReduceOp::Prod))
          llvm::cast<llvm::Instruction>(nacc)->setHasAllowReassoc(true);
      }
      llvm::Value *next = b_.CreateAdd(k, b_.getInt64(1));
      llvm::BasicBlock *latch = b_.GetInsertBlock();
      k->addIncoming(next, latch);
      pacc->addIncoming(nacc, latch);
      if (arg)
        pbest->addIncoming(nbest, latch);
      b_.CreateCondBr(b_.CreateICmpULT(next, b_.getInt64(n)), head, exit);
      b_.SetInsertPoint(exit);
      acc = nacc;
      best = nbest;
      // The exit block is only reached from the latch, so the latch values are the results.
    }
    llvm::Value *r = arg ? best : fresult(acc, et);
    if (buf)
      b_.CreateStore(r, buf_ptr(res->type, buf, linear(res->type, ridx)));
    else
      out = r;
  });
  set(res, out, buf);
}

auto Lowering::lower_scan_gpu(const ir::Op &op) -> void {
  const ir::Value *src = op.operands[0], *res = op.result();
  const Type et = src->type.element();
  const bool sum = static_cast<ir::ScanOp>(op.sub) == ir::ScanOp::Sum;
  const ir::ReduceOp rk = sum ? ir::ReduceOp::Sum : ir::ReduceOp::Prod;
  auto comb = [&](llvm::Value *a, llvm::Value *x) { return fresult(combine(rk, a, x, et), et); };
  const gpu::Shape shape = gpu::shape_of(src->type);
  const MapPtr m = map_for(plan_->layout(res), res->type);
  prepare(src, *m);
  const int off = gpu::dim_offset(shape, op.axis), nb = gpu::log2_exact(shape[op.axis]);
  const int64_t axis_bits = ((int64_t{1} << nb) - 1) << off;
  // Slots grouped by their position off the axis, each group in axis order.
  std::map<int64_t, std::vector<std::pair<int64_t, int64_t>>> groups;
  for (int64_t s = 0; s < m->slots(); ++s)
    groups[m->reg_offset(s) & ~axis_bits].push_back({m->reg_offset(s) & axis_bits, s});
  std::vector<llvm::Value *> incl(m->slots());
  for_slots(*m, src->type, [&](int64_t s, const Idx &idx) { incl[s] = element(src, idx); });
  int lanes = 0; // lane bits 0..lanes-1 hold the axis bits above the thread's run
  while (lanes < gpu::BitMap::kLaneBits && m->lane[lanes] >= 0 &&
         ((int64_t{1} << m->lane[lanes]) & axis_bits))
    ++lanes;
  std::vector<int> wbits;
  for (size_t i = 0; i < m->warp.size(); ++i)
    if (m->warp[i] >= 0 && ((int64_t{1} << m->warp[i]) & axis_bits))
      wbits.push_back(static_cast<int>(i));
  llvm::Value *lane_pos = b_.CreateAnd(lane64_, b_.getInt64((int64_t{1} << lanes) - 1));
  llvm::Value *ident = identity(rk, et);
  std::vector<llvm::Value *> lane_incl, lane_excl;
  for (auto &[key, g] : groups) {
    std::sort(g.begin(), g.end());
    for (size_t j = 1; j < g.size(); ++j)
      incl[g[j].second] = comb(incl[g[j - 1].second], incl[g[j].second]);
    llvm::Value *x = incl[g.back().second];
    for (int j = 0; j < lanes; ++j) {
      llvm::Value *y = target_->shuffle(Shuffle::Up, x, 1 << j);
      x = b_.CreateSelect(b_.CreateICmpUGE(lane_pos, b_.getInt64(1 << j)), comb(y, x), x);
    }
    llvm::Value *e = lanes ? target_->shuffle(Shuffle::Up, x, 1) : ident;
    lane_incl.push_back(x);
    lane_excl.push_back(lanes ? b_.CreateSelect(b_.CreateICmpEQ(lane_pos, b_.getInt64(0)), ident, e)
                              : ident);
  }
  std::vector<llvm::Value *> prefix = lane_excl;
  if (!wbits.empty()) {
    const int64_t W = int64_t{1} << wbits.size(), n = src->type.numel();
    llvm::Type *rt = reg_type(et);
    llvm::Value *base = scratch(static_cast<unsigned>(W * n * type_bytes(rt)));
    llvm::Value *widx = warp_index(wbits);
    target_->barrier();
    llvm::BasicBlock *last = new_bb("scan.last"), *done = new_bb("scan.last.end");
    b_.CreateCondBr(b_.CreateICmpEQ(lane_pos, b_.getInt64((int64_t{1} << lanes) - 1)), last, done);
    b_.SetInsertPoint(last);
    size_t gi = 0;
    for (auto &[key, g] : groups) {
      llvm::Value *at = b_.CreateAnd(element_index(*m, g.front().second), b_.getInt64(~axis_bits));
      b_.CreateStore(
          lane_incl[gi++],
          b_.CreateInBoundsGEP(rt, base, b_.CreateAdd(b_.CreateMul(widx, b_.getInt64(n)), at)));
    }
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
    target_->barrier();
    gi = 0;
    for (auto &[key, g] : groups) {
      llvm::Value *at = b_.CreateAnd(element_index(*m, g.front().second), b_.getInt64(~axis_bits));
      llvm::Value *wp = ident;
      for (int64_t w = 0; w + 1 < W; ++w) {
        llvm::Value *x =
            b_.CreateLoad(rt, b_.CreateInBoundsGEP(rt, base, b_.CreateAdd(b_.getInt64(w * n), at)));
        wp = b_.CreateSelect(b_.CreateICmpULT(b_.getInt64(w), widx), comb(wp, x), wp);
      }
      prefix[gi] = comb(wp, prefix[gi]);
      ++gi;
    }
  }
  Lowered l;
  l.map = m;
  l.buf = alloc_buffer(res->type, m.get());
  size_t gi = 0;
  for (auto &[key, g] : groups) {
    for (auto &[pos, s] : g)
      b_.CreateStore(comb(prefix[gi], incl[s]), slot_ptr(res->type, l.buf, s));
    ++gi;
  }
  vals_[res] = l;
}

auto Lowering::lower_scan(const ir::Op &op) -> void {
  if (distributed_)
    return lower_scan_gpu(op);
  const ir::Value *src = op.operands[0], *res = op.result();
  const Type et = src->type.element();
  const int axis = op.axis;
  const bool sum = static_cast<ir::ScanOp>(op.sub) == ir::ScanOp::Sum;
  llvm::Value *buf = alloc_buffer(res->type);
  loop_nest(
      src->type,
      [&](const Idx &base) {
        llvm::Value *acc_slot = alloc_scalar(reg_type(et));
        Idx idx = base;
        loop(src->type.shape[axis], [&](llvm::Value *k) {
          idx[axis] = k;
          llvm::Value *x = element(src, idx);
          llvm::Value *is0 = b_.CreateICmpEQ(k, b_.getInt64(0));
          llvm::Value *prev = b_.CreateLoad(reg_type(et), acc_slot);
          llvm::Value *acc = sum ? (et.is_float() ? b_.CreateFAdd(prev, x) : b_.CreateAdd(prev, x))
                                 : (et.is_float() ? b_.CreateFMul(prev, x) : b_.CreateMul(prev, x));
          acc = b_.CreateSelect(is0, x, fresult(acc, et));
          b_.CreateStore(acc, acc_slot);
          b_.CreateStore(acc, buf_ptr(res->type, buf, linear(res->type, idx)));
        });
      },
      axis);
  set(res, nullptr, buf);
}

} // namespace kiln::llvmgen::detail
