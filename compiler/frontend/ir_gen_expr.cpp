// The IR generator's expressions: names, constants and their folding,
// operators, attributes, subscripts and calls of jit functions.
#include <cmath>
#include <limits>

#include "compiler/frontend/ir_gen_impl.hpp"
#include "compiler/frontend/libdevice_names.hpp"

namespace kiln::frontend {

using ir::OpKind;
using ir::Type;

namespace {

bool fits_i32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }

int64_t py_floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0)))
    --q;
  return q;
}

int64_t py_mod(int64_t a, int64_t b) {
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0)))
    r += b;
  return r;
}

std::optional<DType> language_dtype(const std::string &n) {
  static const std::map<std::string, DType> names = {
      {"int1", DType::i1},      {"int8", DType::i8},      {"int16", DType::i16},
      {"int32", DType::i32},    {"int64", DType::i64},    {"uint8", DType::u8},
      {"uint16", DType::u16},   {"uint32", DType::u32},   {"uint64", DType::u64},
      {"float16", DType::f16},  {"bfloat16", DType::bf16}, {"float32", DType::f32},
      {"float64", DType::f64},  {"float", DType::f32},    {"half", DType::f16},
      {"double", DType::f64},   {"float8e4nv", DType::f8e4nv}, {"float8e5", DType::f8e5},
      {"float8e4b15", DType::f8e4b15}, {"float8e4b8", DType::f8e4b8}, {"float8e5b16", DType::f8e5b16}};
  auto it = names.find(n);
  if (it == names.end())
    return std::nullopt;
  return it->second;
}

} // namespace

ConstValue fold_binary(Op op, const ConstValue &a, const ConstValue &b, const SourceFile &src,
                       Loc loc) {
  using K = ConstValue::Kind;
  if (!a.is_number() || !b.is_number()) {
    if (op == Op::Add && a.kind == K::Str && b.kind == K::Str)
      return ConstValue::of_str(a.s + b.s);
    throw src.error(loc, std::string("operator '") + op_spelling(op) + "' is not defined for " +
                             a.repr() + " and " + b.repr());
  }
  const bool is_float = a.kind == K::Float || b.kind == K::Float;
  if (is_float) {
    const double x = a.as_double(), y = b.as_double();
    switch (op) {
    case Op::Add: return ConstValue::of_float(x + y);
    case Op::Sub: return ConstValue::of_float(x - y);
    case Op::Mul: return ConstValue::of_float(x * y);
    case Op::Div:
      if (y == 0)
        throw src.error(loc, "division by zero in a constant expression");
      return ConstValue::of_float(x / y);
    case Op::FloorDiv:
      if (y == 0)
        throw src.error(loc, "division by zero in a constant expression");
      return ConstValue::of_float(std::floor(x / y));
    case Op::Mod: {
      if (y == 0)
        throw src.error(loc, "modulo by zero in a constant expression");
      double r = std::fmod(x, y);
      if (r != 0 && ((r < 0) != (y < 0)))
        r += y;
      return ConstValue::of_float(r);
    }
    case Op::Pow: return ConstValue::of_float(std::pow(x, y));
    default:
      throw src.error(loc, std::string("operator '") + op_spelling(op) + "' needs integer operands");
    }
  }
  const int64_t x = a.kind == K::Bool ? a.b : a.i, y = b.kind == K::Bool ? b.b : b.i;
  const bool both_bool = a.kind == K::Bool && b.kind == K::Bool;
  // Python's ints are unbounded; kiln's constexprs are int64, so say when a
  // constant leaves that range instead of wrapping (or worse, UB).
  // (The flag is computed before the call: argument order is unspecified.)
  auto checked = [&](bool overflowed, const int64_t &result) {
    if (overflowed)
      throw src.error(loc, "this constant expression overflows int64 (" + a.repr() + " " + op_spelling(op) + " " +
                               b.repr() + "); kiln's compile-time integers are 64-bit");
    return ConstValue::of_int(result);
  };
  int64_t r = 0;
  bool over = false;
  switch (op) {
  case Op::Add:
    over = __builtin_add_overflow(x, y, &r);
    return checked(over, r);
  case Op::Sub:
    over = __builtin_sub_overflow(x, y, &r);
    return checked(over, r);
  case Op::Mul:
    over = __builtin_mul_overflow(x, y, &r);
    return checked(over, r);
  case Op::Div:
    if (y == 0)
      throw src.error(loc, "division by zero in a constant expression");
    return ConstValue::of_float(double(x) / double(y));
  case Op::FloorDiv:
    if (y == 0)
      throw src.error(loc, "division by zero in a constant expression");
    if (x == INT64_MIN && y == -1)
      return checked(true, 0);
    return ConstValue::of_int(py_floordiv(x, y));
  case Op::Mod:
    if (y == 0)
      throw src.error(loc, "modulo by zero in a constant expression");
    if (y == -1)
      return ConstValue::of_int(0);
    return ConstValue::of_int(py_mod(x, y));
  case Op::Pow: {
    if (y < 0)
      return ConstValue::of_float(std::pow(double(x), double(y)));
    // By squaring: O(log y), and any overflow is reported.
    int64_t result = 1, base = x;
    bool overflow = false;
    for (int64_t e = y; e > 0 && !overflow; e >>= 1) {
      if (e & 1)
        overflow |= __builtin_mul_overflow(result, base, &result);
      if (e > 1)
        overflow |= __builtin_mul_overflow(base, base, &base);
    }
    return checked(overflow, result);
  }
  case Op::LShift:
    if (y < 0)
      throw src.error(loc, "negative shift count in a constant expression");
    return ConstValue::of_int(y >= 64 ? 0 : int64_t(uint64_t(x) << y));
  case Op::RShift:
    if (y < 0)
      throw src.error(loc, "negative shift count in a constant expression");
    return ConstValue::of_int(y >= 64 ? (x < 0 ? -1 : 0) : x >> y);
  case Op::BitAnd: return both_bool ? ConstValue::of_bool(x & y) : ConstValue::of_int(x & y);
  case Op::BitOr: return both_bool ? ConstValue::of_bool(x | y) : ConstValue::of_int(x | y);
  case Op::BitXor: return both_bool ? ConstValue::of_bool(x ^ y) : ConstValue::of_int(x ^ y);
  default:
    throw src.error(loc, std::string("operator '") + op_spelling(op) + "' is not supported here");
  }
}

ir::Value *IrGen::to_tensor(const Val &v, const char *what) {
  switch (v.kind) {
  case Val::Kind::Tensor: return v.v;
  case Val::Kind::Const:
    switch (v.c.kind) {
    case ConstValue::Kind::Int:
      // Triton's to_tensor: int32, else uint32 up to 2^32 (0xFFFFFFFF), else int64.
      return builder().constant_int(Type::scalar(fits_i32(v.c.i) ? DType::i32
                                                 : v.c.i >= 0 && v.c.i <= int64_t{UINT32_MAX}
                                                     ? DType::u32
                                                     : DType::i64),
                                    v.c.i);
    case ConstValue::Kind::Float: return builder().constant_float(Type::scalar(DType::f32), v.c.f);
    case ConstValue::Kind::Bool: return builder().constant_int(Type::scalar(DType::i1), v.c.b);
    default: break;
    }
    fail(std::string(what) + " must be a tensor or a number, not " + v.c.repr());
  default: fail(std::string(what) + " must be a tensor or a number");
  }
}

Operand IrGen::to_operand(const Val &v, const char *what) {
  return Operand{to_tensor(v, what), v.is_const()};
}

int64_t IrGen::const_int(const Val &v, const char *what) {
  if (v.is_const() && v.c.kind == ConstValue::Kind::Int)
    return v.c.i;
  if (v.is_const() && v.c.kind == ConstValue::Kind::Bool)
    return v.c.b;
  fail(std::string(what) + " must be a compile-time integer (a literal or a tl.constexpr)");
}

Type IrGen::const_dtype(const Val &v, const char *what) {
  if (v.kind == Val::Kind::DType)
    return v.type;
  fail(std::string(what) + " must be a dtype such as tl.float32");
}

std::vector<int64_t> IrGen::const_shape(const Val &v, const char *what) {
  std::vector<int64_t> dims;
  if (v.kind == Val::Kind::Tuple) {
    for (const Val &e : v.elems)
      dims.push_back(const_int(e, what));
  } else {
    dims.push_back(const_int(v, what));
  }
  // () is a 0-d block, which kiln represents as a scalar.
  if (dims.size() > Type::kMaxRank)
    fail(std::string(what) + " has " + std::to_string(dims.size()) +
         " dimensions; kiln's blocks have at most " + std::to_string(Type::kMaxRank) +
         " (Triton allows more)");
  int64_t numel = 1;
  for (int64_t d : dims) {
    if (d <= 0 || (d & (d - 1)) != 0)
      fail(std::string(what) + " must be powers of two, got " + std::to_string(d));
    numel *= d;
  }
  if (numel > (1 << 20))
    fail(std::string(what) + " has " + std::to_string(numel) +
         " elements; a block holds at most 1048576 (as in Triton)");
  return dims;
}

namespace {

Val namespace_val(ModuleAlias a) {
  Val r;
  r.kind = Val::Kind::Namespace;
  switch (a) {
  case ModuleAlias::Triton: r.ns = Val::Ns::Triton; break;
  case ModuleAlias::Language: r.ns = Val::Ns::Language; break;
  case ModuleAlias::LanguageMath: r.ns = Val::Ns::LanguageMath; break;
  case ModuleAlias::Extra: r.ns = Val::Ns::Extra; break;
  case ModuleAlias::Libdevice: r.ns = Val::Ns::Libdevice; break;
  case ModuleAlias::Math: r.ns = Val::Ns::Math; break;
  }
  return r;
}

} // namespace

std::optional<Val> IrGen::module_name(const ModuleInfo &mod, const std::string &name, Loc loc) {
  if (const JitFunctionInfo *fn = mod.visible_function(name)) {
    Val r;
    r.kind = Val::Kind::Function;
    r.fn = fn;
    return r;
  }
  // The host may have changed the globals of any module (set_global), so
  // read the current values the request carries, and record every read.
  const compiler::GlobalValues *values = &mod.globals;
  if (&mod == kernel_.module)
    values = &globals_;
  else if (other_globals_)
    if (auto m = other_globals_->find(&mod); m != other_globals_->end())
      values = &m->second;
  const GlobalInfo *g = nullptr;
  if (auto it = values->find(name); it != values->end())
    g = &it->second;
  if (g) {
    if (!g->is_constexpr)
      fail(loc, "cannot access global variable '" + name +
                    "' from within a @jit function: kernels can only read globals made with "
                    "tl.constexpr(...), e.g. `" + name + " = tl.constexpr(" + g->value.repr() +
                    ")` (annotating it as `" + name + ": tl.constexpr = ...` is not enough)");
    used_globals[{&mod, name}] = g->value;
    return Val::constant(g->value);
  }
  if (auto it = mod.aliases.find(name); it != mod.aliases.end())
    return namespace_val(it->second);
  if (auto it = mod.language_names.find(name); it != mod.language_names.end())
    return attribute(namespace_val(it->second.first), it->second.second, loc);
  if (auto it = mod.imported_modules.find(name); it != mod.imported_modules.end()) {
    Val r;
    r.kind = Val::Kind::Namespace;
    r.ns = Val::Ns::Module;
    r.mod = it->second;
    return r;
  }
  if (auto it = mod.compile_time_functions.find(name);
      it != mod.compile_time_functions.end() &&
      (it->second->constexpr_decorated || compile_time_depth_ > 0)) {
    Val r;
    r.kind = Val::Kind::Function;
    r.fn = it->second.get();
    return r;
  }
  if (auto it = mod.host_names.find(name); it != mod.host_names.end())
    fail(loc, "'" + frame_->fn->name + "' reads '" + name + "', which " + mod.ast.source->path() + ":" +
                  std::to_string(it->second.loc.line) + " binds to " + it->second.what +
                  "; a kernel can use only its parameters, tl.constexpr(...) globals, triton and "
                  "other @triton.jit functions");
  return std::nullopt;
}

Val IrGen::lookup(const std::string &name, Loc loc) {
  if (auto it = frame_->scope.find(name); it != frame_->scope.end())
    return it->second;
  const ModuleInfo &mod = *frame_->fn->module;
  if (std::optional<Val> v = module_name(mod, name, loc))
    return *v;
  static const char *py_builtins[] = {"range", "min", "max", "int", "float", "len", "abs", "bool",
                                      "print", "isinstance", "tuple", "list", "str"};
  for (const char *b : py_builtins)
    if (name == b)
      return Val::builtin(std::string("py.") + b);
  if (auto it = frame_->scoped_out.find(name); it != frame_->scoped_out.end())
    fail(loc, "name '" + name + "' is not defined here: it is assigned " + it->second);
  if (name == "tl" || name == "triton")
    fail(loc, "name '" + name +
                  "' is not defined; add `import triton` and "
                  "`import triton.language as tl` at the top of the file");
  fail(loc, "name '" + name +
                "' is not defined; assign it before this line, make it a parameter of '" +
                frame_->fn->name +
                "', or define it at module level (NAME = tl.constexpr(...) or a "
                "@triton.jit function)");
}

Val IrGen::attribute(const Val &base, const std::string &attr, Loc loc) {
  switch (base.kind) {
  case Val::Kind::Namespace:
    switch (base.ns) {
    case Val::Ns::Triton:
      if (attr == "language") {
        Val r = base;
        r.ns = Val::Ns::Language;
        return r;
      }
      if (attr == "cdiv")
        return Val::builtin("tl.cdiv");
      if (attr ==
          "next_power_of_2") // host helper that Triton runs on constexprs (FlagGems' block sizes)
        return Val::builtin("triton.next_power_of_2");
      break;
    case Val::Ns::Language:
      if (attr == "math") {
        Val r = base;
        r.ns = Val::Ns::LanguageMath;
        return r;
      }
      if (attr == "extra") {
        Val r = base;
        r.ns = Val::Ns::Extra;
        return r;
      }
      if (attr == "core" || attr == "standard") // submodules tl re-exports
        return base;
      if (auto t = language_dtype(attr))
        return Val::dtype(Type::scalar(*t));
      if (attr.rfind("float8", 0) == 0)
        fail(loc, "tl." + attr + " is not an fp8 dtype kiln knows; kiln has tl.float8e4nv, tl.float8e5, "
                  "tl.float8e4b15, tl.float8e4b8 and tl.float8e5b16");
      return Val::builtin("tl." + attr);
    case Val::Ns::LanguageMath: return Val::builtin("tl." + attr);
    case Val::Ns::Extra:
      if (attr == "cuda")
        return base; // triton.language.extra.cuda.libdevice is the same module
      if (attr == "libdevice") {
        Val r = base;
        r.ns = Val::Ns::Libdevice;
        return r;
      }
      if (attr == "gdc_wait" || attr == "gdc_launch_dependents")
        return Val::builtin("tl.extra." + attr);
      break;
    case Val::Ns::Libdevice:
      if (auto b = libdevice_builtin(attr))
        return Val::builtin(*b);
      return Val::builtin("libdevice." + attr);
    case Val::Ns::Module:
      if (std::optional<Val> v = module_name(*base.mod, attr, loc))
        return *v;
      fail(loc, "module " + base.mod->ast.source->path() + " has no @triton.jit function or tl.constexpr global '" +
                    attr + "'");
    case Val::Ns::Math:
      if (attr == "pi")
        return Val::constant(ConstValue::of_float(M_PI));
      if (attr == "e")
        return Val::constant(ConstValue::of_float(M_E));
      if (attr == "inf")
        return Val::constant(ConstValue::of_float(std::numeric_limits<double>::infinity()));
      if (attr == "nan")
        return Val::constant(ConstValue::of_float(std::numeric_limits<double>::quiet_NaN()));
      return Val::builtin("math." + attr);
    }
    fail(loc, "'" + attr + "' is not part of the triton module kiln supports");
  case Val::Kind::Tensor: {
    const Type &t = base.v->type;
    if (attr == "dtype")
      return Val::dtype(t.element());
    if (attr == "type") // a block type (rank > 0) or the scalar's dtype
      return Val::dtype(t);
    if (attr == "shape") {
      std::vector<Val> dims;
      for (int d = 0; d < t.rank; ++d)
        dims.push_back(Val::constant(ConstValue::of_int(t.shape[d])));
      return Val::tuple(std::move(dims));
    }
    if (attr == "numel") { // a constexpr in Triton, as the shape is
      int64_t n = 1;
      for (int d = 0; d < t.rank; ++d)
        n *= t.shape[d];
      return Val::constant(ConstValue::of_int(n));
    }
    if (attr == "T")
      return Val::tensor(sem().trans(base.v, {1, 0}));
    return Val::method(attr, base);
  }
  case Val::Kind::DType: return dtype_attribute(base, attr, loc);
  case Val::Kind::Builtin:
    // Triton's enum values, as the ints its IR takes.
    if (base.name == "tl.PropagateNan" && (attr == "ALL" || attr == "NONE"))
      return Val::constant(ConstValue::of_int(attr == "ALL" ? 0xFFFF : 0));
    break;
  case Val::Kind::Const:
    if (attr == "value")
      return base;
    // Triton turns a constexpr assigned to a plain variable into a scalar
    // tensor, so `n = BLOCK; n.to(tl.uint32)` is valid there.
    if (attr == "to" && base.c.is_number())
      return Val::method(attr, Val::tensor(to_tensor(base, "the value")));
    break;
  case Val::Kind::Tuple:
    if (!base.name.empty()) // a block pointer or tensor descriptor
      return tagged_tuple_attribute(*this, base, attr);
    break;
  default: break;
  }
  fail(loc, "this value has no attribute '" + attr + "'");
}

/// `+` and `*` on compile-time sequences, as Python defines them on the
/// lists and tuples of a jit function: concatenation and repetition
/// (lmdeploy's bitonic sort reshapes to `[1] * (n - j - 1) + [2] + [1] * j`).
Val IrGen::sequence_binop(Op op, const Val &a, const Val &b, Loc loc) {
  const bool plain_a = a.kind == Val::Kind::Tuple && a.name.empty();
  const bool plain_b = b.kind == Val::Kind::Tuple && b.name.empty();
  if (op == Op::Add && plain_a && plain_b) {
    std::vector<Val> elems = a.elems;
    elems.insert(elems.end(), b.elems.begin(), b.elems.end());
    return Val::tuple(std::move(elems));
  }
  if (op == Op::Mul && (plain_a != plain_b)) {
    const Val &seq = plain_a ? a : b;
    const Val &count = plain_a ? b : a;
    if (count.is_const() &&
        (count.c.kind == ConstValue::Kind::Int || count.c.kind == ConstValue::Kind::Bool)) {
      const int64_t n = count.c.kind == ConstValue::Kind::Bool ? count.c.b : count.c.i;
      constexpr int64_t kMaxElems = 1 << 16; // far over any shape or static loop a kernel builds
      if (n > 0 && static_cast<int64_t>(seq.elems.size()) > kMaxElems / n)
        fail(loc, "repeating a sequence of " + std::to_string(seq.elems.size()) + " values " +
                      std::to_string(n) + " times gives more than " + std::to_string(kMaxElems) +
                      " values");
      std::vector<Val> elems;
      for (int64_t i = 0; i < n; ++i)
        elems.insert(elems.end(), seq.elems.begin(), seq.elems.end());
      return Val::tuple(std::move(elems));
    }
  }
  fail(loc, std::string("operator '") + op_spelling(op) +
                "' on a list or tuple: kernels can concatenate two (`a + b`) and repeat one by a "
                "compile-time "
                "int (`[2] * n`), as Python does");
}

Val IrGen::binop(Op op, const Val &a, const Val &b, Loc loc) {
  builder().set_loc(loc);
  if (a.is_const() && b.is_const())
    return Val::constant(fold_binary(op, a.c, b.c, *source_, loc));
  if (a.kind == Val::Kind::Tuple || b.kind == Val::Kind::Tuple)
    return sequence_binop(op, a, b, loc);
  if (op == Op::Pow)
    return power(a, b, loc);
  if (op == Op::MatMul)
    fail(loc, "the @ operator is not supported; use tl.dot(a, b)");
  return Val::tensor(sem().binary(op, to_operand(a, "the left operand"), to_operand(b, "the right operand")));
}

Val IrGen::power(const Val &base, const Val &exp, Loc loc) {
  if (!exp.is_const() || exp.c.kind != ConstValue::Kind::Int || exp.c.i < 0 || exp.c.i > 64)
    fail(loc, "'**' needs a compile-time non-negative integer exponent (at most 64) in kernels");
  Operand x = to_operand(base, "the base");
  if (exp.c.i == 0) {
    ir::Value *one = x.value->type.is_float() ? builder().constant_float(x.value->type.element(), 1)
                                              : builder().constant_int(x.value->type.element(), 1);
    return Val::tensor(sem().broadcast_to(one, x.value->type));
  }
  ir::Value *r = x.value;
  for (int64_t i = 1; i < exp.c.i; ++i)
    r = sem().binary(Op::Mul, {r}, x);
  return Val::tensor(r);
}

Val IrGen::unaryop(Op op, const Val &a, Loc loc) {
  builder().set_loc(loc);
  if (a.is_const()) {
    const ConstValue &c = a.c;
    switch (op) {
    case Op::Not: return Val::constant(ConstValue::of_bool(!c.truthy()));
    case Op::UAdd: return a;
    case Op::USub:
      if (c.kind == ConstValue::Kind::Float)
        return Val::constant(ConstValue::of_float(-c.f));
      if (c.is_number()) {
        if (c.kind == ConstValue::Kind::Int && c.i == INT64_MIN)
          fail(loc, "this constant expression overflows int64; kiln's compile-time integers are 64-bit");
        return Val::constant(ConstValue::of_int(-(c.kind == ConstValue::Kind::Bool ? c.b : c.i)));
      }
      break;
    case Op::Invert:
      if (c.kind == ConstValue::Kind::Int || c.kind == ConstValue::Kind::Bool)
        return Val::constant(ConstValue::of_int(~(c.kind == ConstValue::Kind::Bool ? int64_t(c.b) : c.i)));
      break;
    default: break;
    }
    fail(loc, std::string("operator '") + op_spelling(op) + "' is not defined for " + c.repr());
  }
  ir::Value *v = to_tensor(a, "the operand");
  switch (op) {
  case Op::USub: return Val::tensor(sem().negate(v));
  case Op::UAdd: return a;
  case Op::Invert: return Val::tensor(sem().invert(v));
  case Op::Not: return Val::tensor(sem().logical_not(v));
  default: fail(loc, "unsupported unary operator");
  }
}

Val IrGen::compare(Op op, const Val &a, const Val &b, Loc loc) {
  builder().set_loc(loc);
  if (op == Op::Is || op == Op::IsNot) {
    // Only None is None: a tensor, a tuple constexpr (`boundary_check:
    // tl.constexpr = (1,)`), a function or a dtype tested against None folds
    // as in Triton, where `x is None` is Python's identity test.
    if (a.is_none() != b.is_none())
      return Val::constant(ConstValue::of_bool(op == Op::IsNot));
    if (!(a.is_const() || a.kind == Val::Kind::DType) || !(b.is_const() || b.kind == Val::Kind::DType))
      fail(loc, "'is' is only supported between compile-time values (e.g. `x is None`)");
    const bool same = a.same_as(b);
    return Val::constant(ConstValue::of_bool(op == Op::Is ? same : !same));
  }
  if (a.kind == Val::Kind::DType && b.kind == Val::Kind::DType && (op == Op::Eq || op == Op::Ne))
    return Val::constant(ConstValue::of_bool((a.type == b.type) == (op == Op::Eq)));
  if (a.is_const() && b.is_const()) {
    const ConstValue &x = a.c, &y = b.c;
    if (x.is_number() && y.is_number()) {
      const bool ints = x.kind != ConstValue::Kind::Float && y.kind != ConstValue::Kind::Float;
      const double dx = x.as_double(), dy = y.as_double();
      const int64_t ix = x.kind == ConstValue::Kind::Bool ? x.b : x.i,
                    iy = y.kind == ConstValue::Kind::Bool ? y.b : y.i;
      bool r;
      switch (op) {
      case Op::Lt: r = ints ? ix < iy : dx < dy; break;
      case Op::Le: r = ints ? ix <= iy : dx <= dy; break;
      case Op::Gt: r = ints ? ix > iy : dx > dy; break;
      case Op::Ge: r = ints ? ix >= iy : dx >= dy; break;
      case Op::Eq: r = ints ? ix == iy : dx == dy; break;
      case Op::Ne: r = ints ? ix != iy : dx != dy; break;
      default: fail(loc, std::string("comparison '") + op_spelling(op) + "' is not supported");
      }
      return Val::constant(ConstValue::of_bool(r));
    }
    if (op == Op::Eq || op == Op::Ne)
      return Val::constant(ConstValue::of_bool((x == y) == (op == Op::Eq)));
    fail(loc, "cannot compare " + x.repr() + " and " + y.repr());
  }
  return Val::tensor(sem().compare(op, to_operand(a, "the left operand"), to_operand(b, "the right operand")));
}

Val IrGen::subscript(const Expr &e) {
  Val base = eval(*e.children[0]);
  builder().set_loc(e.loc);
  if (base.kind == Val::Kind::Tuple) {
    if (e.children.size() != 2)
      fail(e.loc, "a tuple takes one index");
    int64_t i = const_int(eval(*e.children[1]), "a tuple index");
    if (i < 0)
      i += static_cast<int64_t>(base.elems.size());
    if (i < 0 || i >= static_cast<int64_t>(base.elems.size()))
      fail(e.loc, "tuple index " + std::to_string(i) + " is out of range");
    return base.elems[i];
  }
  if (!base.is_tensor())
    fail(e.loc, "only tensors and tuples can be indexed");
  ir::Value *v = base.v;
  int dim = 0;
  for (size_t k = 1; k < e.children.size(); ++k) {
    const Expr &idx = *e.children[k];
    if (idx.kind == ExprKind::None) {
      v = sem().expand_dims(v, dim++);
    } else if (idx.kind == ExprKind::Slice && !idx.children[0] && !idx.children[1] &&
               !idx.children[2]) {
      if (dim >= v->type.rank)
        fail(idx.loc, "too many indices for " + v->type.str());
      ++dim;
    } else {
      fail(idx.loc, "only None and ':' are supported as tensor indices (as in Triton)");
    }
  }
  return Val::tensor(v);
}

// The cases of eval with locals of their own, out of line: eval recurses
// once per level of an expression (990 levels of `x + 1 + ...` are allowed),
// and its frame would otherwise hold every case's locals at every level
// (under AddressSanitizer, with redzones, 990 levels overflowed 8 MB).
Val IrGen::eval_call(const Expr &e) {
  for (size_t i = 1; i < e.children.size(); ++i)
    if (e.children[i]->kind == ExprKind::Starred)
      fail(e.children[i]->loc, "argument unpacking ('*') is not supported inside a @triton.jit "
                               "function; pass the arguments one by one");
  for (const Keyword &k : e.keywords)
    if (k.name.empty())
      fail(k.loc, "keyword argument unpacking ('**') is not supported inside a @triton.jit "
                  "function; pass the arguments by name");
  Val fn = eval(*e.children[0]);
  CallArgs args = eval_args(e);
  builder().set_loc(e.loc);
  return call(fn, args, e.loc);
}

CallArgs IrGen::eval_args(const Expr &call) {
  CallArgs args;
  args.expr = &call;
  for (size_t i = 1; i < call.children.size(); ++i)
    args.pos.push_back(eval(*call.children[i]));
  for (const Keyword &k : call.keywords)
    args.kw.emplace_back(k.name, eval(*k.value));
  return args;
}

Val IrGen::eval_compare(const Expr &e) {
  Val left = eval(*e.children[0]);
  Val result;
  for (size_t i = 0; i < e.cmp_ops.size(); ++i) {
    Val right = eval(*e.children[i + 1]);
    Val r = compare(e.cmp_ops[i], left, right, e.loc);
    if (i == 0)
      result = r;
    else
      result = r.is_const() && result.is_const()
                   ? Val::constant(ConstValue::of_bool(result.c.truthy() && r.c.truthy()))
                   : binop(Op::BitAnd, result, r, e.loc);
    left = right;
  }
  return result;
}

Val IrGen::eval_boolop(const Expr &e) {
  // Python semantics on constants (short circuit, yields an operand);
  // elementwise logical and/or on scalar tensors.
  Val acc = eval(*e.children[0]);
  for (size_t i = 1; i < e.children.size(); ++i) {
    if (acc.is_const()) {
      const bool t = acc.c.truthy();
      if ((e.op == Op::And && !t) || (e.op == Op::Or && t))
        return acc;
      acc = eval(*e.children[i]);
      continue;
    }
    Val rhs = eval(*e.children[i]);
    builder().set_loc(e.loc);
    ir::Value *x = sem().to_bool(to_tensor(acc, "the left operand"));
    ir::Value *y = sem().to_bool(to_tensor(rhs, "the right operand"));
    // On blocks elementwise, as Triton's logical_and / logical_or.
    acc = Val::tensor(sem().binary(e.op == Op::And ? Op::BitAnd : Op::BitOr, {x}, {y}));
  }
  return acc;
}

Val IrGen::eval_ifexp(const Expr &e) {
  Val test = eval(*e.children[0]);
  if (test.is_const())
    return eval(*e.children[test.c.truthy() ? 1 : 2]);
  // `1.0 if i == target else 0.0` on runtime scalars: Triton branches; both
  // sides are expressions without side effects here, so a select is the same.
  ir::Value *cond = to_tensor(test, "the condition");
  if (cond->type.is_block())
    fail(e.loc, "a conditional expression needs a scalar condition; use tl.where for blocks");
  Val a = eval(*e.children[1]), b = eval(*e.children[2]);
  builder().set_loc(e.loc);
  return Val::tensor(sem().where(sem().to_bool(cond), to_operand(a, "the true value"),
                                 to_operand(b, "the false value")));
}

void IrGen::eval_unsupported(const Expr &e) {
  fail(e.loc,
       std::string(describe(e.kind)) + " are not supported inside a @triton.jit function" +
           (e.kind == ExprKind::Lambda ? "; define a @triton.jit function and call it" : ""));
}

Val IrGen::eval(const Expr &e) {
  builder().set_loc(e.loc);
  switch (e.kind) {
  case ExprKind::Name: return lookup(e.id, e.loc);
  case ExprKind::Int:
    if (e.int_value > static_cast<uint64_t>(INT64_MAX))
      fail(e.loc, "integer literal " + (e.id.empty() ? std::to_string(e.int_value) : e.id) +
                      " does not fit in int64");
    return Val::constant(ConstValue::of_int(static_cast<int64_t>(e.int_value)));
  case ExprKind::Float: return Val::constant(ConstValue::of_float(e.float_value));
  case ExprKind::Bool: return Val::constant(ConstValue::of_bool(e.bool_value));
  case ExprKind::None: return Val::constant(ConstValue::none());
  case ExprKind::Str: return Val::constant(ConstValue::of_str(e.id));
  case ExprKind::Attribute: {
    Val base = eval(*e.children[0]);
    return attribute(base, e.id, e.loc);
  }
  case ExprKind::Call:
    return eval_call(e);
  case ExprKind::Subscript: return subscript(e);
  case ExprKind::Slice: fail(e.loc, "a slice is only allowed as a tensor index");
  case ExprKind::Tuple:
  case ExprKind::List: {
    std::vector<Val> elems;
    for (const ExprPtr &c : e.children)
      elems.push_back(eval(*c));
    return Val::tuple(std::move(elems));
  }
  case ExprKind::BinOp: {
    Val a = eval(*e.children[0]);
    Val b = eval(*e.children[1]);
    return binop(e.op, a, b, e.loc);
  }
  case ExprKind::UnaryOp: return unaryop(e.op, eval(*e.children[0]), e.loc);
  case ExprKind::Compare:
    return eval_compare(e);
  case ExprKind::BoolOp:
    return eval_boolop(e);
  case ExprKind::IfExp:
    return eval_ifexp(e);
  case ExprKind::Lambda:
  case ExprKind::Dict:
  case ExprKind::Set:
  case ExprKind::ListComp:
  case ExprKind::SetComp:
  case ExprKind::DictComp:
  case ExprKind::GeneratorExp:
  case ExprKind::Await:
  case ExprKind::Yield:
  case ExprKind::YieldFrom:
  case ExprKind::NamedExpr:
  case ExprKind::Starred:
  case ExprKind::JoinedStr:
  case ExprKind::FormattedValue:
  case ExprKind::Bytes:
  case ExprKind::Ellipsis:
  case ExprKind::Complex:
  case ExprKind::Comprehension:
  case ExprKind::MatchValue:
  case ExprKind::MatchSingleton:
  case ExprKind::MatchSequence:
  case ExprKind::MatchMapping:
  case ExprKind::MatchClass:
  case ExprKind::MatchStar:
  case ExprKind::MatchAs:
  case ExprKind::MatchOr:
  case ExprKind::TypeVar:
  case ExprKind::ParamSpec:
  case ExprKind::TypeVarTuple:
    eval_unsupported(e); // Python the parser takes anywhere, but that a kernel cannot mean
  }
  fail(e.loc, "unsupported expression");
}

// ---- calls ----

Val IrGen::call(const Val &fn, CallArgs &args, Loc loc) {
  switch (fn.kind) {
  case Val::Kind::Builtin: return call_builtin(fn.name, args);
  case Val::Kind::Function: return call_jit(*fn.fn, args, loc);
  case Val::Kind::Const:
    if (fn.c.kind == ConstValue::Kind::Function)
      return call_jit(*fn.c.fn, args, loc);
    break;
  case Val::Kind::Method: {
    CallArgs with_self;
    with_self.expr = args.expr;
    with_self.pos.push_back(fn.elems[0]);
    with_self.pos.insert(with_self.pos.end(), args.pos.begin(), args.pos.end());
    with_self.kw = args.kw;
    // Tensor methods are tl.* builtins; dtype methods ("dtype.is_fp16") are named in full.
    const std::string name = fn.name == "to"                           ? "tl.cast"
                             : fn.name.find('.') != std::string::npos ? fn.name
                                                                      : "tl." + fn.name;
    return call_builtin(name, with_self);
  }
  case Val::Kind::DType: {
    // tl.float32(x) converts, as x.to(tl.float32).
    if (args.pos.size() != 1 || !args.kw.empty())
      fail(loc, "a dtype called as a function takes one value to convert");
    CallArgs cast;
    cast.pos = {args.pos[0], fn};
    return call_builtin("tl.cast", cast);
  }
  default: break;
  }
  fail(loc, "this value is not callable");
}

Val IrGen::call_function(const Val &fn, std::vector<Val> args, Loc loc) {
  const bool jit = fn.kind == Val::Kind::Function || (fn.is_const() && fn.c.kind == ConstValue::Kind::Function);
  if (!jit)
    fail(loc, "expected a @triton.jit function here (such as a combine_fn)");
  CallArgs a;
  a.pos = std::move(args);
  return call(fn, a, loc);
}

Val IrGen::call_jit(const JitFunctionInfo &fn, CallArgs &args, Loc loc) {
  fn.check();
  if (call_depth_ > 32)
    fail(loc, "calls nest more than 32 deep; recursion is not supported in kernels");
  // Bind like Python: positional, then keywords, then defaults.
  Scope bound;
  if (args.pos.size() > fn.params.size())
    fail(loc, "'" + fn.name + "' takes " + std::to_string(fn.params.size()) + " arguments but " +
                  std::to_string(args.pos.size()) + " were given");
  for (size_t i = 0; i < args.pos.size(); ++i)
    bound[fn.params[i].name] = args.pos[i];
  for (const auto &[k, v] : args.kw) {
    bool found = false;
    for (const ParamInfo &p : fn.params)
      found |= p.name == k;
    if (!found)
      fail(loc, "'" + fn.name + "' has no parameter named '" + k + "'");
    if (bound.count(k))
      fail(loc, "'" + fn.name + "' got two values for parameter '" + k + "'");
    bound[k] = v;
  }
  for (const ParamInfo &p : fn.params) {
    if (bound.count(p.name))
      continue;
    if (!p.default_value)
      fail(loc, "missing argument '" + p.name + "' in the call to '" + fn.name + "'");
    bound[p.name] = Val::constant(*p.default_value);
  }
  // As in Triton, a callee's tl.constexpr annotations are not checked: a
  // tensor passed there stays a tensor (the attention tutorial does this).

  if (fn.compile_time)
    return call_compile_time(fn, std::move(bound), loc);
  if (fn.noinline)
    return call_noinline(fn, bound, loc);
  return call_inline(fn, std::move(bound), loc);
}

namespace {

/// A value Python code could hold at compile time: a constant, a dtype, or
/// a tuple of them.
bool compile_time_value(const Val &v) {
  if (v.kind == Val::Kind::Tuple) {
    for (const Val &e : v.elems)
      if (!compile_time_value(e))
        return false;
    return v.name.empty();
  }
  return v.is_const() || v.kind == Val::Kind::DType;
}

} // namespace

Val IrGen::call_compile_time(const JitFunctionInfo &fn, Scope bound, Loc loc) {
  // Triton runs such a function in Python on the unwrapped constexprs, so a
  // tensor cannot reach it and what it returns is a constexpr again.
  for (const ParamInfo &p : fn.params)
    if (!compile_time_value(bound[p.name]))
      fail(loc, "'" + fn.name + "' runs at compile time (a constexpr function), so its argument '" +
                    p.name + "' must be a compile-time value, not a tensor");
  ++compile_time_depth_;
  struct Leave {
    int &depth;
    ~Leave() { --depth; }
  } leave{compile_time_depth_};
  Val r = call_inline(fn, std::move(bound), loc);
  if (!compile_time_value(r))
    fail(loc, "'" + fn.name +
                  "' runs at compile time (a constexpr function) but its result is not a "
                  "compile-time value");
  return r;
}

Val IrGen::call_inline(const JitFunctionInfo &fn, Scope bound, Loc loc) {
  Frame frame;
  frame.fn = &fn;
  frame.scope = std::move(bound);
  Frame *saved = frame_;
  const SourceFile *saved_src = source_;
  frame_ = &frame;
  source_ = fn.module->ast.source.get();
  sem().set_source(*source_);
  ++call_depth_;
  exec_body(fn.def->body);
  --call_depth_;
  frame_ = saved;
  source_ = saved_src;
  sem().set_source(*source_);
  builder().set_loc(loc);
  return frame.result ? *frame.result : Val::constant(ConstValue::none());
}

Val IrGen::call_noinline(const JitFunctionInfo &fn, const Scope &bound, Loc loc) {
  // A device function per distinct argument types and constexpr values.
  std::string key = fn.name;
  std::vector<ir::Value *> call_args;
  for (const ParamInfo &p : fn.params) {
    const Val &v = bound.at(p.name);
    if (v.is_tensor()) {
      if (v.v->type.is_block())
        fail(loc, "argument '" + p.name + "' of the noinline function '" + fn.name +
                      "' is a block " + v.v->type.str() +
                      "; noinline functions take and return scalars (as in "
                      "Triton): pass scalars, or remove noinline=True from '" +
                      fn.name + "' to inline it");
      key += "," + v.v->type.str();
      call_args.push_back(v.v);
    } else if (v.is_const() && v.c.is_number() && !p.is_constexpr) {
      ir::Value *t = to_tensor(v, p.name.c_str());
      key += "," + t->type.str();
      call_args.push_back(t);
    } else {
      key += ",=" + (v.is_const() ? v.c.repr() : std::string("?"));
    }
  }
  ir::Function *callee;
  if (auto it = device_functions_.find(key); it != device_functions_.end()) {
    callee = it->second;
  } else {
    auto owned = std::make_unique<ir::Function>();
    callee = owned.get();
    callee->name = fn.name + "__" + std::to_string(device_functions_.size());
    program_.functions.push_back(std::move(owned));
    device_functions_[key] = callee;

    ir::Builder b(*callee);
    ir::Builder *saved_builder = builder_;
    std::unique_ptr<Semantic> saved_sem = std::move(sem_);
    builder_ = &b;
    sem_ = std::make_unique<Semantic>(b, *fn.module->ast.source);
    Frame frame;
    frame.fn = &fn;
    size_t a = 0;
    for (const ParamInfo &p : fn.params) {
      const Val &v = bound.at(p.name);
      if (v.is_tensor() || (v.is_const() && v.c.is_number() && !p.is_constexpr)) {
        ir::Value *arg = callee->new_value(call_args[a++]->type, nullptr);
        callee->body.args.push_back(arg);
        callee->param_names.push_back(p.name);
        frame.scope[p.name] = Val::tensor(arg);
      } else {
        frame.scope[p.name] = v;
      }
    }
    Frame *saved = frame_;
    const SourceFile *saved_src = source_;
    frame_ = &frame;
    source_ = fn.module->ast.source.get();
    ++call_depth_;
    exec_body(fn.def->body);
    --call_depth_;
    std::vector<ir::Value *> results;
    if (frame.result && !frame.result->is_none()) {
      std::vector<Val> vals =
          frame.result->kind == Val::Kind::Tuple ? frame.result->elems : std::vector<Val>{*frame.result};
      for (const Val &r : vals) {
        ir::Value *t = to_tensor(r, "a noinline function's result");
        if (t->type.is_block())
          fail(frame.result_loc, "the noinline function '" + fn.name + "' returns a block " +
                                     t->type.str() +
                                     "; noinline functions take and return scalars (as in Triton): "
                                     "return scalars, or remove noinline=True to inline it");
        results.push_back(t);
        callee->result_types.push_back(t->type);
      }
    }
    b.set_loc(fn.def->loc);
    b.create(OpKind::Return, results, {});
    frame_ = saved;
    source_ = saved_src;
    builder_ = saved_builder;
    sem_ = std::move(saved_sem);
  }
  builder().set_loc(loc);
  ir::Op *op = builder().create(OpKind::Call, call_args,
                                std::vector<Type>(callee->result_types.begin(), callee->result_types.end()));
  op->callee = callee;
  if (op->results.empty())
    return Val::constant(ConstValue::none());
  if (op->results.size() == 1)
    return Val::tensor(op->results[0]);
  std::vector<Val> elems;
  for (ir::Value *r : op->results)
    elems.push_back(Val::tensor(r));
  return Val::tuple(std::move(elems));
}

} // namespace kiln::frontend
