// The core of the lowering: types, lazy recomputation of block values, pure
// ops, the walk over a function's ops, device functions.
#include "compiler/llvm/lowering.hpp"

#include <llvm/IR/Verifier.h>

#include "compiler/llvm/half_phis.hpp"
#include <llvm/Support/raw_ostream.h>

#include "kiln/error.hpp"

namespace kiln::llvmgen::detail {

auto Lowering::run() -> LoweringResult {
  count_uses();
  // Device functions first so that calls can refer to them.
  for (size_t i = 1; i < prog_.functions.size(); ++i)
    declare_device_function(*prog_.functions[i]);
  for (size_t i = 1; i < prog_.functions.size(); ++i)
    define_function(*prog_.functions[i], fns_.at(prog_.functions[i].get()));
  target_->define_kernel(prog_.kernel());
  cap_registers_for_wgmma();
  if (distributed_)
    for (llvm::Function &f : *mod_)
      narrow_half_phis(f);
  std::string err;
  llvm::raw_string_ostream os(err);
  if (llvm::verifyModule(*mod_, &os))
    throw std::logic_error("kiln internal error: invalid LLVM IR for " + prog_.kernel().name +
                           ": " + os.str());
  LoweringResult r{std::move(mod_), target_->shared_bytes(), scratch_bytes_, {}};
  if (distributed_) {
    ir::PrintNotes notes;
    notes.after_value = [&](const ir::Value &v) {
      gpu::EncodingPtr e = v.type.is_block() ? plan_->natural(&v) : nullptr;
      return e ? " " + e->str() : std::string();
    };
    notes.before_op = [&](const ir::Op &op) {
      auto it = op_notes_.find(&op);
      return it == op_notes_.end() ? std::string() : it->second;
    };
    r.ir_with_layouts = ir::print(prog_, &notes);
  }
  return r;
}

auto Lowering::reg_type(const Type &t) -> llvm::Type * {
  if (t.pointer)
    return b_.getPtrTy();
  switch (t.elem) {
  case DType::i1:
    return b_.getInt1Ty();
  case DType::i8:
  case DType::u8:
    return b_.getInt8Ty();
  case DType::i16:
  case DType::u16:
    return b_.getInt16Ty();
  case DType::i32:
  case DType::u32:
    return b_.getInt32Ty();
  case DType::i64:
  case DType::u64:
    return b_.getInt64Ty();
  case DType::f16:
  case DType::bf16:
  case DType::f32:
  case DType::f8e4nv:
  case DType::f8e5:
  case DType::f8e4b15:
  case DType::f8e4b8:
  case DType::f8e5b16:
    return b_.getFloatTy();
  case DType::f64:
    return b_.getDoubleTy();
  }
  return nullptr;
}

auto Lowering::mem_type(DType t) -> llvm::Type * {
  switch (t) {
  case DType::i1:
    return b_.getInt8Ty();
  case DType::f16:
    return b_.getHalfTy();
  case DType::bf16:
    return b_.getInt16Ty();
  default:
    return is_fp8(t) ? b_.getInt8Ty() : reg_type(Type::scalar(t));
  }
}

auto Lowering::count_uses() -> void {
  for (const auto &f : prog_.functions)
    count_block(f->body);
  if (distributed_)
    for (const auto &f : prog_.functions)
      fuse_dot_adds(f->body);
}

auto Lowering::count_block(const ir::Block &b) -> void {
  for (const ir::Op *op : b.ops) {
    for (const ir::Value *v : op->operands)
      ++uses_[v];
    for (const ir::Block *r : op->regions)
      count_block(*r);
  }
}

auto Lowering::is_pure(OpKind k) -> bool {
  switch (k) {
  case OpKind::Constant:
  case OpKind::Splat:
  case OpKind::Arange:
  case OpKind::Binary:
  case OpKind::Compare:
  case OpKind::Unary:
  case OpKind::Select:
  case OpKind::Fma:
  case OpKind::Cast:
  case OpKind::Bitcast:
  case OpKind::AddPtr:
  case OpKind::Math:
  case OpKind::Gather:
  case OpKind::Broadcast:
  case OpKind::ExpandDims:
  case OpKind::Reshape:
  case OpKind::Trans:
    return true;
  default:
    return false;
  }
}

auto Lowering::cost(const ir::Value *v) -> int {
  auto it = cost_.find(v);
  return it == cost_.end() ? 0 : it->second;
}

auto Lowering::new_bb(const char *name) -> llvm::BasicBlock * {
  return llvm::BasicBlock::Create(ctx_, name, fn_);
}

auto Lowering::loop(int64_t n, const std::function<void(llvm::Value *)> &body) -> void {
  if (n == 1) {
    body(b_.getInt64(0));
    return;
  }
  llvm::BasicBlock *pre = b_.GetInsertBlock();
  llvm::BasicBlock *head = new_bb("loop"), *exit = new_bb("loop.end");
  b_.CreateBr(head);
  b_.SetInsertPoint(head);
  llvm::PHINode *i = b_.CreatePHI(b_.getInt64Ty(), 2, "i");
  i->addIncoming(b_.getInt64(0), pre);
  body(i);
  llvm::Value *next = b_.CreateAdd(i, b_.getInt64(1), "", true, true);
  i->addIncoming(next, b_.GetInsertBlock());
  llvm::BranchInst *br = b_.CreateCondBr(b_.CreateICmpULT(next, b_.getInt64(n)), head, exit);
  // GPU: unrolled, every slot index is a constant and SROA keeps the
  // thread's elements in registers instead of local memory. CPU: the
  // vectorizer already widens and interleaves element loops; fully
  // unrolling nests of them (a 16x64 tile) only bloats the code and the
  // compile time (reduce_rows went from ~730 ms to a fraction of it).
  llvm::MDNode *hint =
      llvm::MDNode::get(ctx_, llvm::MDString::get(ctx_, distributed_ ? "llvm.loop.unroll.full"
                                                                     : "llvm.loop.unroll.disable"));
  llvm::MDNode *loop_id = llvm::MDNode::getDistinct(ctx_, {nullptr, hint});
  loop_id->replaceOperandWith(0, loop_id);
  br->setMetadata(llvm::LLVMContext::MD_loop, loop_id);
  b_.SetInsertPoint(exit);
}

auto Lowering::loop_nest(const Type &shape, const std::function<void(const Idx &)> &body,
                         int skip_axis) -> void {
  Idx idx{};
  if (!distributed_ && shape.rank > 3) {
    // CPU, blocks over 3-D (a bitonic sort's [2] * 11 hypercube): one loop
    // over the elements, the index split by shifts and masks (every dim is a
    // power of two), instead of a nest of `rank` loops of trip count 2 per op.
    Type iter = shape;
    if (skip_axis >= 0)
      iter.shape[skip_axis] = 1;
    loop(iter.numel(), [&](llvm::Value *lin) {
      Idx at = delinear(iter, lin);
      if (skip_axis >= 0)
        at[skip_axis] = b_.getInt64(0);
      body(at);
    });
    return;
  }
  std::function<void(int)> level = [&](int d) {
    if (d == shape.rank) {
      body(idx);
      return;
    }
    if (d == skip_axis) {
      idx[d] = b_.getInt64(0);
      level(d + 1);
      return;
    }
    loop(shape.shape[d], [&](llvm::Value *i) {
      idx[d] = i;
      level(d + 1);
    });
  };
  level(0);
}

auto Lowering::linear(const Type &shape, const Idx &idx) -> llvm::Value * {
  llvm::Value *lin = b_.getInt64(0);
  int64_t stride = 1;
  for (int d = shape.rank - 1; d >= 0; --d) {
    if (shape.shape[d] != 1)
      lin = b_.CreateAdd(lin, b_.CreateMul(idx[d], b_.getInt64(stride), "", true, true), "", true,
                         true);
    stride *= shape.shape[d];
  }
  return lin;
}

auto Lowering::delinear(const Type &shape, llvm::Value *lin) -> Idx {
  Idx idx{};
  for (int d = shape.rank - 1; d >= 0; --d) {
    const int64_t n = shape.shape[d];
    idx[d] = n == 1 ? b_.getInt64(0) : b_.CreateURem(lin, b_.getInt64(n));
    lin = n == 1 ? lin : b_.CreateUDiv(lin, b_.getInt64(n));
  }
  return idx;
}

auto Lowering::alloc_buffer(const Type &t, const gpu::BitMap *m) -> llvm::Value * {
  const int64_t n = distributed_ ? m->slots() : t.numel();
  llvm::Type *array = llvm::ArrayType::get(reg_type(t.element()), n);
  llvm::IRBuilder<> eb(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
  if (!distributed_ && scratch_ && fn_ == scratch_fn_) {
    // Programs run on oneTBB workers with a few MiB of stack: a block the
    // language accepts (2^20 elements) would overflow it, so big buffers
    // (and any beyond the frame's budget) live in the worker's scratch
    // memory, which the driver reuses across programs and launches.
    const uint64_t bytes = mod_->getDataLayout().getTypeAllocSize(array);
    if (bytes > kStackBufferMax || stack_bytes_ + bytes > kStackBudget) {
      const uint64_t at = (scratch_bytes_ + 63) / 64 * 64;
      scratch_bytes_ = at + bytes;
      return eb.CreateConstInBoundsGEP1_64(eb.getInt8Ty(), scratch_, at);
    }
    stack_bytes_ += bytes;
  }
  llvm::AllocaInst *a = eb.CreateAlloca(array);
  a->setAlignment(llvm::Align(distributed_ ? 16 : 64));
  return a;
}

auto Lowering::buf_ptr(const Type &t, llvm::Value *buf, llvm::Value *lin) -> llvm::Value * {
  return b_.CreateInBoundsGEP(reg_type(t.element()), buf, lin);
}

auto Lowering::slot_ptr(const Type &t, llvm::Value *buf, int64_t slot) -> llvm::Value * {
  return buf_ptr(t, buf, b_.getInt64(slot));
}

auto Lowering::for_elements(const Type &shape, const std::function<void(const Idx &)> &body)
    -> void {
  loop_nest(shape, body);
}

auto Lowering::scalar(const ir::Value *v) -> llvm::Value * {
  auto it = vals_.find(v);
  if (it == vals_.end() || !it->second.scalar)
    throw std::logic_error("kiln internal error: scalar %" + std::to_string(v->id) +
                           " used before lowered");
  return it->second.scalar;
}

auto Lowering::element(const ir::Value *v, const Idx &idx) -> llvm::Value * {
  if (!v->type.is_block())
    return scalar(v);
  const Lowered &l = vals_.at(v);
  if (!l.lazy && !(distributed_ && view_ && recomputed_in(v, l, *view_))) {
    if (distributed_)
      return read_held(v, l);
    return b_.CreateLoad(reg_type(v->type.element()),
                         buf_ptr(v->type, l.buf, linear(v->type, idx)));
  }
  const ir::Op &op = *v->def;
  switch (op.kind) {
  case OpKind::Constant:
    return constant(op);
  case OpKind::Splat:
    return scalar(op.operands[0]);
  case OpKind::Arange:
    return b_.CreateAdd(b_.CreateTrunc(idx[0], b_.getInt32Ty()),
                        b_.getInt32(static_cast<int32_t>(op.i)));
  case OpKind::Broadcast: {
    const ir::Value *src = op.operands[0];
    Idx si{};
    for (int d = 0; d < src->type.rank; ++d)
      si[d] = src->type.shape[d] == 1 ? b_.getInt64(0) : idx[d];
    if (!distributed_)
      return element(src, si);
    // The stretched dims' slot bits select nothing in the operand.
    const gpu::BitMap sv =
        gpu::view_through_broadcast(*view_, gpu::shape_of(v->type), gpu::shape_of(src->type));
    return with_view(sv, [&] { return element(src, si); });
  }
  case OpKind::ExpandDims: {
    Idx si{};
    int n = 0;
    for (int d = 0; d < v->type.rank; ++d)
      if (d != op.axis)
        si[n++] = idx[d];
    return element(op.operands[0], si);
  }
  case OpKind::Reshape:
    return element(op.operands[0], delinear(op.operands[0]->type, linear(v->type, idx)));
  case OpKind::Trans: {
    Idx si{};
    for (int d = 0; d < v->type.rank; ++d)
      si[op.ints[d]] = idx[d];
    if (!distributed_)
      return element(op.operands[0], si);
    const gpu::BitMap sv = gpu::view_through_trans(*view_, gpu::shape_of(v->type), op.ints);
    return with_view(sv, [&] { return element(op.operands[0], si); });
  }
  case OpKind::Gather:
    return gather_element(op, idx);
  default: {
    std::vector<llvm::Value *> args;
    for (const ir::Value *o : op.operands)
      args.push_back(element(o, idx));
    return compute(op, args);
  }
  }
}

auto Lowering::recomputed_in(const ir::Value *v, const Lowered &l, const gpu::BitMap &view) const
    -> bool {
  return l.map && recompute_cost_.count(v) && !gpu::slot_map(view, *l.map);
}

auto Lowering::materialize(const ir::Value *v, llvm::Value *into) -> llvm::Value * {
  llvm::Value *buf = into ? into : alloc_buffer(v->type);
  for_elements(v->type, [&](const Idx &idx) {
    b_.CreateStore(element(v, idx), buf_ptr(v->type, buf, linear(v->type, idx)));
  });
  return buf;
}

auto Lowering::as_buffer(const ir::Value *v) -> llvm::Value * {
  const Lowered &l = vals_.at(v);
  return l.lazy ? materialize(v) : l.buf;
}

auto Lowering::constant(const ir::Op &op) -> llvm::Value * {
  const Type t = op.result()->type.element();
  if (t.is_float())
    return llvm::ConstantFP::get(reg_type(t), op.f);
  return llvm::ConstantInt::get(reg_type(t), static_cast<uint64_t>(op.i), true);
}

auto Lowering::alloc_scalar(llvm::Type *t) -> llvm::Value * {
  llvm::IRBuilder<> eb(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
  return eb.CreateAlloca(t);
}

auto Lowering::set(const ir::Value *v, llvm::Value *s, llvm::Value *buf) -> void {
  Lowered l;
  l.scalar = s;
  l.buf = buf;
  vals_[v] = l;
}

auto Lowering::lower_pure(const ir::Op &op) -> void {
  const ir::Value *res = op.result();
  if (auto it = add_is_dot_.find(res); it != add_is_dot_.end()) {
    vals_[res] = vals_.at(it->second); // the dot accumulated into the addend
    return;
  }
  if (!res->type.is_block()) {
    std::vector<llvm::Value *> args;
    for (const ir::Value *o : op.operands)
      args.push_back(scalar(o));
    set(res, compute(op, args), nullptr);
    return;
  }
  int c = 1, rc = 1;
  for (const ir::Value *o : op.operands) {
    c += cost(o);
    if (rc && o->type.is_block()) {
      auto r = recompute_cost_.find(o);
      rc = r == recompute_cost_.end() ? 0 : rc + r->second;
    }
  }
  if (distributed_ && rc && rc <= kMaxLazyCost && op.kind != OpKind::Gather)
    recompute_cost_[res] = rc;
  Lowered l;
  l.lazy = true;
  vals_[res] = l;
  // Recomputing is free for cheap trees; a shared, costly one is stored
  // once, and so is any big one: element() recurses once per level of a
  // lazy tree, and an unrolled `acc += x` chain would be thousands deep.
  if ((uses_[res] > 1 && c > 6) || c > kMaxLazyCost) {
    if (distributed_)
      vals_[res] = materialize_gpu(res);
    else
      set(res, nullptr, materialize(res));
    c = 0;
  }
  cost_[res] = c;
}

auto Lowering::lower_ops(const ir::Block &blk, bool stop_at_terminator) -> void {
  // A conversion made in one region is not there in another.
  converted_.clear();
  region_depth_ += stop_at_terminator;
  struct Leave {
    Lowering *l;
    bool region;
    ~Leave() {
      l->converted_.clear();
      l->region_depth_ -= region;
    }
  } leave{this, stop_at_terminator};
  for (const ir::Op *op : blk.ops) {
    cur_op_ = op;
    switch (op->kind) {
    case OpKind::Load:
      lower_load(*op);
      break;
    case OpKind::Store:
      lower_store(*op);
      break;
    case OpKind::AtomicRMW:
    case OpKind::AtomicCAS:
      lower_atomic(*op);
      break;
    case OpKind::Reduce:
      lower_reduce(*op);
      break;
    case OpKind::Scan:
      lower_scan(*op);
      break;
    case OpKind::Dot:
      lower_dot(*op);
      break;
    case OpKind::For:
      lower_for(*op);
      break;
    case OpKind::While:
      lower_while(*op);
      break;
    case OpKind::If:
      lower_if(*op);
      break;
    case OpKind::Call:
      lower_call(*op);
      break;
    case OpKind::ProgramId:
      set(op->result(), pid_[op->axis], nullptr);
      break;
    case OpKind::NumPrograms:
      set(op->result(), nprog_[op->axis], nullptr);
      break;
    case OpKind::Yield:
    case OpKind::Condition:
      if (stop_at_terminator)
        return;
      break;
    case OpKind::Return: {
      if (op->operands.empty())
        b_.CreateRetVoid();
      else if (op->operands.size() == 1)
        b_.CreateRet(scalar(op->operands[0]));
      else {
        llvm::Value *agg = llvm::UndefValue::get(fn_->getReturnType());
        for (size_t i = 0; i < op->operands.size(); ++i)
          agg = b_.CreateInsertValue(agg, scalar(op->operands[i]), static_cast<unsigned>(i));
        b_.CreateRet(agg);
      }
      return;
    }
    case OpKind::Assert:
      lower_assert(*op);
      break;
    case OpKind::Print:
      lower_print(*op);
      break;
    case OpKind::Gather:
      if (distributed_)
        lower_gather_gpu(*op);
      else
        lower_pure(*op);
      break;
    case OpKind::InlineAsm:
      lower_inline_asm(*op);
      break;
    case OpKind::Barrier:
      if (distributed_)
        target_->barrier();
      break; // on the CPU a program is one thread: nothing to wait for
    default:
      lower_pure(*op);
      break;
    }
  }
}

auto Lowering::declare_device_function(const ir::Function &f) -> void {
  std::vector<llvm::Type *> params;
  for (const ir::Value *a : f.body.args)
    params.push_back(reg_type(a->type));
  llvm::Type *ret = b_.getVoidTy();
  if (f.result_types.size() == 1)
    ret = reg_type(f.result_types[0]);
  else if (f.result_types.size() > 1) {
    std::vector<llvm::Type *> elems;
    for (const Type &t : f.result_types)
      elems.push_back(reg_type(t));
    ret = llvm::StructType::get(ctx_, elems);
  }
  llvm::Function *fn = llvm::Function::Create(llvm::FunctionType::get(ret, params, false),
                                              llvm::Function::InternalLinkage, f.name, mod_.get());
  fn->addFnAttr(llvm::Attribute::NoInline);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  fns_[&f] = fn;
}

auto Lowering::define_function(const ir::Function &f, llvm::Function *fn) -> void {
  fn_ = fn;
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", fn));
  for (size_t i = 0; i < f.body.args.size(); ++i)
    set(f.body.args[i], fn->getArg(static_cast<unsigned>(i)), nullptr);
  // Device functions see no program ids; kernels pass none to them.
  lower_ops(f.body, false);
}

} // namespace kiln::llvmgen::detail

namespace kiln::llvmgen {

LoweringResult lower_tile_ir(const ir::Program &program, const Options &options,
                             LoweringTarget target, llvm::LLVMContext &ctx, int sm, bool wgmma) {
  return detail::Lowering(program, options, target, ctx, sm, wgmma).run();
}

} // namespace kiln::llvmgen
