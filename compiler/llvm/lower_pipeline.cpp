// Software pipelining of the loads that feed a tensor-core dot in a for
// loop, driven by num_stages (Triton's pipeliner, reduced to what a dot
// loop needs): each such load becomes cp.async copies (16, 8 or 4 bytes, as
// its addresses are aligned) straight into a ring of num_stages
// shared-memory stages, laid out (swizzled) as the dot reads them; the
// copies for iteration i + num_stages - 1 are issued at the top of iteration
// i (wgmma: while its dot runs), so memory and tensor cores overlap. Loads
// not even 4-byte aligned go into registers one iteration ahead instead.
//
// The copies of a future iteration need its addresses and masks: the ops
// they are computed from (pure ops of the body, the induction variable,
// loop-carried values whose next value is computed the same way: matmul's
// `a_ptrs += BK * stride_ak`, attention's scalar `offsetk_y += BLOCK_N`) are evaluated again with
// those bound to the future iteration's values, and the carried ones are carried ahead too.
#include "compiler/llvm/lowering.hpp"

#include <optional>
#include <unordered_set>
#include <utility>

#include "kiln/error.hpp"

namespace kiln::llvmgen::detail {

namespace {

constexpr int64_t kMaxRingBytes = 160 * 1024;

void collect_nested(const ir::Block &b, std::unordered_set<const ir::Op *> &out) {
  for (const ir::Op *op : b.ops) {
    out.insert(op);
    for (const ir::Block *r : op->regions)
      collect_nested(*r, out);
  }
}

} // namespace

auto Lowering::scratch(unsigned bytes, unsigned align) -> llvm::Value * {
  const unsigned at = (reserved_ + align - 1) / align * align;
  llvm::Value *base = target_->shared_memory(at + bytes);
  return at ? b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), base, at) : base;
}

auto Lowering::scratch_aligned(unsigned bytes) -> llvm::Value * {
  const unsigned at = (reserved_ + 1023) / 1024 * 1024;
  llvm::Value *base = target_->shared_memory(at + bytes);
  return at ? b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), base, at) : base;
}

auto Lowering::plan_pipeline(const ir::Op &op, bool spare_slot) -> Pipeline {
  Pipeline p;
  const ir::Op *step = op.operands[2]->def;
  if (!distributed_ || opts_.num_stages < 2 || !step || step->kind != OpKind::Constant ||
      step->i <= 0)
    return p;
  const ir::Block &body = *op.regions[0];
  std::unordered_map<const ir::Op *, size_t> top;
  std::unordered_set<const ir::Op *> nested;
  std::unordered_map<const ir::Value *, const ir::Op *> user;
  for (const ir::Op *o : body.ops) {
    top[o] = top.size();
    for (const ir::Value *v : o->operands)
      user[v] = o;
    for (const ir::Block *r : o->regions)
      collect_nested(*r, nested);
  }
  const ir::Op &yield = *body.ops.back();
  std::unordered_set<const ir::Op *> slice;
  std::set<size_t> carried;
  // Whether `v` can be evaluated for a future iteration (adds what it needs).
  std::function<bool(const ir::Value *)> closed = [&](const ir::Value *v) -> bool {
    for (size_t k = 0; k + 1 < body.args.size(); ++k)
      if (v == body.args[k + 1]) {
        if (!carried.insert(k).second)
          return true;
        return closed(yield.operands[k]);
      }
    if (v == body.args[0] || !v->def)
      return true;
    if (nested.count(v->def))
      return false;
    if (!top.count(v->def))
      return true; // defined before the loop
    if (!is_pure(v->def->kind) || v->def->kind == OpKind::Gather)
      return false;
    if (!slice.insert(v->def).second)
      return true;
    for (const ir::Value *o : v->def->operands)
      if (!closed(o))
        return false;
    return true;
  };
  for (const ir::Op *l : body.ops) {
    if (l->kind != OpKind::Load)
      continue;
    const ir::Value *res = l->result();
    auto u = user.find(res);
    if (!res->type.is_block() || uses_[res] != 1 || u == user.end())
      continue;
    // A transposed operand (tutorial 09's `b.T` of an [N, K] block,
    // attention's `k.T`) is staged as loaded and read transposed.
    const ir::Value *operand_v = res;
    const bool transposed = u->second->kind == OpKind::Trans && res->type.rank == 2;
    if (transposed) {
      operand_v = u->second->result();
      u = user.find(operand_v);
      if (uses_[operand_v] != 1 || u == user.end())
        continue;
    }
    if (u->second->kind != OpKind::Dot ||
        (dtype_size(res->type.elem) != 2 && dtype_size(res->type.elem) != 1) ||
        plan_->layout(u->second->result())->kind != gpu::Encoding::Kind::Mma)
      continue;
    const ir::Op &dot = *u->second;
    const int operand = dot.operands[0] == operand_v ? 0 : 1;
    if (dot.operands[1 - operand] == operand_v)
      continue;
    const bool has_mask = l->i & 1, has_other = l->i & 2;
    const ir::Value *ptr = l->operands[0], *mask = has_mask ? l->operands[1] : nullptr;
    if (has_other && !is_zero_splat(l->operands[2]))
      continue;
    PipeLoad pl;
    pl.load = l;
    pl.operand = operand_v;
    pl.held = map_for(plan_->layout(res), res->type);
    int run_dim = -1;
    gpu::run_bits(*pl.held, gpu::shape_of(res->type), &run_dim);
    if (run_dim < 0)
      continue;
    if (transposed)
      run_dim = 1 - run_dim;                    // from here on in the operand's dims
    pl.vec = vector_width(*pl.held, ptr, mask); // 1: not even 4 bytes aligned, in registers
    const auto saved_slice = slice;
    const auto saved_carried = carried;
    // The registers' loads read `other` too (cp.async fills zeros itself).
    if (!closed(ptr) || (mask && !closed(mask)) || (has_other && !closed(l->operands[2]))) {
      slice = saved_slice;
      carried = saved_carried;
      continue;
    }
    const int k_dim = operand == 0 ? 1 : 0;
    const int64_t outer = operand_v->type.shape[1 - k_dim], K = operand_v->type.shape[k_dim];
    const int bytes = static_cast<int>(dtype_size(res->type.elem));
    // 8-bit operands are read K-major only (gpu/mma_layout.hpp): loads along
    // M or N need the transposing stores of the dot's own staging.
    if (bytes == 1 && run_dim != k_dim) {
      slice = saved_slice;
      carried = saved_carried;
      continue;
    }
    pl.st.k_contig = run_dim == k_dim;
    pl.st.bytes = bytes;
    pl.st.rows = pl.st.k_contig ? outer : K;
    pl.st.row_len = pl.st.k_contig ? K : outer;
    pl.row_dim = pl.st.k_contig ? 1 - k_dim : k_dim;
    if (transposed)
      pl.row_dim = 1 - pl.row_dim; // the copies index the load's block
    pl.wgmma = pl.st.panel = plan_->wgmma(dot);
    const int64_t align = pl.wgmma ? 1024 : 128; // wgmma: the 128-byte swizzle's period
    pl.stage_bytes = (res->type.numel() * bytes + align - 1) / align * align;
    p.loads.push_back(pl);
  }
  if (p.loads.empty())
    return p;
  // One distance for all: registers hold a single iteration ahead.
  p.regs =
      std::any_of(p.loads.begin(), p.loads.end(), [](const PipeLoad &pl) { return pl.vec < 2; });
  for (const ir::Op *o : body.ops)
    if (slice.count(o))
      p.slice.push_back(o);
  p.carried.assign(carried.begin(), carried.end());
  // Fewer stages where num_stages of them would not fit beside the body's
  // own scratch in the H100/H200's 227 KiB (Triton fails such a launch).
  int64_t per_stage = 0;
  for (const PipeLoad &pl : p.loads)
    per_stage += pl.stage_bytes;
  p.stages = p.regs ? 2 : opts_.num_stages;
  // A dot left in flight into the next iteration (defer_wgmma_waits) still
  // reads its stage while that iteration refills the one num_stages - 1 on:
  // one slot more keeps them apart.
  const int spare = spare_slot && !p.regs ? 1 : 0;
  while (p.stages > 2 && (p.stages + spare) * per_stage > kMaxRingBytes)
    --p.stages;
  p.slots = p.stages + spare;
  p.loop = &op;
  return p;
}

auto Lowering::pipeline_issue(Pipeline &p, const std::vector<Carried> &cs, llvm::Value *iv,
                              const std::vector<std::vector<llvm::Value *>> &vals,
                              llvm::Value *stage, llvm::Value *in_range)
    -> std::vector<std::vector<llvm::Value *>> {
  const ir::Block &body = *p.loop->regions[0];
  set(body.args[0], iv, nullptr);
  for (size_t j = 0; j < p.carried.size(); ++j) {
    const size_t k = p.carried[j];
    const ir::Value *arg = body.args[k + 1];
    if (arg->type.is_block())
      vals_[arg] = slots_buffer(arg->type, cs[k].map, vals[j]);
    else
      set(arg, vals[j][0], nullptr); // a scalar (attention's `offsetk_y += BLOCK_N`)
  }
  converted_.clear(); // conversions made for another iteration's values
  for (const ir::Op *o : p.slice)
    lower_pure(*o);
  p.loaded.clear();
  for (PipeLoad &pl : p.loads) {
    const ir::Op &l = *pl.load;
    const ir::Value *ptr = l.operands[0], *mask = (l.i & 1) ? l.operands[1] : nullptr;
    prepare(ptr, *pl.held);
    if (mask)
      prepare(mask, *pl.held);
    if (p.regs) {
      p.loaded.push_back(load_slots(l, pl.held, in_range));
      continue;
    }
    Staged st = pl.st;
    st.base = b_.CreateInBoundsGEP(
        b_.getInt8Ty(), pl.st.base,
        b_.CreateMul(stage, b_.getInt32(static_cast<uint32_t>(pl.stage_bytes))));
    for_slots(*pl.held, l.result()->type, [&](int64_t s, const Idx &i) {
      if (s % pl.vec)
        return;
      llvm::Value *ok = mask ? and_mask(element(mask, i), in_range) : in_range;
      llvm::Value *dst = staged_address(st, b_.CreateTrunc(i[pl.row_dim], b_.getInt32Ty()),
                                        b_.CreateTrunc(i[1 - pl.row_dim], b_.getInt32Ty()));
      target_->async_copy(dst, element(ptr, i), ok, static_cast<int>(pl.vec * pl.st.bytes));
    });
  }
  if (!p.regs)
    target_->async_commit();
  std::vector<std::vector<llvm::Value *>> next;
  const ir::Op &yield = *body.ops.back();
  for (size_t k : p.carried) {
    const ir::Value *y = yield.operands[k];
    next.push_back(y->type.is_block() ? slot_values(y, materialize_gpu(y, cs[k].map))
                                      : std::vector<llvm::Value *>{scalar(y)});
  }
  converted_.clear();
  return next;
}

auto Lowering::pipeline_prologue(Pipeline &p, const ir::Op &op, const std::vector<Carried> &cs)
    -> void {
  p.reserved_before = reserved_;
  if (p.regs) {
    p.ahead = pipeline_first(p, op, cs);
    return;
  }
  unsigned ring = 0, at = reserved_;
  for (const PipeLoad &pl : p.loads) {
    ring += static_cast<unsigned>(pl.stage_bytes * p.slots);
    if (pl.wgmma)
      at = (reserved_ + 1023) / 1024 * 1024;
  }
  llvm::Value *base = target_->shared_memory(at + ring);
  for (PipeLoad &pl : p.loads) {
    pl.st.base = b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), base, at);
    at += static_cast<unsigned>(pl.stage_bytes * p.slots);
  }
  reserved_ = at;
  target_->barrier(); // the ring may hold what an earlier user left there
  p.ahead = pipeline_first(p, op, cs);
}

auto Lowering::pipeline_first(Pipeline &p, const ir::Op &op, const std::vector<Carried> &cs)
    -> std::vector<std::vector<llvm::Value *>> {
  llvm::Value *lo = scalar(op.operands[0]), *hi = scalar(op.operands[1]),
              *step = scalar(op.operands[2]);
  const bool sg = op.operands[0]->type.is_signed();
  std::vector<std::vector<llvm::Value *>> vals;
  for (size_t k : p.carried)
    vals.push_back(cs[k].map ? cs[k].init_slots : std::vector<llvm::Value *>{scalar(cs[k].init)});
  for (int j = 0; j + 1 < p.stages; ++j) {
    llvm::Value *iv =
        b_.CreateAdd(lo, b_.CreateMul(step, llvm::ConstantInt::get(lo->getType(), j)));
    llvm::Value *ok = sg ? b_.CreateICmpSLT(iv, hi) : b_.CreateICmpULT(iv, hi);
    vals = pipeline_issue(p, cs, iv, vals, b_.getInt32(j), ok);
  }
  return vals;
}

auto Lowering::pipeline_phis(Pipeline &p, llvm::BasicBlock *pre) -> void {
  p.count = b_.CreatePHI(b_.getInt32Ty(), 2);
  p.count->addIncoming(b_.getInt32(0), pre);
  for (const auto &vs : p.ahead) {
    p.ahead_phis.emplace_back();
    for (llvm::Value *v : vs) {
      p.ahead_phis.back().push_back(b_.CreatePHI(v->getType(), 2));
      p.ahead_phis.back().back()->addIncoming(v, pre);
    }
  }
  for (const auto &vs : p.loaded) {
    p.loaded_phis.emplace_back();
    for (llvm::Value *v : vs) {
      p.loaded_phis.back().push_back(b_.CreatePHI(v->getType(), 2));
      p.loaded_phis.back().back()->addIncoming(v, pre);
    }
  }
}

auto Lowering::pipeline_iteration(Pipeline &p, const ir::Op &op, const std::vector<Carried> &cs,
                                  llvm::Value *iv) -> void {
  const int d = p.stages - 1;
  if (p.regs) {
    for (size_t j = 0; j < p.loads.size(); ++j) {
      const ir::Value *res = p.loads[j].load->result();
      vals_[res] = slots_buffer(
          res->type, p.loads[j].held,
          std::vector<llvm::Value *>(p.loaded_phis[j].begin(), p.loaded_phis[j].end()));
      preloaded_.insert(res);
      preloaded_.insert(p.loads[j].operand);
    }
  } else {
    // No fence.proxy.async before a wgmma reads the slot: cp.async's wait
    // and the barrier order its writes for the tensor cores, as Triton's
    // Hopper pipelines rely on (its proxy fences follow st.shared only).
    target_->async_wait(d - 1);
    target_->barrier(); // this stage has landed for every thread; the one refilled next is read
    llvm::Value *n = b_.getInt32(static_cast<uint32_t>(p.slots));
    llvm::Value *read = b_.CreateURem(p.count, n);
    for (const PipeLoad &pl : p.loads) {
      Staged st = pl.st;
      st.base = b_.CreateInBoundsGEP(
          b_.getInt8Ty(), pl.st.base,
          b_.CreateMul(read, b_.getInt32(static_cast<uint32_t>(pl.stage_bytes))));
      prestaged_[pl.load->result()] = st; // not loaded in the body
      prestaged_[pl.operand] = st;
    }
  }
  // wgmma: issued once the dot has its operands, while its instructions run.
  if (std::any_of(p.loads.begin(), p.loads.end(), [](const PipeLoad &pl) { return pl.wgmma; })) {
    deferred_issue_ = [this, &p, &op, &cs, iv] { pipeline_issue_ahead(p, op, cs, iv); };
    return;
  }
  pipeline_issue_ahead(p, op, cs, iv);
}

auto Lowering::pipeline_issue_ahead(Pipeline &p, const ir::Op &op, const std::vector<Carried> &cs,
                                    llvm::Value *iv) -> void {
  // Issued mid-body, the future iteration's values must not replace this one's.
  const ir::Block &body = *op.regions[0];
  std::vector<std::pair<const ir::Value *, std::optional<Lowered>>> saved;
  auto save = [&](const ir::Value *v) {
    auto it = vals_.find(v);
    saved.emplace_back(v, it == vals_.end() ? std::nullopt : std::optional<Lowered>(it->second));
  };
  for (const ir::Value *a : body.args)
    save(a);
  for (const ir::Op *o : p.slice)
    for (const ir::Value *r : o->results)
      save(r);
  const int d = p.stages - 1;
  llvm::Value *n = b_.getInt32(static_cast<uint32_t>(p.slots));
  llvm::Value *hi = scalar(op.operands[1]), *step = scalar(op.operands[2]);
  const bool sg = op.operands[0]->type.is_signed();
  llvm::Value *ahead =
      b_.CreateAdd(iv, b_.CreateMul(step, llvm::ConstantInt::get(iv->getType(), d)));
  llvm::Value *ok = sg ? b_.CreateICmpSLT(ahead, hi) : b_.CreateICmpULT(ahead, hi);
  std::vector<std::vector<llvm::Value *>> vals;
  for (const auto &ps : p.ahead_phis)
    vals.emplace_back(ps.begin(), ps.end());
  p.ahead_next = pipeline_issue(p, cs, ahead, vals,
                                b_.CreateURem(b_.CreateAdd(p.count, b_.getInt32(d)), n), ok);
  p.loaded_next = p.loaded;
  p.count_next = b_.CreateAdd(p.count, b_.getInt32(1));
  for (auto &[v, l] : saved)
    if (l)
      vals_[v] = *l;
    else
      vals_.erase(v);
}

auto Lowering::pipeline_latch(Pipeline &p, llvm::BasicBlock *latch) -> void {
  p.count->addIncoming(p.count_next, latch);
  for (size_t j = 0; j < p.ahead_phis.size(); ++j)
    for (size_t s = 0; s < p.ahead_phis[j].size(); ++s)
      p.ahead_phis[j][s]->addIncoming(p.ahead_next[j][s], latch);
  for (size_t j = 0; j < p.loaded_phis.size(); ++j)
    for (size_t s = 0; s < p.loaded_phis[j].size(); ++s)
      p.loaded_phis[j][s]->addIncoming(p.loaded_next[j][s], latch);
}

auto Lowering::pipeline_end(Pipeline &p) -> void {
  if (!p.regs)
    target_->async_wait(0); // copies of iterations that never ran: none may land later
  for (const PipeLoad &pl : p.loads) {
    prestaged_.erase(pl.load->result());
    prestaged_.erase(pl.operand);
    preloaded_.erase(pl.load->result());
    preloaded_.erase(pl.operand);
  }
  reserved_ = p.reserved_before;
}

} // namespace kiln::llvmgen::detail
