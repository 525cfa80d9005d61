#include "compiler/llvm/lower_fp8.hpp"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>

namespace kiln::llvmgen {
namespace {

/// How each fp8 type spends its 256 codes.
enum class Special : uint8_t {
  Ieee, ///< exponent all ones: inf (mantissa 0) or NaN
  Fn,   ///< no inf; only all ones (S.1111.111) is NaN
  Fnuz, ///< no inf, no -0: 0x80 is NaN
  None, ///< every code a finite number
};

struct Format {
  int ebits, mbits, bias;
  Special special;
  const char *name;
};

Format format(DType t) {
  switch (t) {
  case DType::f8e4nv:
    return {4, 3, 7, Special::Fn, "f8e4nv"};
  case DType::f8e5:
    return {5, 2, 15, Special::Ieee, "f8e5"};
  case DType::f8e4b15:
    return {4, 3, 15, Special::None, "f8e4b15"};
  case DType::f8e4b8:
    return {4, 3, 8, Special::Fnuz, "f8e4b8"};
  default:
    return {5, 2, 16, Special::Fnuz, "f8e5b16"};
  }
}

float largest(const Format &f) {
  int e = (1 << f.ebits) - 1, m = (1 << f.mbits) - 1;
  if (f.special == Special::Ieee)
    --e; // the all-ones exponent is inf / NaN
  else if (f.special == Special::Fn)
    --m; // S.1111.111 is NaN
  return std::ldexp(static_cast<float>(m + (1 << f.mbits)), e - f.bias - f.mbits);
}

} // namespace

float fp8_value(uint8_t byte, DType t) {
  const Format f = format(t);
  const int emax = (1 << f.ebits) - 1, mmax = (1 << f.mbits) - 1;
  const bool neg = byte & 0x80;
  const int e = (byte >> f.mbits) & emax, m = byte & mmax;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  if (f.special == Special::Fnuz && byte == 0x80)
    return nan;
  if (f.special == Special::Fn && e == emax && m == mmax)
    return nan;
  if (f.special == Special::Ieee && e == emax)
    return m ? nan : (neg ? -INFINITY : INFINITY);
  const float mag = e == 0
                        ? std::ldexp(static_cast<float>(m), 1 - f.bias - f.mbits)
                        : std::ldexp(static_cast<float>(m + (1 << f.mbits)), e - f.bias - f.mbits);
  return neg ? -mag : mag;
}

llvm::Value *fp8_to_float(llvm::IRBuilder<> &b, llvm::Value *byte, DType t) {
  // A table of the 256 values, one per type and module.
  const Format f = format(t);
  llvm::Module &m = *b.GetInsertBlock()->getModule();
  const std::string name = std::string("kiln.fp8.") + f.name;
  llvm::GlobalVariable *table = m.getGlobalVariable(name, true);
  if (!table) {
    std::vector<float> values(256);
    for (int i = 0; i < 256; ++i)
      values[i] = fp8_value(static_cast<uint8_t>(i), t);
    llvm::Constant *init = llvm::ConstantDataArray::get(m.getContext(), values);
    table = new llvm::GlobalVariable(m, init->getType(), true, llvm::GlobalValue::PrivateLinkage,
                                     init, name);
  }
  llvm::Value *idx = b.CreateZExt(byte, b.getInt32Ty());
  return b.CreateLoad(b.getFloatTy(),
                      b.CreateInBoundsGEP(table->getValueType(), table, {b.getInt32(0), idx}));
}

llvm::Value *float_to_fp8(llvm::IRBuilder<> &b, llvm::Value *x, DType t) {
  const Format f = format(t);
  llvm::Type *i32 = b.getInt32Ty();
  llvm::Value *sign = b.CreateTrunc(b.CreateLShr(b.CreateBitCast(x, i32), 24), b.getInt8Ty());
  sign = b.CreateAnd(sign, b.getInt8(0x80));
  // Saturate (inf too; NaN is handled last).
  llvm::Value *a = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  a = b.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, a,
                              llvm::ConstantFP::get(b.getFloatTy(), largest(f)));
  // Normal: round float's 23 mantissa bits to mbits (to nearest even), rebias.
  llvm::Value *bits = b.CreateBitCast(a, i32);
  const int shift = 23 - f.mbits;
  llvm::Value *lsb = b.CreateAnd(b.CreateLShr(bits, shift), 1);
  llvm::Value *rounded =
      b.CreateLShr(b.CreateAdd(bits, b.CreateAdd(lsb, b.getInt32((1 << (shift - 1)) - 1))), shift);
  llvm::Value *normal = b.CreateSub(rounded, b.getInt32((127 - f.bias) << f.mbits));
  // Subnormal: a count of the smallest step 2^(1 - bias - mbits), to nearest even.
  llvm::Value *steps =
      b.CreateFMul(a, llvm::ConstantFP::get(b.getFloatTy(), std::ldexp(1.0, f.bias - 1 + f.mbits)));
  llvm::Value *sub = b.CreateFPToUI(b.CreateUnaryIntrinsic(llvm::Intrinsic::rint, steps), i32);
  llvm::Value *tiny =
      b.CreateFCmpOLT(a, llvm::ConstantFP::get(b.getFloatTy(), std::ldexp(1.0, 1 - f.bias)));
  llvm::Value *code = b.CreateTrunc(b.CreateSelect(tiny, sub, normal), b.getInt8Ty());
  llvm::Value *r = b.CreateOr(code, sign);
  if (f.special == Special::Fnuz) // no negative zero
    r = b.CreateSelect(b.CreateICmpEQ(code, b.getInt8(0)), b.getInt8(0), r);
  const uint8_t nan_code = f.special == Special::Fnuz ? 0x80 : 0x7F;
  return b.CreateSelect(b.CreateFCmpUNO(x, x), b.getInt8(nan_code), r);
}

} // namespace kiln::llvmgen
