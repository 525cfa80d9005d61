// Structured control flow: for, while, if (loop-carried blocks as swapped
// buffers on the CPU, as per-slot phis on the GPU), and calls.
#include "compiler/llvm/lowering.hpp"

#include <utility>

#include "kiln/error.hpp"

namespace kiln::llvmgen::detail {

auto Lowering::start_carried(const std::vector<const ir::Value *> &inits,
                             const std::vector<ir::Value *> &args) -> std::vector<Carried> {
  std::vector<Carried> cs;
  for (size_t i = 0; i < inits.size(); ++i) {
    const ir::Value *v = inits[i];
    Carried c;
    c.init = v;
    if (v->type.is_block() && distributed_) {
      c.map = map_for(plan_->layout(args[i]), v->type);
      c.init_slots = slot_values(v, materialize_gpu(v, c.map));
    } else if (v->type.is_block()) {
      c.buf_a = alloc_buffer(v->type);
      c.buf_b = alloc_buffer(v->type);
      materialize(v, c.buf_a);
    }
    cs.push_back(c);
  }
  return cs;
}

auto Lowering::slot_values(const ir::Value *v, const Lowered &l) -> std::vector<llvm::Value *> {
  std::vector<llvm::Value *> r;
  for (int64_t s = 0; s < l.map->slots(); ++s)
    r.push_back(b_.CreateLoad(reg_type(v->type.element()), slot_ptr(v->type, l.buf, s)));
  return r;
}

auto Lowering::slots_buffer(const Type &t, const MapPtr &m,
                            const std::vector<llvm::Value *> &vals) -> Lowered {
  Lowered l;
  l.map = m;
  l.buf = alloc_buffer(t, m.get());
  for (size_t s = 0; s < vals.size(); ++s)
    b_.CreateStore(vals[s], slot_ptr(t, l.buf, static_cast<int64_t>(s)));
  return l;
}

auto Lowering::make_phis(std::vector<Carried> &cs, llvm::BasicBlock *pre) -> void {
  for (Carried &c : cs) {
    if (c.map) {
      for (llvm::Value *v : c.init_slots) {
        c.slots.push_back(b_.CreatePHI(v->getType(), 2));
        c.slots.back()->addIncoming(v, pre);
      }
    } else if (c.buf_a) {
      c.phi = b_.CreatePHI(b_.getPtrTy(), 2);
      c.phi->addIncoming(c.buf_a, pre);
    } else {
      c.phi = b_.CreatePHI(reg_type(c.init->type), 2);
      c.phi->addIncoming(scalar(c.init), pre);
    }
  }
}

auto Lowering::bind_carried(const std::vector<Carried> &cs, const std::vector<ir::Value *> &args)
    -> void {
  for (size_t i = 0; i < cs.size(); ++i) {
    if (cs[i].map)
      vals_[args[i]] = slots_buffer(args[i]->type, cs[i].map, {cs[i].slots.begin(), cs[i].slots.end()});
    else
      set(args[i], cs[i].buf_a ? nullptr : cs[i].phi, cs[i].buf_a ? cs[i].phi : nullptr);
  }
}

auto Lowering::yield_carried(const std::vector<Carried> &cs, const std::vector<ir::Value *> &ys)
    -> std::vector<std::vector<llvm::Value *>> {
  std::vector<std::vector<llvm::Value *>> next;
  for (size_t i = 0; i < cs.size(); ++i) {
    const Carried &c = cs[i];
    if (c.map) {
      next.push_back(slot_values(ys[i], materialize_gpu(ys[i], c.map)));
    } else if (!c.buf_a) {
      next.push_back({scalar(ys[i])});
    } else {
      llvm::Value *other = b_.CreateSelect(b_.CreateICmpEQ(c.phi, c.buf_a), c.buf_b, c.buf_a);
      materialize(ys[i], other);
      next.push_back({other});
    }
  }
  return next;
}

auto Lowering::add_incoming(const std::vector<Carried> &cs,
                            const std::vector<std::vector<llvm::Value *>> &next,
                            llvm::BasicBlock *latch) -> void {
  for (size_t i = 0; i < cs.size(); ++i) {
    if (cs[i].map)
      for (size_t s = 0; s < cs[i].slots.size(); ++s)
        cs[i].slots[s]->addIncoming(next[i][s], latch);
    else
      cs[i].phi->addIncoming(next[i][0], latch);
  }
}

auto Lowering::set_results(const ir::Op &op, const std::vector<Carried> &cs) -> void {
  for (size_t i = 0; i < cs.size(); ++i) {
    if (cs[i].map)
      vals_[op.results[i]] = slots_buffer(op.results[i]->type, cs[i].map,
                                           {cs[i].slots.begin(), cs[i].slots.end()});
    else
      set(op.results[i], cs[i].buf_a ? nullptr : cs[i].phi, cs[i].buf_a ? cs[i].phi : nullptr);
  }
}

auto Lowering::lower_for(const ir::Op &op) -> void {
  llvm::Value *lo = scalar(op.operands[0]), *hi = scalar(op.operands[1]),
              *step = scalar(op.operands[2]);
  const bool sg = op.operands[0]->type.is_signed();
  std::vector<const ir::Value *> inits(op.operands.begin() + 3, op.operands.end());
  const ir::Block &body = *op.regions[0];
  std::vector<Carried> cs =
      start_carried(inits, std::vector<ir::Value *>(body.args.begin() + 1, body.args.end()));
  bool spare_slot = false;
  const std::vector<size_t> in_flight =
      distributed_ ? defer_wgmma_waits(op, &spare_slot) : std::vector<size_t>{};
  Pipeline pipe = plan_pipeline(op, spare_slot);
  if (!pipe.loads.empty())
    pipeline_prologue(pipe, op, cs);
  // An enclosing loop's copies wait for its own dot, not for one in here.
  std::function<void()> outer_issue = std::exchange(deferred_issue_, nullptr);

  llvm::BasicBlock *pre = b_.GetInsertBlock();
  llvm::BasicBlock *head = new_bb("for"), *loop_body = new_bb("for.body"),
                   *exit = new_bb("for.end");
  b_.CreateBr(head);
  b_.SetInsertPoint(head);
  llvm::PHINode *iv = b_.CreatePHI(lo->getType(), 2, "iv");
  iv->addIncoming(lo, pre);
  make_phis(cs, pre);
  if (!pipe.loads.empty())
    pipeline_phis(pipe, pre);
  // range() semantics: a negative step counts down.
  llvm::Value *up = sg ? b_.CreateICmpSLT(iv, hi) : b_.CreateICmpULT(iv, hi);
  llvm::Value *cond = up;
  if (sg) {
    llvm::Value *down = b_.CreateICmpSGT(iv, hi);
    cond = b_.CreateSelect(b_.CreateICmpSGT(step, llvm::ConstantInt::get(step->getType(), 0)), up,
                           down);
  }
  b_.CreateCondBr(cond, loop_body, exit);

  b_.SetInsertPoint(loop_body);
  if (!pipe.loads.empty())
    pipeline_iteration(pipe, op, cs, iv);
  set(body.args[0], iv, nullptr);
  bind_carried(cs, std::vector<ir::Value *>(body.args.begin() + 1, body.args.end()));
  lower_ops(body, /*stop_at_terminator=*/true);
  if (deferred_issue_) // no wgmma dot issued the pipeline's copies
    std::exchange(deferred_issue_, nullptr)();
  const ir::Op &yield = *body.ops.back();
  std::vector<std::vector<llvm::Value *>> next = yield_carried(cs, yield.operands);
  llvm::Value *iv_next = b_.CreateAdd(iv, step);
  llvm::BasicBlock *latch = b_.GetInsertBlock();
  iv->addIncoming(iv_next, latch);
  add_incoming(cs, next, latch);
  if (!pipe.loads.empty())
    pipeline_latch(pipe, latch);
  b_.CreateBr(head);
  b_.SetInsertPoint(exit);
  if (!pipe.loads.empty())
    pipeline_end(pipe);
  deferred_issue_ = std::move(outer_issue);
  set_results(op, cs);
  await_wgmma_results(op, in_flight);
  refresh_thread_ids();
}

auto Lowering::lower_while(const ir::Op &op) -> void {
  std::vector<const ir::Value *> inits(op.operands.begin(), op.operands.end());
  const ir::Block &before = *op.regions[0], &after = *op.regions[1];
  std::vector<Carried> cs = start_carried(inits, before.args);

  llvm::BasicBlock *pre = b_.GetInsertBlock();
  llvm::BasicBlock *head = new_bb("while"), *loop_body = new_bb("while.body"),
                   *exit = new_bb("while.end");
  b_.CreateBr(head);
  b_.SetInsertPoint(head);
  make_phis(cs, pre);
  bind_carried(cs, before.args);
  lower_ops(before, true);
  const ir::Op &cond = *before.ops.back();
  b_.CreateCondBr(scalar(cond.operands[0]), loop_body, exit);

  b_.SetInsertPoint(loop_body);
  // The IR generator passes the carried values through the condition unchanged.
  bind_carried(cs, after.args);
  lower_ops(after, true);
  std::vector<std::vector<llvm::Value *>> next = yield_carried(cs, after.ops.back()->operands);
  add_incoming(cs, next, b_.GetInsertBlock());
  b_.CreateBr(head);
  b_.SetInsertPoint(exit);
  set_results(op, cs);
  refresh_thread_ids();
}

auto Lowering::lower_if(const ir::Op &op) -> void {
  llvm::Value *cond = scalar(op.operands[0]);
  std::vector<llvm::Value *> bufs;
  std::vector<MapPtr> maps;
  for (const ir::Value *r : op.results) {
    maps.push_back(distributed_ && r->type.is_block() ? map_for(plan_->layout(r), r->type) : nullptr);
    bufs.push_back(r->type.is_block() ? alloc_buffer(r->type, maps.back().get()) : nullptr);
  }
  llvm::BasicBlock *then_bb = new_bb("then"), *else_bb = new_bb("else"), *merge = new_bb("endif");
  b_.CreateCondBr(cond, then_bb, else_bb);
  std::vector<std::pair<std::vector<llvm::Value *>, llvm::BasicBlock *>> incoming;
  for (int r = 0; r < 2; ++r) {
    b_.SetInsertPoint(r == 0 ? then_bb : else_bb);
    const ir::Block &blk = *op.regions[r];
    lower_ops(blk, true);
    const ir::Op &yield = *blk.ops.back();
    std::vector<llvm::Value *> vals;
    for (size_t i = 0; i < op.results.size(); ++i) {
      if (maps[i])
        materialize_gpu(yield.operands[i], maps[i], bufs[i]);
      else if (bufs[i])
        materialize(yield.operands[i], bufs[i]);
      else
        vals.push_back(scalar(yield.operands[i]));
    }
    incoming.emplace_back(vals, b_.GetInsertBlock());
    b_.CreateBr(merge);
  }
  b_.SetInsertPoint(merge);
  size_t s = 0;
  for (size_t i = 0; i < op.results.size(); ++i) {
    if (bufs[i]) {
      set(op.results[i], nullptr, bufs[i]);
      vals_[op.results[i]].map = maps[i];
      continue;
    }
    llvm::PHINode *phi = b_.CreatePHI(reg_type(op.results[i]->type), 2);
    phi->addIncoming(incoming[0].first[s], incoming[0].second);
    phi->addIncoming(incoming[1].first[s], incoming[1].second);
    ++s;
    set(op.results[i], phi, nullptr);
  }
}

auto Lowering::lower_call(const ir::Op &op) -> void {
  llvm::Function *callee = fns_.at(op.callee);
  std::vector<llvm::Value *> args;
  for (const ir::Value *a : op.operands)
    args.push_back(scalar(a));
  llvm::Value *r = b_.CreateCall(callee, args);
  if (op.results.size() == 1)
    set(op.results[0], r, nullptr);
  else
    for (size_t i = 0; i < op.results.size(); ++i)
      set(op.results[i], b_.CreateExtractValue(r, static_cast<unsigned>(i)), nullptr);
}

} // namespace kiln::llvmgen::detail
