#include "compiler/llvm/lower_tile_ir.hpp"

#include <algorithm>
#include <array>
#include <numeric>
#include <functional>
#include <unordered_map>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include "compiler/llvm/lower_fp8.hpp"
#include "compiler/llvm/lower_math.hpp"
#include "compiler/llvm/lower_print.hpp"
#include "kiln/error.hpp"

namespace kiln::llvmgen {
namespace {

using ir::BinaryOp;
using ir::OpKind;
using ir::Type;
using ir::UnaryOp;

using Idx = std::array<llvm::Value *, Type::kMaxRank>;

// f16, bf16 and the fp8 types live in registers as float (rounded to their
// precision) and are converted only at memory; LLVM on x86 has no native
// bf16 or fp8 arithmetic and would otherwise call libgcc helpers the JIT
// cannot count on.
bool is_half(DType t) { return t == DType::f16 || t == DType::bf16 || is_fp8(t); }

/// A lowered IR value: a scalar SSA value, or a block that is either a
/// row-major buffer (`buf`) or recomputed per element (`lazy`).
struct Lowered {
  llvm::Value *scalar = nullptr;
  llvm::Value *buf = nullptr;
  bool lazy = false;
};

class Lowering {
public:
  Lowering(const ir::Program &p, const Options &o, LoweringTarget target, llvm::LLVMContext &ctx)
      : prog_(p), opts_(o), gpu_(target == LoweringTarget::Nvptx), threads_(32 * o.num_warps), ctx_(ctx),
        mod_(std::make_unique<llvm::Module>(p.kernel().name, ctx)), b_(ctx) {}

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
    return LoweringResult{std::move(mod_), shared_bytes_};
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
    case DType::f32:
    case DType::f8e4nv:
    case DType::f8e5:
    case DType::f8e4b15:
    case DType::f8e4b8:
    case DType::f8e5b16: return b_.getFloatTy();
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
    default: return is_fp8(t) ? b_.getInt8Ty() : reg_type(Type::scalar(t));
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
    case OpKind::Math:
    case OpKind::Gather:
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

  /// Elements of a block of `n` each thread holds: all on the CPU, its
  /// share under the blocked layout on the GPU.
  int64_t per_thread(int64_t n) const { return gpu_ ? steps_of(n) * vec_of(n) : n; }

  /// GPU layout: each thread holds runs of V contiguous elements (up to 4,
  /// so that 32-bit elements load 16 bytes at a time), runs assigned to
  /// threads round-robin: element i is in thread (i / V) % T. V depends on
  /// the block size only, so every block of a shape has the same layout.
  int64_t vec_of(int64_t n) const { return gpu_ ? std::clamp<int64_t>(n / threads_, 1, 4) : 1; }
  int64_t steps_of(int64_t n) const {
    const int64_t span = vec_of(n) * threads_;
    return (n + span - 1) / span;
  }

  llvm::Value *alloc_buffer(const Type &t) {
    llvm::IRBuilder<> eb(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
    llvm::AllocaInst *a = eb.CreateAlloca(llvm::ArrayType::get(reg_type(t.element()), per_thread(t.numel())));
    a->setAlignment(llvm::Align(gpu_ ? 16 : 64));
    return a;
  }

  /// The slot of element `lin` (row-major) in a buffer; on the GPU, valid
  /// only for this thread's own elements (lin % T == tid).
  llvm::Value *buf_ptr(const Type &t, llvm::Value *buf, llvm::Value *lin) {
    if (gpu_) {
      // Every GPU access to a buffer happens inside for_elements, at this
      // thread's element of the current step: its slot is the step number
      // (a constant once the loop is unrolled, so the array stays in registers).
      if (!cur_slot_)
        throw std::logic_error("kiln internal error: GPU buffer access outside an element loop");
      lin = cur_slot_;
    }
    return b_.CreateInBoundsGEP(reg_type(t.element()), buf, lin);
  }

  /// Runs `body(idx)` for every element of `shape` this thread owns: all of
  /// them on the CPU (nested loops), i = k * T + tid on the GPU.
  void for_elements(const Type &shape, const std::function<void(const Idx &)> &body) {
    if (!gpu_) {
      loop_nest(shape, body);
      return;
    }
    for_groups(shape, [&](llvm::Value *k, llvm::Value *first, int64_t v) {
      for (int64_t j = 0; j < v; ++j) {
        llvm::Value *i = j ? b_.CreateAdd(first, b_.getInt64(j)) : first;
        with_slot(k, j, v, [&] { body(delinear(shape, i)); });
      }
    });
  }

  /// GPU: for each run of V elements this thread owns, `body(k, first, V)`
  /// with k the run's number and `first` the linear index of its first
  /// element. Straight-line runs, not a loop: the thread's elements then sit
  /// in registers from the start and LLVM has no loop to unroll.
  void for_groups(const Type &shape, const std::function<void(llvm::Value *, llvm::Value *, int64_t)> &body) {
    const int64_t n = shape.numel(), v = vec_of(n), steps = steps_of(n);
    auto step = [&](llvm::Value *k) {
      llvm::Value *first = b_.CreateMul(b_.CreateAdd(b_.CreateMul(k, b_.getInt64(threads_)), tid64_), b_.getInt64(v));
      if (n % (v * threads_) == 0) {
        body(k, first, v);
        return;
      }
      llvm::BasicBlock *in = new_bb("own"), *next = new_bb("own.end");
      b_.CreateCondBr(b_.CreateICmpULT(first, b_.getInt64(n)), in, next);
      b_.SetInsertPoint(in);
      body(k, first, v);
      b_.CreateBr(next);
      b_.SetInsertPoint(next);
    };
    if (steps > 64)
      return loop(steps, step);
    for (int64_t k = 0; k < steps; ++k)
      step(b_.getInt64(k));
  }

  /// Runs `f` with the buffer slot of element j of run k current.
  void with_slot(llvm::Value *k, int64_t j, int64_t v, const std::function<void()> &f) {
    llvm::Value *saved = cur_slot_;
    cur_slot_ = b_.CreateAdd(b_.CreateMul(k, b_.getInt64(v)), b_.getInt64(j));
    f();
    cur_slot_ = saved;
  }

  [[noreturn]] void unsupported_on_gpu(const std::string &what) const {
    throw Error(what + " is not supported on the cuda target yet (it needs a layout conversion); "
                "run this kernel with --backend cpu for now");
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
      if (foreign_ > 0)
        unsupported_on_gpu("a broadcast or transpose of a loaded or computed block");
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
      // On the GPU a stretched dim reads other threads' elements.
      const int f = gpu_ && src->type.numel() != v->type.numel();
      foreign_ += f;
      llvm::Value *r = element(src, si);
      foreign_ -= f;
      return r;
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
      foreign_ += gpu_;
      llvm::Value *r = element(op.operands[0], si);
      foreign_ -= gpu_;
      return r;
    }
    case OpKind::Gather: return gather_element(op, idx);
    default: {
      std::vector<llvm::Value *> args;
      for (const ir::Value *o : op.operands)
        args.push_back(element(o, idx));
      return compute(op, args);
    }
    }
  }

  /// tl.gather: the source element at a data-dependent index along the
  /// axis (clamped into the block: an out-of-range index is the kernel's
  /// bug, as in Triton, but must not read outside the buffer).
  llvm::Value *gather_element(const ir::Op &op, const Idx &idx) {
    const ir::Value *src = op.operands[0], *index = op.operands[1];
    if (gpu_ && !vals_.at(src).lazy)
      unsupported_on_gpu("tl.gather (and what kiln builds on it: tl.sort, tl.flip, tl.topk, tl.reduce and "
                         "tl.associative_scan with a combine_fn, cumsum(reverse=True)) of a loaded or computed block");
    llvm::Value *at = element(index, idx);
    at = index->type.is_signed() ? b_.CreateSExtOrTrunc(at, b_.getInt64Ty()) : b_.CreateZExtOrTrunc(at, b_.getInt64Ty());
    Idx si = idx;
    si[op.axis] = b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, at, b_.getInt64(src->type.shape[op.axis] - 1));
    foreign_ += gpu_;
    llvm::Value *r = element(src, si);
    foreign_ -= gpu_;
    return r;
  }

  /// Writes every element of `v` into a fresh or given buffer.
  llvm::Value *materialize(const ir::Value *v, llvm::Value *into = nullptr) {
    llvm::Value *buf = into ? into : alloc_buffer(v->type);
    for_elements(v->type, [&](const Idx &idx) {
      b_.CreateStore(element(v, idx), buf_ptr(v->type, buf, linear(v->type, idx)));
    });
    return buf;
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
    if (is_fp8(t))
      return fp8_to_float(b_, float_to_fp8(b_, x, t), t);
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
    if (from.pointer && to.pointer)
      return x; // LLVM's pointers are untyped
    if (from.pointer || to.pointer)
      return from.pointer ? b_.CreatePtrToInt(x, reg_type(to)) : b_.CreateIntToPtr(x, b_.getPtrTy());
    // Through the memory representation: float registers of f16/bf16 hold values, not bits.
    auto to_bits = [&](llvm::Value *v, DType t) -> llvm::Value * {
      if (t == DType::f16)
        return b_.CreateBitCast(b_.CreateFPTrunc(v, b_.getHalfTy()), b_.getInt16Ty());
      if (t == DType::bf16)
        return b_.CreateTrunc(b_.CreateLShr(b_.CreateBitCast(v, b_.getInt32Ty()), 16), b_.getInt16Ty());
      if (is_fp8(t))
        return float_to_fp8(b_, v, t);
      return b_.CreateBitCast(v, b_.getIntNTy(ir::bit_width(Type::scalar(t))));
    };
    llvm::Value *bits = to_bits(x, from.elem);
    if (is_fp8(to.elem))
      return fp8_to_float(b_, bits, to.elem);
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
    case BinaryOp::Div: return fresult(b_.CreateFDiv(x, y), t);
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
    case BinaryOp::Pow: return fresult(b_.CreateBinaryIntrinsic(llvm::Intrinsic::pow, x, y), t);
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

  /// PTX's fast transcendental instructions, as Triton uses them; null for
  /// what LLVM's intrinsics lower well on NVPTX (sqrt, floor, abs, ...).
  llvm::Value *gpu_math(UnaryOp u, llvm::Value *x, const Type &t) {
    using U = UnaryOp;
    const bool transcendental = u == U::Exp || u == U::Exp2 || u == U::Log || u == U::Log2 || u == U::Sin ||
                                u == U::Cos || u == U::Erf;
    if (!transcendental)
      return nullptr;
    if (u == U::Erf)
      unsupported_on_gpu("tl.erf");
    if (!x->getType()->isFloatTy())
      unsupported_on_gpu(std::string("tl.") + (u == U::Exp ? "exp" : "math") + " on fp64");
    auto call = [&](llvm::Intrinsic::ID id, llvm::Value *v) { return b_.CreateIntrinsic(id, {}, {v}); };
    llvm::Value *r = nullptr;
    switch (u) {
    case U::Exp:
      r = call(llvm::Intrinsic::nvvm_ex2_approx_f, b_.CreateFMul(x, llvm::ConstantFP::get(x->getType(), 1.4426950408889634)));
      break;
    case U::Exp2: r = call(llvm::Intrinsic::nvvm_ex2_approx_f, x); break;
    case U::Log:
      r = b_.CreateFMul(call(llvm::Intrinsic::nvvm_lg2_approx_f, x), llvm::ConstantFP::get(x->getType(), 0.6931471805599453));
      break;
    case U::Log2: r = call(llvm::Intrinsic::nvvm_lg2_approx_f, x); break;
    case U::Sin: r = call(llvm::Intrinsic::nvvm_sin_approx_f, x); break;
    case U::Cos: r = call(llvm::Intrinsic::nvvm_cos_approx_f, x); break;
    default: break;
    }
    return fresult(r, t);
  }

  /// One element of a pure op from its operands' elements.
  llvm::Value *compute(const ir::Op &op, const std::vector<llvm::Value *> &a) {
    const Type rt = op.result()->type.element();
    switch (op.kind) {
    case OpKind::Binary: return binary(static_cast<BinaryOp>(op.sub), a[0], a[1], rt);
    case OpKind::Compare:
      return compare(static_cast<ir::ComparePred>(op.sub), a[0], a[1], op.operands[0]->type.element());
    case OpKind::Unary: return unary(static_cast<UnaryOp>(op.sub), a[0], rt);
    case OpKind::Math: return fresult(emit_math(b_, gpu_, static_cast<ir::MathFn>(op.sub), a), rt);
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
    default: return is_fp8(t) ? fp8_to_float(b_, v, t) : v;
    }
  }

  llvm::Value *to_mem(llvm::Value *v, DType t) {
    switch (t) {
    case DType::i1: return b_.CreateZExt(v, b_.getInt8Ty());
    case DType::f16: return b_.CreateFPTrunc(v, b_.getHalfTy());
    case DType::bf16: return b_.CreateTrunc(b_.CreateLShr(b_.CreateBitCast(v, b_.getInt32Ty()), 16), b_.getInt16Ty());
    default: return is_fp8(t) ? float_to_fp8(b_, v, t) : v;
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

  // ---- axis info (Triton's AxisInfo, for 1-D blocks) ----

  /// Along a 1-D block: runs of `contig` consecutive values (pointers: by
  /// one element), every value divisible by `div` (pointers: `div` bytes
  /// aligned), runs of `constancy` equal values; each run starts at a
  /// multiple of its length.
  struct AxisInfo {
    int64_t contig = 1, div = 1, constancy = 1;
  };

  static int64_t pow2_divisor(int64_t v) {
    if (v == 0)
      return int64_t{1} << 30;
    int64_t d = 1;
    while ((v & d) == 0 && d < (int64_t{1} << 30))
      d <<= 1;
    return d;
  }

  AxisInfo axis(const ir::Value *v) {
    if (auto it = axis_.find(v); it != axis_.end())
      return it->second;
    AxisInfo a;
    const int64_t n = v->type.is_block() ? v->type.numel() : 1;
    if (!v->def) {
      // A parameter: D is 16 (bytes for pointers, the value for integers).
      a.div = v->facts.divisible16 ? 16 : 1;
    } else if (v->type.rank <= 1) {
      const ir::Op &op = *v->def;
      auto in = [&](int i) { return axis(op.operands[i]); };
      const int64_t elem = v->type.pointer ? static_cast<int64_t>(dtype_size(v->type.elem)) : 1;
      switch (op.kind) {
      case OpKind::Constant:
        a = {1, v->type.is_float() ? 1 : pow2_divisor(op.i), n};
        break;
      case OpKind::Splat: {
        AxisInfo s0 = in(0);
        a = {1, s0.div, n};
        break;
      }
      case OpKind::Arange: a = {n, pow2_divisor(op.i), 1}; break;
      case OpKind::Binary: {
        const AxisInfo x = in(0), y = in(1);
        const auto bop = static_cast<BinaryOp>(op.sub);
        if (bop == BinaryOp::Add || bop == BinaryOp::Sub) {
          a.contig = std::max(std::gcd(x.contig, y.constancy), std::gcd(y.contig, x.constancy));
          a.div = std::gcd(x.div, y.div);
          a.constancy = std::gcd(x.constancy, y.constancy);
        } else if (bop == BinaryOp::Mul) {
          a.div = std::min<int64_t>(x.div * y.div, int64_t{1} << 30);
          a.constancy = std::gcd(x.constancy, y.constancy);
        } else {
          a.constancy = std::gcd(x.constancy, y.constancy);
        }
        break;
      }
      case OpKind::AddPtr: {
        const AxisInfo p = in(0), o = in(1);
        a.contig = std::max(std::gcd(p.contig, o.constancy), std::gcd(o.contig, p.constancy));
        a.div = std::gcd(p.div, std::min<int64_t>(o.div * elem, int64_t{1} << 30));
        a.constancy = std::gcd(p.constancy, o.constancy);
        break;
      }
      case OpKind::Compare: {
        // `offs < n`: equal across a run of offs that no multiple of n's divisor splits.
        const AxisInfo x = in(0), y = in(1);
        a.constancy = std::gcd(x.constancy, y.constancy);
        if (y.constancy >= n && x.contig > 1)
          a.constancy = std::max(a.constancy, std::gcd(x.contig, std::gcd(x.div, y.div)));
        if (x.constancy >= n && y.contig > 1)
          a.constancy = std::max(a.constancy, std::gcd(y.contig, std::gcd(x.div, y.div)));
        break;
      }
      default: break;
      }
    }
    axis_[v] = a;
    return a;
  }

  /// Whether the V elements of each run of `ptr` (and `mask`) can move as one
  /// vector: contiguous, aligned to the vector, and one mask value per run.
  bool vector_ok(const ir::Value *ptr, const ir::Value *mask, int64_t v) {
    if (v < 2 || ptr->type.rank != 1)
      return false;
    const int64_t bytes = v * static_cast<int64_t>(dtype_size(ptr->type.elem));
    if (bytes > 16 || ptr->type.elem == DType::i1)
      return false;
    const AxisInfo p = axis(ptr);
    if (p.contig % v != 0 || p.div % bytes != 0)
      return false;
    return !mask || axis(mask).constancy % v == 0;
  }

  /// `@p ld.global.v{V}.b{bits}` of V elements at `ptr`, with `others` where masked off.
  std::vector<llvm::Value *> vector_load(llvm::Value *ptr, llvm::Value *mask, const std::vector<llvm::Value *> &others,
                                         DType t) {
    llvm::Type *mt = mem_type(t);
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
      args.push_back(to_mem(o, t));
    }
    auto *fty = llvm::FunctionType::get(llvm::StructType::get(ctx_, rts), params, false);
    llvm::Value *r = b_.CreateCall(llvm::InlineAsm::get(fty, text, cons, false), args);
    std::vector<llvm::Value *> out;
    for (size_t j = 0; j < v; ++j)
      out.push_back(from_mem(b_.CreateExtractValue(r, static_cast<unsigned>(j)), t));
    return out;
  }

  void vector_store(llvm::Value *ptr, llvm::Value *mask, const std::vector<llvm::Value *> &vals) {
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

  /// 256 bytes of shared memory for reductions and broadcasts, reused by
  /// each (a barrier precedes every reuse).
  llvm::Value *smem() {
    if (!smem_) {
      auto *ty = llvm::ArrayType::get(b_.getInt64Ty(), 32);
      smem_ = new llvm::GlobalVariable(*mod_, ty, false, llvm::GlobalValue::InternalLinkage, llvm::UndefValue::get(ty),
                                       "kiln.smem", nullptr, llvm::GlobalValue::NotThreadLocal, 3);
      smem_->setAlignment(llvm::Align(16));
      shared_bytes_ = 256;
    }
    return smem_;
  }

  void barrier() { b_.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {}); }

  /// Runs `f` in thread 0 and gives its result (of type `t`) to every thread.
  llvm::Value *from_thread0(llvm::Type *t, const std::function<llvm::Value *()> &f) {
    llvm::Value *slot = smem();
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

  /// A butterfly shuffle of any 8- to 64-bit value across the warp.
  llvm::Value *shuffle_xor(llvm::Value *v, int lane_mask) {
    llvm::Type *t = v->getType();
    const unsigned bits = t->getPrimitiveSizeInBits();
    llvm::Value *bitsv = t->isIntegerTy() ? v : b_.CreateBitCast(v, b_.getIntNTy(bits));
    auto shfl32 = [&](llvm::Value *x) {
      return b_.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_bfly_i32, {},
                                {b_.getInt32(0xFFFFFFFFu), x, b_.getInt32(lane_mask), b_.getInt32(0x1F)});
    };
    llvm::Value *r;
    if (bits == 64) {
      llvm::Value *lo = shfl32(b_.CreateTrunc(bitsv, b_.getInt32Ty()));
      llvm::Value *hi = shfl32(b_.CreateTrunc(b_.CreateLShr(bitsv, 32), b_.getInt32Ty()));
      r = b_.CreateOr(b_.CreateZExt(lo, b_.getInt64Ty()), b_.CreateShl(b_.CreateZExt(hi, b_.getInt64Ty()), 32));
    } else {
      r = b_.CreateTrunc(shfl32(b_.CreateZExt(bitsv, b_.getInt32Ty())), b_.getIntNTy(bits));
    }
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

  /// A whole 1-D block reduced to a scalar in every thread: each thread over
  /// its elements, then a butterfly across the warp, then across warps
  /// through shared memory.
  void lower_reduce_gpu(const ir::Op &op) {
    const ir::Value *src = op.operands[0], *res = op.result();
    const auto kind = static_cast<ir::ReduceOp>(op.sub);
    if (src->type.rank != 1 || kind == ir::ReduceOp::ArgMax || kind == ir::ReduceOp::ArgMin)
      unsupported_on_gpu(std::string("tl.") + ir::op_name(op) + " of a " + src->type.str() + " block");
    const Type et = src->type.element();
    llvm::Type *rt = reg_type(et);
    llvm::Value *acc_slot = alloc_scalar(rt);
    b_.CreateStore(identity(kind, et), acc_slot);
    for_elements(src->type, [&](const Idx &idx) {
      b_.CreateStore(combine(kind, b_.CreateLoad(rt, acc_slot), element(src, idx), et), acc_slot);
    });
    llvm::Value *acc = b_.CreateLoad(rt, acc_slot);
    for (int m = 16; m >= 1; m /= 2)
      acc = combine(kind, acc, shuffle_xor(acc, m), et);
    const int warps = threads_ / 32;
    if (warps > 1) {
      llvm::Value *slots = smem();
      barrier(); // the scratch may still be read by a previous collective
      llvm::BasicBlock *lane0 = new_bb("lane0"), *done = new_bb("lane0.end");
      b_.CreateCondBr(b_.CreateICmpEQ(b_.CreateAnd(tid64_, b_.getInt64(31)), b_.getInt64(0)), lane0, done);
      b_.SetInsertPoint(lane0);
      b_.CreateStore(acc, b_.CreateInBoundsGEP(rt, slots, b_.CreateLShr(tid64_, b_.getInt64(5))));
      b_.CreateBr(done);
      b_.SetInsertPoint(done);
      barrier();
      acc = b_.CreateLoad(rt, slots);
      for (int w = 1; w < warps; ++w)
        acc = combine(kind, acc, b_.CreateLoad(rt, b_.CreateConstInBoundsGEP1_64(rt, slots, w)), et);
    }
    set(res, fresult(acc, et), nullptr);
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

  /// GPU, for each run of V elements of a 1-D access: the run's pointer and
  /// mask (its first element's: vector_ok checked they stand for the run)
  /// and `each` of its V elements, handed to `body(run, ptr, mask, values)`.
  void vector_runs(const Type &shape, const ir::Value *ptr_v, const ir::Value *mask_v,
                   const std::function<llvm::Value *(const Idx &)> &each,
                   const std::function<void(llvm::Value *, llvm::Value *, llvm::Value *,
                                            const std::vector<llvm::Value *> &)> &body) {
    const int64_t v = vec_of(shape.numel());
    for_groups(shape, [&](llvm::Value *k, llvm::Value *first, int64_t) {
      Idx at{};
      at[0] = first;
      llvm::Value *ptr = nullptr, *m = nullptr;
      with_slot(k, 0, v, [&] {
        ptr = element(ptr_v, at);
        m = mask_v ? element(mask_v, at) : nullptr;
      });
      std::vector<llvm::Value *> vals;
      for (int64_t j = 0; j < v; ++j) {
        Idx aj{};
        aj[0] = j ? b_.CreateAdd(first, b_.getInt64(j)) : first;
        with_slot(k, j, v, [&] { vals.push_back(each(aj)); });
      }
      body(k, ptr, m, vals);
    });
  }

  void lower_load(const ir::Op &op) {
    const ir::Value *res = op.result();
    const Type et = res->type.element();
    const bool has_mask = op.i & 1, has_other = op.i & 2;
    llvm::Value *buf = res->type.is_block() ? alloc_buffer(res->type) : nullptr;
    const int64_t v = res->type.is_block() ? vec_of(res->type.numel()) : 1;
    if (gpu_ && vector_ok(op.operands[0], has_mask ? op.operands[1] : nullptr, v)) {
      vector_runs(
          res->type, op.operands[0], has_mask ? op.operands[1] : nullptr,
          [&](const Idx &at) {
            return has_other ? element(op.operands[2], at) : llvm::Constant::getNullValue(reg_type(et));
          },
          [&](llvm::Value *k, llvm::Value *ptr, llvm::Value *m, const std::vector<llvm::Value *> &others) {
            std::vector<llvm::Value *> vals = vector_load(ptr, m, others, et.elem);
            for (int64_t j = 0; j < v; ++j)
              with_slot(k, j, v, [&] { b_.CreateStore(vals[j], buf_ptr(res->type, buf, nullptr)); });
          });
      set(res, nullptr, buf);
      return;
    }
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
    const DType et = op.operands[0]->type.elem;
    const bool has_mask = op.operands.size() > 2;
    const Type &shape = op.operands[0]->type;
    const int64_t v = shape.is_block() ? vec_of(shape.numel()) : 1;
    if (gpu_ && vector_ok(op.operands[0], has_mask ? op.operands[2] : nullptr, v)) {
      vector_runs(
          shape, op.operands[0], has_mask ? op.operands[2] : nullptr,
          [&](const Idx &at) { return to_mem(element(op.operands[1], at), et); },
          [&](llvm::Value *, llvm::Value *ptr, llvm::Value *m, const std::vector<llvm::Value *> &vals) {
            vector_store(ptr, m, vals);
          });
      return;
    }
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
    const Type et = res->type.element();
    llvm::Value *buf = res->type.is_block() ? alloc_buffer(res->type) : nullptr;
    llvm::Value *out = nullptr;
    const bool has_mask = op.kind == OpKind::AtomicRMW && op.operands.size() > 2;
    each(res->type, [&](const Idx &idx) {
      llvm::Value *ptr = element(op.operands[0], idx);
      auto rmw = [&]() -> llvm::Value * {
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
      };
      llvm::Value *old;
      if (gpu_ && !res->type.is_block()) {
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
    default: return is_fp8(t) ? fp8_to_float(b_, v, t) : v;
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

  void lower_scan(const ir::Op &op) {
    if (gpu_)
      unsupported_on_gpu("tl.cumsum / tl.cumprod");
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
      unsupported_on_gpu("tl.dot");
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

  /// Storage for a loop-carried value: a phi for scalars; two buffers whose
  /// roles swap each iteration for blocks, so that computing the next value
  /// never overwrites what it reads.
  struct Carried {
    const ir::Value *init;
    llvm::PHINode *phi = nullptr;
    llvm::Value *buf_a = nullptr, *buf_b = nullptr;
  };

  std::vector<Carried> start_carried(const std::vector<const ir::Value *> &inits) {
    std::vector<Carried> cs;
    for (const ir::Value *v : inits) {
      Carried c{v};
      if (v->type.is_block()) {
        c.buf_a = alloc_buffer(v->type);
        c.buf_b = alloc_buffer(v->type);
        materialize(v, c.buf_a);
      }
      cs.push_back(c);
    }
    return cs;
  }

  void make_phis(std::vector<Carried> &cs, llvm::BasicBlock *pre) {
    for (Carried &c : cs) {
      if (c.buf_a) {
        c.phi = b_.CreatePHI(b_.getPtrTy(), 2);
        c.phi->addIncoming(c.buf_a, pre);
      } else {
        c.phi = b_.CreatePHI(reg_type(c.init->type), 2);
        c.phi->addIncoming(scalar(c.init), pre);
      }
    }
  }

  void bind_carried(const std::vector<Carried> &cs, const std::vector<ir::Value *> &args) {
    for (size_t i = 0; i < cs.size(); ++i)
      set(args[i], cs[i].buf_a ? nullptr : cs[i].phi, cs[i].buf_a ? cs[i].phi : nullptr);
  }

  /// Evaluates the yielded values into the next-iteration storage.
  std::vector<llvm::Value *> yield_carried(const std::vector<Carried> &cs, const std::vector<ir::Value *> &ys) {
    std::vector<llvm::Value *> next;
    for (size_t i = 0; i < cs.size(); ++i) {
      const Carried &c = cs[i];
      if (!c.buf_a) {
        next.push_back(scalar(ys[i]));
        continue;
      }
      llvm::Value *other = b_.CreateSelect(b_.CreateICmpEQ(c.phi, c.buf_a), c.buf_b, c.buf_a);
      materialize(ys[i], other);
      next.push_back(other);
    }
    return next;
  }

  void set_results(const ir::Op &op, const std::vector<Carried> &cs) {
    for (size_t i = 0; i < cs.size(); ++i)
      set(op.results[i], cs[i].buf_a ? nullptr : cs[i].phi, cs[i].buf_a ? cs[i].phi : nullptr);
  }

  void lower_for(const ir::Op &op) {
    llvm::Value *lo = scalar(op.operands[0]), *hi = scalar(op.operands[1]), *step = scalar(op.operands[2]);
    const bool sg = op.operands[0]->type.is_signed();
    std::vector<const ir::Value *> inits(op.operands.begin() + 3, op.operands.end());
    std::vector<Carried> cs = start_carried(inits);
    const ir::Block &body = *op.regions[0];

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
    std::vector<llvm::Value *> next = yield_carried(cs, yield.operands);
    llvm::Value *iv_next = b_.CreateAdd(iv, step);
    llvm::BasicBlock *latch = b_.GetInsertBlock();
    iv->addIncoming(iv_next, latch);
    for (size_t i = 0; i < cs.size(); ++i)
      cs[i].phi->addIncoming(next[i], latch);
    b_.CreateBr(head);
    b_.SetInsertPoint(exit);
    set_results(op, cs);
  }

  void lower_while(const ir::Op &op) {
    std::vector<const ir::Value *> inits(op.operands.begin(), op.operands.end());
    std::vector<Carried> cs = start_carried(inits);
    const ir::Block &before = *op.regions[0], &after = *op.regions[1];

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
    std::vector<llvm::Value *> next = yield_carried(cs, after.ops.back()->operands);
    llvm::BasicBlock *latch = b_.GetInsertBlock();
    for (size_t i = 0; i < cs.size(); ++i)
      cs[i].phi->addIncoming(next[i], latch);
    b_.CreateBr(head);
    b_.SetInsertPoint(exit);
    set_results(op, cs);
  }

  void lower_if(const ir::Op &op) {
    llvm::Value *cond = scalar(op.operands[0]);
    std::vector<llvm::Value *> bufs;
    for (const ir::Value *r : op.results)
      bufs.push_back(r->type.is_block() ? alloc_buffer(r->type) : nullptr);
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
        if (bufs[i])
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
      llvm::Value *buf = materialize(res);
      set(res, nullptr, buf);
      c = 0;
    }
    cost_[res] = c;
  }

  void lower_ops(const ir::Block &blk, bool stop_at_terminator) {
    for (const ir::Op *op : blk.ops) {
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
      case OpKind::Print:
        emit_print(
            b_, *op, pid_, [&](const Type &t, const std::function<void(const Idx &)> &f) { each(t, f); },
            [&](const ir::Value *v, const Idx &i) { return element(v, i); }, gpu_);
        break;
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
    for (size_t i = 0; i < k.body.args.size(); ++i) {
      const ir::Value *p = k.body.args[i];
      llvm::Value *v = fn->getArg(static_cast<unsigned>(i));
      if (!p->type.pointer)
        v = from_mem(v, p->type.elem);
      else if (p->facts.divisible16)
        b_.CreateAlignmentAssumption(mod_->getDataLayout(), v, 16);
      set(p, v, nullptr);
    }
    lower_ops(k.body, false);
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
  int foreign_ = 0;              ///< > 0 while reading elements through a broadcast or transpose
  llvm::Value *cur_slot_ = nullptr; ///< the buffer slot of this thread's current element (GPU)
  llvm::Value *assert_record_ = nullptr; ///< the launch's assert record (CPU)
  llvm::GlobalVariable *smem_ = nullptr;
  unsigned shared_bytes_ = 0;
  std::unordered_map<const ir::Value *, Lowered> vals_;
  std::unordered_map<const ir::Value *, int> uses_, cost_;
  std::unordered_map<const ir::Value *, AxisInfo> axis_;
  std::unordered_map<const ir::Function *, llvm::Function *> fns_;
};

} // namespace

LoweringResult lower_tile_ir(const ir::Program &program, const Options &options, LoweringTarget target,
                             llvm::LLVMContext &ctx) {
  return Lowering(program, options, target, ctx).run();
}

} // namespace kiln::llvmgen
