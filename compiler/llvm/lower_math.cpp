// Scalar arithmetic, per element, for every target: casts, the rounding of
// f16/bf16 held as float, integer division that never traps, and unary/
// binary, the one entry point for elementwise math (a target adds its own
// through TargetLowering::unary_math / binary_math).
#include "compiler/llvm/lowering.hpp"

#include "compiler/llvm/lower_fp8.hpp"

#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Intrinsics.h>

#include "kiln/error.hpp"

namespace kiln::llvmgen::detail {

auto Lowering::round_half(llvm::Value *x, DType t) -> llvm::Value * {
  if (is_fp8(t))
    return from_fp8(to_fp8(x, t), t);
  if (t == DType::f16)
    return b_.CreateFPExt(b_.CreateFPTrunc(x, b_.getHalfTy()), b_.getFloatTy());
  if (t == DType::bf16 && target_->native_bf16())
    return b_.CreateFPExt(b_.CreateFPTrunc(x, b_.getBFloatTy()), b_.getFloatTy());
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

auto Lowering::from_fp8(llvm::Value *code, DType t) -> llvm::Value * {
  if (llvm::Value *f = target_->fp8_to_float(code, t))
    return f;
  return fp8_to_float(b_, code, t);
}

auto Lowering::to_fp8(llvm::Value *f, DType t) -> llvm::Value * {
  if (llvm::Value *code = target_->float_to_fp8(f, t))
    return code;
  return float_to_fp8(b_, f, t);
}

auto Lowering::fresult(llvm::Value *x, const Type &t) -> llvm::Value * {
  return is_half(t.elem) ? round_half(x, t.elem) : x;
}

auto Lowering::cast(llvm::Value *x, const Type &from, const Type &to) -> llvm::Value * {
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

auto Lowering::bitcast(llvm::Value *x, const Type &from, const Type &to) -> llvm::Value * {
  if (from.pointer && to.pointer)
    return x; // LLVM's pointers are untyped
  if (from.pointer || to.pointer)
    return from.pointer ? b_.CreatePtrToInt(x, reg_type(to)) : b_.CreateIntToPtr(x, b_.getPtrTy());
  // Through the memory representation: float registers of f16/bf16/fp8 hold values, not bits.
  auto to_bits = [&](llvm::Value *v, DType t) -> llvm::Value * {
    if (t == DType::f16)
      return b_.CreateBitCast(b_.CreateFPTrunc(v, b_.getHalfTy()), b_.getInt16Ty());
    if (t == DType::bf16)
      return b_.CreateTrunc(b_.CreateLShr(b_.CreateBitCast(v, b_.getInt32Ty()), 16),
                            b_.getInt16Ty());
    if (is_fp8(t))
      return to_fp8(v, t);
    return b_.CreateBitCast(v, b_.getIntNTy(ir::bit_width(Type::scalar(t))));
  };
  llvm::Value *bits = to_bits(x, from.elem);
  if (is_fp8(to.elem))
    return from_fp8(bits, to.elem);
  if (to.elem == DType::f16)
    return b_.CreateFPExt(b_.CreateBitCast(bits, b_.getHalfTy()), b_.getFloatTy());
  if (to.elem == DType::bf16)
    return b_.CreateBitCast(b_.CreateShl(b_.CreateZExt(bits, b_.getInt32Ty()), 16),
                            b_.getFloatTy());
  return b_.CreateBitCast(bits, reg_type(to));
}

auto Lowering::shift(llvm::Value *x, llvm::Value *amt, bool left, bool is_signed) -> llvm::Value * {
  // Shifts by the width or more give 0 (or the sign) as on the GPU, not poison.
  const unsigned w = x->getType()->getIntegerBitWidth();
  llvm::Value *big = b_.CreateICmpUGE(amt, llvm::ConstantInt::get(amt->getType(), w));
  llvm::Value *safe = b_.CreateSelect(big, llvm::ConstantInt::get(amt->getType(), 0), amt);
  if (left)
    return b_.CreateSelect(big, llvm::ConstantInt::get(x->getType(), 0), b_.CreateShl(x, safe));
  if (is_signed)
    return b_.CreateAShr(x,
                         b_.CreateSelect(big, llvm::ConstantInt::get(amt->getType(), w - 1), amt));
  return b_.CreateSelect(big, llvm::ConstantInt::get(x->getType(), 0), b_.CreateLShr(x, safe));
}

auto Lowering::int_divrem(llvm::Value *x, llvm::Value *y, bool is_signed, bool rem)
    -> llvm::Value * {
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

auto Lowering::library_call(std::string_view name, const std::vector<llvm::Value *> &args)
    -> llvm::Value * {
  return call_math_library(b_, target_->math_library(), name, args);
}

auto Lowering::binary(BinaryOp op, llvm::Value *x, llvm::Value *y, const Type &t) -> llvm::Value * {
  if (llvm::Value *r = target_->binary_math(op, x, y, t))
    return r;
  const bool fl = t.is_float(), sg = t.is_signed();
  switch (op) {
  case BinaryOp::Add:
    return fl ? fresult(b_.CreateFAdd(x, y), t) : b_.CreateAdd(x, y);
  case BinaryOp::Sub:
    return fl ? fresult(b_.CreateFSub(x, y), t) : b_.CreateSub(x, y);
  case BinaryOp::Mul:
    return fl ? fresult(b_.CreateFMul(x, y), t) : b_.CreateMul(x, y);
  case BinaryOp::Div:
  case BinaryOp::DivRn: // LLVM's fdiv is IEEE: div.rn.f32 on NVPTX
    return fresult(b_.CreateFDiv(x, y), t);
  case BinaryOp::IDiv:
    return int_divrem(x, y, sg, false);
  case BinaryOp::Rem:
    return fl ? fresult(b_.CreateFRem(x, y), t) : int_divrem(x, y, sg, true);
  case BinaryOp::And:
    return b_.CreateAnd(x, y);
  case BinaryOp::Or:
    return b_.CreateOr(x, y);
  case BinaryOp::Xor:
    return b_.CreateXor(x, y);
  case BinaryOp::Shl:
    return shift(x, y, true, sg);
  case BinaryOp::Shr:
    return shift(x, y, false, sg);
  case BinaryOp::Max:
    return fl ? b_.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, x, y)
              : b_.CreateBinaryIntrinsic(sg ? llvm::Intrinsic::smax : llvm::Intrinsic::umax, x, y);
  case BinaryOp::Min:
    return fl ? b_.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, x, y)
              : b_.CreateBinaryIntrinsic(sg ? llvm::Intrinsic::smin : llvm::Intrinsic::umin, x, y);
  case BinaryOp::MaxNan:
    return fl ? b_.CreateBinaryIntrinsic(llvm::Intrinsic::maximum, x, y)
              : b_.CreateBinaryIntrinsic(sg ? llvm::Intrinsic::smax : llvm::Intrinsic::umax, x, y);
  case BinaryOp::MinNan:
    return fl ? b_.CreateBinaryIntrinsic(llvm::Intrinsic::minimum, x, y)
              : b_.CreateBinaryIntrinsic(sg ? llvm::Intrinsic::smin : llvm::Intrinsic::umin, x, y);
  case BinaryOp::UMulHi: {
    const unsigned w = x->getType()->getIntegerBitWidth();
    llvm::Type *wide = b_.getIntNTy(2 * w);
    llvm::Value *p = b_.CreateMul(b_.CreateZExt(x, wide), b_.CreateZExt(y, wide));
    return b_.CreateTrunc(b_.CreateLShr(p, w), x->getType());
  }
  case BinaryOp::Pow:
    return fresult(b_.CreateBinaryIntrinsic(llvm::Intrinsic::pow, x, y), t);
  }
  return nullptr;
}

auto Lowering::compare(ir::ComparePred p, llvm::Value *x, llvm::Value *y, const Type &t)
    -> llvm::Value * {
  using P = llvm::CmpInst::Predicate;
  using C = ir::ComparePred;
  if (t.is_float()) {
    static const P fp[] = {P::FCMP_OLT, P::FCMP_OLE, P::FCMP_OGT,
                           P::FCMP_OGE, P::FCMP_OEQ, P::FCMP_UNE};
    return b_.CreateFCmp(fp[static_cast<int>(p)], x, y);
  }
  const bool sg = t.is_signed();
  P pred;
  switch (p) {
  case C::Lt:
    pred = sg ? P::ICMP_SLT : P::ICMP_ULT;
    break;
  case C::Le:
    pred = sg ? P::ICMP_SLE : P::ICMP_ULE;
    break;
  case C::Gt:
    pred = sg ? P::ICMP_SGT : P::ICMP_UGT;
    break;
  case C::Ge:
    pred = sg ? P::ICMP_SGE : P::ICMP_UGE;
    break;
  case C::Eq:
    pred = P::ICMP_EQ;
    break;
  default:
    pred = P::ICMP_NE;
    break;
  }
  return b_.CreateICmp(pred, x, y);
}

auto Lowering::unary(UnaryOp u, llvm::Value *x, const Type &t) -> llvm::Value * {
  using I = llvm::Intrinsic::ID;
  auto intr = [&](I id) { return fresult(b_.CreateUnaryIntrinsic(id, x), t); };
  if (llvm::Value *r = target_->unary_math(u, x, t))
    return r;
  switch (u) {
  case UnaryOp::Neg:
    return t.is_float() ? b_.CreateFNeg(x) : b_.CreateNeg(x);
  case UnaryOp::Not:
    return b_.CreateNot(x);
  case UnaryOp::Abs:
    return t.is_float()    ? b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x)
           : t.is_signed() ? b_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, x, b_.getFalse())
                           : x;
  case UnaryOp::Exp:
    return intr(llvm::Intrinsic::exp);
  case UnaryOp::Exp2:
    return intr(llvm::Intrinsic::exp2);
  case UnaryOp::Log:
    return intr(llvm::Intrinsic::log);
  case UnaryOp::Log2:
    return intr(llvm::Intrinsic::log2);
  case UnaryOp::Sqrt:
    return intr(llvm::Intrinsic::sqrt);
  case UnaryOp::Rsqrt:
    return fresult(b_.CreateFDiv(llvm::ConstantFP::get(x->getType(), 1.0),
                                 b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x)),
                   t);
  case UnaryOp::Sin:
    return intr(llvm::Intrinsic::sin);
  case UnaryOp::Cos:
    return intr(llvm::Intrinsic::cos);
  case UnaryOp::Floor:
    return intr(llvm::Intrinsic::floor);
  case UnaryOp::Ceil:
    return intr(llvm::Intrinsic::ceil);
  case UnaryOp::Erf:
    return fresult(library_call("erf", {x}), t);
  }
  return nullptr;
}

auto Lowering::compute(const ir::Op &op, const std::vector<llvm::Value *> &a) -> llvm::Value * {
  const Type rt = op.result()->type.element();
  switch (op.kind) {
  case OpKind::Binary:
    return binary(static_cast<BinaryOp>(op.sub), a[0], a[1], rt);
  case OpKind::Compare:
    return compare(static_cast<ir::ComparePred>(op.sub), a[0], a[1],
                   op.operands[0]->type.element());
  case OpKind::Unary:
    return unary(static_cast<UnaryOp>(op.sub), a[0], rt);
  case OpKind::Math:
    return fresult(emit_math(b_, target_->math_library(), static_cast<ir::MathFn>(op.sub), a), rt);
  case OpKind::Select:
    return b_.CreateSelect(a[0], a[1], a[2]);
  case OpKind::Fma:
    return fresult(b_.CreateIntrinsic(llvm::Intrinsic::fma, {a[0]->getType()}, {a[0], a[1], a[2]}),
                   rt);
  case OpKind::Cast:
    return cast(a[0], op.operands[0]->type.element(), rt);
  case OpKind::Bitcast:
    return bitcast(a[0], op.operands[0]->type.element(), rt);
  case OpKind::AddPtr: {
    const Type off = op.operands[1]->type.element();
    llvm::Value *o = off.is_signed() ? b_.CreateSExtOrTrunc(a[1], b_.getInt64Ty())
                                     : b_.CreateZExtOrTrunc(a[1], b_.getInt64Ty());
    return b_.CreateGEP(mem_type(rt.elem), a[0], o);
  }
  case OpKind::Constant:
    return constant(op);
  case OpKind::Splat:
    return a[0];
  default:
    throw std::logic_error(std::string("kiln internal error: not a pure op: ") + ir::op_name(op));
  }
}

auto Lowering::identity(ir::ReduceOp k, const Type &t) -> llvm::Value * {
  llvm::Type *rt = reg_type(t);
  const bool fl = t.is_float(), sg = t.is_signed();
  const unsigned w = fl ? 0 : rt->getIntegerBitWidth();
  switch (k) {
  case ir::ReduceOp::Sum:
  case ir::ReduceOp::Xor:
  case ir::ReduceOp::Or:
    return llvm::Constant::getNullValue(rt);
  case ir::ReduceOp::Prod:
    return fl ? llvm::ConstantFP::get(rt, 1.0) : llvm::ConstantInt::get(rt, 1);
  case ir::ReduceOp::And:
    return llvm::ConstantInt::getAllOnesValue(rt);
  case ir::ReduceOp::Max:
    return fl ? llvm::ConstantFP::getInfinity(rt, true)
              : llvm::ConstantInt::get(rt, sg ? llvm::APInt::getSignedMinValue(w)
                                              : llvm::APInt::getMinValue(w));
  case ir::ReduceOp::Min:
    return fl ? llvm::ConstantFP::getInfinity(rt, false)
              : llvm::ConstantInt::get(rt, sg ? llvm::APInt::getSignedMaxValue(w)
                                              : llvm::APInt::getMaxValue(w));
  default:
    return nullptr;
  }
}

auto Lowering::combine(ir::ReduceOp k, llvm::Value *acc, llvm::Value *x, const Type &t)
    -> llvm::Value * {
  switch (k) {
  case ir::ReduceOp::Sum:
    return t.is_float() ? b_.CreateFAdd(acc, x) : b_.CreateAdd(acc, x);
  case ir::ReduceOp::Prod:
    return t.is_float() ? b_.CreateFMul(acc, x) : b_.CreateMul(acc, x);
  case ir::ReduceOp::Max:
    return binary(BinaryOp::Max, acc, x, t);
  case ir::ReduceOp::Min:
    return binary(BinaryOp::Min, acc, x, t);
  case ir::ReduceOp::Xor:
    return b_.CreateXor(acc, x);
  case ir::ReduceOp::And:
    return b_.CreateAnd(acc, x);
  case ir::ReduceOp::Or:
    return b_.CreateOr(acc, x);
  default:
    return nullptr;
  }
}

} // namespace kiln::llvmgen::detail
