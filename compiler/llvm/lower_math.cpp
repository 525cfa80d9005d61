#include "compiler/llvm/lower_math.hpp"

#include <string>

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>

namespace kiln::llvmgen {
namespace {

using ir::MathFn;

class MathEmitter {
public:
  MathEmitter(llvm::IRBuilder<> &b, bool gpu)
      : b_(b), gpu_(gpu), m_(*b.GetInsertBlock()->getModule()) {}

  llvm::Value *emit(MathFn fn, const std::vector<llvm::Value *> &a) {
    const ir::MathFnInfo &info = ir::math_fn_info(fn);
    llvm::Value *x = a[0];
    switch (fn) {
    case MathFn::Trunc:
      return unary_intrinsic(llvm::Intrinsic::trunc, x);
    case MathFn::Rint:
      return unary_intrinsic(llvm::Intrinsic::rint, x);
    case MathFn::Round:
      return unary_intrinsic(llvm::Intrinsic::round, x);
    case MathFn::Copysign:
      return b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, x, a[1]);
    case MathFn::IsNan:
      return to_i32(b_.CreateFCmpUNO(x, x));
    case MathFn::IsInf:
      return to_i32(b_.CreateFCmpOEQ(fabs(x), inf(x)));
    case MathFn::IsFinite:
      return to_i32(b_.CreateFCmpOLT(fabs(x), inf(x)));
    case MathFn::Signbit: {
      const unsigned w = x->getType()->getPrimitiveSizeInBits();
      llvm::Value *bits = b_.CreateBitCast(x, b_.getIntNTy(w));
      return b_.CreateZExtOrTrunc(b_.CreateLShr(bits, w - 1), b_.getInt32Ty());
    }
    case MathFn::Clz:
      return b_.CreateZExtOrTrunc(b_.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, x, b_.getFalse()),
                                  b_.getInt32Ty());
    case MathFn::Popc:
      return b_.CreateZExtOrTrunc(unary_intrinsic(llvm::Intrinsic::ctpop, x), b_.getInt32Ty());
    case MathFn::Brev:
      return unary_intrinsic(llvm::Intrinsic::bitreverse, x);
    default:
      break;
    }
    if (gpu_)
      return libdevice(info, a);
    switch (fn) {
    case MathFn::Pow:
      return b_.CreateBinaryIntrinsic(llvm::Intrinsic::pow, x, a[1]);
    case MathFn::Rcbrt:
      return b_.CreateFDiv(llvm::ConstantFP::get(x->getType(), 1.0), libm("cbrt", {x}));
    case MathFn::Erfinv:
      return in_double(x, [&](llvm::Value *d) { return erfinv(d); });
    case MathFn::Sinpi:
      return in_double(x, [&](llvm::Value *d) { return sinpi(d, false); });
    case MathFn::Cospi:
      return in_double(x, [&](llvm::Value *d) { return sinpi(d, true); });
    default:
      return libm(info.name, a);
    }
  }

private:
  llvm::Value *unary_intrinsic(llvm::Intrinsic::ID id, llvm::Value *x) {
    return b_.CreateUnaryIntrinsic(id, x);
  }
  llvm::Value *fabs(llvm::Value *x) { return unary_intrinsic(llvm::Intrinsic::fabs, x); }
  llvm::Value *inf(llvm::Value *x) { return llvm::ConstantFP::getInfinity(x->getType()); }
  llvm::Value *to_i32(llvm::Value *bit) { return b_.CreateZExt(bit, b_.getInt32Ty()); }
  llvm::Value *c(llvm::Value *like, double v) { return llvm::ConstantFP::get(like->getType(), v); }

  /// A pure call of `name` (float: `name` + "f"); `name` is the C name.
  llvm::Value *call(const std::string &name, const std::vector<llvm::Value *> &args) {
    std::vector<llvm::Type *> types;
    for (llvm::Value *v : args)
      types.push_back(v->getType());
    llvm::FunctionCallee f =
        m_.getOrInsertFunction(name, llvm::FunctionType::get(args[0]->getType(), types, false));
    if (auto *fn = llvm::dyn_cast<llvm::Function>(f.getCallee())) {
      fn->setDoesNotAccessMemory();
      fn->setDoesNotThrow();
      fn->setWillReturn();
    }
    return b_.CreateCall(f, args);
  }

  llvm::Value *libm(const std::string &name, const std::vector<llvm::Value *> &args) {
    return call(args[0]->getType()->isDoubleTy() ? name : name + "f", args);
  }

  /// CUDA's libdevice: __nv_tanhf for float, __nv_tanh for double.
  llvm::Value *libdevice(const ir::MathFnInfo &info, const std::vector<llvm::Value *> &args) {
    const std::string base = std::string("__nv_") + info.name;
    return call(args[0]->getType()->isDoubleTy() ? base : base + "f", args);
  }

  /// f(x) computed in double and converted back to x's type.
  template <class F> llvm::Value *in_double(llvm::Value *x, F f) {
    if (x->getType()->isDoubleTy())
      return f(x);
    return b_.CreateFPTrunc(f(b_.CreateFPExt(x, b_.getDoubleTy())), x->getType());
  }

  llvm::Value *horner(llvm::Value *w, std::initializer_list<double> coeffs) {
    llvm::Value *p = nullptr;
    for (double k : coeffs)
      p = p ? b_.CreateFAdd(c(w, k), b_.CreateFMul(p, w)) : c(w, k);
    return p;
  }

  /// erfinv(x) in double: M. Giles' single-precision approximation
  /// ("Approximating the erfinv function", GPU Computing Gems, 2011), then
  /// two Newton steps on erf(y) = x, each of which doubles the correct bits.
  /// erfinv(+-1) = +-inf and NaN outside [-1, 1] come from the logarithm.
  llvm::Value *erfinv(llvm::Value *x) {
    llvm::Value *one = c(x, 1.0);
    llvm::Value *w =
        b_.CreateFNeg(libm("log", {b_.CreateFMul(b_.CreateFSub(one, x), b_.CreateFAdd(one, x))}));
    llvm::Value *central =
        horner(b_.CreateFSub(w, c(w, 2.5)),
               {2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                -0.00125372503, -0.00417768164, 0.246640727, 1.50140941});
    llvm::Value *tail =
        horner(b_.CreateFSub(libm("sqrt", {w}), c(w, 3.0)),
               {-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                -0.0076224613, 0.00943887047, 1.00167406, 2.83297682});
    llvm::Value *y =
        b_.CreateFMul(b_.CreateSelect(b_.CreateFCmpOLT(w, c(w, 5.0)), central, tail), x);
    for (int step = 0; step < 2; ++step) {
      // y -= (erf(y) - x) / (2/sqrt(pi) * exp(-y^2)); skipped where the
      // derivative underflows (|y| > ~26) or y is already infinite.
      llvm::Value *deriv = b_.CreateFMul(c(y, 1.1283791670955126),
                                         libm("exp", {b_.CreateFNeg(b_.CreateFMul(y, y))}));
      llvm::Value *next =
          b_.CreateFSub(y, b_.CreateFDiv(b_.CreateFSub(libm("erf", {y}), x), deriv));
      llvm::Value *ok =
          b_.CreateAnd(b_.CreateFCmpOGT(deriv, c(y, 0.0)), b_.CreateFCmpOLT(fabs(y), inf(y)));
      y = b_.CreateSelect(ok, next, y);
    }
    return y;
  }

  /// sin(pi x) (or cos(pi x)) in double with the argument reduced exactly:
  /// x = n + r, |r| <= 1/2, so integers give exact zeros (and half-integers
  /// for cospi), as libdevice's sinpi / cospi do.
  llvm::Value *sinpi(llvm::Value *x, bool cosine) {
    llvm::Value *n = unary_intrinsic(llvm::Intrinsic::rint, x);
    llvm::Value *r = b_.CreateFSub(x, n);
    llvm::Value *pr = b_.CreateFMul(r, c(x, 3.141592653589793));
    llvm::Value *v = cosine ? libm("cos", {pr}) : libm("sin", {pr});
    if (cosine)
      v = b_.CreateSelect(b_.CreateFCmpOEQ(fabs(r), c(r, 0.5)), c(r, 0.0), v);
    // (-1)^n: n is odd when n/2 is not an integer.
    llvm::Value *half = b_.CreateFMul(n, c(n, 0.5));
    llvm::Value *odd = b_.CreateFCmpONE(half, unary_intrinsic(llvm::Intrinsic::floor, half));
    return b_.CreateSelect(odd, b_.CreateFNeg(v), v);
  }

  llvm::IRBuilder<> &b_;
  bool gpu_;
  llvm::Module &m_;
};

} // namespace

llvm::Value *emit_math(llvm::IRBuilder<> &b, bool gpu, ir::MathFn fn,
                       const std::vector<llvm::Value *> &args) {
  return MathEmitter(b, gpu).emit(fn, args);
}

} // namespace kiln::llvmgen
