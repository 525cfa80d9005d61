// tl.dot_scaled: a dot of microscaled (OCP MX) operands, lowered as Triton
// lowers it where the hardware has no native MX dot: each operand decoded
// (e2m1 two to a byte, low nibble first; e4m3 / e5m2 bytes or fp8 tensors;
// bf16 / fp16), multiplied by its e8m0 scale (one per 32 elements along K,
// 2^(s - 127)), upcast to bf16 (exact for every MX element type), then an
// ordinary tl.dot with fp32 accumulation. Built from existing ops, so every
// backend and layout gets it.
#include <string>
#include <vector>

#include "compiler/frontend/ir_gen_args.hpp"

namespace kiln::frontend {

using ir::Type;

namespace {

constexpr const char *kFn = "tl.dot_scaled";
constexpr int64_t kGroup = 32; ///< elements along K per scale (MX block size)

Type shaped(DType elem, std::vector<int64_t> dims) {
  return Type::scalar(elem).with_shape(dims.data(), static_cast<int>(dims.size()));
}

class Decoder {
public:
  explicit Decoder(IrGen &g) : g_(g) {}

  ir::Value *i32(int64_t v) { return g_.builder().constant_int(Type::scalar(DType::i32), v); }
  ir::Value *f32(double v) { return g_.builder().constant_float(Type::scalar(DType::f32), v); }
  ir::Value *bin(Op op, ir::Value *a, ir::Value *b) {
    return g_.sem().binary(op, Operand{a}, Operand{b});
  }
  ir::Value *eq(ir::Value *a, int64_t v) {
    return g_.sem().compare(Op::Eq, Operand{a}, Operand{i32(v)});
  }
  ir::Value *where(ir::Value *c, ir::Value *a, ir::Value *b) {
    return g_.sem().where(c, Operand{a}, Operand{b});
  }

  /// fp4 e2m1 codes (0..15, in an i32 block) as f32: sign, 2 exponent bits
  /// (bias 1), 1 mantissa bit; exponent 0 is subnormal (0 or 0.5).
  ir::Value *e2m1(ir::Value *code) {
    ir::Value *sign = bin(Op::BitAnd, bin(Op::RShift, code, i32(3)), i32(1));
    ir::Value *exp = bin(Op::BitAnd, bin(Op::RShift, code, i32(1)), i32(3));
    ir::Value *man = g_.sem().cast(bin(Op::BitAnd, code, i32(1)), Type::scalar(DType::f32));
    ir::Value *half_man = bin(Op::Mul, man, f32(0.5));
    ir::Value *pow = bin(
        Op::Mul, g_.sem().cast(bin(Op::LShift, i32(1), exp), Type::scalar(DType::f32)), f32(0.5));
    ir::Value *mag =
        where(eq(exp, 0), half_man, bin(Op::Mul, bin(Op::Add, f32(1.0), half_man), pow));
    return where(eq(sign, 1), g_.sem().negate(mag), mag);
  }

  /// e8m0 scales (a u8 block) as f32 2^(s - 127); 0 is 2^-127, 255 NaN.
  ir::Value *e8m0(ir::Value *s) {
    ir::Value *s32 = g_.sem().cast(s, Type::scalar(DType::i32));
    ir::Value *f = g_.sem().bitcast(bin(Op::LShift, s32, i32(23)), Type::scalar(DType::f32));
    f = where(eq(s32, 0), f32(0x1p-127), f);
    return where(eq(s32, 255), f32(__builtin_nan("")), f);
  }

  /// Operand `x` of `format` as an f32 block whose K runs along `k_dim`.
  ir::Value *operand(ir::Value *x, const std::string &format, int k_dim, const char *name) {
    const Type t = x->type;
    if (t.rank != 2)
      g_.fail(std::string(kFn) + "'s " + name + " must be a 2-D block, not " + t.str());
    const Type f32t = Type::scalar(DType::f32);
    if (format == "bf16" || format == "fp16")
      return g_.sem().cast(x, f32t);
    if (format == "e4m3" || format == "e5m2") {
      const DType fp8 = format == "e4m3" ? DType::f8e4nv : DType::f8e5;
      if (t.elem == DType::u8 || t.elem == DType::i8)
        x = g_.sem().bitcast(x, Type::scalar(fp8));
      else if (t.elem != fp8)
        g_.fail(std::string(kFn) + ": " + name + " in " + format + " must be uint8 or " +
                Type::scalar(fp8).str() + ", not " + t.element().str());
      return g_.sem().cast(x, f32t);
    }
    if (format != "e2m1")
      g_.fail(std::string(kFn) + ": " + name + "_format '" + format +
              "' is not e2m1, e4m3, e5m2, bf16 or fp16");
    if (t.elem != DType::u8 && t.elem != DType::i8)
      g_.fail(std::string(kFn) + ": " + name + " in e2m1 holds two values a byte: uint8, not " +
              t.element().str());
    ir::Value *bytes = bin(Op::BitAnd, g_.sem().cast(x, Type::scalar(DType::i32)), i32(0xFF));
    ir::Value *lo = e2m1(bin(Op::BitAnd, bytes, i32(0xF))),
              *hi = e2m1(bin(Op::RShift, bytes, i32(4)));
    // Two values a byte along K, the first in the low nibble.
    ir::Value *pair =
        call_builtin_with(g_, "tl.join", {Val::tensor(lo), Val::tensor(hi)}).v; // [.., .., 2]
    const int64_t r = t.shape[0], c = t.shape[1];
    if (k_dim == 1)
      return g_.sem().reshape(pair, {r, 2 * c});
    return g_.sem().reshape(g_.sem().trans(pair, {0, 2, 1}), {2 * r, c});
  }

  /// Scales [rows, K/32] (e8m0) spread over K: [rows, K].
  ir::Value *spread(ir::Value *scale, int64_t rows, int64_t k, const char *name) {
    const Type t = scale->type;
    if (t.rank != 2 || t.shape[0] != rows || t.shape[1] * kGroup != k)
      g_.fail(std::string(kFn) + ": " + name + " must be [" + std::to_string(rows) + ", " +
              std::to_string(k / kGroup) + "] (one scale per 32 elements along K), not " + t.str());
    if (t.elem != DType::u8 && t.elem != DType::i8)
      g_.fail(std::string(kFn) + ": " + name + " holds e8m0 exponents as uint8, not " +
              t.element().str());
    ir::Value *f = g_.sem().expand_dims(e8m0(scale), 2);
    f = g_.sem().broadcast_to(f, shaped(DType::f32, {rows, k / kGroup, kGroup}));
    return g_.sem().reshape(f, {rows, k});
  }

private:
  IrGen &g_;
};

std::string format_arg(IrGen &g, CallArgs &a, size_t i, const char *name) {
  const Val &v = required(g, a, i, name, kFn);
  if (!v.is_const() || v.c.kind != ConstValue::Kind::Str)
    g.fail(std::string(kFn) + "'s " + name + " must be a string: e2m1, e4m3, e5m2, bf16 or fp16");
  return v.c.s;
}

Val tl_dot_scaled(IrGen &g, CallArgs &a) {
  Decoder d(g);
  ir::Value *lhs = tensor_arg(g, a, 0, "lhs", kFn);
  const Val *lhs_scale = optional_arg(a, 1, "lhs_scale");
  const std::string lhs_format = format_arg(g, a, 2, "lhs_format");
  ir::Value *rhs = tensor_arg(g, a, 3, "rhs", kFn);
  const Val *rhs_scale = optional_arg(a, 4, "rhs_scale");
  const std::string rhs_format = format_arg(g, a, 5, "rhs_format");
  const Val *acc = optional_arg(a, 6, "acc");
  if (!bool_kwarg(g, a, 8, "lhs_k_pack", true) || !bool_kwarg(g, a, 9, "rhs_k_pack", true))
    g.fail(std::string(kFn) +
           ": fp4 packed along M or N (lhs_k_pack / rhs_k_pack False) is not supported by "
           "kiln yet; pack two values a byte along K");

  ir::Value *A = d.operand(lhs, lhs_format, 1, "lhs"), *B = d.operand(rhs, rhs_format, 0, "rhs");
  const int64_t M = A->type.shape[0], K = A->type.shape[1], N = B->type.shape[1];
  if (B->type.shape[0] != K)
    g.fail(std::string(kFn) + ": lhs holds K=" + std::to_string(K) + " and rhs K=" +
           std::to_string(B->type.shape[0]) + " (e2m1 operands hold two values a byte)");
  if (lhs_scale)
    A = d.bin(Op::Mul, A, d.spread(g.to_tensor(*lhs_scale, "lhs_scale"), M, K, "lhs_scale"));
  if (rhs_scale) // [N, K/32], one per column of rhs
    B = d.bin(
        Op::Mul, B,
        g.sem().trans(d.spread(g.to_tensor(*rhs_scale, "rhs_scale"), N, K, "rhs_scale"), {1, 0}));
  // bf16 holds every decoded MX element and its power-of-two scaling exactly;
  // two fp16 operands stay fp16, as they came.
  const DType in = lhs_format == "fp16" && rhs_format == "fp16" ? DType::f16 : DType::bf16;
  A = g.sem().cast(A, Type::scalar(in));
  B = g.sem().cast(B, Type::scalar(in));
  std::vector<std::pair<std::string, Val>> kw;
  if (acc)
    kw.emplace_back("acc", *acc);
  if (const Val *out = optional_arg(a, 10, "out_dtype"))
    kw.emplace_back("out_dtype", *out);
  return call_builtin_with(g, "tl.dot", {Val::tensor(A), Val::tensor(B)}, std::move(kw));
}

} // namespace

const HandlerTable &dot_scaled_handlers() {
  static const HandlerTable table = {
      {"tl.dot_scaled", tl_dot_scaled},
  };
  return table;
}

} // namespace kiln::frontend
