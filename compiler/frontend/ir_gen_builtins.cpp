// The tl.* builtins (and the Python builtins kernels may call on
// constexprs), each a small function from call arguments to a value. Their
// typing follows Triton's language/core.py and semantic.py.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "compiler/frontend/ir_gen_args.hpp"
#include "compiler/support/closest_name.hpp"

namespace kiln::frontend {

using ir::BinaryOp;
using ir::OpKind;
using ir::Type;
using ir::UnaryOp;

namespace {

// ---- program ----

Val program_id(IrGen &g, CallArgs &a, OpKind kind, const char *fn) {
  const Val *v = a.find(0, "axis");
  const int64_t axis = v ? g.const_int(*v, "the axis") : 0;
  if (axis < 0 || axis > 2)
    g.fail(std::string(fn) + "'s axis must be 0, 1 or 2, not " + std::to_string(axis));
  ir::Op *op = g.builder().create(kind, {}, {Type::scalar(DType::i32)});
  op->axis = static_cast<int>(axis);
  return Val::tensor(op->result());
}

Val tl_program_id(IrGen &g, CallArgs &a) { return program_id(g, a, OpKind::ProgramId, "tl.program_id"); }
Val tl_num_programs(IrGen &g, CallArgs &a) { return program_id(g, a, OpKind::NumPrograms, "tl.num_programs"); }

// ---- creation ----

Val tl_arange(IrGen &g, CallArgs &a) {
  const int64_t start = const_int_arg(g, a, 0, "start", "tl.arange");
  const int64_t end = const_int_arg(g, a, 1, "end", "tl.arange");
  const int64_t n = end - start;
  if (n <= 0)
    g.fail("tl.arange's end must be greater than its start");
  if ((n & (n - 1)) != 0)
    g.fail("tl.arange's range must be a power of two, got " + std::to_string(n) +
           " (end - start); round it up to a power of two and mask off the extra elements "
           "(e.g. mask = offs < n)");
  if (n > (1 << 20))
    g.fail("tl.arange's range " + std::to_string(n) + " is larger than a block may be (1048576)");
  if (start < INT32_MIN || end > INT32_MAX)
    g.fail("tl.arange's bounds must fit in int32");
  Type t = Type::scalar(DType::i32);
  t.rank = 1;
  t.shape[0] = n;
  ir::Op *op = g.builder().create(OpKind::Arange, {}, {t});
  op->i = start;
  return Val::tensor(op->result());
}

Val full(IrGen &g, const std::vector<int64_t> &shape, const Val &value, Type dtype) {
  Type t = dtype.with_shape(shape.data(), static_cast<int>(shape.size()));
  return Val::tensor(constant_of(g, value, t, "tl.full's value"));
}

Val tl_zeros(IrGen &g, CallArgs &a) {
  auto shape = g.const_shape(required(g, a, 0, "shape", "tl.zeros"), "tl.zeros's shape");
  Type dt = g.const_dtype(required(g, a, 1, "dtype", "tl.zeros"), "tl.zeros's dtype");
  return full(g, shape, Val::constant(ConstValue::of_int(0)), dt);
}

Val tl_full(IrGen &g, CallArgs &a) {
  auto shape = g.const_shape(required(g, a, 0, "shape", "tl.full"), "tl.full's shape");
  const Val &value = required(g, a, 1, "value", "tl.full");
  Type dt = g.const_dtype(required(g, a, 2, "dtype", "tl.full"), "tl.full's dtype");
  if (value.is_tensor() && value.v->type.is_block())
    g.fail("tl.full's value must be a scalar");
  return full(g, shape, value, dt);
}

/// A block of `value` shaped as the input; full_like also takes a dtype
/// (Triton's zeros_like(input) does not).
Val like(IrGen &g, CallArgs &a, const char *fn, const Val &value, bool takes_dtype) {
  ir::Value *x = tensor_arg(g, a, 0, "input", fn);
  const Val *dt = takes_dtype ? optional_arg(a, 2, "dtype") : nullptr;
  Type t = dt ? g.const_dtype(*dt, "the dtype") : x->type.element();
  std::vector<int64_t> shape(x->type.shape.begin(), x->type.shape.begin() + x->type.rank);
  if (shape.empty())
    return Val::tensor(constant_of(g, value, t, "the value"));
  return full(g, shape, value, t);
}

Val tl_zeros_like(IrGen &g, CallArgs &a) {
  return like(g, a, "tl.zeros_like", Val::constant(ConstValue::of_int(0)), false);
}
Val tl_full_like(IrGen &g, CallArgs &a) {
  return like(g, a, "tl.full_like", required(g, a, 1, "value", "tl.full_like"), true);
}

Val tl_cast(IrGen &g, CallArgs &a) {
  const Val &x = required(g, a, 0, "input", "cast");
  Type dt = g.const_dtype(required(g, a, 1, "dtype", "cast"), "the target dtype");
  ir::Value *v = g.to_tensor(x, "the value to convert");
  if (bool_kwarg(g, a, 3, "bitcast", false))
    return Val::tensor(g.sem().bitcast(v, dt));
  return Val::tensor(g.sem().cast(v, dt));
}

// ---- memory ----

ir::Value *pointer_arg(IrGen &g, CallArgs &a, const char *fn) {
  ir::Value *p = tensor_arg(g, a, 0, "pointer", fn);
  if (!p->type.pointer)
    g.fail(std::string(fn) + "'s pointer argument must be a pointer or a block of pointers, not " +
           p->type.str());
  return p;
}

Val tl_load(IrGen &g, CallArgs &a) {
  if (is_block_ptr(required(g, a, 0, "pointer", "tl.load")))
    return load_block_ptr(g, a);
  ir::Value *ptr = pointer_arg(g, a, "tl.load");
  const Val *mask_v = optional_arg(a, 1, "mask");
  const Val *other_v = optional_arg(a, 2, "other");
  if (const Val *bc = optional_arg(a, 3, "boundary_check"); bc && !(bc->kind == Val::Kind::Tuple && bc->elems.empty()))
    g.fail("tl.load's boundary_check applies to block pointers (tl.make_block_ptr), not to a block of pointers");
  std::vector<ir::Value *> ops{ptr};
  int64_t flags = 0;
  if (mask_v) {
    ir::Value *mask = g.sem().to_bool(g.to_tensor(*mask_v, "tl.load's mask"));
    const Type shape = g.sem().broadcast_shapes(ptr->type, mask->type);
    ptr = g.sem().broadcast_to(ptr, shape);
    mask = g.sem().broadcast_to(mask, shape);
    ops = {ptr, mask};
    flags |= 1;
    if (other_v) {
      ops.push_back(constant_of(g, *other_v, ptr->type.with_element(Type::scalar(ptr->type.elem)),
                                "tl.load's other"));
      flags |= 2;
    }
  } else if (other_v) {
    g.fail("tl.load's other needs a mask");
  }
  ir::Op *op = g.builder().create(OpKind::Load, ops, {ptr->type.with_element(Type::scalar(ptr->type.elem))});
  op->i = flags;
  return Val::tensor(op->result());
}

Val tl_store(IrGen &g, CallArgs &a) {
  if (is_block_ptr(required(g, a, 0, "pointer", "tl.store")))
    return store_block_ptr(g, a);
  ir::Value *ptr = pointer_arg(g, a, "tl.store");
  const Val &value = required(g, a, 1, "value", "tl.store");
  const Val *mask_v = optional_arg(a, 2, "mask");
  if (const Val *bc = optional_arg(a, 3, "boundary_check"); bc && !(bc->kind == Val::Kind::Tuple && bc->elems.empty()))
    g.fail("tl.store's boundary_check applies to block pointers (tl.make_block_ptr), not to a block of pointers");
  ir::Value *v = g.to_tensor(value, "tl.store's value");
  if (v->type.is_block() && !ptr->type.is_block())
    g.fail("tl.store's value is a block " + v->type.str() + " but the pointer is a scalar; the pointer "
           "must be a block of the same shape");
  Type shape = ptr->type;
  ir::Value *mask = nullptr;
  if (mask_v) {
    mask = g.sem().to_bool(g.to_tensor(*mask_v, "tl.store's mask"));
    shape = g.sem().broadcast_shapes(shape, mask->type);
  }
  shape = g.sem().broadcast_shapes(shape, v->type);
  ptr = g.sem().broadcast_to(ptr, shape);
  v = g.sem().broadcast_to(g.sem().cast(v, Type::scalar(ptr->type.elem)), shape);
  std::vector<ir::Value *> ops{ptr, v};
  if (mask)
    ops.push_back(g.sem().broadcast_to(mask, shape));
  g.builder().create(OpKind::Store, ops, {});
  return Val::constant(ConstValue::none());
}

Val atomic(IrGen &g, CallArgs &a, ir::AtomicOp kind, const char *fn) {
  ir::Value *ptr = pointer_arg(g, a, fn);
  const Val &value = required(g, a, 1, "val", fn);
  const Val *mask_v = optional_arg(a, 2, "mask");
  ir::Value *v = g.to_tensor(value, "the value");
  Type shape = g.sem().broadcast_shapes(ptr->type, v->type);
  ir::Value *mask = nullptr;
  if (mask_v) {
    mask = g.sem().to_bool(g.to_tensor(*mask_v, "the mask"));
    shape = g.sem().broadcast_shapes(shape, mask->type);
  }
  ptr = g.sem().broadcast_to(ptr, shape);
  const Type elem = Type::scalar(ptr->type.elem);
  if (elem.is_bool())
    g.fail(std::string(fn) + " does not support i1 memory");
  if (elem.is_float() && kind != ir::AtomicOp::Add && kind != ir::AtomicOp::Max &&
      kind != ir::AtomicOp::Min && kind != ir::AtomicOp::Xchg)
    g.fail(std::string(fn) + " needs integer memory, not " + elem.str());
  v = g.sem().broadcast_to(g.sem().cast(v, elem), shape);
  std::vector<ir::Value *> ops{ptr, v};
  if (mask)
    ops.push_back(g.sem().broadcast_to(mask, shape));
  ir::Op *op = g.builder().create(OpKind::AtomicRMW, ops, {ptr->type.with_element(elem)},
                                  static_cast<uint8_t>(kind));
  return Val::tensor(op->result());
}

Val tl_atomic_add(IrGen &g, CallArgs &a) { return atomic(g, a, ir::AtomicOp::Add, "tl.atomic_add"); }
Val tl_atomic_max(IrGen &g, CallArgs &a) { return atomic(g, a, ir::AtomicOp::Max, "tl.atomic_max"); }
Val tl_atomic_min(IrGen &g, CallArgs &a) { return atomic(g, a, ir::AtomicOp::Min, "tl.atomic_min"); }
Val tl_atomic_and(IrGen &g, CallArgs &a) { return atomic(g, a, ir::AtomicOp::And, "tl.atomic_and"); }
Val tl_atomic_or(IrGen &g, CallArgs &a) { return atomic(g, a, ir::AtomicOp::Or, "tl.atomic_or"); }
Val tl_atomic_xor(IrGen &g, CallArgs &a) { return atomic(g, a, ir::AtomicOp::Xor, "tl.atomic_xor"); }
Val tl_atomic_xchg(IrGen &g, CallArgs &a) { return atomic(g, a, ir::AtomicOp::Xchg, "tl.atomic_xchg"); }

Val tl_atomic_cas(IrGen &g, CallArgs &a) {
  ir::Value *ptr = pointer_arg(g, a, "tl.atomic_cas");
  ir::Value *cmp = tensor_arg(g, a, 1, "cmp", "tl.atomic_cas");
  ir::Value *val = tensor_arg(g, a, 2, "val", "tl.atomic_cas");
  const Type elem = Type::scalar(ptr->type.elem);
  if (!elem.is_int() || elem.is_bool() || ir::bit_width(elem) < 16)
    g.fail("tl.atomic_cas needs 16-, 32- or 64-bit integer memory, not " + elem.str());
  Type shape = g.sem().broadcast_shapes(g.sem().broadcast_shapes(ptr->type, cmp->type), val->type);
  ptr = g.sem().broadcast_to(ptr, shape);
  cmp = g.sem().broadcast_to(g.sem().cast(cmp, elem), shape);
  val = g.sem().broadcast_to(g.sem().cast(val, elem), shape);
  return Val::tensor(g.builder().create(OpKind::AtomicCAS, {ptr, cmp, val}, {ptr->type.with_element(elem)})->result());
}

// ---- math ----

template <UnaryOp U> Val unary(IrGen &g, CallArgs &a) {
  ir::Value *x = tensor_arg(g, a, 0, "x", "the math function");
  return Val::tensor(g.sem().unary_math(U, x));
}

Val tl_sigmoid(IrGen &g, CallArgs &a) {
  ir::Value *x = tensor_arg(g, a, 0, "x", "tl.sigmoid");
  if (!x->type.is_float())
    g.fail("tl.sigmoid needs a floating-point operand");
  ir::Value *e = g.sem().unary_math(UnaryOp::Exp, g.sem().negate(x));
  ir::Value *one = g.builder().constant_float(x->type.element(), 1);
  ir::Value *den = g.sem().binary(Op::Add, {e}, {one, true});
  return Val::tensor(g.sem().binary(Op::Div, {one, true}, {den}));
}

Val tl_fma(IrGen &g, CallArgs &a) {
  Operand x = operand_arg(g, a, 0, "x", "tl.fma"), y = operand_arg(g, a, 1, "y", "tl.fma"),
          z = operand_arg(g, a, 2, "z", "tl.fma");
  Type t = g.sem().computation_type(g.sem().computation_type(x, y, false) == x.value->type.element()
                                        ? x
                                        : Operand{g.sem().cast(x.value, g.sem().computation_type(x, y, false))},
                                    z, false);
  t = g.sem().computation_type(Operand{g.sem().cast(y.value, t)}, Operand{g.sem().cast(z.value, t)}, false);
  if (!t.is_float())
    g.fail("tl.fma needs floating-point operands");
  ir::Value *vx = g.sem().cast(x.value, t), *vy = g.sem().cast(y.value, t), *vz = g.sem().cast(z.value, t);
  const Type shape = g.sem().broadcast_shapes(g.sem().broadcast_shapes(vx->type, vy->type), vz->type);
  vx = g.sem().broadcast_to(vx, shape);
  vy = g.sem().broadcast_to(vy, shape);
  vz = g.sem().broadcast_to(vz, shape);
  return Val::tensor(g.sem().elementwise(OpKind::Fma, 0, {vx, vy, vz}, vx->type));
}

/// tl.maximum / tl.minimum / tl.clamp's propagate_nan: NONE (the default)
/// returns the other operand where one is NaN, ALL returns NaN.
BinaryOp nan_op(IrGen &g, CallArgs &a, size_t at, BinaryOp op, const char *fn) {
  const Val *p = optional_arg(a, at, "propagate_nan");
  if (!p || p->is_none())
    return op;
  const int64_t v = g.const_int(*p, (std::string(fn) + "'s propagate_nan").c_str());
  if (v != 0 && v != 0xFFFF)
    g.fail(std::string(fn) +
           "'s propagate_nan must be tl.PropagateNan.NONE or tl.PropagateNan.ALL");
  if (v == 0)
    return op;
  return op == BinaryOp::Max ? BinaryOp::MaxNan : BinaryOp::MinNan;
}

Val tl_maximum(IrGen &g, CallArgs &a) {
  return Val::tensor(g.sem().minmax(nan_op(g, a, 2, BinaryOp::Max, "tl.maximum"),
                                    operand_arg(g, a, 0, "x", "tl.maximum"),
                                    operand_arg(g, a, 1, "y", "tl.maximum")));
}
Val tl_minimum(IrGen &g, CallArgs &a) {
  return Val::tensor(g.sem().minmax(nan_op(g, a, 2, BinaryOp::Min, "tl.minimum"),
                                    operand_arg(g, a, 0, "x", "tl.minimum"),
                                    operand_arg(g, a, 1, "y", "tl.minimum")));
}
Val tl_clamp(IrGen &g, CallArgs &a) {
  Operand x = operand_arg(g, a, 0, "x", "tl.clamp");
  ir::Value *lo = g.sem().minmax(nan_op(g, a, 3, BinaryOp::Max, "tl.clamp"), x,
                                 operand_arg(g, a, 1, "min", "tl.clamp"));
  return Val::tensor(g.sem().minmax(nan_op(g, a, 3, BinaryOp::Min, "tl.clamp"), {lo},
                                    operand_arg(g, a, 2, "max", "tl.clamp")));
}

Val tl_where(IrGen &g, CallArgs &a) {
  ir::Value *c = tensor_arg(g, a, 0, "condition", "tl.where");
  return Val::tensor(g.sem().where(c, operand_arg(g, a, 1, "x", "tl.where"), operand_arg(g, a, 2, "y", "tl.where")));
}

Val tl_fdiv(IrGen &g, CallArgs &a) {
  return Val::tensor(g.sem().binary(Op::Div, operand_arg(g, a, 0, "x", "tl.fdiv"), operand_arg(g, a, 1, "y", "tl.fdiv")));
}

/// tl.div_rn: IEEE division, also on the GPU where `/` is div.full.
Val tl_div_rn(IrGen &g, CallArgs &a) {
  ir::Value *q = g.sem().binary(Op::Div, operand_arg(g, a, 0, "x", "tl.div_rn"), operand_arg(g, a, 1, "y", "tl.div_rn"));
  // The same typing as `/`; only the division itself is exact.
  if (ir::Op *div = q->def; div && div->kind == OpKind::Binary && div->sub == static_cast<uint8_t>(BinaryOp::Div))
    div->sub = static_cast<uint8_t>(BinaryOp::DivRn);
  return Val::tensor(q);
}

Val tl_umulhi(IrGen &g, CallArgs &a) {
  Operand x = operand_arg(g, a, 0, "x", "tl.umulhi"), y = operand_arg(g, a, 1, "y", "tl.umulhi");
  Type t = g.sem().computation_type(x, y, false);
  if (!t.is_int())
    g.fail("tl.umulhi needs integer operands");
  ir::Value *vx = g.sem().cast(x.value, t), *vy = g.sem().cast(y.value, t);
  g.sem().broadcast_pair(vx, vy);
  return Val::tensor(g.sem().elementwise(OpKind::Binary, static_cast<uint8_t>(BinaryOp::UMulHi), {vx, vy}, vx->type));
}

// ---- reductions and scans ----

Type sum_type(const Type &t) {
  if (t.is_bool())
    return Type::scalar(DType::i32);
  if (t.is_int() && ir::bit_width(t) < 32)
    return Type::scalar(is_unsigned_int(t.elem) ? DType::u32 : DType::i32);
  return t.element();
}

/// A reduction: keep_dims and dtype are read where each builtin's signature
/// puts them (sum(input, axis, keep_dims, dtype), max(input, axis,
/// return_indices, return_indices_tie_break_left, keep_dims), ...).
Val reduce(IrGen &g, CallArgs &a, ir::ReduceOp kind, const char *fn) {
  ir::Value *x = tensor_arg(g, a, 0, "input", fn);
  if (!x->type.is_block())
    return Val::tensor(x);
  bool none = false;
  int axis = axis_arg(g, a, 1, fn, x->type.rank, true, &none);
  const bool keep_dims = bool_kwarg(g, a, a.position("keep_dims"), "keep_dims", false);
  const int orig_rank = x->type.rank;
  if (none && x->type.rank > 1)
    x = g.sem().reshape(x, {x->type.numel()});
  Type elem = x->type.element();
  if (kind == ir::ReduceOp::Sum || kind == ir::ReduceOp::Prod) {
    Type t = sum_type(elem);
    if (const Val *dt = optional_arg(a, a.position("dtype"), "dtype"))
      t = g.const_dtype(*dt, "the dtype");
    x = g.sem().cast(x, t);
    elem = t;
  }
  if (kind == ir::ReduceOp::ArgMax || kind == ir::ReduceOp::ArgMin)
    elem = Type::scalar(DType::i32);
  int64_t dims[Type::kMaxRank];
  int n = 0;
  for (int d = 0; d < x->type.rank; ++d)
    if (d != axis)
      dims[n++] = x->type.shape[d];
  ir::Op *op = g.builder().create(OpKind::Reduce, {x}, {elem.with_shape(dims, n)}, static_cast<uint8_t>(kind));
  op->axis = axis;
  ir::Value *r = op->result();
  if (keep_dims) {
    if (none)
      for (int d = 0; d < orig_rank; ++d)
        r = g.sem().expand_dims(r, 0);
    else
      r = g.sem().expand_dims(r, axis);
  }
  return Val::tensor(r);
}

Val tl_sum(IrGen &g, CallArgs &a) {
  return reduce(g, a, ir::ReduceOp::Sum, "tl.sum");
}
Val tl_prod(IrGen &g, CallArgs &a) {
  return reduce(g, a, ir::ReduceOp::Prod, "tl.prod");
}
Val tl_xor_sum(IrGen &g, CallArgs &a) {
  return reduce(g, a, ir::ReduceOp::Xor, "tl.xor_sum");
}
Val tl_argmax(IrGen &g, CallArgs &a) {
  return reduce(g, a, ir::ReduceOp::ArgMax, "tl.argmax");
}
Val tl_argmin(IrGen &g, CallArgs &a) {
  return reduce(g, a, ir::ReduceOp::ArgMin, "tl.argmin");
}

Val minmax_reduce(IrGen &g, CallArgs &a, bool is_max) {
  const char *fn = is_max ? "tl.max" : "tl.min";
  const ir::ReduceOp value = is_max ? ir::ReduceOp::Max : ir::ReduceOp::Min;
  if (bool_kwarg(g, a, 2, "return_indices", false)) {
    Val v = reduce(g, a, value, fn);
    Val i = reduce(g, a, is_max ? ir::ReduceOp::ArgMax : ir::ReduceOp::ArgMin, fn);
    return Val::tuple({v, i});
  }
  return reduce(g, a, value, fn);
}
Val tl_max(IrGen &g, CallArgs &a) { return minmax_reduce(g, a, true); }
Val tl_min(IrGen &g, CallArgs &a) { return minmax_reduce(g, a, false); }

Val scan(IrGen &g, CallArgs &a, ir::ScanOp kind, const char *fn) {
  ir::Value *x = tensor_arg(g, a, 0, "input", fn);
  if (!x->type.is_block())
    g.fail(std::string(fn) + " needs a block");
  bool none = false;
  const Val *ax = a.find(1, "axis");
  int axis = 0;
  if (ax && !ax->is_none())
    axis = axis_arg(g, a, 1, fn, x->type.rank, false, &none);
  // reverse=True: the scan of the flipped block, flipped back.
  const bool reverse = bool_kwarg(g, a, 2, "reverse", false);
  // As Triton's cumsum / cumprod: bf16 scans in fp32, narrow integers in
  // 32 bits, and cumsum's dtype= wins over both.
  Type t = sum_type(x->type.element());
  if (t.elem == DType::bf16)
    t = Type::scalar(DType::f32);
  if (kind == ir::ScanOp::Sum)
    if (const Val *dt = optional_arg(a, 3, "dtype"))
      t = g.const_dtype(*dt, "the dtype");
  x = g.sem().cast(x, t);
  if (reverse)
    x = flip_along(g, x, axis);
  ir::Op *op = g.builder().create(OpKind::Scan, {x}, {x->type}, static_cast<uint8_t>(kind));
  op->axis = axis;
  return Val::tensor(reverse ? flip_along(g, op->result(), axis) : op->result());
}
Val tl_cumsum(IrGen &g, CallArgs &a) { return scan(g, a, ir::ScanOp::Sum, "tl.cumsum"); }
Val tl_cumprod(IrGen &g, CallArgs &a) { return scan(g, a, ir::ScanOp::Prod, "tl.cumprod"); }

// ---- shape ----

/// Shape arguments given as varargs (`reshape(x, 4, 8)`) or one tuple.
std::vector<int64_t> shape_varargs(IrGen &g, CallArgs &a, size_t first, const char *kw, const char *what) {
  if (a.pos.size() == first + 1 && a.pos[first].kind == Val::Kind::Tuple)
    return g.const_shape(a.pos[first], what);
  if (a.pos.size() > first) {
    std::vector<Val> dims(a.pos.begin() + first, a.pos.end());
    return g.const_shape(Val::tuple(dims), what);
  }
  const Val *v = a.find(99, kw);
  if (!v)
    g.fail(std::string(what) + " is missing");
  return g.const_shape(*v, what);
}

Val tl_reshape(IrGen &g, CallArgs &a) {
  ir::Value *x = tensor_arg(g, a, 0, "input", "tl.reshape");
  return Val::tensor(g.sem().reshape(x, shape_varargs(g, a, 1, "shape", "tl.reshape's shape")));
}

Val tl_ravel(IrGen &g, CallArgs &a) {
  ir::Value *x = tensor_arg(g, a, 0, "input", "tl.ravel");
  return Val::tensor(g.sem().reshape(x, {x->type.numel()}));
}

Val tl_expand_dims(IrGen &g, CallArgs &a) {
  ir::Value *x = tensor_arg(g, a, 0, "input", "tl.expand_dims");
  const Val &axis = required(g, a, 1, "axis", "tl.expand_dims");
  if (axis.kind == Val::Kind::Tuple) {
    for (const Val &e : axis.elems)
      x = g.sem().expand_dims(x, static_cast<int>(g.const_int(e, "the axis")));
    return Val::tensor(x);
  }
  return Val::tensor(g.sem().expand_dims(x, static_cast<int>(g.const_int(axis, "the axis"))));
}

Val tl_broadcast_to(IrGen &g, CallArgs &a) {
  ir::Value *x = tensor_arg(g, a, 0, "input", "tl.broadcast_to");
  auto shape = shape_varargs(g, a, 1, "shape", "tl.broadcast_to's shape");
  return Val::tensor(g.sem().broadcast_to(x, x->type.with_shape(shape.data(), static_cast<int>(shape.size()))));
}

Val tl_broadcast(IrGen &g, CallArgs &a) {
  ir::Value *x = tensor_arg(g, a, 0, "input", "tl.broadcast");
  ir::Value *y = tensor_arg(g, a, 1, "other", "tl.broadcast");
  g.sem().broadcast_pair(x, y);
  return Val::tuple({Val::tensor(x), Val::tensor(y)});
}

Val permute(IrGen &g, CallArgs &a, const char *fn, bool default_reverse) {
  ir::Value *x = tensor_arg(g, a, 0, "input", fn);
  std::vector<int64_t> perm;
  if (a.pos.size() == 2 && a.pos[1].kind == Val::Kind::Tuple) {
    for (const Val &e : a.pos[1].elems)
      perm.push_back(g.const_int(e, "an axis"));
  } else {
    for (size_t i = 1; i < a.pos.size(); ++i)
      perm.push_back(g.const_int(a.pos[i], "an axis"));
    if (const Val *d = a.find(99, "dims"); d && d->kind == Val::Kind::Tuple)
      for (const Val &e : d->elems)
        perm.push_back(g.const_int(e, "an axis"));
  }
  if (perm.empty() && default_reverse) {
    if (x->type.rank != 2)
      g.fail(std::string(fn) + " without axes needs a 2-D block, not " + x->type.str());
    perm = {1, 0};
  }
  return Val::tensor(g.sem().trans(x, perm));
}
Val tl_trans(IrGen &g, CallArgs &a) { return permute(g, a, "tl.trans", true); }
Val tl_permute(IrGen &g, CallArgs &a) { return permute(g, a, "tl.permute", false); }

/// An i1 block of `shape` (last dim 2) that is true where the last index is 0.
ir::Value *first_of_pair(IrGen &g, const Type &shape) {
  Type t = Type::scalar(DType::i32);
  t.rank = 1;
  t.shape[0] = 2;
  ir::Op *ar = g.builder().create(OpKind::Arange, {}, {t});
  ar->i = 0;
  ir::Value *zero = g.builder().constant_int(Type::scalar(DType::i32), 0);
  ir::Value *is0 = g.sem().compare(Op::Eq, {ar->result()}, {zero, true});
  return g.sem().broadcast_to(is0, shape.with_element(Type::scalar(DType::i1)));
}

// tl.join(a, b): a new last dim of 2, built from existing ops (a select over
// an arange), so every backend gets it for free.
Val tl_join(IrGen &g, CallArgs &a) {
  ir::Value *x = tensor_arg(g, a, 0, "a", "tl.join"), *y = tensor_arg(g, a, 1, "b", "tl.join");
  g.sem().broadcast_pair(x, y);
  if (x->type.elem != y->type.elem || x->type.pointer != y->type.pointer)
    g.fail("tl.join needs two blocks of the same dtype, got " + x->type.element().str() + " and " +
           y->type.element().str());
  if (!x->type.is_block()) {
    x = g.sem().expand_dims(x, 0);
    y = g.sem().expand_dims(y, 0);
  }
  x = g.sem().expand_dims(x, x->type.rank);
  y = g.sem().expand_dims(y, y->type.rank);
  int64_t dims[Type::kMaxRank];
  for (int d = 0; d < x->type.rank; ++d)
    dims[d] = x->type.shape[d];
  dims[x->type.rank - 1] = 2;
  const Type shape = x->type.with_shape(dims, x->type.rank);
  ir::Value *sel = first_of_pair(g, shape);
  return Val::tensor(g.sem().elementwise(OpKind::Select, 0, {sel, g.sem().broadcast_to(x, shape),
                                                                 g.sem().broadcast_to(y, shape)},
                                         shape));
}

// tl.split(x): the two halves of a last dim of 2, as a sum over that dim of
// the element kept (-0.0 elsewhere for floats, so the value is exact).
Val tl_split(IrGen &g, CallArgs &a) {
  ir::Value *x = tensor_arg(g, a, 0, "a", "tl.split");
  if (!x->type.is_block() || x->type.shape[x->type.rank - 1] != 2)
    g.fail("tl.split needs a block whose last dimension is 2, got " + x->type.str());
  if (x->type.pointer || x->type.is_bool())
    g.fail("tl.split of " + x->type.element().str() + " blocks is not supported yet");
  ir::Value *sel = first_of_pair(g, x->type);
  ir::Value *zero = x->type.is_float() ? g.builder().constant_float(x->type.element(), -0.0)
                                       : g.builder().constant_int(x->type.element(), 0);
  zero = g.sem().broadcast_to(zero, x->type);
  std::vector<Val> halves;
  for (int h = 0; h < 2; ++h) {
    ir::Value *kept = h == 0 ? g.sem().elementwise(OpKind::Select, 0, {sel, x, zero}, x->type)
                             : g.sem().elementwise(OpKind::Select, 0, {sel, zero, x}, x->type);
    int64_t dims[Type::kMaxRank];
    for (int d = 0; d + 1 < x->type.rank; ++d)
      dims[d] = x->type.shape[d];
    ir::Op *op = g.builder().create(OpKind::Reduce, {kept}, {x->type.with_shape(dims, x->type.rank - 1)},
                                    static_cast<uint8_t>(ir::ReduceOp::Sum));
    op->axis = x->type.rank - 1;
    halves.push_back(Val::tensor(op->result()));
  }
  return Val::tuple(std::move(halves));
}

// ---- linear algebra ----

// Triton's input_precision: "tf32" (its default for fp32 on CUDA), "tf32x3"
// or "ieee"; allow_tf32=False (the older spelling) means "ieee". The GPU
// lowering reads it to choose tensor cores or exact FMAs for fp32 operands.
std::string dot_precision(IrGen &g, CallArgs &a) {
  const Val *p = optional_arg(a, 3, "input_precision");
  const Val *allow = optional_arg(a, 4, "allow_tf32");
  if (p && !p->is_none() && allow && !allow->is_none())
    g.fail("tl.dot takes input_precision or allow_tf32 (deprecated), not both");
  if (p && !p->is_none()) {
    if (!p->is_const() || p->c.kind != ConstValue::Kind::Str)
      g.fail("tl.dot's input_precision must be a string: \"tf32\", \"tf32x3\" or \"ieee\"");
    const std::string s = p->c.s;
    if (s != "tf32" && s != "tf32x3" && s != "ieee")
      g.fail("tl.dot's input_precision must be \"tf32\", \"tf32x3\" or \"ieee\", got \"" + s + "\"");
    return s;
  }
  if (allow && allow->is_const() && allow->c.kind == ConstValue::Kind::Bool && !allow->c.b)
    return "ieee";
  return "tf32";
}

// Triton 3.6's result dtype of tl.dot (semantic.py `dot`): int32 for int8
// operands (out_dtype ignored), float32 for float32 and bfloat16 ones,
// float64 for float64, out_dtype (float16 or float32) for float16 and fp8.
// What Triton rejects is a compile error here, never a silent cast.
DType dot_result(IrGen &g, DType operand, const std::optional<DType> &out_dtype) {
  const std::string named = std::string(dtype_language_name(operand));
  if (is_int(operand)) {
    if (operand != DType::i8)
      g.fail("tl.dot of integers takes int8 operands only (as Triton), got " + named);
    return DType::i32;
  }
  if (!is_fp8(operand) && operand != DType::f16 && operand != DType::bf16 &&
      operand != DType::f32 && operand != DType::f64)
    g.fail("tl.dot's operands must be int8, float16, bfloat16, float32, float64 or fp8, got " +
           named);
  const DType out = out_dtype.value_or(DType::f32);
  if (out == DType::bf16)
    g.fail("tl.dot's out_dtype=bfloat16 is unsupported (as in Triton): use out_dtype=float32 "
           "or float16 and cast the result with .to(tl.bfloat16)");
  if (operand == DType::f32 || operand == DType::bf16)
    return DType::f32;
  if (operand == DType::f64)
    return DType::f64;
  if (out != DType::f16 && out != DType::f32)
    g.fail("tl.dot of " + named + " operands accumulates in float16 or float32, not out_dtype=" +
           std::string(dtype_language_name(out)));
  return out;
}

Val tl_dot(IrGen &g, CallArgs &a) {
  ir::Value *x = tensor_arg(g, a, 0, "input", "tl.dot");
  ir::Value *y = tensor_arg(g, a, 1, "other", "tl.dot");
  const int rank = x->type.rank;
  if ((rank != 2 && rank != 3) || y->type.rank != rank)
    g.fail("tl.dot needs two 2-D blocks or two 3-D (batched) blocks, got " + x->type.str() +
           " and " + y->type.str());
  // A 3-D dot is a batch of independent 2-D dots along dim 0.
  const int64_t B = rank == 3 ? x->type.shape[0] : 1;
  const int64_t M = x->type.shape[rank - 2], K = x->type.shape[rank - 1],
                N = y->type.shape[rank - 1];
  if (y->type.shape[rank - 2] != K)
    g.fail("tl.dot's inner dimensions differ: " + x->type.str() + " and " + y->type.str());
  if (rank == 3 && y->type.shape[0] != B)
    g.fail("tl.dot's batch dimensions differ: " + x->type.str() + " and " + y->type.str());
  if (x->type.elem != y->type.elem)
    g.fail("tl.dot's operands must have the same element type, got " + x->type.element().str() + " and " +
           y->type.element().str());
  // Triton 3.6 on NVIDIA: M and N may be 1 (tensor cores are padded, a
  // matrix-vector product is a dot); K has a minimum by operand width.
  const size_t width = dtype_size(x->type.elem);
  const int64_t min_k = width == 1 ? 32 : width == 2 ? 16 : width == 4 ? 8 : 4;
  if (K < min_k)
    g.fail("tl.dot of " + std::to_string(8 * width) +
           "-bit operands needs K >= " + std::to_string(min_k) + " (as Triton on NVIDIA), got " +
           x->type.str() + " and " + y->type.str());
  std::optional<DType> out_dtype;
  if (const Val *od = optional_arg(a, 6, "out_dtype"); od && !od->is_none())
    out_dtype = g.const_dtype(*od, "tl.dot's out_dtype").elem;
  const Type out = Type::scalar(dot_result(g, x->type.elem, out_dtype));
  const int64_t dims2[2] = {M, N}, dims3[3] = {B, M, N};
  const Type rt = rank == 3 ? out.with_shape(dims3, 3) : out.with_shape(dims2, 2);
  ir::Value *acc;
  if (const Val *accv = optional_arg(a, 2, "acc"); accv && !accv->is_none()) {
    acc = g.to_tensor(*accv, "tl.dot's acc");
    if (!acc->type.same_shape(rt))
      g.fail("tl.dot's acc must be " + rt.str() + ", got " + acc->type.str());
    // Triton asserts acc's dtype is out_dtype (float32 unless given), and
    // the dot's result has acc's dtype: both must hold.
    const DType ae = acc->type.elem, xe = x->type.elem;
    const std::string acc_name(dtype_language_name(ae));
    // Whether some out_dtype makes a dot of these operands accumulate in ae.
    bool fits = ae == (xe == DType::f64 ? DType::f64 : DType::f32);
    if (is_int(xe))
      fits = ae == DType::i32;
    else if (xe == DType::f16 || is_fp8(xe))
      fits = ae == DType::f16 || ae == DType::f32;
    if (fits && ae != out_dtype.value_or(DType::f32))
      g.fail("tl.dot's acc of " + acc_name + " needs out_dtype=tl." + acc_name +
             " (as in Triton: acc's dtype must be out_dtype, float32 unless given)");
    if (ae != out.elem)
      g.fail("tl.dot's acc is " + acc->type.str() + ", but a dot of " +
             std::string(dtype_language_name(xe)) + " operands accumulates in " +
             std::string(dtype_language_name(out.elem)));
  } else {
    acc = out.is_float() ? g.builder().constant_float(out, 0) : g.builder().constant_int(out, 0);
    acc = g.sem().broadcast_to(acc, rt);
  }
  ir::Op *dot = g.builder().create(OpKind::Dot, {x, y, acc}, {rt});
  dot->str = dot_precision(g, a);
  return Val::tensor(dot->result());
}

// ---- helpers ----

Val tl_cdiv(IrGen &g, CallArgs &a) {
  const Val &x = required(g, a, 0, "x", "tl.cdiv"), &d = required(g, a, 1, "div", "tl.cdiv");
  if (x.is_const() && d.is_const()) {
    const int64_t xi = g.const_int(x, "tl.cdiv's x"), di = g.const_int(d, "tl.cdiv's div");
    if (di == 0)
      g.fail("tl.cdiv by zero");
    const int64_t q = (xi + di - 1) / di, r = (xi + di - 1) % di;
    return Val::constant(ConstValue::of_int(r != 0 && ((r < 0) != (di < 0)) ? q - 1 : q));
  }
  Operand ox = g.to_operand(x, "tl.cdiv's x"), od = g.to_operand(d, "tl.cdiv's div");
  ir::Value *sum = g.sem().binary(Op::Add, ox, od);
  ir::Value *num = g.sem().binary(Op::Sub, {sum}, {g.builder().constant_int(Type::scalar(DType::i32), 1), true});
  return Val::tensor(g.sem().binary(Op::FloorDiv, {num}, od));
}

/// triton.next_power_of_2(n) in a kernel: Triton calls the host function on
/// the constexpr, so only a compile-time int is accepted.
Val triton_next_power_of_2(IrGen &g, CallArgs &a) {
  const Val &n = required(g, a, 0, "n", "triton.next_power_of_2");
  if (!n.is_const())
    g.fail("triton.next_power_of_2 needs a compile-time int (a tl.constexpr); use it on block "
           "sizes, not on "
           "runtime values");
  int64_t v =
      g.const_int(n, "triton.next_power_of_2's n") - 1; // Triton's own bit trick (0 gives 0)
  for (int s : {1, 2, 4, 8, 16, 32})
    v |= v >> s;
  return Val::constant(ConstValue::of_int(v + 1));
}

/// tl.multiple_of(x, values) and its kin: `values` (an int, or one per dim)
/// become facts of x's value for the axis info; x itself is returned.
template <std::array<int32_t, ir::Type::kMaxRank> ir::Facts::*Field>
Val hint(IrGen &g, CallArgs &a, const char *fn) {
  const Val x = required(g, a, 0, "input", fn);
  const Val &values = required(g, a, 1, "values", fn);
  std::vector<Val> per = values.kind == Val::Kind::Tuple ? values.elems : std::vector<Val>{values};
  if (!x.is_tensor())
    return x; // a constant needs no hint
  const int rank = std::max<int>(1, x.v->type.rank);
  if (static_cast<int>(per.size()) != rank)
    g.fail(std::string(fn) + " needs one value per dim of its " + x.v->type.str() + " input, not " +
           std::to_string(per.size()));
  for (int d = 0; d < rank; ++d) {
    const int64_t n = g.const_int(per[d], (std::string(fn) + "'s value").c_str());
    if (n < 1 || n > (int64_t{1} << 30))
      g.fail(std::string(fn) + "'s values must be positive, not " + std::to_string(n));
    (x.v->facts.*Field)[d] = static_cast<int32_t>(n);
  }
  return x;
}

Val tl_multiple_of(IrGen &g, CallArgs &a) {
  return hint<&ir::Facts::multiple_of>(g, a, "tl.multiple_of");
}
Val tl_max_contiguous(IrGen &g, CallArgs &a) {
  return hint<&ir::Facts::max_contiguous>(g, a, "tl.max_contiguous");
}
Val tl_max_constancy(IrGen &g, CallArgs &a) {
  return hint<&ir::Facts::max_constancy>(g, a, "tl.max_constancy");
}

Val tl_debug_barrier(IrGen &g, CallArgs &) {
  g.builder().create(OpKind::Barrier, {}, {});
  return Val::constant(ConstValue::none());
}

Val tl_static_assert(IrGen &g, CallArgs &a) {
  const Val &c = required(g, a, 0, "cond", "tl.static_assert");
  if (!c.is_const())
    g.fail("tl.static_assert needs a compile-time condition");
  if (!c.c.truthy()) {
    const Val *msg = a.find(1, "msg");
    g.fail("static assertion failed" + (msg && msg->is_const() && msg->c.kind == ConstValue::Kind::Str
                                            ? ": " + msg->c.s
                                            : std::string()));
  }
  return Val::constant(ConstValue::none());
}

std::string describe(const Val &v) {
  switch (v.kind) {
  case Val::Kind::Tensor: return v.v->type.str();
  case Val::Kind::Const: return v.c.kind == ConstValue::Kind::Str ? v.c.s : v.c.repr();
  case Val::Kind::DType: return v.type.str();
  case Val::Kind::Tuple: {
    std::string s = "(";
    for (size_t i = 0; i < v.elems.size(); ++i)
      s += (i ? ", " : "") + describe(v.elems[i]);
    return s + ")";
  }
  default: return "<value>";
  }
}

Val tl_static_print(IrGen &, CallArgs &a) {
  std::string line;
  for (size_t i = 0; i < a.pos.size(); ++i)
    line += (i ? " " : "") + describe(a.pos[i]);
  std::fprintf(stderr, "%s\n", line.c_str());
  return Val::constant(ConstValue::none());
}

Val tl_device_assert(IrGen &g, CallArgs &a) {
  const Val &c = required(g, a, 0, "cond", "tl.device_assert");
  if (c.is_const()) {
    if (!c.c.truthy())
      g.fail("device assertion is false at compile time");
    return Val::constant(ConstValue::none());
  }
  if (!g.debug())
    return Val::constant(ConstValue::none());
  ir::Op *op = g.builder().create(OpKind::Assert, {g.sem().to_bool(g.to_tensor(c, "the condition"))}, {});
  const Val *msg = a.find(1, "msg");
  op->str = g.source().path() + ":" + std::to_string(g.builder().loc().line) + ": " +
            (msg && msg->is_const() && msg->c.kind == ConstValue::Kind::Str ? msg->c.s : "device assertion failed");
  return Val::constant(ConstValue::none());
}

Val tl_constexpr(IrGen &g, CallArgs &a) { return required(g, a, 0, "value", "tl.constexpr"); }

Val range_outside_for(IrGen &g, CallArgs &) {
  g.fail("range(...) can only be used as the iterable of a for loop in kernels");
}

// ---- Python builtins on compile-time values ----

Val py_minmax(IrGen &g, CallArgs &a, bool is_max) {
  std::vector<Val> items = a.pos.size() == 1 && a.pos[0].kind == Val::Kind::Tuple ? a.pos[0].elems : a.pos;
  if (items.empty())
    g.fail(std::string(is_max ? "max" : "min") + " needs at least one argument");
  const bool runtime = std::any_of(items.begin(), items.end(), [](const Val &v) { return v.is_tensor(); });
  if (runtime) {
    // On tensors, as Triton: tl.maximum / tl.minimum pairwise, left to right.
    Operand acc = g.to_operand(items[0], is_max ? "max's argument" : "min's argument");
    for (size_t i = 1; i < items.size(); ++i)
      acc = Operand{g.sem().minmax(is_max ? BinaryOp::Max : BinaryOp::Min, acc,
                                   g.to_operand(items[i], is_max ? "max's argument" : "min's argument"))};
    return Val::tensor(acc.value);
  }
  Val best = items[0];
  for (size_t i = 0; i < items.size(); ++i) {
    const Val &v = items[i];
    if (!v.is_const() || !v.c.is_number())
      g.fail(std::string(is_max ? "max" : "min") + "() needs numbers or tensors");
    if (i && (is_max ? v.c.as_double() > best.c.as_double() : v.c.as_double() < best.c.as_double()))
      best = v;
  }
  return best;
}
Val py_min(IrGen &g, CallArgs &a) { return py_minmax(g, a, false); }
Val py_max(IrGen &g, CallArgs &a) { return py_minmax(g, a, true); }

Val py_int(IrGen &g, CallArgs &a) {
  const Val &v = required(g, a, 0, "x", "int");
  if (v.is_const() && v.c.is_number())
    return Val::constant(ConstValue::of_int(v.c.kind == ConstValue::Kind::Float ? static_cast<int64_t>(v.c.f)
                                                                                : int64_t(v.c.as_double())));
  g.fail("int() works on compile-time numbers; use x.to(tl.int32) for tensors");
}

Val py_float(IrGen &g, CallArgs &a) {
  const Val &v = required(g, a, 0, "x", "float");
  if (v.is_const() && v.c.is_number())
    return Val::constant(ConstValue::of_float(v.c.as_double()));
  if (v.is_const() && v.c.kind == ConstValue::Kind::Str) {
    const std::string &s = v.c.s;
    if (s == "inf" || s == "+inf" || s == "infinity")
      return Val::constant(ConstValue::of_float(std::numeric_limits<double>::infinity()));
    if (s == "-inf" || s == "-infinity")
      return Val::constant(ConstValue::of_float(-std::numeric_limits<double>::infinity()));
    if (s == "nan")
      return Val::constant(ConstValue::of_float(std::numeric_limits<double>::quiet_NaN()));
    g.fail("float() of the string '" + s + "' is not supported; use \"inf\", \"-inf\" or \"nan\"");
  }
  g.fail("float() works on compile-time values; use x.to(tl.float32) for tensors");
}

Val py_bool(IrGen &g, CallArgs &a) {
  const Val &v = required(g, a, 0, "x", "bool");
  if (v.is_const())
    return Val::constant(ConstValue::of_bool(v.c.truthy()));
  g.fail("bool() works on compile-time values");
}

Val py_len(IrGen &g, CallArgs &a) {
  const Val &v = required(g, a, 0, "x", "len");
  if (v.kind == Val::Kind::Tuple)
    return Val::constant(ConstValue::of_int(static_cast<int64_t>(v.elems.size())));
  if (v.is_tensor() && v.v->type.is_block())
    return Val::constant(ConstValue::of_int(v.v->type.shape[0]));
  g.fail("len() works on tuples and blocks");
}

Val py_abs(IrGen &g, CallArgs &a) {
  const Val &v = required(g, a, 0, "x", "abs");
  if (v.is_const() && v.c.kind == ConstValue::Kind::Float)
    return Val::constant(ConstValue::of_float(std::fabs(v.c.f)));
  if (v.is_const() && v.c.is_number())
    return Val::constant(ConstValue::of_int(std::llabs(int64_t(v.c.as_double()))));
  return Val::tensor(g.sem().unary_math(UnaryOp::Abs, g.to_tensor(v, "abs's argument")));
}

template <double (*F)(double)> Val math_fn(IrGen &g, CallArgs &a) {
  const Val &v = required(g, a, 0, "x", "the math function");
  if (!v.is_const() || !v.c.is_number())
    g.fail("math.* functions work on compile-time numbers; use tl.* for tensors");
  return Val::constant(ConstValue::of_float(F(v.c.as_double())));
}
double d_sqrt(double x) { return std::sqrt(x); }
double d_log(double x) { return std::log(x); }
double d_log2(double x) { return std::log2(x); }
double d_exp(double x) { return std::exp(x); }
Val math_ceil(IrGen &g, CallArgs &a) {
  Val r = math_fn<std::ceil>(g, a);
  return Val::constant(ConstValue::of_int(static_cast<int64_t>(r.c.f)));
}
Val math_floor(IrGen &g, CallArgs &a) {
  Val r = math_fn<std::floor>(g, a);
  return Val::constant(ConstValue::of_int(static_cast<int64_t>(r.c.f)));
}

const HandlerTable &own_handlers() {
  static const HandlerTable table = {
      {"tl.program_id", tl_program_id},
      {"tl.num_programs", tl_num_programs},
      {"tl.arange", tl_arange},
      {"tl.zeros", tl_zeros},
      {"tl.full", tl_full},
      {"tl.zeros_like", tl_zeros_like},
      {"tl.full_like", tl_full_like},
      {"tl.cast", tl_cast},
      {"tl.load", tl_load},
      {"tl.store", tl_store},
      {"tl.atomic_add", tl_atomic_add},
      {"tl.atomic_max", tl_atomic_max},
      {"tl.atomic_min", tl_atomic_min},
      {"tl.atomic_and", tl_atomic_and},
      {"tl.atomic_or", tl_atomic_or},
      {"tl.atomic_xor", tl_atomic_xor},
      {"tl.atomic_xchg", tl_atomic_xchg},
      {"tl.atomic_cas", tl_atomic_cas},
      {"tl.exp", unary<UnaryOp::Exp>},
      {"tl.exp2", unary<UnaryOp::Exp2>},
      {"tl.log", unary<UnaryOp::Log>},
      {"tl.log2", unary<UnaryOp::Log2>},
      {"tl.sqrt", unary<UnaryOp::Sqrt>},
      {"tl.sqrt_rn", unary<UnaryOp::Sqrt>},
      {"tl.rsqrt", unary<UnaryOp::Rsqrt>},
      {"tl.sin", unary<UnaryOp::Sin>},
      {"tl.cos", unary<UnaryOp::Cos>},
      {"tl.abs", unary<UnaryOp::Abs>},
      {"tl.floor", unary<UnaryOp::Floor>},
      {"tl.ceil", unary<UnaryOp::Ceil>},
      {"tl.erf", unary<UnaryOp::Erf>},
      {"tl.sigmoid", tl_sigmoid},
      {"tl.fma", tl_fma},
      {"tl.maximum", tl_maximum},
      {"tl.minimum", tl_minimum},
      {"tl.clamp", tl_clamp},
      {"tl.where", tl_where},
      {"tl.fdiv", tl_fdiv},
      {"tl.div_rn", tl_div_rn},
      {"tl.umulhi", tl_umulhi},
      {"tl.sum", tl_sum},
      {"tl.prod", tl_prod},
      {"tl.xor_sum", tl_xor_sum},
      {"tl.max", tl_max},
      {"tl.min", tl_min},
      {"tl.argmax", tl_argmax},
      {"tl.argmin", tl_argmin},
      {"tl.cumsum", tl_cumsum},
      {"tl.cumprod", tl_cumprod},
      {"tl.reshape", tl_reshape},
      {"tl.view", tl_reshape},
      {"tl.ravel", tl_ravel},
      {"tl.expand_dims", tl_expand_dims},
      {"tl.broadcast_to", tl_broadcast_to},
      {"tl.broadcast", tl_broadcast},
      {"tl.trans", tl_trans},
      {"tl.permute", tl_permute},
      {"tl.join", tl_join},
      {"tl.split", tl_split},
      {"tl.dot", tl_dot},
      {"tl.cdiv", tl_cdiv},
      {"triton.next_power_of_2", triton_next_power_of_2},
      {"tl.multiple_of", tl_multiple_of},
      {"tl.max_contiguous", tl_max_contiguous},
      {"tl.max_constancy", tl_max_constancy},
      {"tl.debug_barrier", tl_debug_barrier},
      {"tl.static_assert", tl_static_assert},
      {"tl.static_print", tl_static_print},
      {"tl.device_assert", tl_device_assert},
      {"tl.constexpr", tl_constexpr},
      {"tl.range", range_outside_for},
      {"tl.static_range", range_outside_for},
      {"py.range", range_outside_for},
      {"py.min", py_min},
      {"py.max", py_max},
      {"py.int", py_int},
      {"py.float", py_float},
      {"py.bool", py_bool},
      {"py.len", py_len},
      {"py.abs", py_abs},
      {"py.print", tl_static_print},
      {"math.sqrt", math_fn<d_sqrt>},
      {"math.log", math_fn<d_log>},
      {"math.log2", math_fn<d_log2>},
      {"math.exp", math_fn<d_exp>},
      {"math.ceil", math_ceil},
      {"math.floor", math_floor},
  };
  return table;
}

/// Every builtin: this file's and those of the other ir_gen_*.cpp files.
const HandlerTable &handlers() {
  static const HandlerTable table = [] {
    HandlerTable t = own_handlers();
    for (const HandlerTable *more :
         {&math_handlers(), &random_handlers(), &scan_handlers(), &lang_handlers(),
          &block_ptr_handlers(), &inline_asm_handlers(), &dot_scaled_handlers()})
      for (const auto &entry : *more)
        t.insert_or_assign(entry.first, entry.second);
    return t;
  }();
  return table;
}

/// The parameters of Triton's builtins (language/core.py, math.py,
/// standard.py), in order, for Python's checks of a call: no more
/// positional arguments than parameters, no unknown keyword, no parameter
/// given twice. A "*name" entry is Python's *args (reshape, permute,
/// device_print, ...). Builtins not listed read the arguments they know.
const std::unordered_map<std::string, std::vector<const char *>> &signatures() {
  using P = std::vector<const char *>;
  static const P x{"x"}, xy{"x", "y"}, atomic_rmw{"pointer", "val", "mask", "sem", "scope"},
      hint{"input", "values"},
      minmax{"input", "axis", "return_indices", "return_indices_tie_break_left", "keep_dims"},
      arg_reduce{"input", "axis", "tie_break_left", "keep_dims"},
      random{"seed", "offset", "n_rounds"};
  static const std::unordered_map<std::string, P> table = {
      {"tl.program_id", {"axis"}},
      {"tl.num_programs", {"axis"}},
      {"tl.arange", {"start", "end"}},
      {"tl.zeros", {"shape", "dtype"}},
      {"tl.full", {"shape", "value", "dtype"}},
      {"tl.zeros_like", {"input"}},
      {"tl.full_like", {"input", "value", "dtype"}},
      {"tl.cast", {"input", "dtype", "fp_downcast_rounding", "bitcast"}},
      {"tl.load",
       {"pointer", "mask", "other", "boundary_check", "padding_option", "cache_modifier",
        "eviction_policy", "volatile"}},
      {"tl.store",
       {"pointer", "value", "mask", "boundary_check", "cache_modifier", "eviction_policy"}},
      {"tl.atomic_add", atomic_rmw},
      {"tl.atomic_max", atomic_rmw},
      {"tl.atomic_min", atomic_rmw},
      {"tl.atomic_and", atomic_rmw},
      {"tl.atomic_or", atomic_rmw},
      {"tl.atomic_xor", atomic_rmw},
      {"tl.atomic_xchg", atomic_rmw},
      {"tl.atomic_cas", {"pointer", "cmp", "val", "sem", "scope"}},
      {"tl.inline_asm_elementwise", {"asm", "constraints", "args", "dtype", "is_pure", "pack"}},
      {"tl.dot_scaled",
       {"lhs", "lhs_scale", "lhs_format", "rhs", "rhs_scale", "rhs_format", "acc", "fast_math",
        "lhs_k_pack", "rhs_k_pack", "out_dtype"}},
      {"tl.exp", x},
      {"tl.exp2", x},
      {"tl.log", x},
      {"tl.log2", x},
      {"tl.sqrt", x},
      {"tl.sqrt_rn", x},
      {"tl.rsqrt", x},
      {"tl.sin", x},
      {"tl.cos", x},
      {"tl.abs", x},
      {"tl.floor", x},
      {"tl.ceil", x},
      {"tl.erf", x},
      {"tl.sigmoid", x},
      {"tl.fma", {"x", "y", "z"}},
      {"tl.maximum", {"x", "y", "propagate_nan"}},
      {"tl.minimum", {"x", "y", "propagate_nan"}},
      {"tl.clamp", {"x", "min", "max", "propagate_nan"}},
      {"tl.where", {"condition", "x", "y"}},
      {"tl.fdiv", {"x", "y", "ieee_rounding"}},
      {"tl.div_rn", xy},
      {"tl.umulhi", xy},
      {"tl.expand_dims", {"input", "axis"}},
      {"tl.broadcast", {"input", "other"}},
      {"tl.dot",
       {"input", "other", "acc", "input_precision", "allow_tf32", "max_num_imprecise_acc",
        "out_dtype"}},
      // Reductions and scans as triton.language.standard declares them: a
      // positional keep_dims is the third or a later argument, never ignored.
      {"tl.sum", {"input", "axis", "keep_dims", "dtype"}},
      {"tl.prod", {"input", "axis", "keep_dims", "dtype"}},
      {"tl.xor_sum", {"input", "axis", "keep_dims"}},
      {"tl.max", minmax},
      {"tl.min", minmax},
      {"tl.argmax", arg_reduce},
      {"tl.argmin", arg_reduce},
      {"tl.reduce", {"input", "axis", "combine_fn", "keep_dims"}},
      {"tl.cumsum", {"input", "axis", "reverse", "dtype"}},
      {"tl.cumprod", {"input", "axis", "reverse"}},
      {"tl.associative_scan", {"input", "axis", "combine_fn", "reverse"}},
      // Varargs: kiln also takes the shape or the axes as one keyword.
      {"tl.reshape", {"input", "*shape", "can_reorder", "shape"}},
      {"tl.view", {"input", "*shape", "shape"}},
      {"tl.broadcast_to", {"input", "*shape", "shape"}},
      {"tl.permute", {"input", "*dims", "dims"}},
      {"tl.trans", {"input", "*dims", "dims"}},
      {"tl.device_print", {"prefix", "*args", "hex"}},
      {"tl.static_print", {"*values", "sep", "end", "file", "flush"}},
      {"tl.cat", {"input", "other", "can_reorder"}},
      {"tl.flip", {"x", "dim"}},
      {"tl.sort", {"x", "dim", "descending"}},
      {"tl.topk", {"x", "k", "dim"}},
      {"tl.gather", {"src", "index", "axis"}},
      {"tl.histogram", {"input", "num_bins", "mask"}},
      {"tl.interleave", {"a", "b"}},
      {"tl.join", {"a", "b"}},
      {"tl.split", {"a"}},
      {"tl.ravel", {"x", "can_reorder"}},
      {"tl.softmax", {"x", "dim", "keep_dims", "ieee_rounding"}},
      {"tl.swizzle2d", {"i", "j", "size_i", "size_j", "size_g"}},
      {"tl.advance", {"base", "offsets"}},
      {"tl.make_block_ptr", {"base", "shape", "strides", "offsets", "block_shape", "order"}},
      {"tl.make_tensor_descriptor", {"base", "shape", "strides", "block_shape", "padding_option"}},
      {"tl.load_tensor_descriptor", {"desc", "offsets"}},
      {"tl.store_tensor_descriptor", {"desc", "offsets", "value"}},
      {"tl.rand", random},
      {"tl.randn", random},
      {"tl.randint", random},
      {"tl.rand4x", random},
      {"tl.randn4x", random},
      {"tl.randint4x", random},
      {"tl.philox", {"seed", "c0", "c1", "c2", "c3", "n_rounds"}},
      {"tl.uint_to_uniform_float", x},
      {"tl.pair_uniform_to_normal", {"u1", "u2"}},
      {"tl.cdiv", {"x", "div"}},
      {"triton.next_power_of_2", {"n"}},
      {"tl.multiple_of", hint},
      {"tl.max_contiguous", hint},
      {"tl.max_constancy", hint},
      {"tl.debug_barrier", {}},
      {"tl.static_assert", {"cond", "msg"}},
      {"tl.device_assert", {"cond", "msg", "mask"}},
  };
  return table;
}

std::string joined(const std::vector<const char *> &names) {
  std::string s;
  for (const char *n : names)
    s.append(s.empty() ? "" : ", ").append(n);
  return s;
}

/// Python's TypeErrors for a call of `name` that does not fit its signature.
void check_signature(IrGen &g, const std::string &name, CallArgs &a) {
  const auto &table = signatures();
  const auto it = table.find(name);
  if (it == table.end())
    return;
  const std::vector<const char *> &params = it->second;
  a.signature = &params;
  const std::string described = name + "(" + joined(params) + ")";
  // "*shape": any number of positional arguments from there on; the names
  // after it are keyword-only, as in Python.
  const size_t star = static_cast<size_t>(
      std::find_if(params.begin(), params.end(), [](const char *n) { return n[0] == '*'; }) -
      params.begin());
  a.keyword_only = star; // find() reads keyword-only parameters at no position
  if (star == params.size() && a.pos.size() > params.size()) {
    const Expr *extra = arg_expr(a, params.size(), "");
    g.fail(extra ? extra->loc : g.builder().loc(),
           name + " takes " + std::to_string(params.size()) + " argument" +
               (params.size() == 1 ? "" : "s") + " but " + std::to_string(a.pos.size()) +
               " were given; it is " + described);
  }
  for (size_t k = 0; k < a.kw.size(); ++k) {
    const std::string &kw = a.kw[k].first;
    const auto p =
        std::find_if(params.begin(), params.end(), [&](const char *n) { return kw == n; });
    const Loc loc =
        a.expr && k < a.expr->keywords.size() ? a.expr->keywords[k].loc : g.builder().loc();
    if (p == params.end())
      g.fail(loc, name + " has no parameter '" + kw + "'; it is " + described);
    if (const auto at = static_cast<size_t>(p - params.begin()); at < star && at < a.pos.size())
      g.fail(loc, name + " got two values for '" + kw + "' (by position and by keyword)");
  }
}

/// Builtins of triton.language that kiln does not implement: a call of one
/// is "not supported yet", not taken for a misspelling of a supported one
/// (even when a supported builtin is only a few edits away).
constexpr std::string_view kUnsupportedTritonBuiltins[] = {"tensor"};

/// The supported builtin closest to the unknown `name` in the same
/// namespace ("tl.load" for "tl.laod"), or "" when none is close: one edit
/// for a short name, two for a longer one.
std::string closest_builtin(const std::string &name) {
  const size_t dot = name.find('.');
  const std::string ns = name.substr(0, dot + 1);
  std::vector<std::string_view> members;
  for (const auto &entry : handlers())
    if (entry.first.compare(0, ns.size(), ns) == 0)
      members.push_back(std::string_view(entry.first).substr(ns.size()));
  const std::string best = closest_name(std::string_view(name).substr(dot + 1), members);
  return best.empty() ? best : ns + best;
}

} // namespace

Val IrGen::call_builtin(const std::string &name, CallArgs &args) {
  const auto &table = handlers();
  auto it = table.find(name);
  if (it == table.end()) {
    const bool python = name.rfind("py.", 0) == 0;
    const std::string shown = python ? name.substr(3) : name;
    const std::string_view member = std::string_view(name).substr(name.find('.') + 1);
    const bool triton_builtin =
        name.rfind("tl.", 0) == 0 &&
        std::find(std::begin(kUnsupportedTritonBuiltins), std::end(kUnsupportedTritonBuiltins),
                  member) != std::end(kUnsupportedTritonBuiltins);
    if (!triton_builtin && !python)
      if (const std::string near = closest_builtin(name); !near.empty())
        fail(shown + " is not a builtin kiln knows; did you mean " + near + "?");
    fail(shown + " is not supported by kiln yet; express it with the tl.* builtins kiln supports");
  }
  args.callee = name;
  check_signature(*this, name, args);
  return it->second(*this, args);
}

} // namespace kiln::frontend
