#include "compiler/frontend/semantic.hpp"

#include <algorithm>

namespace kiln::frontend {

using ir::BinaryOp;
using ir::OpKind;
using ir::Type;
using ir::Value;

namespace {

// Triton's kinds: bool < uint < int < fp. A Python scalar of a lower or equal
// kind than the tensor does not take part in promotion.
/// Whether integer type `t` holds `v`.
bool fits_int_type(int64_t v, DType t) {
  const int bits = 8 * static_cast<int>(dtype_size(t));
  if (bits >= 64)
    return !is_unsigned_int(t) || v >= 0;
  if (is_unsigned_int(t))
    return v >= 0 && v < (int64_t{1} << bits);
  return v >= -(int64_t{1} << (bits - 1)) && v < (int64_t{1} << (bits - 1));
}

/// Triton's dtype.KIND: boolean < integral (signed or not) < floating.
int kind_rank(const Type &t) {
  if (t.is_bool())
    return 0;
  return t.is_int() ? 1 : 2;
}

} // namespace

int fp_mantissa_bits(DType t) {
  switch (t) {
  case DType::f16: return 10;
  case DType::bf16: return 7;
  case DType::f32: return 23;
  case DType::f64: return 52;
  case DType::f8e5:
  case DType::f8e5b16: return 2;
  default: return 3; // the e4 fp8 kinds
  }
}

namespace {

std::string describe(const Type &t) { return t.str(); }

} // namespace

Type integer_promote(const Type &a, const Type &b) {
  const int wa = ir::bit_width(a), wb = ir::bit_width(b);
  const bool ua = is_unsigned_int(a.elem), ub = is_unsigned_int(b.elem);
  if (ua == ub)
    return wa > wb ? a.element() : b.element();
  if (ua)
    return wa >= wb ? a.element() : b.element();
  return wb >= wa ? b.element() : a.element();
}

void Semantic::fail(const std::string &message) const {
  throw src_->error(b_.loc(), message);
}

ir::Value *Semantic::elementwise(OpKind kind, uint8_t sub, std::vector<Value *> operands,
                                 Type result) {
  return b_.create(kind, operands, {result}, sub)->result();
}

Value *Semantic::cast(Value *v, Type elem) {
  const Type &from = v->type;
  if (from.elem == elem.elem && from.pointer == elem.pointer)
    return v;
  if (from.pointer && elem.pointer) // x.to(tl.pointer_type(...)): the address is unchanged
    return elementwise(OpKind::Bitcast, 0, {v}, from.with_element(elem));
  if (from.pointer != elem.pointer) {
    // Triton allows int <-> pointer casts only through int64; keep them explicit.
    if (!(from.is_int() && ir::bit_width(from) == 64) && !(elem.is_int() && ir::bit_width(elem) == 64))
      fail("cannot cast " + describe(from) + " to " + describe(elem.with_shape(from.shape.data(), from.rank)) +
           "; pointers convert only to and from 64-bit integers");
    return elementwise(OpKind::Bitcast, 0, {v}, from.with_element(elem));
  }
  return elementwise(OpKind::Cast, 0, {v}, from.with_element(elem));
}

Value *Semantic::bitcast(Value *v, Type elem) {
  if (ir::bit_width(v->type) != ir::bit_width(elem))
    fail("cannot bitcast " + describe(v->type) + " to " + describe(elem) +
         ": the element sizes differ; use .to(dtype) for a numeric conversion");
  if (v->type.element() == elem.element())
    return v;
  return elementwise(OpKind::Bitcast, 0, {v}, v->type.with_element(elem));
}

Value *Semantic::splat(Value *scalar, const Type &shape) {
  Type t = shape.with_element(scalar->type);
  return b_.create(OpKind::Splat, {scalar}, {t})->result();
}

Type Semantic::broadcast_shapes(const Type &a, const Type &b) {
  if (!a.is_block())
    return b;
  if (!b.is_block())
    return a;
  const int rank = std::max(a.rank, b.rank);
  int64_t dims[Type::kMaxRank];
  for (int d = 0; d < rank; ++d) {
    const int da = d - (rank - a.rank), db = d - (rank - b.rank);
    const int64_t sa = da >= 0 ? a.shape[da] : 1, sb = db >= 0 ? b.shape[db] : 1;
    if (sa != sb && sa != 1 && sb != 1)
      fail("cannot broadcast shapes " + a.str() + " and " + b.str() + ": dimension " +
           std::to_string(d) + " is " + std::to_string(sa) + " against " + std::to_string(sb) +
           "; each dimension must be equal or 1 (insert a dimension of 1 with x[:, None] or "
           "x[None, :])");
    dims[d] = std::max(sa, sb);
  }
  return a.with_shape(dims, rank);
}

Value *Semantic::broadcast_to(Value *v, const Type &shape) {
  if (!shape.is_block() || v->type.same_shape(shape))
    return v;
  if (!v->type.is_block())
    return splat(v, shape);
  if (v->type.rank > shape.rank)
    fail("cannot broadcast " + v->type.str() + " to the lower-rank shape " + shape.str());
  // Prepend dims of 1 (numpy alignment), then stretch dims of 1.
  while (v->type.rank < shape.rank)
    v = expand_dims(v, 0);
  for (int d = 0; d < shape.rank; ++d)
    if (v->type.shape[d] != shape.shape[d] && v->type.shape[d] != 1)
      fail("cannot broadcast " + v->type.str() + " to " + shape.with_element(v->type).str());
  return b_.create(OpKind::Broadcast, {v}, {shape.with_element(v->type)})->result();
}

void Semantic::broadcast_pair(Value *&a, Value *&b) {
  const Type shape = broadcast_shapes(a->type, b->type);
  a = broadcast_to(a, shape);
  b = broadcast_to(b, shape);
}

Type Semantic::computation_type(const Operand &a, const Operand &b, bool div_or_mod) {
  const Type ta = a.value->type.element(), tb = b.value->type.element();
  if (a.is_scalar_literal != b.is_scalar_literal) {
    const Type &scalar = a.is_scalar_literal ? ta : tb;
    const Type &tensor = a.is_scalar_literal ? tb : ta;
    if (kind_rank(scalar) <= kind_rank(tensor)) {
      if (div_or_mod && (tensor.elem == DType::f16 || tensor.elem == DType::bf16))
        return Type::scalar(DType::f32);
      // The number takes the tensor's integer type (a u32 // 4096 is u32's),
      // so it must fit it, as Triton checks.
      const ir::Op *lit = (a.is_scalar_literal ? a : b).value->def;
      if (tensor.is_int() && !tensor.is_bool() && !scalar.is_bool() && lit &&
          lit->kind == ir::OpKind::Constant) {
        const int64_t v = lit->i;
        if (v < 0 && is_unsigned_int(tensor.elem))
          fail("cannot combine the " + tensor.str() + " tensor with the negative number " +
               std::to_string(v) + " (as in Triton); cast one of them with .to(...)");
        if (!fits_int_type(v, tensor.elem))
          fail("the number " + std::to_string(v) + " is out of range for " + tensor.str() +
               " (as in Triton); cast the tensor with .to(...)");
      }
      return tensor;
    }
  }
  auto either = [&](DType t) { return ta.elem == t || tb.elem == t; };
  if (ta.is_float() || tb.is_float()) {
    if (either(DType::f64))
      return Type::scalar(DType::f64);
    if (either(DType::f32))
      return Type::scalar(DType::f32);
    if (either(DType::f16))
      return Type::scalar(div_or_mod || either(DType::bf16) ? DType::f32 : DType::f16);
    // bf16 and fp8: one type stays itself (fp8 math runs in float registers,
    // rounded back); bf16 with fp8 is bf16; two fp8 kinds meet in fp32.
    if (div_or_mod)
      return Type::scalar(DType::f32);
    if (ta.elem == tb.elem || !tb.is_float())
      return ta;
    if (!ta.is_float())
      return tb;
    return Type::scalar(either(DType::bf16) ? DType::bf16 : DType::f32);
  }
  if (div_or_mod && is_unsigned_int(ta.elem) != is_unsigned_int(tb.elem) && !ta.is_bool() &&
      !tb.is_bool())
    fail("cannot use /, // or % with " + ta.str() + " and " + tb.str() +
         " because they have different signedness; cast one operand with .to(...)");
  return integer_promote(ta, tb);
}

Value *Semantic::binary(Op op, Operand a, Operand b) {
  Value *x = a.value, *y = b.value;
  // Pointer arithmetic: ptr + int, int + ptr, ptr - int.
  if (x->type.pointer || y->type.pointer) {
    if (op == Op::Add || op == Op::Sub) {
      if (y->type.pointer && op == Op::Add)
        std::swap(x, y);
      if (!y->type.pointer && y->type.is_int()) {
        if (op == Op::Sub)
          y = negate(y);
        broadcast_pair(x, y);
        return elementwise(OpKind::AddPtr, 0, {x, y}, x->type);
      }
    }
    fail(std::string("operator '") + op_spelling(op) + "' is not defined for " + x->type.str() +
         " and " + y->type.str() + "; pointers support only + and - with an integer offset");
  }

  const bool div_or_mod = op == Op::Div || op == Op::Mod || op == Op::FloorDiv;
  // Bitwise ops and shifts promote both sides as integers, a number too
  // (Triton's bitwise_op_type_checking_impl): int8 & 0x80 is int32's.
  const bool bitwise = op == Op::BitAnd || op == Op::BitOr || op == Op::BitXor ||
                       op == Op::LShift || op == Op::RShift;
  Type t = bitwise && x->type.is_int() && y->type.is_int()
               ? integer_promote(x->type.element(), y->type.element())
               : computation_type(a, b, div_or_mod);
  BinaryOp bop;
  switch (op) {
  case Op::Add: bop = BinaryOp::Add; break;
  case Op::Sub: bop = BinaryOp::Sub; break;
  case Op::Mul: bop = BinaryOp::Mul; break;
  case Op::Div:
    // True division: ints become fp32; floats meet at the wider mantissa.
    if (!t.is_float())
      t = Type::scalar(DType::f32);
    else if (x->type.is_float() && y->type.is_float())
      t = Type::scalar(fp_mantissa_bits(x->type.elem) > fp_mantissa_bits(y->type.elem) ? x->type.elem
                                                                                 : y->type.elem);
    bop = BinaryOp::Div;
    break;
  case Op::FloorDiv:
    if (!t.is_int())
      fail("'//' is only defined for integers here (as in Triton); for floats use tl.floor(a / b)");
    bop = BinaryOp::IDiv;
    break;
  case Op::Mod: bop = BinaryOp::Rem; break;
  case Op::BitAnd:
  case Op::BitOr:
  case Op::BitXor:
  case Op::LShift:
  case Op::RShift:
    if (!x->type.is_int() || !y->type.is_int())
      fail(std::string("operator '") + op_spelling(op) + "' needs integer operands, not " +
           x->type.element().str() + " and " + y->type.element().str());
    bop = op == Op::BitAnd   ? BinaryOp::And
          : op == Op::BitOr  ? BinaryOp::Or
          : op == Op::BitXor ? BinaryOp::Xor
          : op == Op::LShift ? BinaryOp::Shl
                             : BinaryOp::Shr;
    break;
  default:
    fail(std::string("operator '") + op_spelling(op) + "' is not supported on tensors");
  }
  x = cast(x, t);
  y = cast(y, t);
  broadcast_pair(x, y);
  return elementwise(OpKind::Binary, static_cast<uint8_t>(bop), {x, y}, x->type);
}

Value *Semantic::compare(Op op, Operand a, Operand b) {
  ir::ComparePred pred;
  switch (op) {
  case Op::Lt: pred = ir::ComparePred::Lt; break;
  case Op::Le: pred = ir::ComparePred::Le; break;
  case Op::Gt: pred = ir::ComparePred::Gt; break;
  case Op::Ge: pred = ir::ComparePred::Ge; break;
  case Op::Eq: pred = ir::ComparePred::Eq; break;
  case Op::Ne: pred = ir::ComparePred::Ne; break;
  default: fail(std::string("comparison '") + op_spelling(op) + "' is not supported on tensors");
  }
  Value *x = a.value, *y = b.value;
  if (!(x->type.pointer && y->type.pointer)) {
    if (x->type.pointer || y->type.pointer)
      fail("cannot compare a pointer with " + (x->type.pointer ? y : x)->type.element().str());
    const Type t = computation_type(a, b, false);
    x = cast(x, t);
    y = cast(y, t);
  }
  broadcast_pair(x, y);
  return elementwise(OpKind::Compare, static_cast<uint8_t>(pred), {x, y},
                     x->type.with_element(Type::scalar(DType::i1)));
}

Value *Semantic::negate(Value *v) {
  if (v->type.pointer)
    fail("cannot negate a pointer");
  if (v->type.is_bool())
    v = cast(v, Type::scalar(DType::i32));
  return elementwise(OpKind::Unary, static_cast<uint8_t>(ir::UnaryOp::Neg), {v}, v->type);
}

Value *Semantic::invert(Value *v) {
  if (!v->type.is_int())
    fail("operator '~' needs an integer operand, not " + v->type.element().str());
  return elementwise(OpKind::Unary, static_cast<uint8_t>(ir::UnaryOp::Not), {v}, v->type);
}

Value *Semantic::to_bool(Value *v) {
  if (v->type.is_bool())
    return v;
  if (v->type.pointer) // `if weight_ptr:` tests for null, as Triton's cast to int1 does
    v = cast(v, v->type.with_element(Type::scalar(DType::i64)));
  Value *zero = v->type.is_float() ? b_.constant_float(v->type.element(), 0)
                                   : b_.constant_int(v->type.element(), 0);
  return compare(Op::Ne, {v}, {zero});
}

Value *Semantic::logical_not(Value *v) {
  v = to_bool(v);
  Value *one = b_.constant_int(Type::scalar(DType::i1), 1);
  Value *x = v, *y = one;
  broadcast_pair(x, y);
  return elementwise(OpKind::Binary, static_cast<uint8_t>(BinaryOp::Xor), {x, y}, x->type);
}

Value *Semantic::where(Value *cond, Operand a, Operand b) {
  cond = to_bool(cond);
  Value *x = a.value, *y = b.value;
  if (!(x->type.pointer && y->type.pointer)) {
    const Type t = computation_type(a, b, false);
    x = cast(x, t);
    y = cast(y, t);
  }
  const Type shape = broadcast_shapes(broadcast_shapes(cond->type, x->type), y->type);
  cond = broadcast_to(cond, shape);
  x = broadcast_to(x, shape);
  y = broadcast_to(y, shape);
  return elementwise(OpKind::Select, 0, {cond, x, y}, x->type);
}

Value *Semantic::minmax(BinaryOp which, Operand a, Operand b) {
  const Type t = computation_type(a, b, false);
  Value *x = cast(a.value, t), *y = cast(b.value, t);
  broadcast_pair(x, y);
  return elementwise(OpKind::Binary, static_cast<uint8_t>(which), {x, y}, x->type);
}

Value *Semantic::unary_math(ir::UnaryOp op, Value *v) {
  using U = ir::UnaryOp;
  const bool float_only = op != U::Abs && op != U::Neg && op != U::Not;
  if (float_only && !v->type.is_float()) {
    if (op == U::Floor || op == U::Ceil)
      fail("tl.floor and tl.ceil need a floating-point operand, not " + v->type.element().str());
    fail("this math function needs a floating-point operand, not " + v->type.element().str() +
         "; convert with .to(tl.float32)");
  }
  return elementwise(OpKind::Unary, static_cast<uint8_t>(op), {v}, v->type);
}

Value *Semantic::expand_dims(Value *v, int axis) {
  const Type &t = v->type;
  if (t.rank >= Type::kMaxRank)
    fail("kiln's blocks have at most " + std::to_string(Type::kMaxRank) +
         " dimensions (Triton allows more)");
  if (axis < 0)
    axis += t.rank + 1;
  if (axis < 0 || axis > t.rank)
    fail("expand_dims axis " + std::to_string(axis) + " is out of range for " + t.str());
  int64_t dims[Type::kMaxRank];
  int n = 0;
  for (int d = 0; d <= t.rank; ++d) {
    if (d == axis)
      dims[n++] = 1;
    if (d < t.rank)
      dims[n++] = t.shape[d];
  }
  ir::Op *op = b_.create(OpKind::ExpandDims, {v}, {t.with_shape(dims, n)});
  op->axis = axis;
  return op->result();
}

Value *Semantic::reshape(Value *v, const std::vector<int64_t> &shape) {
  if (shape.empty() || shape.size() > Type::kMaxRank)
    fail("a block has 1 to " + std::to_string(Type::kMaxRank) + " dimensions");
  Type t = v->type.with_shape(shape.data(), static_cast<int>(shape.size()));
  if (t.numel() != v->type.numel())
    fail("cannot reshape " + v->type.str() + " to " + t.str() + ": the element counts differ");
  if (t == v->type)
    return v;
  return b_.create(OpKind::Reshape, {v}, {t})->result();
}

Value *Semantic::trans(Value *v, const std::vector<int64_t> &perm) {
  const Type &t = v->type;
  if (static_cast<int>(perm.size()) != t.rank)
    fail("the permutation needs " + std::to_string(t.rank) + " axes for " + t.str());
  int64_t dims[Type::kMaxRank];
  std::vector<bool> seen(t.rank, false);
  for (int d = 0; d < t.rank; ++d) {
    if (perm[d] < 0 || perm[d] >= t.rank || seen[perm[d]])
      fail("the permutation must list each axis of " + t.str() + " once");
    seen[perm[d]] = true;
    dims[d] = t.shape[perm[d]];
  }
  ir::Op *op = b_.create(OpKind::Trans, {v}, {t.with_shape(dims, t.rank)});
  op->ints = perm;
  return op->result();
}

} // namespace kiln::frontend
