#include "compiler/llvm/lower_tile_ir.hpp"

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <numeric>
#include <set>
#include <unordered_map>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include "compiler/gpu/layout_plan.hpp"
#include "compiler/nvptx/libdevice.hpp"
#include "kiln/error.hpp"

namespace kiln::llvmgen {
namespace {

using ir::BinaryOp;
using ir::OpKind;
using ir::Type;
using ir::UnaryOp;

using Idx = std::array<llvm::Value *, Type::kMaxRank>;

// f16 and bf16 live in registers as float (rounded to their precision) and
// are converted only at memory; LLVM on x86 has no native bf16 arithmetic
// and would otherwise call libgcc helpers the JIT cannot count on.
bool is_half(DType t) { return t == DType::f16 || t == DType::bf16; }

/// A lowered IR value: a scalar SSA value, or a block that is either a
/// row-major buffer (`buf`) or recomputed per element (`lazy`).
struct Lowered {
  llvm::Value *scalar = nullptr;
  llvm::Value *buf = nullptr;
  bool lazy = false;
  std::shared_ptr<const gpu::BitMap> map; ///< GPU: which thread and slot holds each element of `buf`
};

class Lowering {
public:
  Lowering(const ir::Program &p, const Options &o, LoweringTarget target, llvm::LLVMContext &ctx)
      : prog_(p), opts_(o), gpu_(target == LoweringTarget::Nvptx), threads_(32 * o.num_warps), ctx_(ctx),
        mod_(std::make_unique<llvm::Module>(p.kernel().name, ctx)), b_(ctx) {
    if (gpu_)
      plan_ = std::make_unique<gpu::LayoutPlan>(p, o.num_warps);
  }

  LoweringResult run() {
    count_uses();
    // Device functions first so that calls can refer to them.
    for (size_t i = 1; i < prog_.functions.size(); ++i)
      declare_device_function(*prog_.functions[i]);
    for (size_t i = 1; i < prog_.functions.size(); ++i)
      define_function(*prog_.functions[i], fns_.at(prog_.functions[i].get()));
    if (gpu_) {
      define_gpu_kernel(prog_.kernel());
    } else {
      llvm::Function *program = define_program(prog_.kernel());
      define_entry(prog_.kernel(), program);
    }
    std::string err;
    llvm::raw_string_ostream os(err);
    if (llvm::verifyModule(*mod_, &os))
      throw std::logic_error("kiln internal error: invalid LLVM IR for " + prog_.kernel().name + ": " + os.str());
    LoweringResult r{std::move(mod_), shared_bytes_, {}};
    if (gpu_) {
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

private:
  // ---- types ----

  llvm::Type *reg_type(const Type &t) {
    if (t.pointer)
      return b_.getPtrTy();
    switch (t.elem) {
    case DType::i1: return b_.getInt1Ty();
    case DType::i8:
    case DType::u8: return b_.getInt8Ty();
    case DType::i16:
    case DType::u16: return b_.getInt16Ty();
    case DType::i32:
    case DType::u32: return b_.getInt32Ty();
    case DType::i64:
    case DType::u64: return b_.getInt64Ty();
    case DType::f16:
    case DType::bf16:
    case DType::f32: return b_.getFloatTy();
    case DType::f64: return b_.getDoubleTy();
    }
    return nullptr;
  }

  /// How an element is laid out in tensor memory.
  llvm::Type *mem_type(DType t) {
    switch (t) {
    case DType::i1: return b_.getInt8Ty();
    case DType::f16: return b_.getHalfTy();
    case DType::bf16: return b_.getInt16Ty();
    default: return reg_type(Type::scalar(t));
    }
  }

  // ---- uses (to decide what to materialize) ----

  void count_uses() {
    for (const auto &f : prog_.functions)
      count_block(f->body);
  }
  void count_block(const ir::Block &b) {
    for (const ir::Op *op : b.ops) {
      for (const ir::Value *v : op->operands)
        ++uses_[v];
      for (const ir::Block *r : op->regions)
        count_block(*r);
    }
  }

  static bool is_pure(OpKind k) {
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
    case OpKind::Broadcast:
    case OpKind::ExpandDims:
    case OpKind::Reshape:
    case OpKind::Trans: return true;
    default: return false;
    }
  }

  /// Per-element cost of recomputing a lazy value (its lazy op tree).
  int cost(const ir::Value *v) {
    auto it = cost_.find(v);
    return it == cost_.end() ? 0 : it->second;
  }

  // ---- control-flow helpers ----

  llvm::BasicBlock *new_bb(const char *name) { return llvm::BasicBlock::Create(ctx_, name, fn_); }

  /// for (i = 0; i < n; ++i) body(i), with an i64 counter.
  void loop(int64_t n, const std::function<void(llvm::Value *)> &body) {
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
    llvm::MDNode *hint = llvm::MDNode::get(
        ctx_, llvm::MDString::get(ctx_, gpu_ ? "llvm.loop.unroll.full" : "llvm.loop.unroll.disable"));
    llvm::MDNode *loop_id = llvm::MDNode::getDistinct(ctx_, {nullptr, hint});
    loop_id->replaceOperandWith(0, loop_id);
    br->setMetadata(llvm::LLVMContext::MD_loop, loop_id);
    b_.SetInsertPoint(exit);
  }

  void loop_nest(const Type &shape, const std::function<void(const Idx &)> &body, int skip_axis = -1) {
    Idx idx{};
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

  llvm::Value *linear(const Type &shape, const Idx &idx) {
    llvm::Value *lin = b_.getInt64(0);
    int64_t stride = 1;
    for (int d = shape.rank - 1; d >= 0; --d) {
      if (shape.shape[d] != 1)
        lin = b_.CreateAdd(lin, b_.CreateMul(idx[d], b_.getInt64(stride), "", true, true), "", true, true);
      stride *= shape.shape[d];
    }
    return lin;
  }

  Idx delinear(const Type &shape, llvm::Value *lin) {
    Idx idx{};
    for (int d = shape.rank - 1; d >= 0; --d) {
      const int64_t n = shape.shape[d];
      idx[d] = n == 1 ? b_.getInt64(0) : b_.CreateURem(lin, b_.getInt64(n));
      lin = n == 1 ? lin : b_.CreateUDiv(lin, b_.getInt64(n));
    }
    return idx;
  }

  /// CPU: a row-major array of the whole block. GPU: this thread's slots
  /// under layout `m` (an array SROA keeps in registers: every index into
  /// it is a constant).
  llvm::Value *alloc_buffer(const Type &t, const gpu::BitMap *m = nullptr) {
    const int64_t n = gpu_ ? m->slots() : t.numel();
    llvm::IRBuilder<> eb(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
    llvm::AllocaInst *a = eb.CreateAlloca(llvm::ArrayType::get(reg_type(t.element()), n));
    a->setAlignment(llvm::Align(gpu_ ? 16 : 64));
    return a;
  }

  /// CPU: element `lin` (row-major) of a buffer. GPU: slot `lin` of this thread.
  llvm::Value *buf_ptr(const Type &t, llvm::Value *buf, llvm::Value *lin) {
    return b_.CreateInBoundsGEP(reg_type(t.element()), buf, lin);
  }
  llvm::Value *slot_ptr(const Type &t, llvm::Value *buf, int64_t slot) { return buf_ptr(t, buf, b_.getInt64(slot)); }

  /// CPU: `body(idx)` for every element of `shape` (nested loops).
  void for_elements(const Type &shape, const std::function<void(const Idx &)> &body) { loop_nest(shape, body); }

  // ---- GPU element distribution (layouts) ----

  using MapPtr = std::shared_ptr<const gpu::BitMap>;
  MapPtr map_for(const gpu::EncodingPtr &e, const Type &t) {
    return std::make_shared<const gpu::BitMap>(plan_->map(e, t));
  }

  /// GPU: `body(slot, idx)` for each of this thread's slots under `m`
  /// (straight-line code: the thread's elements sit in registers), with the
  /// element context set so that element() finds buffers' matching slots.
  void for_slots(const gpu::BitMap &m, const Type &shape, const std::function<void(int64_t, const Idx &)> &body) {
    const gpu::BitMap *saved_view = view_;
    const int64_t saved_slot = slot_;
    view_ = &m;
    for (int64_t s = 0; s < m.slots(); ++s) {
      slot_ = s;
      body(s, delinear(shape, element_index(m, s)));
    }
    view_ = saved_view;
    slot_ = saved_slot;
  }

  /// Runs `f` with the element context moved to slot `s` of the current view.
  template <class F> auto at_slot(int64_t s, F &&f) {
    const int64_t saved = slot_;
    slot_ = s;
    auto r = f();
    slot_ = saved;
    return r;
  }

  template <class F> auto with_view(const gpu::BitMap &m, F &&f) {
    const gpu::BitMap *saved = view_;
    view_ = &m;
    auto r = f();
    view_ = saved;
    return r;
  }

  /// The row-major index of this thread's slot `s` under `m`.
  llvm::Value *element_index(const gpu::BitMap &m, int64_t s) {
    return b_.CreateOr(thread_bits(m), b_.getInt64(m.reg_offset(s)));
  }

  /// The index bits this thread's lane and warp numbers set under `m`;
  /// computed once per layout, in the kernel's prologue.
  llvm::Value *thread_bits(const gpu::BitMap &m) {
    const std::string key = m.str();
    if (auto it = thread_bits_.find(key); it != thread_bits_.end())
      return it->second;
    llvm::IRBuilder<> eb(prologue_);
    llvm::Value *r = eb.getInt64(0);
    // Runs of consecutive id bits that land on consecutive index bits move as one field.
    auto add = [&](const int *bases, int n, llvm::Value *id) {
      for (int i = 0; i < n;) {
        if (bases[i] < 0) {
          ++i;
          continue;
        }
        int len = 1;
        while (i + len < n && bases[i + len] == bases[i] + len)
          ++len;
        llvm::Value *field = eb.CreateAnd(eb.CreateLShr(id, i), eb.getInt64((int64_t{1} << len) - 1));
        r = eb.CreateOr(r, eb.CreateShl(field, bases[i]));
        i += len;
      }
    };
    add(m.lane.data(), gpu::BitMap::kLaneBits, lane64_);
    add(m.warp.data(), static_cast<int>(m.warp.size()), warp64_);
    return thread_bits_[key] = r;
  }

  /// True in the one copy of each element under `m` that does side effects;
  /// null when `m` has no copies.
  llvm::Value *owner(const gpu::BitMap &m) {
    const uint32_t lm = m.copy_lane_mask(), wm = m.copy_warp_mask();
    if (!lm && !wm)
      return nullptr;
    llvm::IRBuilder<> eb(prologue_);
    llvm::Value *ok = eb.getTrue();
    if (lm)
      ok = eb.CreateAnd(ok, eb.CreateICmpEQ(eb.CreateAnd(lane64_, eb.getInt64(lm)), eb.getInt64(0)));
    if (wm)
      ok = eb.CreateAnd(ok, eb.CreateICmpEQ(eb.CreateAnd(warp64_, eb.getInt64(wm)), eb.getInt64(0)));
    return ok;
  }

  llvm::Value *and_mask(llvm::Value *a, llvm::Value *b) { return !a ? b : !b ? a : b_.CreateAnd(a, b); }

  /// A held block read in the current view: the matching slot of its own
  /// buffer, or of the copy prepare() converted it into.
  llvm::Value *read_held(const ir::Value *v, const Lowered &l) {
    if (!view_)
      throw std::logic_error("kiln internal error: GPU buffer read outside a slot loop");
    if (auto sm = gpu::slot_map(*view_, *l.map))
      return b_.CreateLoad(reg_type(v->type.element()), slot_ptr(v->type, l.buf, gpu::apply_slot_map(*sm, slot_)));
    auto it = converted_.find({v, gpu::without_slot_copies(*view_).str()});
    if (it == converted_.end())
      throw std::logic_error("kiln internal error: %" + std::to_string(v->id) + " read in a layout it was not converted to");
    auto sm = gpu::slot_map(*view_, *it->second.map);
    return b_.CreateLoad(reg_type(v->type.element()),
                         slot_ptr(v->type, it->second.buf, gpu::apply_slot_map(*sm, slot_)));
  }

  /// Before a consumer reads `v` through `view`: converts every held block
  /// in v's recomputed tree whose layout the view cannot read in place.
  void prepare(const ir::Value *v, const gpu::BitMap &view) {
    if (!gpu_ || !v->type.is_block())
      return;
    std::set<std::pair<const ir::Value *, std::string>> seen;
    prepare_tree(v, view, seen);
  }

  void prepare_tree(const ir::Value *v, const gpu::BitMap &view,
                    std::set<std::pair<const ir::Value *, std::string>> &seen) {
    if (!v->type.is_block() || !seen.insert({v, view.str()}).second)
      return;
    const Lowered &l = vals_.at(v);
    if (!l.lazy) {
      if (gpu::slot_map(view, *l.map))
        return;
      gpu::BitMap to = gpu::without_slot_copies(view);
      std::pair<const ir::Value *, std::string> key{v, to.str()};
      if (!converted_.count(key))
        converted_[key] = convert(v, l, std::make_shared<const gpu::BitMap>(to));
      return;
    }
    const ir::Op &op = *v->def;
    switch (op.kind) {
    case OpKind::Constant:
    case OpKind::Splat:
    case OpKind::Arange: return;
    case OpKind::Broadcast: {
      const ir::Value *src = op.operands[0];
      prepare_tree(src, gpu::view_through_broadcast(view, gpu::shape_of(v->type), gpu::shape_of(src->type)), seen);
      return;
    }
    case OpKind::Trans:
      prepare_tree(op.operands[0], gpu::view_through_trans(view, gpu::shape_of(v->type), op.ints), seen);
      return;
    default:
      // Elementwise, expand_dims and reshape: the same row-major index bits.
      for (const ir::Value *o : op.operands)
        prepare_tree(o, view, seen);
    }
  }

  /// A layout conversion through shared memory: every thread writes its
  /// slots at their row-major index (padded by one word per 32 so that
  /// column accesses spread over the banks), then reads the slots of `to`.
  Lowered convert(const ir::Value *v, const Lowered &from, const MapPtr &to) {
    ++conversions_;
    note_conversion(v, *from.map, *to);
    llvm::Type *et = reg_type(v->type.element());
    const int64_t n = v->type.numel();
    auto pad = [&](llvm::Value *lin) { return b_.CreateAdd(lin, b_.CreateLShr(lin, b_.getInt64(5))); };
    llvm::Value *base = smem(static_cast<unsigned>((n + n / 32 + 1) * type_bytes(et)));
    barrier();
    for (int64_t s = 0; s < from.map->slots(); ++s)
      b_.CreateStore(b_.CreateLoad(et, slot_ptr(v->type, from.buf, s)),
                     b_.CreateInBoundsGEP(et, base, pad(element_index(*from.map, s))));
    barrier();
    Lowered r;
    r.map = to;
    r.buf = alloc_buffer(v->type, to.get());
    for (int64_t s = 0; s < to->slots(); ++s)
      b_.CreateStore(b_.CreateLoad(et, b_.CreateInBoundsGEP(et, base, pad(element_index(*to, s)))),
                     slot_ptr(v->type, r.buf, s));
    return r;
  }

  unsigned type_bytes(llvm::Type *t) const {
    return static_cast<unsigned>(mod_->getDataLayout().getTypeAllocSize(t).getFixedValue());
  }

  void note_conversion(const ir::Value *v, const gpu::BitMap &from, const gpu::BitMap &to) {
    op_notes_[cur_op_] += "convert_layout %" + std::to_string(v->id) + " : " + v->type.str() + " {" + from.str() +
                          "} -> {" + to.str() + "}\n";
  }



  // ---- values ----

  llvm::Value *scalar(const ir::Value *v) {
    auto it = vals_.find(v);
    if (it == vals_.end() || !it->second.scalar)
      throw std::logic_error("kiln internal error: scalar %" + std::to_string(v->id) + " used before lowered");
    return it->second.scalar;
  }

  /// The element of block (or scalar) `v` at `idx` (v's own rank).
  llvm::Value *element(const ir::Value *v, const Idx &idx) {
    if (!v->type.is_block())
      return scalar(v);
    const Lowered &l = vals_.at(v);
    if (!l.lazy) {
      if (gpu_)
        return read_held(v, l);
      return b_.CreateLoad(reg_type(v->type.element()), buf_ptr(v->type, l.buf, linear(v->type, idx)));
    }
    const ir::Op &op = *v->def;
    switch (op.kind) {
    case OpKind::Constant: return constant(op);
    case OpKind::Splat: return scalar(op.operands[0]);
    case OpKind::Arange:
      return b_.CreateAdd(b_.CreateTrunc(idx[0], b_.getInt32Ty()), b_.getInt32(static_cast<int32_t>(op.i)));
    case OpKind::Broadcast: {
      const ir::Value *src = op.operands[0];
      Idx si{};
      for (int d = 0; d < src->type.rank; ++d)
        si[d] = src->type.shape[d] == 1 ? b_.getInt64(0) : idx[d];
      if (!gpu_)
        return element(src, si);
      // The stretched dims' slot bits select nothing in the operand.
      const gpu::BitMap sv = gpu::view_through_broadcast(*view_, gpu::shape_of(v->type), gpu::shape_of(src->type));
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
      if (!gpu_)
        return element(op.operands[0], si);
      const gpu::BitMap sv = gpu::view_through_trans(*view_, gpu::shape_of(v->type), op.ints);
      return with_view(sv, [&] { return element(op.operands[0], si); });
    }
    default: {
      std::vector<llvm::Value *> args;
      for (const ir::Value *o : op.operands)
        args.push_back(element(o, idx));
      return compute(op, args);
    }
    }
  }

  /// CPU: writes every element of `v` into a fresh or given buffer.
  llvm::Value *materialize(const ir::Value *v, llvm::Value *into = nullptr) {
    llvm::Value *buf = into ? into : alloc_buffer(v->type);
    for_elements(v->type, [&](const Idx &idx) {
      b_.CreateStore(element(v, idx), buf_ptr(v->type, buf, linear(v->type, idx)));
    });
    return buf;
  }

  /// GPU: this thread's elements of `v` under `m` (the plan's layout of v
  /// when null), into a fresh or given buffer.
  Lowered materialize_gpu(const ir::Value *v, MapPtr m = nullptr, llvm::Value *into = nullptr) {
    if (!m)
      m = map_for(plan_->layout(v), v->type);
    prepare(v, *m);
    Lowered r;
    r.map = m;
    r.buf = into ? into : alloc_buffer(v->type, m.get());
    for_slots(*m, v->type, [&](int64_t s, const Idx &idx) { b_.CreateStore(element(v, idx), slot_ptr(v->type, r.buf, s)); });
    return r;
  }

  /// A buffer holding `v`: its own if materialized, else a new one.
  llvm::Value *as_buffer(const ir::Value *v) {
    const Lowered &l = vals_.at(v);
    return l.lazy ? materialize(v) : l.buf;
  }

  llvm::Value *constant(const ir::Op &op) {
    const Type t = op.result()->type.element();
    if (t.is_float())
      return llvm::ConstantFP::get(reg_type(t), op.f);
    return llvm::ConstantInt::get(reg_type(t), static_cast<uint64_t>(op.i), true);
  }

  // ---- scalar arithmetic (shared by scalars and block elements) ----

  llvm::Value *round_half(llvm::Value *x, DType t) {
    if (t == DType::f16)
      return b_.CreateFPExt(b_.CreateFPTrunc(x, b_.getHalfTy()), b_.getFloatTy());
    if (t == DType::bf16) {
      // Round to nearest even on the upper 16 bits; quiet NaNs stay NaN.
      llvm::Value *bits = b_.CreateBitCast(x, b_.getInt32Ty());
      llvm::Value *lsb = b_.CreateAnd(b_.CreateLShr(bits, 16), 1);
      llvm::Value *rounded = b_.CreateAdd(bits, b_.CreateAdd(lsb, b_.getInt32(0x7FFF)));
      llvm::Value *nan = b_.CreateFCmpUNO(x, x);
      llvm::Value *r = b_.CreateSelect(nan, b_.CreateOr(bits, b_.getInt32(0x00400000)), rounded);
      return b_.CreateBitCast(b_.CreateAnd(r, b_.getInt32(0xFFFF0000u)), b_.getFloatTy());
    }
    return x;
  }

  llvm::Value *fresult(llvm::Value *x, const Type &t) { return is_half(t.elem) ? round_half(x, t.elem) : x; }

  llvm::Value *cast(llvm::Value *x, const Type &from, const Type &to) {
    llvm::Type *rt = reg_type(to);
    if (from.is_float() && to.is_float()) {
      if (from.elem == DType::f64 && to.elem != DType::f64) {
        if (to.elem == DType::f16)
          return b_.CreateFPExt(b_.CreateFPTrunc(x, b_.getHalfTy()), b_.getFloatTy());
        return fresult(b_.CreateFPTrunc(x, b_.getFloatTy()), to);
      }
      if (to.elem == DType::f64)
        return from.elem == DType::f64 ? x : b_.CreateFPExt(x, rt);
      return fresult(x, to); // among f16 / bf16 / f32, all float in registers
    }
    if (from.is_int() && to.is_float()) {
      llvm::Type *ft = to.elem == DType::f64 ? b_.getDoubleTy() : b_.getFloatTy();
      llvm::Value *f = from.is_signed() ? b_.CreateSIToFP(x, ft) : b_.CreateUIToFP(x, ft);
      return fresult(f, to);
    }
    if (from.is_float() && to.is_int()) {
      if (to.is_bool())
        return b_.CreateFCmpUNE(x, llvm::ConstantFP::get(x->getType(), 0));
      auto id = to.is_signed() ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
      return b_.CreateIntrinsic(id, {rt, x->getType()}, {x});
    }
    if (from.is_int() && to.is_int()) {
      if (to.is_bool())
        return b_.CreateICmpNE(x, llvm::ConstantInt::get(x->getType(), 0));
      const bool sext = from.is_signed() && !from.is_bool();
      return sext ? b_.CreateSExtOrTrunc(x, rt) : b_.CreateZExtOrTrunc(x, rt);
    }
    throw std::logic_error("kiln internal error: unsupported cast " + from.str() + " -> " + to.str());
  }

  llvm::Value *bitcast(llvm::Value *x, const Type &from, const Type &to) {
    if (from.pointer || to.pointer)
      return from.pointer ? b_.CreatePtrToInt(x, reg_type(to)) : b_.CreateIntToPtr(x, b_.getPtrTy());
    // Through the memory representation: float registers of f16/bf16 hold values, not bits.
    auto to_bits = [&](llvm::Value *v, DType t) -> llvm::Value * {
      if (t == DType::f16)
        return b_.CreateBitCast(b_.CreateFPTrunc(v, b_.getHalfTy()), b_.getInt16Ty());
      if (t == DType::bf16)
        return b_.CreateTrunc(b_.CreateLShr(b_.CreateBitCast(v, b_.getInt32Ty()), 16), b_.getInt16Ty());
      return b_.CreateBitCast(v, b_.getIntNTy(ir::bit_width(Type::scalar(t))));
    };
    llvm::Value *bits = to_bits(x, from.elem);
    if (to.elem == DType::f16)
      return b_.CreateFPExt(b_.CreateBitCast(bits, b_.getHalfTy()), b_.getFloatTy());
    if (to.elem == DType::bf16)
      return b_.CreateBitCast(b_.CreateShl(b_.CreateZExt(bits, b_.getInt32Ty()), 16), b_.getFloatTy());
    return b_.CreateBitCast(bits, reg_type(to));
  }

  llvm::Value *shift(llvm::Value *x, llvm::Value *amt, bool left, bool is_signed) {
    // Shifts by the width or more give 0 (or the sign) as on the GPU, not poison.
    const unsigned w = x->getType()->getIntegerBitWidth();
    llvm::Value *big = b_.CreateICmpUGE(amt, llvm::ConstantInt::get(amt->getType(), w));
    llvm::Value *safe = b_.CreateSelect(big, llvm::ConstantInt::get(amt->getType(), 0), amt);
    if (left)
      return b_.CreateSelect(big, llvm::ConstantInt::get(x->getType(), 0), b_.CreateShl(x, safe));
    if (is_signed)
      return b_.CreateAShr(x, b_.CreateSelect(big, llvm::ConstantInt::get(amt->getType(), w - 1), amt));
    return b_.CreateSelect(big, llvm::ConstantInt::get(x->getType(), 0), b_.CreateLShr(x, safe));
  }

  llvm::Value *int_divrem(llvm::Value *x, llvm::Value *y, bool is_signed, bool rem) {
    // x / 0 and INT_MIN / -1 trap on x86; the GPU gives garbage instead, so
    // divide by 1 there: a wrong lane, never a crashed process.
    llvm::Type *t = x->getType();
    llvm::Value *bad = b_.CreateICmpEQ(y, llvm::ConstantInt::get(t, 0));
    if (is_signed) {
      const unsigned w = t->getIntegerBitWidth();
      llvm::Value *min = llvm::ConstantInt::get(t, llvm::APInt::getSignedMinValue(w));
      bad = b_.CreateOr(bad, b_.CreateAnd(b_.CreateICmpEQ(x, min),
                                          b_.CreateICmpEQ(y, llvm::ConstantInt::getSigned(t, -1))));
    }
    llvm::Value *d = b_.CreateSelect(bad, llvm::ConstantInt::get(t, 1), y);
    if (rem)
      return is_signed ? b_.CreateSRem(x, d) : b_.CreateURem(x, d);
    return is_signed ? b_.CreateSDiv(x, d) : b_.CreateUDiv(x, d);
  }

  llvm::Value *math_call(const char *f32name, const char *f64name, llvm::Value *x) {
    const bool dbl = x->getType()->isDoubleTy();
    llvm::FunctionCallee fn = mod_->getOrInsertFunction(dbl ? f64name : f32name, x->getType(), x->getType());
    // (On the GPU these are libdevice's __nv_* functions.)
    llvm::CallInst *c = b_.CreateCall(fn, {x});
    c->setDoesNotAccessMemory();
    c->setDoesNotThrow();
    return c;
  }

  llvm::Value *binary(BinaryOp op, llvm::Value *x, llvm::Value *y, const Type &t) {
    const bool fl = t.is_float(), sg = t.is_signed();
    switch (op) {
    case BinaryOp::Add: return fl ? fresult(b_.CreateFAdd(x, y), t) : b_.CreateAdd(x, y);
    case BinaryOp::Sub: return fl ? fresult(b_.CreateFSub(x, y), t) : b_.CreateSub(x, y);
    case BinaryOp::Mul: return fl ? fresult(b_.CreateFMul(x, y), t) : b_.CreateMul(x, y);
    case BinaryOp::Div:
      if (gpu_ && x->getType()->isFloatTy()) {
        // As Triton: `/` on fp32 is div.full (2 ulp); the IEEE div.rn
        // expands to a slow path per division that doubled ptxas's time
        // for softmax. tl.math.div_rn is the exact one.
        auto *fty = llvm::FunctionType::get(b_.getFloatTy(), {b_.getFloatTy(), b_.getFloatTy()}, false);
        return fresult(b_.CreateCall(llvm::InlineAsm::get(fty, "div.full.f32 $0, $1, $2;", "=f,f,f", false), {x, y}), t);
      }
      return fresult(b_.CreateFDiv(x, y), t);
    case BinaryOp::IDiv: return int_divrem(x, y, sg, false);
    case BinaryOp::Rem: return fl ? fresult(b_.CreateFRem(x, y), t) : int_divrem(x, y, sg, true);
    case BinaryOp::And: return b_.CreateAnd(x, y);
    case BinaryOp::Or: return b_.CreateOr(x, y);
    case BinaryOp::Xor: return b_.CreateXor(x, y);
    case BinaryOp::Shl: return shift(x, y, true, sg);
    case BinaryOp::Shr: return shift(x, y, false, sg);
    case BinaryOp::Max:
      return fl ? b_.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, x, y)
                : b_.CreateBinaryIntrinsic(sg ? llvm::Intrinsic::smax : llvm::Intrinsic::umax, x, y);
    case BinaryOp::Min:
      return fl ? b_.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, x, y)
                : b_.CreateBinaryIntrinsic(sg ? llvm::Intrinsic::smin : llvm::Intrinsic::umin, x, y);
    case BinaryOp::UMulHi: {
      const unsigned w = x->getType()->getIntegerBitWidth();
      llvm::Type *wide = b_.getIntNTy(2 * w);
      llvm::Value *p = b_.CreateMul(b_.CreateZExt(x, wide), b_.CreateZExt(y, wide));
      return b_.CreateTrunc(b_.CreateLShr(p, w), x->getType());
    }
    case BinaryOp::Pow:
      if (gpu_) { // NVPTX has no pow instruction: libdevice's
        const bool dbl = x->getType()->isDoubleTy();
        llvm::FunctionCallee fn =
            mod_->getOrInsertFunction(dbl ? "__nv_pow" : "__nv_powf", x->getType(), x->getType(), x->getType());
        return fresult(b_.CreateCall(fn, {x, y}), t);
      }
      return fresult(b_.CreateBinaryIntrinsic(llvm::Intrinsic::pow, x, y), t);
    }
    return nullptr;
  }

  llvm::Value *compare(ir::ComparePred p, llvm::Value *x, llvm::Value *y, const Type &t) {
    using P = llvm::CmpInst::Predicate;
    using C = ir::ComparePred;
    if (t.is_float()) {
      static const P fp[] = {P::FCMP_OLT, P::FCMP_OLE, P::FCMP_OGT, P::FCMP_OGE, P::FCMP_OEQ, P::FCMP_UNE};
      return b_.CreateFCmp(fp[static_cast<int>(p)], x, y);
    }
    const bool sg = t.is_signed();
    P pred;
    switch (p) {
    case C::Lt: pred = sg ? P::ICMP_SLT : P::ICMP_ULT; break;
    case C::Le: pred = sg ? P::ICMP_SLE : P::ICMP_ULE; break;
    case C::Gt: pred = sg ? P::ICMP_SGT : P::ICMP_UGT; break;
    case C::Ge: pred = sg ? P::ICMP_SGE : P::ICMP_UGE; break;
    case C::Eq: pred = P::ICMP_EQ; break;
    default: pred = P::ICMP_NE; break;
    }
    return b_.CreateICmp(pred, x, y);
  }

  llvm::Value *unary(UnaryOp u, llvm::Value *x, const Type &t) {
    using I = llvm::Intrinsic::ID;
    auto intr = [&](I id) { return fresult(b_.CreateUnaryIntrinsic(id, x), t); };
    if (gpu_)
      if (llvm::Value *r = gpu_math(u, x, t))
        return r;
    switch (u) {
    case UnaryOp::Neg: return t.is_float() ? b_.CreateFNeg(x) : b_.CreateNeg(x);
    case UnaryOp::Not: return b_.CreateNot(x);
    case UnaryOp::Abs:
      return t.is_float() ? b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x)
             : t.is_signed() ? b_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, x, b_.getFalse())
                             : x;
    case UnaryOp::Exp: return intr(llvm::Intrinsic::exp);
    case UnaryOp::Exp2: return intr(llvm::Intrinsic::exp2);
    case UnaryOp::Log: return intr(llvm::Intrinsic::log);
    case UnaryOp::Log2: return intr(llvm::Intrinsic::log2);
    case UnaryOp::Sqrt: return intr(llvm::Intrinsic::sqrt);
    case UnaryOp::Rsqrt:
      return fresult(b_.CreateFDiv(llvm::ConstantFP::get(x->getType(), 1.0),
                                   b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x)),
                     t);
    case UnaryOp::Sin: return intr(llvm::Intrinsic::sin);
    case UnaryOp::Cos: return intr(llvm::Intrinsic::cos);
    case UnaryOp::Floor: return intr(llvm::Intrinsic::floor);
    case UnaryOp::Ceil: return intr(llvm::Intrinsic::ceil);
    case UnaryOp::Erf: return fresult(math_call("erff", "erf", x), t);
    }
    return nullptr;
  }

  /// GPU math: f32 exp/exp2/log/log2/sin/cos with PTX's fast approximate
  /// instructions, as Triton does; erf, and fp64 transcendentals, from the
  /// CUDA toolkit's libdevice (linked after lowering, see
  /// nvptx/libdevice.hpp); null for what LLVM's intrinsics lower well on
  /// NVPTX (sqrt, floor, abs, ...).
  llvm::Value *gpu_math(UnaryOp u, llvm::Value *x, const Type &t) {
    using U = UnaryOp;
    const bool dbl = x->getType()->isDoubleTy();
    auto libdevice = [&](const char *name) {
      return fresult(math_call((std::string("__nv_") + name + "f").c_str(), (std::string("__nv_") + name).c_str(), x), t);
    };
    auto call = [&](llvm::Intrinsic::ID id, llvm::Value *v) { return b_.CreateIntrinsic(id, {}, {v}); };
    switch (u) {
    case U::Erf: return libdevice("erf");
    case U::Exp:
      if (dbl)
        return libdevice("exp");
      return fresult(call(llvm::Intrinsic::nvvm_ex2_approx_f,
                          b_.CreateFMul(x, llvm::ConstantFP::get(x->getType(), 1.4426950408889634))),
                     t);
    case U::Exp2: return dbl ? libdevice("exp2") : fresult(call(llvm::Intrinsic::nvvm_ex2_approx_f, x), t);
    case U::Log:
      if (dbl)
        return libdevice("log");
      return fresult(b_.CreateFMul(call(llvm::Intrinsic::nvvm_lg2_approx_f, x),
                                   llvm::ConstantFP::get(x->getType(), 0.6931471805599453)),
                     t);
    case U::Log2: return dbl ? libdevice("log2") : fresult(call(llvm::Intrinsic::nvvm_lg2_approx_f, x), t);
    case U::Sin: return dbl ? libdevice("sin") : fresult(call(llvm::Intrinsic::nvvm_sin_approx_f, x), t);
    case U::Cos: return dbl ? libdevice("cos") : fresult(call(llvm::Intrinsic::nvvm_cos_approx_f, x), t);
    default: return nullptr;
    }
  }

  /// One element of a pure op from its operands' elements.
  llvm::Value *compute(const ir::Op &op, const std::vector<llvm::Value *> &a) {
    const Type rt = op.result()->type.element();
    switch (op.kind) {
    case OpKind::Binary: return binary(static_cast<BinaryOp>(op.sub), a[0], a[1], rt);
    case OpKind::Compare:
      return compare(static_cast<ir::ComparePred>(op.sub), a[0], a[1], op.operands[0]->type.element());
    case OpKind::Unary: return unary(static_cast<UnaryOp>(op.sub), a[0], rt);
    case OpKind::Select: return b_.CreateSelect(a[0], a[1], a[2]);
    case OpKind::Fma: return fresult(b_.CreateIntrinsic(llvm::Intrinsic::fma, {a[0]->getType()}, {a[0], a[1], a[2]}), rt);
    case OpKind::Cast: return cast(a[0], op.operands[0]->type.element(), rt);
    case OpKind::Bitcast: return bitcast(a[0], op.operands[0]->type.element(), rt);
    case OpKind::AddPtr: {
      const Type off = op.operands[1]->type.element();
      llvm::Value *o = off.is_signed() ? b_.CreateSExtOrTrunc(a[1], b_.getInt64Ty())
                                       : b_.CreateZExtOrTrunc(a[1], b_.getInt64Ty());
      return b_.CreateGEP(mem_type(rt.elem), a[0], o);
    }
    case OpKind::Constant: return constant(op);
    case OpKind::Splat: return a[0];
    default: throw std::logic_error(std::string("kiln internal error: not a pure op: ") + ir::op_name(op));
    }
  }

  // ---- memory ----

  llvm::Value *load_elem(llvm::Value *ptr, DType t) {
    llvm::Value *v = b_.CreateLoad(mem_type(t), ptr);
    switch (t) {
    case DType::i1: return b_.CreateICmpNE(v, b_.getInt8(0));
    case DType::f16: return b_.CreateFPExt(v, b_.getFloatTy());
    case DType::bf16: return b_.CreateBitCast(b_.CreateShl(b_.CreateZExt(v, b_.getInt32Ty()), 16), b_.getFloatTy());
    default: return v;
    }
  }

  llvm::Value *to_mem(llvm::Value *v, DType t) {
    switch (t) {
    case DType::i1: return b_.CreateZExt(v, b_.getInt8Ty());
    case DType::f16: return b_.CreateFPTrunc(v, b_.getHalfTy());
    case DType::bf16: return b_.CreateTrunc(b_.CreateLShr(b_.CreateBitCast(v, b_.getInt32Ty()), 16), b_.getInt16Ty());
    default: return v;
    }
  }

  /// if (cond) { then() } with the result merged by a phi when then() returns a value.
  llvm::Value *guarded(llvm::Value *cond, const std::function<llvm::Value *()> &then, llvm::Value *otherwise) {
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

  /// GPU: how many consecutive slots of `m` move as one vector access
  /// through `ptr` (and `mask`): a run along one dim, contiguous and aligned
  /// in memory by the axis info, one mask value per run, at most 16 bytes.
  int64_t vector_width(const gpu::BitMap &m, const ir::Value *ptr, const ir::Value *mask) {
    int dim = 0;
    const int run = gpu::run_bits(m, gpu::shape_of(ptr->type), &dim);
    if (run == 0 || ptr->type.elem == DType::i1)
      return 1;
    const int64_t bytes = static_cast<int64_t>(dtype_size(ptr->type.elem));
    const analysis::AxisInfo p = plan_->axis().get(ptr);
    const int64_t mc = mask ? plan_->axis().get(mask).constancy[dim] : int64_t{1} << 30;
    for (int64_t v = std::min<int64_t>(int64_t{1} << run, 16 / bytes); v >= 2; v /= 2)
      if ((bytes > 1 || v > 4) && p.contig[dim] % v == 0 && p.div[dim] % (v * bytes) == 0 && mc % v == 0)
        return v;
    return 1;
  }

  /// `@p ld.global.v{V}.b{bits}` of V elements at `ptr`, with `others` where masked off.
  std::vector<llvm::Value *> vector_load(llvm::Value *ptr, llvm::Value *mask, const std::vector<llvm::Value *> &others,
                                         DType t) {
    std::vector<llvm::Value *> mem;
    for (llvm::Value *o : others)
      mem.push_back(to_mem(o, t));
    std::vector<llvm::Value *> got = unpack_words(asm_vector_load(ptr, mask, pack_words(mem)), mem_type(t), mem.size());
    for (llvm::Value *&x : got)
      x = from_mem(x, t);
    return got;
  }

  void vector_store(llvm::Value *ptr, llvm::Value *mask, const std::vector<llvm::Value *> &vals) {
    asm_vector_store(ptr, mask, pack_words(vals));
  }

  /// PTX vectors have at most 4 elements: 8 halves (or 16 bytes) move as
  /// 4 32-bit words.
  std::vector<llvm::Value *> pack_words(const std::vector<llvm::Value *> &vals) {
    if (vals.size() <= 4)
      return vals;
    const unsigned bits = vals[0]->getType()->getPrimitiveSizeInBits(), per = 32 / bits;
    std::vector<llvm::Value *> words;
    for (size_t w = 0; w < vals.size() / per; ++w) {
      llvm::Value *word = b_.getInt32(0);
      for (unsigned j = 0; j < per; ++j) {
        llvm::Value *x = b_.CreateZExt(b_.CreateBitCast(vals[w * per + j], b_.getIntNTy(bits)), b_.getInt32Ty());
        word = b_.CreateOr(word, b_.CreateShl(x, j * bits));
      }
      words.push_back(word);
    }
    return words;
  }

  std::vector<llvm::Value *> unpack_words(const std::vector<llvm::Value *> &words, llvm::Type *t, size_t n) {
    if (words.size() == n)
      return words;
    const unsigned bits = t->getPrimitiveSizeInBits(), per = 32 / bits;
    std::vector<llvm::Value *> vals;
    for (llvm::Value *w : words)
      for (unsigned j = 0; j < per; ++j)
        vals.push_back(b_.CreateBitCast(b_.CreateTrunc(b_.CreateLShr(w, j * bits), b_.getIntNTy(bits)), t));
    return vals;
  }

  std::vector<llvm::Value *> asm_vector_load(llvm::Value *ptr, llvm::Value *mask, const std::vector<llvm::Value *> &others) {
    llvm::Type *mt = others[0]->getType();
    unsigned bits = 0;
    const char *cls = ptx_class(mt, &bits);
    const size_t v = others.size();
    std::string regs, movs, cons;
    for (size_t j = 0; j < v; ++j) {
      regs += (j ? ", $" : "$") + std::to_string(j);
      movs += "mov.b" + std::to_string(bits) + " $" + std::to_string(j) + ", $" + std::to_string(v + 2 + j) + "; ";
      cons += std::string(j ? ",=" : "=") + cls;
    }
    cons += ",l,r";
    for (size_t j = 0; j < v; ++j)
      cons += std::string(",") + cls;
    const std::string text = "{ .reg .pred p; setp.ne.b32 p, $" + std::to_string(v + 1) + ", 0; " + movs +
                             "@p ld.global.v" + std::to_string(v) + ".b" + std::to_string(bits) + " {" + regs + "}, [$" +
                             std::to_string(v) + "]; }";
    std::vector<llvm::Type *> rts(v, mt);
    std::vector<llvm::Type *> params = {b_.getPtrTy(), b_.getInt32Ty()};
    std::vector<llvm::Value *> args = {ptr, mask ? b_.CreateZExt(mask, b_.getInt32Ty()) : b_.getInt32(1)};
    for (llvm::Value *o : others) {
      params.push_back(mt);
      args.push_back(o);
    }
    auto *fty = llvm::FunctionType::get(llvm::StructType::get(ctx_, rts), params, false);
    llvm::Value *r = b_.CreateCall(llvm::InlineAsm::get(fty, text, cons, false), args);
    std::vector<llvm::Value *> out;
    for (size_t j = 0; j < v; ++j)
      out.push_back(b_.CreateExtractValue(r, static_cast<unsigned>(j)));
    return out;
  }

  void asm_vector_store(llvm::Value *ptr, llvm::Value *mask, const std::vector<llvm::Value *> &vals) {
    unsigned bits = 0;
    const char *cls = ptx_class(vals[0]->getType(), &bits);
    const size_t v = vals.size();
    std::string regs, cons = "l,r";
    for (size_t j = 0; j < v; ++j) {
      regs += (j ? ", $" : "$") + std::to_string(j + 2);
      cons += std::string(",") + cls;
    }
    cons += ",~{memory}";
    const std::string text = "{ .reg .pred p; setp.ne.b32 p, $1, 0; @p st.global.v" + std::to_string(v) + ".b" +
                             std::to_string(bits) + " [$0], {" + regs + "}; }";
    std::vector<llvm::Type *> params = {b_.getPtrTy(), b_.getInt32Ty()};
    std::vector<llvm::Value *> args = {ptr, mask ? b_.CreateZExt(mask, b_.getInt32Ty()) : b_.getInt32(1)};
    for (llvm::Value *x : vals) {
      params.push_back(x->getType());
      args.push_back(x);
    }
    auto *fty = llvm::FunctionType::get(b_.getVoidTy(), params, false);
    b_.CreateCall(llvm::InlineAsm::get(fty, text, cons, true), args);
  }

  /// The PTX register class and width of a memory element, for inline asm.
  static const char *ptx_class(llvm::Type *t, unsigned *bits) {
    *bits = t->getPrimitiveSizeInBits();
    if (t->isFloatTy())
      return "f";
    if (t->isDoubleTy())
      return "d";
    if (t->isIntegerTy(16) || t->isHalfTy())
      return "h";
    if (t->isIntegerTy(32))
      return "r";
    if (t->isIntegerTy(64) || t->isPointerTy())
      return "l";
    return nullptr;
  }

  /// GPU masked load as one predicated PTX instruction (as Triton emits it)
  /// instead of a branch per element: smaller code, faster to compile, no
  /// divergence. Null when the element type has no plain register class.
  llvm::Value *predicated_load(llvm::Value *ptr, llvm::Value *mask, llvm::Value *other, DType t) {
    llvm::Type *mt = mem_type(t);
    unsigned bits = 0;
    const char *cls = ptx_class(mt, &bits);
    if (!cls || t == DType::i1)
      return nullptr;
    const std::string b = std::to_string(bits);
    const std::string asm_text = "{ .reg .pred p; setp.ne.b32 p, $2, 0; mov.b" + b + " $0, $3; @p ld.global.b" + b +
                                 " $0, [$1]; }";
    const std::string cons = std::string("=") + cls + ",l,r," + cls;
    auto *fty = llvm::FunctionType::get(mt, {b_.getPtrTy(), b_.getInt32Ty(), mt}, false);
    auto *ia = llvm::InlineAsm::get(fty, asm_text, cons, /*hasSideEffects=*/false);
    llvm::Value *r = b_.CreateCall(ia, {ptr, b_.CreateZExt(mask, b_.getInt32Ty()), to_mem(other, t)});
    return from_mem(r, t);
  }

  /// GPU masked store as one predicated PTX instruction; false if unsupported.
  bool predicated_store(llvm::Value *ptr, llvm::Value *mask, llvm::Value *v) {
    unsigned bits = 0;
    const char *cls = ptx_class(v->getType(), &bits);
    if (!cls || bits < 16)
      return false;
    const std::string b = std::to_string(bits);
    const std::string asm_text = "{ .reg .pred p; setp.ne.b32 p, $2, 0; @p st.global.b" + b + " [$0], $1; }";
    const std::string cons = std::string("l,") + cls + ",r,~{memory}";
    auto *fty = llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy(), v->getType(), b_.getInt32Ty()}, false);
    auto *ia = llvm::InlineAsm::get(fty, asm_text, cons, /*hasSideEffects=*/true);
    b_.CreateCall(ia, {ptr, v, b_.CreateZExt(mask, b_.getInt32Ty())});
    return true;
  }

  /// Runs `f(idx)` for every element of `shape`, or once for a scalar.
  void each(const Type &shape, const std::function<void(const Idx &)> &f) {
    if (shape.is_block())
      for_elements(shape, f);
    else
      f(Idx{});
  }

  /// CPU: a failed element records the message in the launch's assert
  /// record (args[n], after the parameters); the driver turns it into an
  /// error after the launch. GPU: not checked yet.
  void lower_assert(const ir::Op &op) {
    if (gpu_ || !assert_record_)
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

  // ---- GPU collectives ----

  /// The kernel's shared memory, `bytes` of it for the current collective:
  /// one dynamic buffer (`extern .shared`) that every conversion, reduction,
  /// scan and dot reuses; each starts with a barrier, so no two overlap.
  llvm::Value *smem(unsigned bytes) {
    if (!smem_) {
      auto *ty = llvm::ArrayType::get(b_.getInt8Ty(), 0);
      smem_ = new llvm::GlobalVariable(*mod_, ty, false, llvm::GlobalValue::ExternalLinkage, nullptr, "kiln_smem",
                                       nullptr, llvm::GlobalValue::NotThreadLocal, 3);
      smem_->setAlignment(llvm::Align(16));
    }
    shared_bytes_ = std::max(shared_bytes_, (bytes + 15) / 16 * 16);
    return smem_;
  }

  void barrier() { b_.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {}); }

  /// Runs `f` in thread 0 and gives its result (of type `t`) to every thread.
  llvm::Value *from_thread0(llvm::Type *t, const std::function<llvm::Value *()> &f) {
    llvm::Value *slot = smem(8);
    barrier();
    llvm::BasicBlock *yes = new_bb("thread0"), *done = new_bb("thread0.end");
    b_.CreateCondBr(b_.CreateICmpEQ(tid64_, b_.getInt64(0)), yes, done);
    b_.SetInsertPoint(yes);
    b_.CreateStore(f(), slot);
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
    barrier();
    return b_.CreateLoad(t, slot);
  }

  enum class Shfl { Bfly, Up };

  /// A warp shuffle of any 8- to 64-bit value: butterfly (xor `amount`) or
  /// up (from lane - `amount`, own value below it).
  llvm::Value *shuffle(Shfl kind, llvm::Value *v, int amount) {
    llvm::Type *t = v->getType();
    const unsigned bits = t->isPointerTy() ? 64 : t->getPrimitiveSizeInBits();
    llvm::Value *bitsv = t->isIntegerTy() ? v : t->isPointerTy() ? b_.CreatePtrToInt(v, b_.getInt64Ty())
                                                                 : b_.CreateBitCast(v, b_.getIntNTy(bits));
    auto shfl32 = [&](llvm::Value *x) {
      if (kind == Shfl::Bfly)
        return b_.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_bfly_i32, {},
                                  {b_.getInt32(0xFFFFFFFFu), x, b_.getInt32(amount), b_.getInt32(0x1F)});
      return b_.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_up_i32, {},
                                {b_.getInt32(0xFFFFFFFFu), x, b_.getInt32(amount), b_.getInt32(0)});
    };
    llvm::Value *r;
    if (bits == 64) {
      llvm::Value *lo = shfl32(b_.CreateTrunc(bitsv, b_.getInt32Ty()));
      llvm::Value *hi = shfl32(b_.CreateTrunc(b_.CreateLShr(bitsv, 32), b_.getInt32Ty()));
      r = b_.CreateOr(b_.CreateZExt(lo, b_.getInt64Ty()), b_.CreateShl(b_.CreateZExt(hi, b_.getInt64Ty()), 32));
    } else {
      r = b_.CreateTrunc(shfl32(b_.CreateZExt(bitsv, b_.getInt32Ty())), b_.getIntNTy(bits));
    }
    if (t->isPointerTy())
      return b_.CreateIntToPtr(r, t);
    return t->isIntegerTy() ? r : b_.CreateBitCast(r, t);
  }

  /// The identity of a reduction, so that threads without elements add nothing.
  llvm::Value *identity(ir::ReduceOp k, const Type &t) {
    llvm::Type *rt = reg_type(t);
    const bool fl = t.is_float(), sg = t.is_signed();
    const unsigned w = fl ? 0 : rt->getIntegerBitWidth();
    switch (k) {
    case ir::ReduceOp::Sum:
    case ir::ReduceOp::Xor:
    case ir::ReduceOp::Or: return llvm::Constant::getNullValue(rt);
    case ir::ReduceOp::Prod: return fl ? llvm::ConstantFP::get(rt, 1.0) : llvm::ConstantInt::get(rt, 1);
    case ir::ReduceOp::And: return llvm::ConstantInt::getAllOnesValue(rt);
    case ir::ReduceOp::Max:
      return fl ? llvm::ConstantFP::getInfinity(rt, true)
                : llvm::ConstantInt::get(rt, sg ? llvm::APInt::getSignedMinValue(w) : llvm::APInt::getMinValue(w));
    case ir::ReduceOp::Min:
      return fl ? llvm::ConstantFP::getInfinity(rt, false)
                : llvm::ConstantInt::get(rt, sg ? llvm::APInt::getSignedMaxValue(w) : llvm::APInt::getMaxValue(w));
    default: return nullptr;
    }
  }

  /// A value and, for argmin/argmax, its index along the reduced axis.
  struct Partial {
    llvm::Value *v, *i = nullptr;
  };

  Partial combine_partial(ir::ReduceOp k, const Partial &a, const Partial &b, const Type &et) {
    if (k != ir::ReduceOp::ArgMax && k != ir::ReduceOp::ArgMin)
      return {combine(k, a.v, b.v, et)};
    // Strictly better, or as good at a lower index: the first index wins ties, as in Triton.
    llvm::Value *better = compare(k == ir::ReduceOp::ArgMax ? ir::ComparePred::Gt : ir::ComparePred::Lt, b.v, a.v, et);
    llvm::Value *tie = b_.CreateAnd(compare(ir::ComparePred::Eq, b.v, a.v, et), b_.CreateICmpSLT(b.i, a.i));
    llvm::Value *take = b_.CreateOr(better, tie);
    return {b_.CreateSelect(take, b.v, a.v), b_.CreateSelect(take, b.i, a.i)};
  }

  /// The packed number of this thread's warp along the warp bits `wbits`.
  llvm::Value *warp_index(const std::vector<int> &wbits) {
    llvm::Value *w = b_.getInt64(0);
    for (size_t k = 0; k < wbits.size(); ++k)
      w = b_.CreateOr(w, b_.CreateShl(b_.CreateAnd(b_.CreateLShr(warp64_, wbits[k]), b_.getInt64(1)), k));
    return w;
  }

  /// A reduction along any axis on the GPU, in the input's layout: each
  /// thread combines its own slots, then a butterfly over the lanes that
  /// hold the axis, then, if warps split the axis, shared memory. The
  /// result is in the slice layout (every thread holds what it needs to
  /// broadcast the result back over the axis).
  void lower_reduce_gpu(const ir::Op &op) {
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
          a = combine_partial(kind, a, {shuffle(Shfl::Bfly, a.v, 1 << i), arg ? shuffle(Shfl::Bfly, a.i, 1 << i) : nullptr},
                              et);
    std::vector<int> wbits;
    for (size_t i = 0; i < m->warp.size(); ++i)
      if (m->warp[i] >= 0 && on_axis(m->warp[i]))
        wbits.push_back(static_cast<int>(i));
    if (!wbits.empty()) {
      const int64_t W = int64_t{1} << wbits.size(), rn = int64_t{1} << R->bits;
      llvm::Type *rt = reg_type(et);
      const unsigned vbytes = static_cast<unsigned>(W * rn * type_bytes(rt));
      llvm::Value *vals = smem(vbytes + static_cast<unsigned>(arg ? W * rn * 4 : 0));
      llvm::Value *idxs = b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), vals, vbytes);
      llvm::Value *widx = b_.CreateMul(warp_index(wbits), b_.getInt64(rn));
      barrier();
      for (int64_t r = 0; r < R->slots(); ++r) {
        llvm::Value *at = b_.CreateAdd(widx, element_index(*R, r));
        b_.CreateStore(acc[r].v, b_.CreateInBoundsGEP(rt, vals, at));
        if (arg)
          b_.CreateStore(acc[r].i, b_.CreateInBoundsGEP(b_.getInt32Ty(), idxs, at));
      }
      barrier();
      for (int64_t r = 0; r < R->slots(); ++r) {
        llvm::Value *lin = element_index(*R, r);
        for (int64_t w = 0; w < W; ++w) {
          llvm::Value *at = b_.CreateAdd(b_.getInt64(w * rn), lin);
          Partial x{b_.CreateLoad(rt, b_.CreateInBoundsGEP(rt, vals, at)),
                    arg ? b_.CreateLoad(b_.getInt32Ty(), b_.CreateInBoundsGEP(b_.getInt32Ty(), idxs, at)) : nullptr};
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

  /// On the GPU, a scalar side effect (a store or atomic of one value) runs
  /// in thread 0 only; on the CPU it just runs.
  void once(const std::function<void()> &f) {
    if (!gpu_) {
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

  /// GPU: a block load in the layout its pointer asks for, V slots at a
  /// time where the axis info allows one vector access, else one
  /// predicated access per element.
  void lower_load_gpu(const ir::Op &op) {
    const ir::Value *res = op.result(), *ptr = op.operands[0];
    const Type et = res->type.element();
    const bool has_mask = op.i & 1, has_other = op.i & 2;
    const ir::Value *mask = has_mask ? op.operands[1] : nullptr, *other = has_other ? op.operands[2] : nullptr;
    const MapPtr m = map_for(plan_->access_layout(ptr), res->type);
    for (const ir::Value *o : op.operands)
      prepare(o, *m);
    Lowered l;
    l.map = m;
    l.buf = alloc_buffer(res->type, m.get());
    const int64_t v = vector_width(*m, ptr, mask);
    std::vector<Idx> idx(m->slots());
    for_slots(*m, res->type, [&](int64_t s, const Idx &i) { idx[s] = i; });
    with_view(*m, [&] {
      for (int64_t g = 0; g < m->slots(); g += v) {
        llvm::Value *p = at_slot(g, [&] { return element(ptr, idx[g]); });
        llvm::Value *mk = mask ? at_slot(g, [&] { return element(mask, idx[g]); }) : nullptr;
        std::vector<llvm::Value *> others;
        for (int64_t j = 0; j < v; ++j)
          others.push_back(other ? at_slot(g + j, [&] { return element(other, idx[g + j]); })
                                 : llvm::Constant::getNullValue(reg_type(et)));
        std::vector<llvm::Value *> got;
        if (v > 1) {
          got = vector_load(p, mk, others, et.elem);
        } else if (mk) {
          llvm::Value *x = predicated_load(p, mk, others[0], et.elem);
          got = {x ? x : guarded(mk, [&] { return load_elem(p, et.elem); }, others[0])};
        } else {
          got = {load_elem(p, et.elem)};
        }
        for (int64_t j = 0; j < v; ++j)
          b_.CreateStore(got[j], slot_ptr(res->type, l.buf, g + j));
      }
      return 0;
    });
    vals_[res] = l;
  }

  /// GPU: a block store in its pointer's layout; copies of an element
  /// (threads beyond a small block) do not store.
  void lower_store_gpu(const ir::Op &op) {
    const ir::Value *ptr = op.operands[0], *val = op.operands[1];
    const ir::Value *mask = op.operands.size() > 2 ? op.operands[2] : nullptr;
    const DType et = ptr->type.elem;
    const MapPtr m = map_for(plan_->access_layout(ptr), ptr->type);
    for (const ir::Value *o : op.operands)
      prepare(o, *m);
    llvm::Value *own = owner(*m);
    const int64_t v = vector_width(*m, ptr, mask);
    std::vector<Idx> idx(m->slots());
    for_slots(*m, ptr->type, [&](int64_t s, const Idx &i) { idx[s] = i; });
    with_view(*m, [&] {
      for (int64_t g = 0; g < m->slots(); g += v) {
        llvm::Value *p = at_slot(g, [&] { return element(ptr, idx[g]); });
        llvm::Value *mk = and_mask(mask ? at_slot(g, [&] { return element(mask, idx[g]); }) : nullptr, own);
        std::vector<llvm::Value *> vals;
        for (int64_t j = 0; j < v; ++j)
          vals.push_back(to_mem(at_slot(g + j, [&] { return element(val, idx[g + j]); }), et));
        if (v > 1) {
          vector_store(p, mk, vals);
        } else if (!mk) {
          b_.CreateStore(vals[0], p);
        } else if (!predicated_store(p, mk, vals[0])) {
          guarded(mk, [&]() -> llvm::Value * {
            b_.CreateStore(vals[0], p);
            return nullptr;
          }, nullptr);
        }
      }
      return 0;
    });
  }

  /// One atomic read-modify-write (or compare-and-swap) of op at `ptr`,
  /// with its operands' elements at `idx`; returns the old value as stored.
  llvm::Value *atomic_at(const ir::Op &op, llvm::Value *ptr, const Idx &idx) {
    const Type et = op.result()->type.element();
    const auto order = llvm::AtomicOrdering::AcquireRelease;
    if (op.kind == OpKind::AtomicCAS) {
      llvm::Value *cmp = to_mem(element(op.operands[1], idx), et.elem);
      llvm::Value *val = to_mem(element(op.operands[2], idx), et.elem);
      llvm::Value *pair =
          b_.CreateAtomicCmpXchg(ptr, cmp, val, llvm::MaybeAlign(), order, llvm::AtomicOrdering::Monotonic);
      return b_.CreateExtractValue(pair, 0);
    }
    using A = llvm::AtomicRMWInst;
    const bool fl = et.is_float(), sg = et.is_signed();
    A::BinOp bop = A::Add;
    switch (static_cast<ir::AtomicOp>(op.sub)) {
    case ir::AtomicOp::Add: bop = fl ? A::FAdd : A::Add; break;
    case ir::AtomicOp::Max: bop = fl ? A::FMax : sg ? A::Max : A::UMax; break;
    case ir::AtomicOp::Min: bop = fl ? A::FMin : sg ? A::Min : A::UMin; break;
    case ir::AtomicOp::And: bop = A::And; break;
    case ir::AtomicOp::Or: bop = A::Or; break;
    case ir::AtomicOp::Xor: bop = A::Xor; break;
    case ir::AtomicOp::Xchg: bop = A::Xchg; break;
    }
    llvm::Value *val = to_mem(element(op.operands[1], idx), et.elem);
    return b_.CreateAtomicRMW(bop, ptr, val, llvm::MaybeAlign(), order);
  }

  /// GPU: a block atomic in its pointer's layout, once per element (copies
  /// skip it and read no old value).
  void lower_atomic_gpu(const ir::Op &op) {
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
    for_slots(*m, res->type, [&](int64_t s, const Idx &idx) {
      llvm::Value *p = element(ptr, idx);
      llvm::Value *mk = and_mask(has_mask ? element(op.operands[2], idx) : nullptr, own);
      llvm::Value *old = mk ? guarded(mk, [&] { return atomic_at(op, p, idx); }, nullptr) : atomic_at(op, p, idx);
      b_.CreateStore(from_mem(old, et.elem), slot_ptr(res->type, l.buf, s));
    });
    vals_[res] = l;
  }

  void lower_load(const ir::Op &op) {
    const ir::Value *res = op.result();
    if (gpu_ && res->type.is_block())
      return lower_load_gpu(op);
    const Type et = res->type.element();
    const bool has_mask = op.i & 1, has_other = op.i & 2;
    llvm::Value *buf = res->type.is_block() ? alloc_buffer(res->type) : nullptr;
    llvm::Value *out = nullptr;
    each(res->type, [&](const Idx &idx) {
      llvm::Value *ptr = element(op.operands[0], idx);
      llvm::Value *v;
      if (has_mask) {
        llvm::Value *other = has_other ? element(op.operands[2], idx) : llvm::Constant::getNullValue(reg_type(et));
        llvm::Value *m = element(op.operands[1], idx);
        v = gpu_ ? predicated_load(ptr, m, other, et.elem) : nullptr;
        if (!v)
          v = guarded(m, [&] { return load_elem(ptr, et.elem); }, other);
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

  void lower_store(const ir::Op &op) {
    if (gpu_ && op.operands[0]->type.is_block())
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
        if (!has_mask) {
          store();
          return;
        }
        llvm::Value *m = element(op.operands[2], idx);
        if (!gpu_ || !predicated_store(ptr, m, to_mem(v, et)))
          guarded(m, store, nullptr);
      };
      if (op.operands[0]->type.is_block())
        masked();
      else
        once(masked); // every thread holds the scalar; one writes it
    });
  }

  void lower_atomic(const ir::Op &op) {
    const ir::Value *res = op.result();
    if (gpu_ && res->type.is_block())
      return lower_atomic_gpu(op);
    const Type et = res->type.element();
    llvm::Value *buf = res->type.is_block() ? alloc_buffer(res->type) : nullptr;
    llvm::Value *out = nullptr;
    const bool has_mask = op.kind == OpKind::AtomicRMW && op.operands.size() > 2;
    each(res->type, [&](const Idx &idx) {
      llvm::Value *ptr = element(op.operands[0], idx);
      auto rmw = [&]() -> llvm::Value * { return atomic_at(op, ptr, idx); };
      llvm::Value *old;
      if (gpu_) {
        // A scalar atomic happens once; every thread gets the old value.
        old = from_thread0(mem_type(et.elem),
                           [&] { return has_mask ? guarded(element(op.operands[2], idx), rmw, nullptr) : rmw(); });
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

  llvm::Value *from_mem(llvm::Value *v, DType t) {
    switch (t) {
    case DType::i1: return b_.CreateICmpNE(v, b_.getInt8(0));
    case DType::f16: return b_.CreateFPExt(v, b_.getFloatTy());
    case DType::bf16: return b_.CreateBitCast(b_.CreateShl(b_.CreateZExt(v, b_.getInt32Ty()), 16), b_.getFloatTy());
    default: return v;
    }
  }

  // ---- reductions, scans, dot ----

  llvm::Value *combine(ir::ReduceOp k, llvm::Value *acc, llvm::Value *x, const Type &t) {
    switch (k) {
    case ir::ReduceOp::Sum: return t.is_float() ? b_.CreateFAdd(acc, x) : b_.CreateAdd(acc, x);
    case ir::ReduceOp::Prod: return t.is_float() ? b_.CreateFMul(acc, x) : b_.CreateMul(acc, x);
    case ir::ReduceOp::Max: return binary(BinaryOp::Max, acc, x, t);
    case ir::ReduceOp::Min: return binary(BinaryOp::Min, acc, x, t);
    case ir::ReduceOp::Xor: return b_.CreateXor(acc, x);
    case ir::ReduceOp::And: return b_.CreateAnd(acc, x);
    case ir::ReduceOp::Or: return b_.CreateOr(acc, x);
    default: return nullptr;
    }
  }

  void lower_reduce(const ir::Op &op) {
    if (gpu_)
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
          llvm::Value *better = compare(kind == ir::ReduceOp::ArgMax ? ir::ComparePred::Gt : ir::ComparePred::Lt, x,
                                        pacc, et);
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

  /// A scan along any axis on the GPU, in a layout where each thread holds
  /// one run along the axis, lanes the next bits and warps the top ones:
  /// each thread scans its run, a Kogge-Stone scan over the lanes (shfl.up)
  /// gives each run its lanes' prefix, shared memory the warps' prefix.
  void lower_scan_gpu(const ir::Op &op) {
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
    while (lanes < gpu::BitMap::kLaneBits && m->lane[lanes] >= 0 && ((int64_t{1} << m->lane[lanes]) & axis_bits))
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
        llvm::Value *y = shuffle(Shfl::Up, x, 1 << j);
        x = b_.CreateSelect(b_.CreateICmpUGE(lane_pos, b_.getInt64(1 << j)), comb(y, x), x);
      }
      llvm::Value *e = lanes ? shuffle(Shfl::Up, x, 1) : ident;
      lane_incl.push_back(x);
      lane_excl.push_back(lanes ? b_.CreateSelect(b_.CreateICmpEQ(lane_pos, b_.getInt64(0)), ident, e) : ident);
    }
    std::vector<llvm::Value *> prefix = lane_excl;
    if (!wbits.empty()) {
      const int64_t W = int64_t{1} << wbits.size(), n = src->type.numel();
      llvm::Type *rt = reg_type(et);
      llvm::Value *base = smem(static_cast<unsigned>(W * n * type_bytes(rt)));
      llvm::Value *widx = warp_index(wbits);
      barrier();
      llvm::BasicBlock *last = new_bb("scan.last"), *done = new_bb("scan.last.end");
      b_.CreateCondBr(b_.CreateICmpEQ(lane_pos, b_.getInt64((int64_t{1} << lanes) - 1)), last, done);
      b_.SetInsertPoint(last);
      size_t gi = 0;
      for (auto &[key, g] : groups) {
        llvm::Value *at = b_.CreateAnd(element_index(*m, g.front().second), b_.getInt64(~axis_bits));
        b_.CreateStore(lane_incl[gi++], b_.CreateInBoundsGEP(rt, base, b_.CreateAdd(b_.CreateMul(widx, b_.getInt64(n)), at)));
      }
      b_.CreateBr(done);
      b_.SetInsertPoint(done);
      barrier();
      gi = 0;
      for (auto &[key, g] : groups) {
        llvm::Value *at = b_.CreateAnd(element_index(*m, g.front().second), b_.getInt64(~axis_bits));
        llvm::Value *wp = ident;
        for (int64_t w = 0; w + 1 < W; ++w) {
          llvm::Value *x = b_.CreateLoad(rt, b_.CreateInBoundsGEP(rt, base, b_.CreateAdd(b_.getInt64(w * n), at)));
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

  /// tl.dot on the GPU with FMAs: both operands go to shared memory (a
  /// transposed, so that a warp's reads of one k are consecutive), then each
  /// thread runs over k for its own accumulator slots. Correct for any
  /// shape; the tensor-core path replaces it later.
  void lower_dot_gpu(const ir::Op &op) {
    const ir::Value *a = op.operands[0], *bm = op.operands[1], *acc = op.operands[2], *res = op.result();
    const int64_t M = a->type.shape[0], K = a->type.shape[1], N = bm->type.shape[1];
    const Type ot = res->type.element(), it = a->type.element();
    llvm::Type *rt = reg_type(ot);
    const MapPtr C = map_for(plan_->layout(res), res->type);
    const MapPtr A = map_for(plan_->layout(a), a->type), B = map_for(plan_->layout(bm), bm->type);
    prepare(a, *A);
    prepare(bm, *B);
    prepare(acc, *C);
    llvm::Value *abase = smem(static_cast<unsigned>((K * M + K * N) * type_bytes(rt)));
    llvm::Value *bbase = b_.CreateConstInBoundsGEP1_64(rt, abase, K * M);
    barrier();
    for_slots(*A, a->type, [&](int64_t, const Idx &i) {
      llvm::Value *at = b_.CreateAdd(b_.CreateMul(i[1], b_.getInt64(M)), i[0]);
      b_.CreateStore(cast(element(a, i), it, ot), b_.CreateInBoundsGEP(rt, abase, at));
    });
    for_slots(*B, bm->type, [&](int64_t, const Idx &i) {
      llvm::Value *at = b_.CreateAdd(b_.CreateMul(i[0], b_.getInt64(N)), i[1]);
      b_.CreateStore(cast(element(bm, i), it, ot), b_.CreateInBoundsGEP(rt, bbase, at));
    });
    barrier();
    std::vector<llvm::Value *> init(C->slots()), mi(C->slots()), ni(C->slots());
    for_slots(*C, res->type, [&](int64_t s, const Idx &i) {
      init[s] = element(acc, i);
      mi[s] = i[0];
      ni[s] = i[1];
    });
    // Slots that share a row (column) share its a (b) value at each k.
    const int nbits = gpu::log2_exact(N);
    std::map<int64_t, size_t> row_of, col_of;
    for (int64_t s = 0; s < C->slots(); ++s) {
      row_of.emplace(C->reg_offset(s) >> nbits, row_of.size());
      col_of.emplace(C->reg_offset(s) & ((int64_t{1} << nbits) - 1), col_of.size());
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
      llvm::Value *&x = av[row_of.at(C->reg_offset(s) >> nbits)];
      if (!x)
        x = b_.CreateLoad(rt, b_.CreateInBoundsGEP(rt, abase, b_.CreateAdd(b_.CreateMul(k, b_.getInt64(M)), mi[s])));
      llvm::Value *&y = bv[col_of.at(C->reg_offset(s) & ((int64_t{1} << nbits) - 1))];
      if (!y)
        y = b_.CreateLoad(rt, b_.CreateInBoundsGEP(rt, bbase, b_.CreateAdd(b_.CreateMul(k, b_.getInt64(N)), ni[s])));
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

  void lower_scan(const ir::Op &op) {
    if (gpu_)
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

  llvm::Value *alloc_scalar(llvm::Type *t) {
    llvm::IRBuilder<> eb(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
    return eb.CreateAlloca(t);
  }

  void lower_dot(const ir::Op &op) {
    if (gpu_)
      return lower_dot_gpu(op);
    const ir::Value *a = op.operands[0], *bm = op.operands[1], *acc = op.operands[2], *res = op.result();
    const int64_t M = a->type.shape[0], K = a->type.shape[1], N = bm->type.shape[1];
    const Type ot = res->type.element(), it = a->type.element();
    llvm::Value *abuf = as_buffer(a), *bbuf = as_buffer(bm);
    llvm::Value *out = materialize(acc, alloc_buffer(res->type));
    llvm::Type *ert = reg_type(ot);
    // m-k-n order: the innermost loop runs along contiguous rows of b and out.
    loop(M, [&](llvm::Value *m) {
      loop(K, [&](llvm::Value *k) {
        llvm::Value *av = b_.CreateLoad(reg_type(it), buf_ptr(a->type, abuf, b_.CreateAdd(b_.CreateMul(m, b_.getInt64(K)), k)));
        av = cast(av, it, ot);
        loop(N, [&](llvm::Value *n) {
          llvm::Value *bv = b_.CreateLoad(reg_type(it), buf_ptr(bm->type, bbuf, b_.CreateAdd(b_.CreateMul(k, b_.getInt64(N)), n)));
          bv = cast(bv, it, ot);
          llvm::Value *optr = buf_ptr(res->type, out, b_.CreateAdd(b_.CreateMul(m, b_.getInt64(N)), n));
          llvm::Value *cur = b_.CreateLoad(ert, optr);
          llvm::Value *r = ot.is_float()
                               ? b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {ert}, {av, bv, cur})
                               : b_.CreateAdd(cur, b_.CreateMul(av, bv));
          b_.CreateStore(r, optr);
        });
      });
    });
    if (is_half(ot.elem))
      loop(M * N, [&](llvm::Value *i) {
        llvm::Value *p = buf_ptr(res->type, out, i);
        b_.CreateStore(round_half(b_.CreateLoad(ert, p), ot.elem), p);
      });
    set(res, nullptr, out);
  }

  // ---- control flow ----

  /// Storage for a loop-carried value: a phi for scalars; on the CPU two
  /// buffers whose roles swap each iteration for blocks, so that computing
  /// the next value never overwrites what it reads; on the GPU a phi per
  /// slot of the carried layout (the plan gives it the layout of what the
  /// loop yields, so the yield needs no conversion).
  struct Carried {
    const ir::Value *init = nullptr;
    llvm::PHINode *phi = nullptr;
    llvm::Value *buf_a = nullptr, *buf_b = nullptr;
    MapPtr map;
    std::vector<llvm::Value *> init_slots;
    std::vector<llvm::PHINode *> slots;
  };

  /// `args`: the region arguments that carry the values (their layouts).
  std::vector<Carried> start_carried(const std::vector<const ir::Value *> &inits, const std::vector<ir::Value *> &args) {
    std::vector<Carried> cs;
    for (size_t i = 0; i < inits.size(); ++i) {
      const ir::Value *v = inits[i];
      Carried c;
      c.init = v;
      if (v->type.is_block() && gpu_) {
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

  std::vector<llvm::Value *> slot_values(const ir::Value *v, const Lowered &l) {
    std::vector<llvm::Value *> r;
    for (int64_t s = 0; s < l.map->slots(); ++s)
      r.push_back(b_.CreateLoad(reg_type(v->type.element()), slot_ptr(v->type, l.buf, s)));
    return r;
  }

  /// A GPU block held in per-slot SSA values, as a buffer again.
  Lowered slots_buffer(const Type &t, const MapPtr &m, const std::vector<llvm::PHINode *> &vals) {
    Lowered l;
    l.map = m;
    l.buf = alloc_buffer(t, m.get());
    for (size_t s = 0; s < vals.size(); ++s)
      b_.CreateStore(vals[s], slot_ptr(t, l.buf, static_cast<int64_t>(s)));
    return l;
  }

  void make_phis(std::vector<Carried> &cs, llvm::BasicBlock *pre) {
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

  void bind_carried(const std::vector<Carried> &cs, const std::vector<ir::Value *> &args) {
    for (size_t i = 0; i < cs.size(); ++i) {
      if (cs[i].map)
        vals_[args[i]] = slots_buffer(args[i]->type, cs[i].map, cs[i].slots);
      else
        set(args[i], cs[i].buf_a ? nullptr : cs[i].phi, cs[i].buf_a ? cs[i].phi : nullptr);
    }
  }

  /// Evaluates the yielded values into the next-iteration storage: per
  /// carried value, its next phi inputs.
  std::vector<std::vector<llvm::Value *>> yield_carried(const std::vector<Carried> &cs,
                                                        const std::vector<ir::Value *> &ys) {
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

  void add_incoming(const std::vector<Carried> &cs, const std::vector<std::vector<llvm::Value *>> &next,
                    llvm::BasicBlock *latch) {
    for (size_t i = 0; i < cs.size(); ++i) {
      if (cs[i].map)
        for (size_t s = 0; s < cs[i].slots.size(); ++s)
          cs[i].slots[s]->addIncoming(next[i][s], latch);
      else
        cs[i].phi->addIncoming(next[i][0], latch);
    }
  }

  void set_results(const ir::Op &op, const std::vector<Carried> &cs) {
    for (size_t i = 0; i < cs.size(); ++i) {
      if (cs[i].map)
        vals_[op.results[i]] = slots_buffer(op.results[i]->type, cs[i].map, cs[i].slots);
      else
        set(op.results[i], cs[i].buf_a ? nullptr : cs[i].phi, cs[i].buf_a ? cs[i].phi : nullptr);
    }
  }

  void lower_for(const ir::Op &op) {
    llvm::Value *lo = scalar(op.operands[0]), *hi = scalar(op.operands[1]), *step = scalar(op.operands[2]);
    const bool sg = op.operands[0]->type.is_signed();
    std::vector<const ir::Value *> inits(op.operands.begin() + 3, op.operands.end());
    const ir::Block &body = *op.regions[0];
    std::vector<Carried> cs = start_carried(inits, std::vector<ir::Value *>(body.args.begin() + 1, body.args.end()));

    llvm::BasicBlock *pre = b_.GetInsertBlock();
    llvm::BasicBlock *head = new_bb("for"), *loop_body = new_bb("for.body"), *exit = new_bb("for.end");
    b_.CreateBr(head);
    b_.SetInsertPoint(head);
    llvm::PHINode *iv = b_.CreatePHI(lo->getType(), 2, "iv");
    iv->addIncoming(lo, pre);
    make_phis(cs, pre);
    // range() semantics: a negative step counts down.
    llvm::Value *up = sg ? b_.CreateICmpSLT(iv, hi) : b_.CreateICmpULT(iv, hi);
    llvm::Value *cond = up;
    if (sg) {
      llvm::Value *down = b_.CreateICmpSGT(iv, hi);
      cond = b_.CreateSelect(b_.CreateICmpSGT(step, llvm::ConstantInt::get(step->getType(), 0)), up, down);
    }
    b_.CreateCondBr(cond, loop_body, exit);

    b_.SetInsertPoint(loop_body);
    set(body.args[0], iv, nullptr);
    bind_carried(cs, std::vector<ir::Value *>(body.args.begin() + 1, body.args.end()));
    lower_ops(body, /*stop_at_terminator=*/true);
    const ir::Op &yield = *body.ops.back();
    std::vector<std::vector<llvm::Value *>> next = yield_carried(cs, yield.operands);
    llvm::Value *iv_next = b_.CreateAdd(iv, step);
    llvm::BasicBlock *latch = b_.GetInsertBlock();
    iv->addIncoming(iv_next, latch);
    add_incoming(cs, next, latch);
    b_.CreateBr(head);
    b_.SetInsertPoint(exit);
    set_results(op, cs);
  }

  void lower_while(const ir::Op &op) {
    std::vector<const ir::Value *> inits(op.operands.begin(), op.operands.end());
    const ir::Block &before = *op.regions[0], &after = *op.regions[1];
    std::vector<Carried> cs = start_carried(inits, before.args);

    llvm::BasicBlock *pre = b_.GetInsertBlock();
    llvm::BasicBlock *head = new_bb("while"), *loop_body = new_bb("while.body"), *exit = new_bb("while.end");
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
  }

  void lower_if(const ir::Op &op) {
    llvm::Value *cond = scalar(op.operands[0]);
    std::vector<llvm::Value *> bufs;
    std::vector<MapPtr> maps;
    for (const ir::Value *r : op.results) {
      maps.push_back(gpu_ && r->type.is_block() ? map_for(plan_->layout(r), r->type) : nullptr);
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

  void lower_call(const ir::Op &op) {
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

  void set(const ir::Value *v, llvm::Value *s, llvm::Value *buf) {
    Lowered l;
    l.scalar = s;
    l.buf = buf;
    vals_[v] = l;
  }

  void lower_pure(const ir::Op &op) {
    const ir::Value *res = op.result();
    if (!res->type.is_block()) {
      std::vector<llvm::Value *> args;
      for (const ir::Value *o : op.operands)
        args.push_back(scalar(o));
      set(res, compute(op, args), nullptr);
      return;
    }
    int c = 1;
    for (const ir::Value *o : op.operands)
      c += cost(o);
    Lowered l;
    l.lazy = true;
    vals_[res] = l;
    // Recomputing is free for cheap trees; a shared, costly one is stored once.
    if (uses_[res] > 1 && c > 6) {
      if (gpu_)
        vals_[res] = materialize_gpu(res);
      else
        set(res, nullptr, materialize(res));
      c = 0;
    }
    cost_[res] = c;
  }

  void lower_ops(const ir::Block &blk, bool stop_at_terminator) {
    // A conversion made in one region is not there in another.
    converted_.clear();
    struct Leave {
      Lowering *l;
      ~Leave() { l->converted_.clear(); }
    } leave{this};
    for (const ir::Op *op : blk.ops) {
      cur_op_ = op;
      switch (op->kind) {
      case OpKind::Load: lower_load(*op); break;
      case OpKind::Store: lower_store(*op); break;
      case OpKind::AtomicRMW:
      case OpKind::AtomicCAS: lower_atomic(*op); break;
      case OpKind::Reduce: lower_reduce(*op); break;
      case OpKind::Scan: lower_scan(*op); break;
      case OpKind::Dot: lower_dot(*op); break;
      case OpKind::For: lower_for(*op); break;
      case OpKind::While: lower_while(*op); break;
      case OpKind::If: lower_if(*op); break;
      case OpKind::Call: lower_call(*op); break;
      case OpKind::ProgramId: set(op->result(), pid_[op->axis], nullptr); break;
      case OpKind::NumPrograms: set(op->result(), nprog_[op->axis], nullptr); break;
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
      case OpKind::Assert: lower_assert(*op); break;
      case OpKind::Barrier:
        if (gpu_)
          barrier();
        break; // on the CPU a program is one thread: nothing to wait for
      default: lower_pure(*op); break;
      }
    }
  }

  // ---- functions ----

  void declare_device_function(const ir::Function &f) {
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

  void define_function(const ir::Function &f, llvm::Function *fn) {
    fn_ = fn;
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", fn));
    for (size_t i = 0; i < f.body.args.size(); ++i)
      set(f.body.args[i], fn->getArg(static_cast<unsigned>(i)), nullptr);
    // Device functions see no program ids; kernels pass none to them.
    lower_ops(f.body, false);
  }

  llvm::Function *define_program(const ir::Function &k) {
    llvm::Type *i32 = b_.getInt32Ty();
    auto *ty = llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy(), i32, i32, i32, i32, i32, i32}, false);
    llvm::Function *fn = llvm::Function::Create(ty, llvm::Function::InternalLinkage, k.name + ".program", mod_.get());
    fn->addFnAttr(llvm::Attribute::AlwaysInline);
    fn->addFnAttr(llvm::Attribute::NoUnwind);
    fn_ = fn;
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", fn));
    llvm::Value *args = fn->getArg(0);
    for (int a = 0; a < 3; ++a) {
      pid_[a] = fn->getArg(1 + a);
      nprog_[a] = fn->getArg(4 + a);
    }
    for (size_t i = 0; i < k.body.args.size(); ++i) {
      const ir::Value *p = k.body.args[i];
      llvm::Value *slot = b_.CreateLoad(b_.getPtrTy(), b_.CreateConstInBoundsGEP1_64(b_.getPtrTy(), args, i));
      llvm::Value *v = p->type.pointer ? b_.CreateLoad(b_.getPtrTy(), slot)
                                       : from_mem(b_.CreateLoad(mem_type(p->type.elem), slot), p->type.elem);
      if (p->type.pointer && p->facts.divisible16)
        b_.CreateAlignmentAssumption(mod_->getDataLayout(), v, 16);
      set(p, v, nullptr);
    }
    assert_record_ =
        b_.CreateLoad(b_.getPtrTy(), b_.CreateConstInBoundsGEP1_64(b_.getPtrTy(), args, k.body.args.size()));
    lower_ops(k.body, false);
    return fn;
  }

  /// The NVPTX kernel: runtime parameters as kernel arguments, one CTA per program.
  void define_gpu_kernel(const ir::Function &k) {
    std::vector<llvm::Type *> params;
    for (const ir::Value *p : k.body.args)
      params.push_back(p->type.pointer ? b_.getPtrTy() : mem_type(p->type.elem));
    auto *ty = llvm::FunctionType::get(b_.getVoidTy(), params, false);
    llvm::Function *fn = llvm::Function::Create(ty, llvm::Function::ExternalLinkage, k.name, mod_.get());
    fn->setCallingConv(llvm::CallingConv::PTX_Kernel);
    fn->addFnAttr(llvm::Attribute::NoUnwind);
    fn_ = fn;
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", fn));
    using I = llvm::Intrinsic::ID;
    auto sreg = [&](I id) { return b_.CreateIntrinsic(id, {}, {}); };
    const I ctaid[3] = {llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x, llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
                        llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z};
    const I nctaid[3] = {llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x, llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_y,
                         llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_z};
    for (int a = 0; a < 3; ++a) {
      pid_[a] = sreg(ctaid[a]);
      nprog_[a] = sreg(nctaid[a]);
    }
    tid64_ = b_.CreateZExt(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x), b_.getInt64Ty());
    lane64_ = b_.CreateAnd(tid64_, b_.getInt64(31));
    warp64_ = b_.CreateLShr(tid64_, b_.getInt64(5));
    prologue_ = b_.GetInsertBlock();
    for (size_t i = 0; i < k.body.args.size(); ++i) {
      const ir::Value *p = k.body.args[i];
      llvm::Value *v = fn->getArg(static_cast<unsigned>(i));
      if (!p->type.pointer)
        v = from_mem(v, p->type.elem);
      else if (p->facts.divisible16)
        b_.CreateAlignmentAssumption(mod_->getDataLayout(), v, 16);
      set(p, v, nullptr);
    }
    // The prologue stays open for per-layout thread index bits until the end.
    llvm::BasicBlock *body = new_bb("body");
    b_.SetInsertPoint(body);
    lower_ops(k.body, false);
    llvm::IRBuilder<>(prologue_).CreateBr(body);
  }

  void define_entry(const ir::Function &k, llvm::Function *program) {
    llvm::Type *i32 = b_.getInt32Ty(), *i64 = b_.getInt64Ty();
    auto *ty = llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy(), b_.getPtrTy(), i64, i64}, false);
    llvm::Function *fn = llvm::Function::Create(ty, llvm::Function::ExternalLinkage, k.name, mod_.get());
    fn->addFnAttr(llvm::Attribute::NoUnwind);
    fn_ = fn;
    llvm::BasicBlock *entry = llvm::BasicBlock::Create(ctx_, "entry", fn);
    b_.SetInsertPoint(entry);
    llvm::Value *grid = fn->getArg(1);
    llvm::Value *g[3];
    for (int a = 0; a < 3; ++a)
      g[a] = b_.CreateLoad(i32, b_.CreateConstInBoundsGEP1_64(i32, grid, a));
    llvm::Value *begin = fn->getArg(2), *end = fn->getArg(3);
    llvm::BasicBlock *head = new_bb("programs"), *exit = new_bb("done");
    b_.CreateCondBr(b_.CreateICmpULT(begin, end), head, exit);
    b_.SetInsertPoint(head);
    llvm::PHINode *lin = b_.CreatePHI(i64, 2);
    lin->addIncoming(begin, entry);
    llvm::Value *gx = b_.CreateZExt(g[0], i64), *gy = b_.CreateZExt(g[1], i64);
    llvm::Value *x = b_.CreateURem(lin, gx);
    llvm::Value *rest = b_.CreateUDiv(lin, gx);
    llvm::Value *y = b_.CreateURem(rest, gy);
    llvm::Value *z = b_.CreateUDiv(rest, gy);
    b_.CreateCall(program, {fn->getArg(0), b_.CreateTrunc(x, i32), b_.CreateTrunc(y, i32), b_.CreateTrunc(z, i32),
                            g[0], g[1], g[2]});
    llvm::Value *next = b_.CreateAdd(lin, b_.getInt64(1));
    lin->addIncoming(next, b_.GetInsertBlock());
    b_.CreateCondBr(b_.CreateICmpULT(next, end), head, exit);
    b_.SetInsertPoint(exit);
    b_.CreateRetVoid();
  }

  const ir::Program &prog_;
  Options opts_;
  bool gpu_;
  int threads_; ///< threads per CTA (GPU)
  llvm::LLVMContext &ctx_;
  std::unique_ptr<llvm::Module> mod_;
  llvm::IRBuilder<> b_;
  llvm::Function *fn_ = nullptr;
  llvm::Value *pid_[3] = {}, *nprog_[3] = {};
  llvm::Value *tid64_ = nullptr; ///< this thread's index in the CTA (GPU)
  // GPU
  std::unique_ptr<gpu::LayoutPlan> plan_;
  const gpu::BitMap *view_ = nullptr; ///< the layout the current element is read in
  int64_t slot_ = 0;                  ///< and its slot there
  llvm::BasicBlock *prologue_ = nullptr; ///< the kernel's entry: thread ids and layouts' index bits
  llvm::Value *lane64_ = nullptr, *warp64_ = nullptr;
  std::unordered_map<std::string, llvm::Value *> thread_bits_;
  std::map<std::pair<const ir::Value *, std::string>, Lowered> converted_; ///< conversions of the current block
  int conversions_ = 0;
  const ir::Op *cur_op_ = nullptr;
  std::unordered_map<const ir::Op *, std::string> op_notes_;
  llvm::Value *assert_record_ = nullptr; ///< the launch's assert record (CPU)
  llvm::GlobalVariable *smem_ = nullptr;
  unsigned shared_bytes_ = 0;
  std::unordered_map<const ir::Value *, Lowered> vals_;
  std::unordered_map<const ir::Value *, int> uses_, cost_;
  std::unordered_map<const ir::Function *, llvm::Function *> fns_;
};

} // namespace

LoweringResult lower_tile_ir(const ir::Program &program, const Options &options, LoweringTarget target,
                             llvm::LLVMContext &ctx) {
  return Lowering(program, options, target, ctx).run();
}

} // namespace kiln::llvmgen
