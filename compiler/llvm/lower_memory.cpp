// Loads, stores and atomics (CPU: per element with branches for masks;
// GPU: in the layout the pointer asks for, predicated, 16-byte vectors
// where the axis info allows), device_assert and device_print.
#include "compiler/llvm/lowering.hpp"

#include <algorithm>

#include <llvm/IR/Intrinsics.h>

#include "compiler/llvm/lower_print.hpp"

#include "kiln/error.hpp"

namespace kiln::llvmgen::detail {

auto Lowering::load_elem(llvm::Value *ptr, DType t) -> llvm::Value * {
  return from_mem(b_.CreateLoad(mem_type(t), ptr), t);
}

auto Lowering::to_mem(llvm::Value *v, DType t) -> llvm::Value * {
  switch (t) {
  case DType::i1:
    return b_.CreateZExt(v, b_.getInt8Ty());
  case DType::f16:
    return b_.CreateFPTrunc(v, b_.getHalfTy());
  case DType::bf16:
    // Rounded by the target's conversion (native_bf16): its bf16 is the bits.
    if (auto *ext = llvm::dyn_cast<llvm::FPExtInst>(v); ext && ext->getSrcTy()->isBFloatTy())
      return b_.CreateBitCast(ext->getOperand(0), b_.getInt16Ty());
    return b_.CreateTrunc(b_.CreateLShr(b_.CreateBitCast(v, b_.getInt32Ty()), 16), b_.getInt16Ty());
  default:
    return is_fp8(t) ? to_fp8(v, t) : v;
  }
}

auto Lowering::guarded(llvm::Value *cond, const std::function<llvm::Value *()> &then,
                       llvm::Value *otherwise) -> llvm::Value * {
  llvm::BasicBlock *yes = new_bb("masked"), *done = new_bb("masked.end");
  llvm::BasicBlock *from = b_.GetInsertBlock();
  b_.CreateCondBr(cond, yes, done);
  b_.SetInsertPoint(yes);
  llvm::Value *v = then();
  llvm::BasicBlock *yes_end = b_.GetInsertBlock();
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  if (!v)
    return nullptr;
  llvm::PHINode *phi = b_.CreatePHI(v->getType(), 2);
  phi->addIncoming(v, yes_end);
  phi->addIncoming(otherwise ? otherwise : llvm::UndefValue::get(v->getType()), from);
  return phi;
}

auto Lowering::bounds_ok(const ir::Op &op, const char *access, llvm::Value *ptr, int64_t bytes,
                         llvm::Value *mask) -> llvm::Value * {
  if (distributed_ ? !gpu_record_ || fn_ != gpu_kernel_fn_ : !extents_ || fn_ != scratch_fn_)
    return nullptr;
  // The parameter the pointer is an offset of; unknown through anything
  // else (a select, a loaded pointer): not checked.
  const ir::Value *v = op.operands[0];
  while (v->def) {
    switch (v->def->kind) {
    case OpKind::AddPtr:
    case OpKind::Splat:
    case OpKind::Broadcast:
    case OpKind::ExpandDims:
    case OpKind::Reshape:
    case OpKind::Trans:
      v = v->def->operands[0];
      continue;
    default:
      return nullptr;
    }
  }
  const ir::Function &k = prog_.kernel();
  const auto at = std::find(k.body.args.begin(), k.body.args.end(), v);
  if (at == k.body.args.end() || !v->type.pointer)
    return nullptr;
  const size_t param = static_cast<size_t>(at - k.body.args.begin());
  llvm::Type *i64 = b_.getInt64Ty();
  llvm::Value *extent =
      distributed_ ? gpu_extents_[param]
                   : b_.CreateLoad(i64, b_.CreateConstInBoundsGEP1_64(i64, extents_, param));
  llvm::Value *offset =
      b_.CreateSub(b_.CreatePtrToInt(ptr, i64), b_.CreatePtrToInt(scalar(v), i64));
  llvm::Value *inside =
      b_.CreateAnd(b_.CreateICmpSGE(offset, b_.getInt64(0)),
                   b_.CreateICmpSLE(b_.CreateAdd(offset, b_.getInt64(bytes)), extent));
  llvm::Value *ok = b_.CreateOr(b_.CreateICmpSLT(extent, b_.getInt64(0)), inside);
  llvm::Value *bad = b_.CreateNot(ok);
  if (mask)
    bad = b_.CreateAnd(bad, mask);
  const bool store = access[0] == 's';
  if (distributed_)
    record_out_of_bounds_gpu(bad, param, op.loc.line, store, offset, extent);
  else
    record_out_of_bounds_cpu(bad, access, param, op.loc.line, offset, extent);
  return mask ? b_.CreateAnd(ok, mask) : ok;
}

auto Lowering::record_out_of_bounds_cpu(llvm::Value *bad, const char *access, size_t param,
                                        uint32_t line, llvm::Value *offset, llvm::Value *extent)
    -> void {
  const ir::Function &k = prog_.kernel();
  const std::string name =
      param < k.param_names.size() ? k.param_names[param] : std::to_string(param);
  llvm::Constant *msg = b_.CreateGlobalStringPtr(
      "out-of-bounds " + std::string(access) + " in kernel '" + k.name + "' at line " +
          std::to_string(line) + " through argument '" + name + "'",
      "kiln.oob.msg");
  guarded(
      bad,
      [&]() -> llvm::Value * {
        // {i32 failed, i32 out_of_bounds, ptr message, i64 offset, i64 extent}:
        // the first failure claims the record (programs run in parallel),
        // then fills it, the flag last.
        llvm::Value *claimed =
            b_.CreateAtomicRMW(llvm::AtomicRMWInst::Xchg,
                               b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), assert_record_, 4),
                               b_.getInt32(1), llvm::Align(4), llvm::AtomicOrdering::Monotonic);
        return guarded(
            b_.CreateICmpEQ(claimed, b_.getInt32(0)),
            [&]() -> llvm::Value * {
              b_.CreateStore(msg, b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), assert_record_, 8));
              b_.CreateStore(offset,
                             b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), assert_record_, 16));
              b_.CreateStore(extent,
                             b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), assert_record_, 24));
              llvm::StoreInst *flag = b_.CreateStore(b_.getInt32(1), assert_record_);
              flag->setAtomic(llvm::AtomicOrdering::Release);
              flag->setAlignment(llvm::Align(4));
              return nullptr;
            },
            nullptr);
      },
      nullptr);
}

auto Lowering::record_out_of_bounds_gpu(llvm::Value *bad, size_t param, uint32_t line, bool store,
                                        llvm::Value *offset, llvm::Value *extent) -> void {
  guarded(
      bad,
      [&]() -> llvm::Value * {
        // The device record (lower_tile_ir.hpp): the first violating thread
        // of the whole grid claims it with atom.exch and fills it; the host
        // reads it after the kernel has finished, so no ordering is needed
        // among the fields. Device memory cannot hold a host string: the
        // host builds the message from the argument index and line.
        auto field = [&](int64_t at) {
          return b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), gpu_record_, at);
        };
        llvm::Value *claimed =
            b_.CreateAtomicRMW(llvm::AtomicRMWInst::Xchg, gpu_record_, b_.getInt32(1),
                               llvm::Align(4), llvm::AtomicOrdering::Monotonic);
        return guarded(
            b_.CreateICmpEQ(claimed, b_.getInt32(0)),
            [&]() -> llvm::Value * {
              b_.CreateStore(b_.getInt32(static_cast<uint32_t>(param)), field(4));
              b_.CreateStore(b_.getInt32(line), field(8));
              b_.CreateStore(b_.getInt32(store ? 1 : 0), field(12));
              b_.CreateAlignedStore(offset, field(16), llvm::Align(8));
              b_.CreateAlignedStore(extent, field(24), llvm::Align(8));
              return nullptr;
            },
            nullptr);
      },
      nullptr);
}

auto Lowering::vector_width(const gpu::BitMap &m, const ir::Value *ptr, const ir::Value *mask)
    -> int64_t {
  int dim = 0;
  const int run = gpu::run_bits(m, gpu::shape_of(ptr->type), &dim);
  if (run == 0 || ptr->type.elem == DType::i1)
    return 1;
  const int64_t bytes = static_cast<int64_t>(dtype_size(ptr->type.elem));
  const analysis::AxisInfo p = plan_->axis().get(ptr);
  const int64_t mc = mask ? plan_->axis().get(mask).constancy[dim] : int64_t{1} << 30;
  for (int64_t v = std::min<int64_t>(int64_t{1} << run, 16 / bytes); v >= 2; v /= 2)
    if ((bytes > 1 || v > 4) && p.contig[dim] % v == 0 && p.div[dim] % (v * bytes) == 0 &&
        mc % v == 0)
      return v;
  return 1;
}

auto Lowering::each(const Type &shape, const std::function<void(const Idx &)> &f) -> void {
  if (shape.is_block())
    for_elements(shape, f);
  else
    f(Idx{});
}

auto Lowering::lower_assert(const ir::Op &op) -> void {
  if (distributed_ || !assert_record_)
    return;
  llvm::Constant *msg = b_.CreateGlobalStringPtr(op.str, "kiln.assert.msg");
  each(op.operands[0]->type, [&](const Idx &idx) {
    llvm::Value *ok = element(op.operands[0], idx);
    llvm::BasicBlock *bad = new_bb("assert.fail"), *done = new_bb("assert.ok");
    b_.CreateCondBr(ok, done, bad);
    b_.SetInsertPoint(bad);
    // {i32 failed, ptr message}: the message first, then the flag.
    llvm::Value *msg_slot = b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), assert_record_, 8);
    b_.CreateStore(msg, msg_slot);
    llvm::StoreInst *flag = b_.CreateStore(b_.getInt32(1), assert_record_);
    flag->setAtomic(llvm::AtomicOrdering::Release);
    flag->setAlignment(llvm::Align(4));
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
  });
}

auto Lowering::lower_print(const ir::Op &op) -> void {
  auto element_at = [&](const ir::Value *v, const Idx &i) { return element(v, i); };
  if (!distributed_) {
    emit_print(
        b_, op, pid_,
        [&](const ir::Value *v, const std::function<void(const Idx &)> &f) { each(v->type, f); },
        element_at, false);
    return;
  }
  // GPU (vprintf): a scalar from thread 0; a block from the threads that
  // hold it in its layout, each element by the one copy that owns it.
  emit_print(
      b_, op, pid_,
      [&](const ir::Value *v, const std::function<void(const Idx &)> &f) {
        if (!v->type.is_block()) {
          once([&] { f(Idx{}); });
          return;
        }
        const MapPtr m = map_for(plan_->layout(v), v->type);
        prepare(v, *m);
        llvm::Value *own = owner(*m);
        for_slots(*m, v->type, [&](int64_t, const Idx &idx) {
          if (!own) {
            f(idx);
            return;
          }
          llvm::BasicBlock *yes = new_bb("print.owner"), *done = new_bb("print.owner.end");
          b_.CreateCondBr(own, yes, done);
          b_.SetInsertPoint(yes);
          f(idx);
          b_.CreateBr(done);
          b_.SetInsertPoint(done);
        });
      },
      element_at, true);
}

auto Lowering::once(const std::function<void()> &f) -> void {
  if (!distributed_) {
    f();
    return;
  }
  llvm::BasicBlock *yes = new_bb("thread0"), *done = new_bb("thread0.end");
  b_.CreateCondBr(b_.CreateICmpEQ(tid64_, b_.getInt64(0)), yes, done);
  b_.SetInsertPoint(yes);
  f();
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
}

auto Lowering::lower_load_gpu(const ir::Op &op) -> void {
  const ir::Value *res = op.result();
  if (prestaged_.count(res) || preloaded_.count(res))
    return; // fetched ahead by the pipeline feeding its dot
  // Its pointer's layout, or the A fragments of the dot it feeds from outside a loop.
  const MapPtr m = map_for(plan_->layout(res), res->type);
  for (const ir::Value *o : op.operands)
    prepare(o, *m);
  vals_[res] = slots_buffer(res->type, m, load_slots(op, m, nullptr));
}

auto Lowering::load_slots(const ir::Op &op, const MapPtr &m, llvm::Value *in_range)
    -> std::vector<llvm::Value *> {
  const ir::Value *res = op.result(), *ptr = op.operands[0];
  const Type et = res->type.element();
  const bool has_mask = op.i & 1, has_other = op.i & 2;
  const ir::Value *mask = has_mask ? op.operands[1] : nullptr,
                  *other = has_other ? op.operands[2] : nullptr;
  const int64_t v = vector_width(*m, ptr, mask);
  // Within a thread's run of consecutive addresses, one address and
  // constant offsets: one register pair a run, not one an element.
  int dim = 0;
  int64_t run = 1;
  if (ptr->type.is_block()) {
    run = int64_t{1} << gpu::run_bits(*m, gpu::shape_of(ptr->type), &dim);
    run = std::min(run, plan_->axis().get(ptr).contig[dim]);
  }
  while (run & (run - 1))
    run &= run - 1;
  std::vector<Idx> idx(m->slots());
  for_slots(*m, res->type, [&](int64_t s, const Idx &i) { idx[s] = i; });
  std::vector<llvm::Value *> out(m->slots());
  const int64_t same = v == 1 ? same_address_slots(op, *m) : 0;
  with_view(*m, [&] {
    llvm::Value *first = nullptr;
    for (int64_t g = 0; g < m->slots(); g += v) {
      if (g & same) { // an earlier slot of this thread reads the same address
        out[g] = out[g & ~same];
        continue;
      }
      llvm::Value *p = g % run
                           ? b_.CreateInBoundsGEP(mem_type(et.elem), first, b_.getInt64(g % run))
                           : (first = at_slot(g, [&] { return element(ptr, idx[g]); }));
      llvm::Value *mk =
          and_mask(mask ? at_slot(g, [&] { return element(mask, idx[g]); }) : nullptr, in_range);
      // Debug: a group outside its tensor is not read (whole vectors: a
      // mask is constant over each).
      if (llvm::Value *ok = bounds_ok(op, "load", p, v * int64_t(dtype_size(et.elem)), mk))
        mk = ok;
      std::vector<llvm::Value *> others;
      for (int64_t j = 0; j < v; ++j)
        others.push_back(other ? at_slot(g + j, [&] { return element(other, idx[g + j]); })
                               : llvm::Constant::getNullValue(reg_type(et)));
      std::vector<llvm::Value *> got;
      if (v > 1) {
        got = target_->vector_load(p, mk, others, et.elem);
      } else if (mk) {
        llvm::Value *x = target_->masked_load(p, mk, others[0], et.elem);
        got = {x ? x
                 : guarded(
                       mk, [&] { return load_elem(p, et.elem); }, others[0])};
      } else {
        got = {load_elem(p, et.elem)};
      }
      std::copy(got.begin(), got.end(), out.begin() + g);
    }
    return 0;
  });
  return out;
}

/// The slot bits of `m` that only move within groups of elements whose
/// address, mask and `other` are the same (AxisInfo's constancy): a slot
/// with such bits set reads what the slot without them read. DeepSeek-V3's
/// fp8_gemm loads its per-column scales as `b_s_ptr + (offs_n // 128) * k`,
/// one address for all 16 columns a thread holds: one load, not 16.
auto Lowering::same_address_slots(const ir::Op &load, const gpu::BitMap &m) -> int64_t {
  const ir::Value *ptr = load.operands[0];
  if (!ptr->type.is_block())
    return 0;
  const gpu::Shape shape = gpu::shape_of(ptr->type);
  analysis::AxisInfo a = plan_->axis().get(ptr);
  for (size_t o = 1; o < load.operands.size(); ++o) { // mask, other
    const analysis::AxisInfo &x = plan_->axis().get(load.operands[o]);
    for (int d = 0; d < ptr->type.rank; ++d)
      a.constancy[d] = std::min(a.constancy[d], x.constancy[d]);
  }
  int64_t bits = 0;
  for (size_t k = 0; k < m.reg.size(); ++k) {
    if (m.reg[k] < 0)
      continue;
    const auto [d, j] = gpu::bit_owner(shape, m.reg[k]);
    const int64_t group = analysis::AxisInfoAnalysis::pow2_divisor(a.constancy[d]);
    if ((int64_t{1} << (j + 1)) <= group)
      bits |= int64_t{1} << k;
  }
  return bits;
}

/// The layout a store writes in: its value's, where that moves as many bytes
/// an instruction as the pointer's access layout would and each lane's run
/// continues the one before (weight_dequant stores the 16-element runs of
/// its fp8 load as bf16: two 16-byte stores a run, where the access
/// layout's 8-element runs cost a conversion of the whole block through
/// shared memory); else the access layout.
auto Lowering::store_map(const ir::Value *ptr, const ir::Value *val, const ir::Value *mask)
    -> MapPtr {
  const MapPtr a = map_for(plan_->access_layout(ptr), ptr->type);
  const gpu::EncodingPtr ve = plan_->natural(val);
  if (!ve)
    return a;
  const MapPtr v = map_for(ve, ptr->type);
  const gpu::Shape shape = gpu::shape_of(ptr->type);
  int dim = -1;
  const int run = gpu::run_bits(*v, shape, &dim);
  if (*v == *a || run == 0)
    return a;
  const bool lanes_follow = v->lane[0] == gpu::dim_offset(shape, dim) + run ||
                            (int64_t{1} << run) == shape[static_cast<size_t>(dim)];
  return lanes_follow && vector_width(*v, ptr, mask) >= vector_width(*a, ptr, mask) ? v : a;
}

auto Lowering::lower_store_gpu(const ir::Op &op) -> void {
  const ir::Value *ptr = op.operands[0], *val = op.operands[1];
  const ir::Value *mask = op.operands.size() > 2 ? op.operands[2] : nullptr;
  const DType et = ptr->type.elem;
  const MapPtr m = store_map(ptr, val, mask);
  for (const ir::Value *o : op.operands)
    prepare(o, *m);
  llvm::Value *own = owner(*m);
  const int64_t v = vector_width(*m, ptr, mask);
  std::vector<Idx> idx(m->slots());
  for_slots(*m, ptr->type, [&](int64_t s, const Idx &i) { idx[s] = i; });
  with_view(*m, [&] {
    for (int64_t g = 0; g < m->slots(); g += v) {
      llvm::Value *p = at_slot(g, [&] { return element(ptr, idx[g]); });
      llvm::Value *mk =
          and_mask(mask ? at_slot(g, [&] { return element(mask, idx[g]); }) : nullptr, own);
      if (llvm::Value *ok = bounds_ok(op, "store", p, v * int64_t(dtype_size(et)), mk)) // debug
        mk = ok;
      std::vector<llvm::Value *> vals;
      for (int64_t j = 0; j < v; ++j)
        vals.push_back(to_mem(at_slot(g + j, [&] { return element(val, idx[g + j]); }), et));
      if (v > 1) {
        target_->vector_store(p, mk, vals);
      } else if (!mk) {
        b_.CreateStore(vals[0], p);
      } else if (!target_->masked_store(p, mk, vals[0])) {
        guarded(
            mk,
            [&]() -> llvm::Value * {
              b_.CreateStore(vals[0], p);
              return nullptr;
            },
            nullptr);
      }
    }
    return 0;
  });
}

auto Lowering::atomic_at(const ir::Op &op, llvm::Value *ptr, const Idx &idx) -> llvm::Value * {
  const Type et = op.result()->type.element();
  const auto order = llvm::AtomicOrdering::AcquireRelease;
  if (op.kind == OpKind::AtomicCAS) {
    llvm::Value *cmp = to_mem(element(op.operands[1], idx), et.elem);
    llvm::Value *val = to_mem(element(op.operands[2], idx), et.elem);
    llvm::Value *pair = b_.CreateAtomicCmpXchg(ptr, cmp, val, llvm::MaybeAlign(), order,
                                               llvm::AtomicOrdering::Monotonic);
    return b_.CreateExtractValue(pair, 0);
  }
  using A = llvm::AtomicRMWInst;
  const bool fl = et.is_float(), sg = et.is_signed();
  A::BinOp bop = A::Add;
  switch (static_cast<ir::AtomicOp>(op.sub)) {
  case ir::AtomicOp::Add:
    bop = fl ? A::FAdd : A::Add;
    break;
  case ir::AtomicOp::Max:
    bop = fl ? A::FMax : sg ? A::Max : A::UMax;
    break;
  case ir::AtomicOp::Min:
    bop = fl ? A::FMin : sg ? A::Min : A::UMin;
    break;
  case ir::AtomicOp::And:
    bop = A::And;
    break;
  case ir::AtomicOp::Or:
    bop = A::Or;
    break;
  case ir::AtomicOp::Xor:
    bop = A::Xor;
    break;
  case ir::AtomicOp::Xchg:
    bop = A::Xchg;
    break;
  }
  llvm::Value *val = to_mem(element(op.operands[1], idx), et.elem);
  if (fl && val->getType()->isIntegerTy(16)) {
    // bf16 lives in memory as its 16 bits; the float operations take bfloat.
    llvm::Value *old = b_.CreateAtomicRMW(bop, ptr, b_.CreateBitCast(val, b_.getBFloatTy()),
                                          llvm::MaybeAlign(), order);
    return b_.CreateBitCast(old, val->getType());
  }
  return b_.CreateAtomicRMW(bop, ptr, val, llvm::MaybeAlign(), order);
}

auto Lowering::lower_atomic_gpu(const ir::Op &op) -> void {
  const ir::Value *res = op.result(), *ptr = op.operands[0];
  const Type et = res->type.element();
  const bool has_mask = op.kind == OpKind::AtomicRMW && op.operands.size() > 2;
  const MapPtr m = map_for(plan_->access_layout(ptr), res->type);
  for (const ir::Value *o : op.operands)
    prepare(o, *m);
  llvm::Value *own = owner(*m);
  Lowered l;
  l.map = m;
  l.buf = alloc_buffer(res->type, m.get());
  vals_[res] = l;
  if (op.kind == OpKind::AtomicRMW && static_cast<ir::AtomicOp>(op.sub) == ir::AtomicOp::Add &&
      uses_[res] == 0 &&
      (et.elem == DType::f32 || et.elem == DType::f16 || et.elem == DType::bf16) &&
      vector_atomic_add_gpu(op, m, own))
    return;
  for_slots(*m, res->type, [&](int64_t s, const Idx &idx) {
    llvm::Value *p = element(ptr, idx);
    llvm::Value *mk = and_mask(has_mask ? element(op.operands[2], idx) : nullptr, own);
    llvm::Value *old = mk ? guarded(
                                mk, [&] { return atomic_at(op, p, idx); }, nullptr)
                          : atomic_at(op, p, idx);
    b_.CreateStore(from_mem(old, et.elem), slot_ptr(res->type, l.buf, s));
  });
}

auto Lowering::vector_atomic_add_gpu(const ir::Op &op, const MapPtr &m, llvm::Value *own) -> bool {
  const ir::Value *ptr = op.operands[0], *val = op.operands[1];
  const ir::Value *mask = op.operands.size() > 2 ? op.operands[2] : nullptr;
  const DType et = ptr->type.elem;
  const int64_t v = vector_width(*m, ptr, mask);
  if (v < 2)
    return false;
  std::vector<Idx> idx(m->slots());
  for_slots(*m, ptr->type, [&](int64_t s, const Idx &i) { idx[s] = i; });
  bool done = true;
  with_view(*m, [&] {
    for (int64_t g = 0; g < m->slots() && done; g += v) {
      llvm::Value *p = at_slot(g, [&] { return element(ptr, idx[g]); });
      llvm::Value *mk =
          and_mask(mask ? at_slot(g, [&] { return element(mask, idx[g]); }) : nullptr, own);
      std::vector<llvm::Value *> vals;
      for (int64_t j = 0; j < v; ++j)
        vals.push_back(to_mem(at_slot(g + j, [&] { return element(val, idx[g + j]); }), et));
      done = target_->vector_atomic_add(p, mk, vals, et);
    }
    return 0;
  });
  return done;
}

auto Lowering::lower_load(const ir::Op &op) -> void {
  const ir::Value *res = op.result();
  if (distributed_ && res->type.is_block())
    return lower_load_gpu(op);
  const Type et = res->type.element();
  const bool has_mask = op.i & 1, has_other = op.i & 2;
  llvm::Value *buf = res->type.is_block() ? alloc_buffer(res->type) : nullptr;
  llvm::Value *out = nullptr;
  each(res->type, [&](const Idx &idx) {
    llvm::Value *ptr = element(op.operands[0], idx);
    llvm::Value *v;
    llvm::Value *mask = has_mask ? element(op.operands[1], idx) : nullptr;
    if (llvm::Value *ok =
            bounds_ok(op, "load", ptr, static_cast<int64_t>(dtype_size(et.elem)), mask)) // debug
      mask = ok;
    if (mask) {
      llvm::Value *other =
          has_other ? element(op.operands[2], idx) : llvm::Constant::getNullValue(reg_type(et));
      llvm::Value *m = mask;
      v = target_->masked_load(ptr, m, other, et.elem);
      if (!v)
        v = guarded(
            m, [&] { return load_elem(ptr, et.elem); }, other);
    } else {
      v = load_elem(ptr, et.elem);
    }
    if (buf)
      b_.CreateStore(v, buf_ptr(res->type, buf, linear(res->type, idx)));
    else
      out = v;
  });
  set(res, out, buf);
}

auto Lowering::lower_store(const ir::Op &op) -> void {
  if (distributed_ && op.operands[0]->type.is_block())
    return lower_store_gpu(op);
  const DType et = op.operands[0]->type.elem;
  const bool has_mask = op.operands.size() > 2;
  each(op.operands[0]->type, [&](const Idx &idx) {
    llvm::Value *ptr = element(op.operands[0], idx);
    llvm::Value *v = element(op.operands[1], idx);
    auto store = [&]() -> llvm::Value * {
      b_.CreateStore(to_mem(v, et), ptr);
      return nullptr;
    };
    auto masked = [&] {
      llvm::Value *m = has_mask ? element(op.operands[2], idx) : nullptr;
      if (llvm::Value *ok =
              bounds_ok(op, "store", ptr, static_cast<int64_t>(dtype_size(et)), m)) // debug
        m = ok;
      if (!m) {
        store();
        return;
      }
      if (!target_->masked_store(ptr, m, to_mem(v, et)))
        guarded(m, store, nullptr);
    };
    if (op.operands[0]->type.is_block())
      masked();
    else
      once(masked); // every thread holds the scalar; one writes it
  });
}

auto Lowering::lower_atomic(const ir::Op &op) -> void {
  const ir::Value *res = op.result();
  if (distributed_ && res->type.is_block())
    return lower_atomic_gpu(op);
  const Type et = res->type.element();
  llvm::Value *buf = res->type.is_block() ? alloc_buffer(res->type) : nullptr;
  llvm::Value *out = nullptr;
  const bool has_mask = op.kind == OpKind::AtomicRMW && op.operands.size() > 2;
  each(res->type, [&](const Idx &idx) {
    llvm::Value *ptr = element(op.operands[0], idx);
    auto rmw = [&]() -> llvm::Value * { return atomic_at(op, ptr, idx); };
    llvm::Value *old;
    if (distributed_) {
      // A scalar atomic happens once; every thread gets the old value.
      old = from_thread0(mem_type(et.elem), [&] {
        return has_mask ? guarded(element(op.operands[2], idx), rmw, nullptr) : rmw();
      });
    } else {
      old = has_mask ? guarded(element(op.operands[2], idx), rmw, nullptr) : rmw();
    }
    old = from_mem(old, et.elem);
    if (buf)
      b_.CreateStore(old, buf_ptr(res->type, buf, linear(res->type, idx)));
    else
      out = old;
  });
  set(res, out, buf);
}

auto Lowering::from_mem(llvm::Value *v, DType t) -> llvm::Value * {
  switch (t) {
  case DType::i1:
    return b_.CreateICmpNE(v, b_.getInt8(0));
  case DType::f16:
    return b_.CreateFPExt(v, b_.getFloatTy());
  case DType::bf16:
    if (target_->native_bf16())
      return b_.CreateFPExt(b_.CreateBitCast(v, b_.getBFloatTy()), b_.getFloatTy());
    return b_.CreateBitCast(b_.CreateShl(b_.CreateZExt(v, b_.getInt32Ty()), 16), b_.getFloatTy());
  default:
    return is_fp8(t) ? from_fp8(v, t) : v;
  }
}

auto Lowering::from_thread0(llvm::Type *t, const std::function<llvm::Value *()> &f)
    -> llvm::Value * {
  llvm::Value *slot = scratch(8);
  target_->barrier();
  llvm::BasicBlock *yes = new_bb("thread0"), *done = new_bb("thread0.end");
  b_.CreateCondBr(b_.CreateICmpEQ(tid64_, b_.getInt64(0)), yes, done);
  b_.SetInsertPoint(yes);
  b_.CreateStore(f(), slot);
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  target_->barrier();
  return b_.CreateLoad(t, slot);
}

} // namespace kiln::llvmgen::detail
