#include "compiler/frontend/ir_gen_args.hpp"

namespace kiln::frontend {

using ir::Type;

const Val &required(IrGen &g, CallArgs &a, size_t i, const char *name, const char *fn) {
  const Val *v = a.find(i, name);
  if (!v)
    g.fail(std::string(fn) + " is missing its argument '" + name + "'");
  return *v;
}

const Val *optional_arg(CallArgs &a, size_t i, const char *name) {
  const Val *v = a.find(i, name);
  return v && !v->is_none() ? v : nullptr;
}

ir::Value *tensor_arg(IrGen &g, CallArgs &a, size_t i, const char *name, const char *fn) {
  return g.to_tensor(required(g, a, i, name, fn), (std::string(fn) + "'s " + name).c_str());
}

Operand operand_arg(IrGen &g, CallArgs &a, size_t i, const char *name, const char *fn) {
  const Val &v = required(g, a, i, name, fn);
  return g.to_operand(v, (std::string(fn) + "'s " + name).c_str());
}

int axis_arg(IrGen &g, CallArgs &a, size_t i, const char *fn, int rank, bool allow_none,
             bool *is_none) {
  const Val *v = a.find(i, "axis");
  if (!v || v->is_none()) {
    if (!allow_none)
      g.fail(std::string(fn) + " needs an axis");
    *is_none = true;
    return 0;
  }
  int64_t axis = g.const_int(*v, (std::string(fn) + "'s axis").c_str());
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    g.fail(std::string(fn) + "'s axis " + std::to_string(axis) +
           " is out of range for a block of rank " + std::to_string(rank));
  *is_none = false;
  return static_cast<int>(axis);
}

bool bool_kwarg(IrGen &g, CallArgs &a, size_t i, const char *name, bool dflt) {
  const Val *v = a.find(i, name);
  if (!v || v->is_none())
    return dflt;
  if (!v->is_const())
    g.fail(std::string(name) + " must be a compile-time bool");
  return v->c.truthy();
}

ir::Value *constant_of(IrGen &g, const Val &v, const Type &t, const char *what) {
  if (v.is_const() && v.c.is_number()) {
    Type e = t.element();
    ir::Value *c = e.is_float()
                       ? g.builder().constant_float(e, v.c.as_double())
                       : g.builder().constant_int(e, v.c.kind == ConstValue::Kind::Float
                                                         ? static_cast<int64_t>(v.c.f)
                                                     : v.c.kind == ConstValue::Kind::Bool ? v.c.b
                                                                                          : v.c.i);
    return g.sem().broadcast_to(c, t);
  }
  ir::Value *x = g.to_tensor(v, what);
  return g.sem().broadcast_to(g.sem().cast(x, t.element()), t);
}

const Expr *arg_expr(const CallArgs &a, size_t i, const char *name) {
  if (!a.expr)
    return nullptr;
  // A method call's receiver is pos[0] but not among the call's children.
  const size_t first = a.pos.size() == a.expr->children.size() ? 0 : 1;
  if (i < a.pos.size())
    return i + first >= 1 && i + first < a.expr->children.size() ? a.expr->children[i + first].get()
                                                                 : nullptr;
  for (const Keyword &k : a.expr->keywords)
    if (k.name == name)
      return k.value.get();
  return nullptr;
}

int64_t const_int_arg(IrGen &g, CallArgs &a, size_t i, const char *name, const char *fn) {
  const Val &v = required(g, a, i, name, fn);
  if (v.is_tensor()) {
    const Expr *e = arg_expr(a, i, name);
    const Loc loc = e ? e->loc : g.builder().loc();
    if (e && e->kind == ExprKind::Name)
      g.fail(loc, std::string(fn) + "'s " + name + " must be a compile-time integer, but '" +
                      e->id + "' is a runtime value; declare the parameter as `" + e->id +
                      ": tl.constexpr` (or use a literal)");
    g.fail(loc, std::string(fn) + "'s " + name + " must be a compile-time integer, not a runtime " +
                    v.v->type.str() + "; use a literal or a tl.constexpr parameter");
  }
  return g.const_int(v, (std::string(fn) + "'s " + name).c_str());
}

Val call_builtin_with(IrGen &g, const char *name, std::vector<Val> pos,
                      std::vector<std::pair<std::string, Val>> kw) {
  CallArgs args;
  args.pos = std::move(pos);
  args.kw = std::move(kw);
  return g.call_builtin(name, args);
}

} // namespace kiln::frontend
