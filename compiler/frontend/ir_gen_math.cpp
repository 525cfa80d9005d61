// The math builtins beyond the core ones: every function of the MathFn table
// (tl.tanh, tl.math.atan2, libdevice.isnan, ...), tl.softmax, and the
// libdevice conversions and rounding variants that are plain ops here.
#include <string>
#include <utility>

#include "compiler/frontend/ir_gen_args.hpp"
#include "compiler/frontend/libdevice_names.hpp"
#include "compiler/ir/math_fn.hpp"

namespace kiln::frontend {

using ir::MathFn;
using ir::OpKind;
using ir::Type;

namespace {

/// Argument `i` of a math function: Triton's tl.math names it x / y,
/// libdevice arg0 / arg1.
Operand math_arg(IrGen &g, CallArgs &a, size_t i, const std::string &fn) {
  const char *math_name = i == 0 ? "x" : i == 1 ? "y" : "z";
  const Val *v = a.find(i, math_name);
  if (!v)
    v = a.find(99, i == 0 ? "arg0" : i == 1 ? "arg1" : "arg2");
  if (!v)
    g.fail(fn + " is missing its argument '" + math_name + "'");
  return g.to_operand(*v, (fn + "'s argument").c_str());
}

Val math_call(IrGen &g, CallArgs &a, MathFn fn) {
  const ir::MathFnInfo &info = ir::math_fn_info(fn);
  const std::string name = std::string("tl.") + info.name;
  if (a.pos.size() > static_cast<size_t>(info.arity))
    g.fail(name + " takes " + std::to_string(info.arity) + " argument" +
           (info.arity == 1 ? "" : "s") + " but " + std::to_string(a.pos.size()) + " were given");
  std::vector<Operand> ops;
  for (int i = 0; i < info.arity; ++i)
    ops.push_back(math_arg(g, a, i, name));
  Type t = ops[0].value->type.element();
  if (info.arity == 2)
    t = g.sem().computation_type(ops[0], ops[1], false);
  if (info.domain == ir::MathDomain::Float && !t.is_float())
    g.fail(name + " needs floating-point operands, not " + t.str() +
           "; convert with .to(tl.float32)");
  if (info.domain == ir::MathDomain::Int && (!t.is_int() || t.is_bool()))
    g.fail(name + " needs integer operands, not " + t.str());
  std::vector<ir::Value *> vals;
  Type shape = ops[0].value->type;
  for (const Operand &o : ops)
    shape = g.sem().broadcast_shapes(shape, o.value->type);
  for (const Operand &o : ops)
    vals.push_back(g.sem().broadcast_to(g.sem().cast(o.value, t), shape));
  const Type rt = info.result == ir::MathResult::Int32 ? Type::scalar(DType::i32) : t;
  return Val::tensor(
      g.sem().elementwise(OpKind::Math, static_cast<uint8_t>(fn), vals, shape.with_element(rt)));
}

template <int I> Val math_handler(IrGen &g, CallArgs &a) {
  return math_call(g, a, static_cast<MathFn>(I));
}

template <int... I> void add_math_fns(HandlerTable &t, std::integer_sequence<int, I...>) {
  ((t[std::string("tl.") + ir::math_fn_info(static_cast<MathFn>(I)).name] = math_handler<I>), ...);
}

// tl.softmax(x, dim=None, keep_dims=False, ieee_rounding=False): exp(x - max)
// / sum along `dim` (0 when None, as Triton). The reductions keep their dim
// so that any `dim` broadcasts back against x.
Val tl_softmax(IrGen &g, CallArgs &a) {
  const Val x = Val::tensor(tensor_arg(g, a, 0, "x", "tl.softmax"));
  if (!x.v->type.is_float())
    g.fail("tl.softmax needs a floating-point block, not " + x.v->type.str());
  const Val *d = optional_arg(a, 1, "dim");
  const Val dim = d ? *d : Val::constant(ConstValue::of_int(0));
  const std::pair<std::string, Val> keep{"keep_dims", Val::constant(ConstValue::of_bool(true))};
  Val z = Val::tensor(
      g.sem().binary(Op::Sub, {x.v}, {call_builtin_with(g, "tl.max", {x, dim}, {keep}).v}));
  Val num = call_builtin_with(g, "tl.exp", {z});
  Val den = call_builtin_with(g, "tl.sum", {num, dim}, {keep});
  return Val::tensor(g.sem().binary(Op::Div, {num.v}, {den.v}));
}

/// libdevice's llrint / llround: rounded, then converted to int64.
template <MathFn F> Val to_int64(IrGen &g, CallArgs &a) {
  Val r = math_call(g, a, F);
  return Val::tensor(g.sem().cast(r.v, Type::scalar(DType::i64)));
}

/// libdevice's reinterpretations (float_as_int, ...): a bitcast from `From`.
template <DType From, DType To> Val reinterpret(IrGen &g, CallArgs &a) {
  ir::Value *x = math_arg(g, a, 0, "libdevice's bit conversion").value;
  if (x->type.elem != From || x->type.pointer)
    g.fail("this libdevice conversion needs a " + Type::scalar(From).str() + " operand, not " +
           x->type.str());
  return Val::tensor(g.sem().bitcast(x, Type::scalar(To)));
}

template <Op O> Val arith(IrGen &g, CallArgs &a) {
  return Val::tensor(
      g.sem().binary(O, math_arg(g, a, 0, "libdevice"), math_arg(g, a, 1, "libdevice")));
}

Val rcp(IrGen &g, CallArgs &a) {
  Operand x = math_arg(g, a, 0, "libdevice.rcp_rn");
  return Val::tensor(g.sem().binary(Op::Div, g.to_operand(py_number(1.0), "1"), x));
}

Val saturate(IrGen &g, CallArgs &a) {
  const Val x = Val::tensor(math_arg(g, a, 0, "libdevice.saturatef").value);
  return call_builtin_with(g, "tl.clamp", {x, py_number(0.0), py_number(1.0)});
}

// ---- libdevice functions built from others ----

Val t(ir::Value *v) {
  return Val::tensor(v);
}
ir::Value *arg(IrGen &g, CallArgs &a, size_t i) {
  return math_arg(g, a, i, a.callee).value;
}
ir::Value *fn(IrGen &g, const char *name, std::vector<Val> args) {
  return call_builtin_with(g, name, std::move(args)).v;
}
/// `k * v`, k a Python float (so v keeps its type).
ir::Value *scaled(IrGen &g, double k, ir::Value *v) {
  return g.sem().binary(Op::Mul, g.to_operand(py_number(k), "k"), {v});
}
ir::Value *reciprocal(IrGen &g, ir::Value *v) {
  return g.sem().binary(Op::Div, g.to_operand(py_number(1.0), "1"), {v});
}

/// libdevice's float2int_rn & co.: rounded as the mode says, then converted.
Val convert(IrGen &g, CallArgs &a) {
  const auto c = libdevice_conversion(
      std::string_view(a.callee).substr(std::string_view("libdevice.").size()));
  ir::Value *x = g.sem().cast(arg(g, a, 0), Type::scalar(c->from));
  if (is_float(c->from) && !is_float(c->to)) {
    const char *round = c->mode == 'n'   ? "tl.rint"
                        : c->mode == 'z' ? "tl.trunc"
                        : c->mode == 'd' ? "tl.floor"
                                         : "tl.ceil";
    x = fn(g, round, {t(x)});
  }
  return t(g.sem().cast(x, Type::scalar(c->to)));
}

Val ldexp(IrGen &g, CallArgs &a) {
  ir::Value *x = arg(g, a, 0), *n = arg(g, a, 1);
  if (!x->type.is_float() || !n->type.is_int())
    g.fail(a.callee + " needs a float and an integer exponent, not " + x->type.str() + " and " +
           n->type.str());
  return t(
      g.sem().binary(Op::Mul, {x}, {fn(g, "tl.exp2", {t(g.sem().cast(n, x->type.element()))})}));
}

/// ffs: the 1-based position of the lowest set bit, 0 for 0.
Val ffs(IrGen &g, CallArgs &a) {
  ir::Value *x = arg(g, a, 0);
  if (!x->type.is_int() || x->type.is_bool())
    g.fail(a.callee + " needs an integer, not " + x->type.str());
  ir::Value *low = g.sem().binary(Op::BitAnd, {x}, {g.sem().negate(x)});
  ir::Value *width = g.builder().constant_int(Type::scalar(DType::i32), ir::bit_width(x->type));
  ir::Value *pos = g.sem().binary(Op::Sub, {width, true}, {fn(g, "tl.clz", {t(low)})});
  ir::Value *zero = g.builder().constant_int(x->type.element(), 0);
  return t(g.sem().where(g.sem().compare(Op::Eq, {x}, {zero, true}),
                         g.to_operand(Val::constant(ConstValue::of_int(0)), "0"), {pos}));
}

/// A 32-bit integer op computed in 64 bits, shifted right by `shift`.
template <Op O, int Add, int Shift> Val wide32(IrGen &g, CallArgs &a) {
  ir::Value *x = arg(g, a, 0), *y = arg(g, a, 1);
  const Type tt = g.sem().computation_type({x}, {y}, false);
  if (!tt.is_int() || ir::bit_width(tt) != 32)
    g.fail(a.callee + " is supported by kiln for 32-bit integers only, not " + tt.str());
  const Type wide = Type::scalar(tt.is_signed() ? DType::i64 : DType::u64);
  ir::Value *r = g.sem().binary(O, {g.sem().cast(x, wide)}, {g.sem().cast(y, wide)});
  if (Add)
    r = g.sem().binary(Op::Add, {r}, {g.builder().constant_int(wide, Add), true});
  r = g.sem().binary(Op::RShift, {r}, {g.builder().constant_int(wide, Shift), true});
  return t(g.sem().cast(r, tt));
}

Val normcdf(IrGen &g, CallArgs &a) {
  return t(scaled(g, 0.5, fn(g, "tl.erfc", {t(scaled(g, -0.7071067811865476, arg(g, a, 0)))})));
}
Val erfcinv(IrGen &g, CallArgs &a) {
  ir::Value *y = arg(g, a, 0);
  return t(
      fn(g, "tl.erfinv", {t(g.sem().binary(Op::Sub, g.to_operand(py_number(1.0), "1"), {y}))}));
}
Val normcdfinv(IrGen &g, CallArgs &a) {
  ir::Value *p2 = scaled(g, 2.0, arg(g, a, 0));
  ir::Value *e =
      fn(g, "tl.erfinv", {t(g.sem().binary(Op::Sub, g.to_operand(py_number(1.0), "1"), {p2}))});
  return t(scaled(g, -1.4142135623730951, e));
}
Val erfcx(IrGen &g, CallArgs &a) {
  ir::Value *x = arg(g, a, 0);
  return t(g.sem().binary(Op::Mul, {fn(g, "tl.exp", {t(g.sem().binary(Op::Mul, {x}, {x}))})},
                          {fn(g, "tl.erfc", {t(x)})}));
}
Val rhypot(IrGen &g, CallArgs &a) {
  return t(reciprocal(g, fn(g, "tl.hypot", {t(arg(g, a, 0)), t(arg(g, a, 1))})));
}
ir::Value *norm(IrGen &g, CallArgs &a, int n) {
  ir::Value *r = fn(g, "tl.hypot", {t(arg(g, a, 0)), t(arg(g, a, 1))});
  if (n == 3)
    return fn(g, "tl.hypot", {t(r), t(arg(g, a, 2))});
  return fn(g, "tl.hypot", {t(r), t(fn(g, "tl.hypot", {t(arg(g, a, 2)), t(arg(g, a, 3))}))});
}
Val norm3d(IrGen &g, CallArgs &a) {
  return t(norm(g, a, 3));
}
Val rnorm3d(IrGen &g, CallArgs &a) {
  return t(reciprocal(g, norm(g, a, 3)));
}
Val norm4d(IrGen &g, CallArgs &a) {
  return t(norm(g, a, 4));
}
Val rnorm4d(IrGen &g, CallArgs &a) {
  return t(reciprocal(g, norm(g, a, 4)));
}

} // namespace

const HandlerTable &math_handlers() {
  static const HandlerTable table = [] {
    HandlerTable t = {
        {"tl.nearbyint", math_handler<static_cast<int>(MathFn::Rint)>},
        {"tl.softmax", tl_softmax},
        {"libdevice.llrint", to_int64<MathFn::Rint>},
        {"libdevice.llround", to_int64<MathFn::Round>},
        {"libdevice.float_as_int", reinterpret<DType::f32, DType::i32>},
        {"libdevice.int_as_float", reinterpret<DType::i32, DType::f32>},
        {"libdevice.float_as_uint", reinterpret<DType::f32, DType::u32>},
        {"libdevice.uint_as_float", reinterpret<DType::u32, DType::f32>},
        {"libdevice.double_as_longlong", reinterpret<DType::f64, DType::i64>},
        {"libdevice.longlong_as_double", reinterpret<DType::i64, DType::f64>},
        {"libdevice.add_rn", arith<Op::Add>},
        {"libdevice.sub_rn", arith<Op::Sub>},
        {"libdevice.mul_rn", arith<Op::Mul>},
        {"libdevice.rcp_rn", rcp},
        {"libdevice.saturatef", saturate},
        {"libdevice.ldexp", ldexp},
        {"libdevice.ffs", ffs},
        {"libdevice.mulhi", wide32<Op::Mul, 0, 32>},
        {"libdevice.hadd", wide32<Op::Add, 0, 1>},
        {"libdevice.rhadd", wide32<Op::Add, 1, 1>},
        {"libdevice.normcdf", normcdf},
        {"libdevice.normcdfinv", normcdfinv},
        {"libdevice.erfcinv", erfcinv},
        {"libdevice.erfcx", erfcx},
        {"libdevice.rhypot", rhypot},
        {"libdevice.norm3d", norm3d},
        {"libdevice.rnorm3d", rnorm3d},
        {"libdevice.norm4d", norm4d},
        {"libdevice.rnorm4d", rnorm4d},
    };
    // The rounding-mode conversions, float2int_rn and the rest.
    for (const char *from : {"float", "double", "int", "uint", "ll", "ull"})
      for (const char *to : {"float", "double", "int", "uint", "ll", "ull"})
        for (const char *mode : {"_rn", "_rz", "_rd", "_ru"}) {
          const std::string name = std::string(from) + "2" + to + mode;
          if (libdevice_conversion(name))
            t["libdevice." + name] = convert;
        }
    add_math_fns(t, std::make_integer_sequence<int, ir::kNumMathFns>{});
    return t;
  }();
  return table;
}

} // namespace kiln::frontend
