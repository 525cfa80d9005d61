// The IR generator's statements: assignment, runtime and constexpr control
// flow, static unrolling, returns. Expressions are in ir_gen_expr.cpp and
// tl.* builtins in ir_gen_builtins.cpp.
#include "compiler/frontend/ir_gen_impl.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <utility>

namespace kiln::frontend {

using ir::OpKind;
using ir::Type;

namespace {

/// How a kernel spells `t`: "tl.float32", "tl.int64".
std::string tl_dtype_spelling(DType t) {
  switch (t) {
  case DType::i1:
    return "tl.int1";
  case DType::i8:
    return "tl.int8";
  case DType::i16:
    return "tl.int16";
  case DType::i32:
    return "tl.int32";
  case DType::i64:
    return "tl.int64";
  case DType::u8:
    return "tl.uint8";
  case DType::u16:
    return "tl.uint16";
  case DType::u32:
    return "tl.uint32";
  case DType::u64:
    return "tl.uint64";
  case DType::f16:
    return "tl.float16";
  case DType::bf16:
    return "tl.bfloat16";
  case DType::f32:
    return "tl.float32";
  case DType::f64:
    return "tl.float64";
  case DType::f8e4nv:
    return "tl.float8e4nv";
  case DType::f8e5:
    return "tl.float8e5";
  case DType::f8e4b15:
    return "tl.float8e4b15";
  case DType::f8e4b8:
    return "tl.float8e4b8";
  case DType::f8e5b16:
    return "tl.float8e5b16";
  }
  return "a dtype";
}

} // namespace

bool Val::same_as(const Val &o) const {
  if (kind != o.kind)
    return false;
  switch (kind) {
  case Kind::Tensor: return v == o.v;
  case Kind::Const: return c == o.c;
  case Kind::DType: return type == o.type;
  case Kind::Function: return fn == o.fn;
  case Kind::Tuple:
    // Unchanged tuples (shapes, block pointers) must not look like new values after a runtime if.
    if (name != o.name || elems.size() != o.elems.size())
      return false;
    for (size_t i = 0; i < elems.size(); ++i)
      if (!elems[i].same_as(o.elems[i]))
        return false;
    return true;
  case Kind::Builtin: return name == o.name;
  default: return false;
  }
}

size_t CallArgs::position(const char *name) const {
  if (signature) {
    const auto p = std::find_if(signature->begin(), signature->end(),
                                [&](const char *n) { return std::string_view(n) == name; });
    // Keyword-only parameters (after a "*args" one) are read at no position.
    if (p != signature->end()) {
      const auto at = static_cast<size_t>(p - signature->begin());
      return at > keyword_only ? kNoPosition : at;
    }
  }
  throw std::logic_error("kiln bug: " + callee + " has no parameter '" + name +
                         "' in its signature");
}

const Val *CallArgs::find(size_t index, const char *name) const {
  if (signature && index != position(name))
    throw std::logic_error("kiln bug: " + callee + " reads its argument '" + name +
                           "' at position " + std::to_string(index) +
                           ", which its signature does not place there");
  if (index < pos.size())
    return &pos[index];
  for (const auto &[k, v] : kw)
    if (k == name)
      return &v;
  return nullptr;
}

IrGen::IrGen(const JitFunctionInfo &kernel, const compiler::GlobalValues &globals,
             const compiler::ModuleGlobals *other_globals, const Options &options,
             ir::Program &program, bool gpu_target)
    : kernel_(kernel), globals_(globals), other_globals_(other_globals), options_(options),
      program_(program), source_(kernel.module->ast.source.get()), gpu_target_(gpu_target) {}

void IrGen::fail(Loc loc, const std::string &message) const { throw source_->error(loc, message); }

void IrGen::generate_kernel(const std::vector<compiler::ParamSpec> &params) {
  auto fn = std::make_unique<ir::Function>();
  fn->name = kernel_.name;
  fn->is_kernel = true;
  ir::Builder b(*fn);
  builder_ = &b;
  sem_ = std::make_unique<Semantic>(b, *source_);

  Frame frame;
  frame.fn = &kernel_;
  // A parameter's value: a constant, a kernel argument, or a tuple of
  // these whose runtime leaves are arguments named "t.0", "t.1.0", ...
  std::function<Val(const compiler::ParamSpec &, const std::string &)> param_value =
      [&](const compiler::ParamSpec &s, const std::string &name) {
        if (s.is_tuple) {
          std::vector<Val> elems;
          for (size_t e = 0; e < s.elems.size(); ++e)
            elems.push_back(param_value(s.elems[e], name + "." + std::to_string(e)));
          return s.is_descriptor ? host_descriptor(*this, std::move(elems))
                                 : Val::tuple(std::move(elems));
        }
        if (s.is_constexpr)
          return Val::constant(s.value);
        ir::Value *arg = fn->new_value(s.is_pointer ? Type::ptr(s.dtype) : Type::scalar(s.dtype), nullptr);
        arg->facts.divisible16 = s.divisible16;
        fn->body.args.push_back(arg);
        fn->param_names.push_back(name);
        return Val::tensor(arg);
      };
  for (size_t i = 0; i < kernel_.params.size(); ++i) {
    const ParamInfo &p = kernel_.params[i];
    const compiler::ParamSpec &s = params.at(i);
    if (!s.is_constexpr && !s.is_tuple && p.is_constexpr)
      fail(p.loc, "parameter '" + p.name + "' is tl.constexpr but was given a runtime value");
    frame.scope[p.name] = param_value(s, p.name);
  }
  frame_ = &frame;
  program_.functions.push_back(std::move(fn));
  exec_body(kernel_.def->body);
  b.set_loc(kernel_.def->loc);
  b.create(OpKind::Return, {}, {});
}

namespace {

/// Whether a body returns among its statements or those of its ifs (not
/// inside loops, whose returns stay refused).
bool returns_in(const Body &b) {
  for (const StmtPtr &s : b)
    if (s->kind == StmtKind::Return || (s->kind == StmtKind::If && (returns_in(s->body) || returns_in(s->orelse))))
      return true;
  return false;
}

} // namespace

void IrGen::exec_body(const Body &body, size_t from, bool top) {
  top = top || &body == &frame_->fn->def->body;
  for (size_t i = from; i < body.size(); ++i) {
    if (frame_->returned)
      return;
    const Stmt &s = *body[i];
    if (top && s.kind == StmtKind::If && frame_->runtime_depth == frame_->top_depth &&
        (returns_in(s.body) || returns_in(s.orelse))) {
      frame_->rest.emplace_back(&body, i + 1);
      const bool handled = exec_early_exit_if(s);
      frame_->rest.pop_back();
      if (handled)
        continue;
    }
    exec(s);
  }
}

bool IrGen::exec_early_exit_if(const Stmt &s) {
  Val cond = eval(*s.test);
  builder().set_loc(s.loc);
  if (cond.kind != Val::Kind::Tensor) {
    // A constexpr if: its branch is more of the function's top level.
    exec_body(cond.kind != Val::Kind::Const || cond.c.truthy() ? s.body : s.orelse, 0, true);
    return true;
  }
  if (cond.v->type.is_block())
    return false; // exec_if reports it
  // if c: A; return x / else: B, then the rest R; return y  ==
  // if c: A; yield x else: B; R; yield y, whose results the function returns
  // (and the mirror image). Nothing follows the If.
  ir::Builder &b = builder();
  ir::Function &fn = b.function();
  ir::Block *outer = b.block();
  ir::Op *op = b.create(OpKind::If, {sem().to_bool(cond.v)}, {});
  ir::Block *blocks[2] = {fn.new_block(), fn.new_block()};
  op->regions = {blocks[0], blocks[1]};
  const Scope before = frame_->scope;
  const int saved_top = frame_->top_depth;
  ++frame_->runtime_depth;
  std::optional<Val> results[2];
  std::vector<ir::Value *> yields[2];
  std::vector<bool> literal[2];
  for (int r = 0; r < 2; ++r) {
    const Body &branch = r == 0 ? s.body : s.orelse;
    frame_->scope = before;
    frame_->returned = false;
    frame_->result.reset();
    frame_->top_depth = frame_->runtime_depth; // a return here leaves the function
    b.set_block(blocks[r]);
    exec_body(branch, 0, true);
    // The rest of the function after this if (innermost body first), each
    // with only the bodies around it still pending.
    const auto rest = frame_->rest;
    for (size_t k = rest.size(); k-- > 0 && !frame_->returned;) {
      frame_->rest.assign(rest.begin(), rest.begin() + static_cast<std::ptrdiff_t>(k));
      exec_body(*rest[k].first, rest[k].second, true);
    }
    frame_->rest = rest;
    frame_->top_depth = saved_top;
    if (frame_->returned && frame_->result && !frame_->result->is_none()) {
      results[r] = *frame_->result;
      for (const Val &v : results[r]->kind == Val::Kind::Tuple ? results[r]->elems : std::vector<Val>{*results[r]}) {
        yields[r].push_back(to_tensor(v, "a returned value"));
        literal[r].push_back(v.is_const());
      }
    }
  }
  const std::string where = "the runtime if on line " + std::to_string(s.loc.line);
  if (results[0].has_value() != results[1].has_value())
    fail(s.loc, "'" + frame_->fn->name + "' returns a value on one path of " + where +
                    " and nothing on the other; return a value on every path");
  if (yields[0].size() != yields[1].size())
    fail(s.loc, "'" + frame_->fn->name + "' returns " + std::to_string(yields[0].size()) + " and " +
                    std::to_string(yields[1].size()) + " values on the two paths of " + where);
  for (size_t i = 0; i < yields[0].size(); ++i) {
    ir::Value *&t = yields[0][i], *&e = yields[1][i];
    if (t->type == e->type)
      continue;
    // A Python number on one path takes the other path's scalar type.
    const int lit = literal[0][i] ? 0 : literal[1][i] ? 1 : -1;
    if (lit < 0 || t->type.is_block() || e->type.is_block())
      fail(s.loc, "'" + frame_->fn->name + "' returns " + t->type.str() + " on one path of " + where + " but " +
                      e->type.str() + " on the other; return the same type on both");
    b.set_block(blocks[lit]);
    yields[lit][i] = sem().cast(yields[lit][i], yields[1 - lit][i]->type);
  }
  for (int r = 0; r < 2; ++r) {
    b.set_block(blocks[r]);
    b.set_loc(s.loc);
    b.create(OpKind::Yield, yields[r], {});
  }
  --frame_->runtime_depth;
  b.set_block(outer);
  frame_->scope = before;
  frame_->returned = true;
  frame_->result.reset();
  if (results[0]) {
    std::vector<Val> vals;
    for (ir::Value *y : yields[0])
      vals.push_back(Val::tensor(op->results.emplace_back(fn.new_value(y->type, op))));
    frame_->result = results[0]->kind == Val::Kind::Tuple ? Val::tuple(std::move(vals)) : vals[0];
    frame_->result_loc = s.loc;
  }
  return true;
}

void IrGen::exec(const Stmt &s) {
  builder().set_loc(s.loc);
  switch (s.kind) {
  case StmtKind::Assign: {
    Val v = eval(*s.value);
    for (const ExprPtr &t : s.targets)
      assign(*t, v);
    return;
  }
  case StmtKind::AnnAssign:
    if (s.value)
      assign(*s.targets[0], eval(*s.value));
    return;
  case StmtKind::AugAssign: {
    const Expr &target = *s.targets[0];
    if (target.kind != ExprKind::Name)
      fail(target.loc, "augmented assignment needs a plain variable on the left; use tl.store for memory");
    Val cur = lookup(target.id, target.loc);
    Val rhs = eval(*s.value);
    builder().set_loc(s.loc);
    assign(target, binop(s.op, cur, rhs, s.loc));
    return;
  }
  case StmtKind::ExprStmt:
    if (s.value->kind != ExprKind::Str) // docstrings
      eval(*s.value);
    return;
  case StmtKind::If: return exec_if(s);
  case StmtKind::For: return exec_for(s);
  case StmtKind::While: return exec_while(s);
  case StmtKind::Return: return exec_return(s);
  case StmtKind::Pass: return;
  case StmtKind::Assert: {
    Val test = eval(*s.test);
    if (test.is_const()) {
      if (!test.c.truthy())
        fail(s.loc, "assertion failed at compile time" +
                        (s.value && s.value->kind == ExprKind::Str ? ": " + s.value->id : std::string()));
      return;
    }
    if (debug()) {
      ir::Op *op = builder().create(OpKind::Assert, {sem().to_bool(to_tensor(test, "assert"))}, {});
      op->str = source_->path() + ":" + std::to_string(s.loc.line) + ": " +
                (s.value && s.value->kind == ExprKind::Str ? s.value->id : "assertion failed");
    }
    return;
  }
  case StmtKind::Break:
  case StmtKind::Continue:
    fail(s.loc, std::string("'") + (s.kind == StmtKind::Break ? "break" : "continue") +
                    "' is not supported in kernels (Triton does not support it either); "
                    "use a while loop with a condition");
  case StmtKind::FunctionDef:
    fail(s.loc, "nested function definitions are not supported; define '" + s.id +
                    "' at module level with @triton.jit");
  case StmtKind::Import:
  case StmtKind::ImportFrom: fail(s.loc, "imports must be at module level");
  case StmtKind::AsyncFunctionDef:
  case StmtKind::ClassDef:
  case StmtKind::With:
  case StmtKind::AsyncWith:
  case StmtKind::Try:
  case StmtKind::TryStar:
  case StmtKind::Raise:
  case StmtKind::Global:
  case StmtKind::Nonlocal:
  case StmtKind::Delete:
  case StmtKind::AsyncFor:
  case StmtKind::Match:
  case StmtKind::TypeAlias: {
    // Python the parser takes anywhere, but that a kernel cannot mean.
    const char *hint =
        s.kind == StmtKind::With || s.kind == StmtKind::AsyncWith
            ? " (Triton kernels have no context managers); write the body without "
              "'with'"
        : s.kind == StmtKind::Try || s.kind == StmtKind::TryStar || s.kind == StmtKind::Raise
            ? " (kernels cannot raise or catch exceptions); check conditions with "
              "tl.static_assert or tl.device_assert"
        : s.kind == StmtKind::Global || s.kind == StmtKind::Nonlocal
            ? "; pass the value as a parameter and return the result"
            : "";
    fail(s.loc,
         std::string(describe(s.kind)) + " are not supported inside a @triton.jit function" + hint);
  }
  }
}

void IrGen::assign(const Expr &target, Val value) {
  switch (target.kind) {
  case ExprKind::Name:
    frame_->scope[target.id] = std::move(value);
    return;
  case ExprKind::Tuple:
  case ExprKind::List:
    if (value.kind != Val::Kind::Tuple)
      fail(target.loc, "cannot unpack a single value into " + std::to_string(target.children.size()) +
                           " names; the right-hand side must be a tuple");
    if (value.elems.size() != target.children.size())
      fail(target.loc, "cannot unpack " + std::to_string(value.elems.size()) + " values into " +
                           std::to_string(target.children.size()) + " names");
    for (size_t i = 0; i < target.children.size(); ++i)
      assign(*target.children[i], value.elems[i]);
    return;
  case ExprKind::Starred:
    fail(target.loc, "starred assignment targets ('*x') are not supported inside a @triton.jit "
                     "function; unpack into a fixed number of names");
  case ExprKind::Subscript:
    fail(target.loc, "assignment to an element of a tensor is not supported; use tl.store for memory "
                     "or tl.where to update a block");
  default: fail(target.loc, "cannot assign to this expression");
  }
}

// ---- which names a body assigns (loop-carried values, if results) ----

namespace {

void collect_targets(const Expr &t, std::vector<std::string> &out) {
  if (t.kind == ExprKind::Name)
    out.push_back(t.id);
  else if (t.kind == ExprKind::Tuple || t.kind == ExprKind::List)
    for (const ExprPtr &c : t.children)
      collect_targets(*c, out);
}

void collect_assigned(const Body &body, std::vector<std::string> &out) {
  for (const StmtPtr &s : body) {
    switch (s->kind) {
    case StmtKind::Assign:
    case StmtKind::AnnAssign:
    case StmtKind::AugAssign:
    case StmtKind::For:
      for (const ExprPtr &t : s->targets)
        collect_targets(*t, out);
      break;
    default: break;
    }
    collect_assigned(s->body, out);
    collect_assigned(s->orelse, out);
  }
}

} // namespace

std::vector<std::string> IrGen::carried_names(const Body &body) const {
  std::vector<std::string> all;
  collect_assigned(body, all);
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const std::string &n : all)
    if (frame_->scope.count(n) && seen.insert(n).second)
      out.push_back(n);
  return out;
}

ir::Value *IrGen::yield_value(const std::string &name, const Val &v, const Type &type) {
  if (v.is_const() && v.c.is_number()) {
    ir::Value *t = to_tensor(v, name.c_str());
    if (!t->type.is_block() && !type.is_block())
      return sem().cast(t, type);
  }
  if (!v.is_tensor())
    fail("variable '" + name + "' is a tensor when the loop starts but " +
         (v.is_const() ? v.c.repr() : std::string("not a tensor")) +
         " at the end of an iteration; a loop-carried variable must stay a tensor of one type");
  if (v.v->type != type) {
    const std::string final_dtype = tl_dtype_spelling(v.v->type.elem);
    fail("variable '" + name + "' is " + type.str() + " when the loop starts but " +
         v.v->type.str() +
         " at the end of an iteration; a loop-carried variable must keep its "
         "type, so give it its final type before the loop (e.g. " +
         (v.v->type.is_block()
              ? "tl.zeros(shape, " + final_dtype + ")"
              : std::string(v.v->type.is_float() ? "0.0 or " : "") + "x.to(" + final_dtype + ")") +
         ") or convert the new value with .to(" + tl_dtype_spelling(type.elem) + ")");
  }
  return v.v;
}

// ---- if ----

void IrGen::exec_if(const Stmt &s) {
  Val cond = eval(*s.test);
  builder().set_loc(s.loc);
  if (cond.kind != Val::Kind::Tensor) {
    if (cond.kind == Val::Kind::Const ? cond.c.truthy() : true)
      exec_body(s.body);
    else
      exec_body(s.orelse);
    return;
  }
  if (cond.v->type.is_block())
    fail(s.test->loc, "the condition of an if must be a scalar, not a block " + cond.v->type.str() +
                          "; use tl.where for elementwise choices");
  exec_runtime_if(s, sem().to_bool(cond.v));
}

void IrGen::exec_runtime_if(const Stmt &s, ir::Value *cond) {
  ir::Builder &b = builder();
  ir::Function &fn = b.function();
  ir::Block *outer = b.block();
  ir::Op *op = b.create(OpKind::If, {cond}, {});
  ir::Block *then_block = fn.new_block();
  ir::Block *else_block = fn.new_block();
  op->regions = {then_block, else_block};

  const Scope before = frame_->scope;
  ++frame_->runtime_depth;
  b.set_block(then_block);
  exec_body(s.body);
  Scope then_scope = std::move(frame_->scope);
  frame_->scope = before;
  b.set_block(else_block);
  exec_body(s.orelse);
  Scope else_scope = std::move(frame_->scope);
  --frame_->runtime_depth;
  if (frame_->returned)
    fail(s.loc, "a return inside a runtime if is not supported; assign the value to a variable and "
                "return it after the if");

  // Results: names bound in both branches (or before) that either branch changed.
  std::vector<std::string> names;
  std::vector<std::pair<std::string, Val>> same_new; // the same new value in both branches
  for (const auto &[name, tv] : then_scope) {
    auto e = else_scope.find(name);
    if (e == else_scope.end())
      continue;
    if (!tv.same_as(e->second))
      names.push_back(name);
    else if (!before.count(name))
      same_new.emplace_back(name, tv);
  }
  std::vector<ir::Value *> then_vals, else_vals;
  std::vector<std::string> result_names;
  for (const std::string &name : names) {
    const Val &tv = then_scope[name], &ev = else_scope[name];
    if ((!tv.is_tensor() && !(tv.is_const() && tv.c.is_number())) ||
        (!ev.is_tensor() && !(ev.is_const() && ev.c.is_number()))) {
      if (before.count(name))
        fail(s.loc, "variable '" + name + "' gets different compile-time values in the branches of a "
                                         "runtime if");
      continue;
    }
    // The result type is the branches' common tensor type.
    b.set_block(then_block);
    ir::Value *t = to_tensor(tv, name.c_str());
    b.set_block(else_block);
    ir::Value *e = to_tensor(ev, name.c_str());
    if (t->type != e->type) {
      // As in Triton, a literal is not converted to the other branch's type.
      const Type then_type = t->type, else_type = e->type;
      if (t->type != e->type)
        fail(s.loc, "variable '" + name + "' is " + then_type.str() + " in the then-branch but " +
                        else_type.str() +
                        " in the else-branch of this runtime if; both branches "
                        "must give it the same type: " +
                        (then_type.same_shape(else_type)
                             ? "convert one with .to(" + tl_dtype_spelling(else_type.elem) + ")"
                             : std::string("make both the same shape (a block from a scalar: "
                                           "tl.full(shape, value, dtype)), and the same dtype"
                                           " (.to(...))")));
    }
    then_vals.push_back(t);
    else_vals.push_back(e);
    result_names.push_back(name);
    op->results.push_back(fn.new_value(t->type, op));
  }
  b.set_block(then_block);
  b.create(OpKind::Yield, then_vals, {});
  b.set_block(else_block);
  b.create(OpKind::Yield, else_vals, {});
  b.set_block(outer);

  frame_->scope = before;
  for (size_t r = 0; r < result_names.size(); ++r)
    frame_->scope[result_names[r]] = Val::tensor(op->results[r]);
  // `if c: x = 2 else: x = 2` binds x to 2 after the if, as in Triton.
  // (A tensor can be the same in both only if it was made before the if.)
  for (auto &[name, v] : same_new)
    frame_->scope[name] = v;
  // Names defined only in one branch are dropped, as Triton scopes them.
  const std::string where = " of the runtime if on line " + std::to_string(s.loc.line);
  const std::string one_branch = ", so it does not exist after the if; assign it before the if or "
                                 "in both branches";
  for (const auto &entry : then_scope)
    if (!frame_->scope.count(entry.first))
      frame_->scoped_out[entry.first] =
          else_scope.count(entry.first)
              ? "in both branches" + where +
                    " but as compile-time values (not tensors), which do not leave a runtime "
                    "if; assign it before the if"
              : "only in the then-branch" + where + one_branch;
  for (const auto &entry : else_scope)
    if (!frame_->scope.count(entry.first) && !then_scope.count(entry.first))
      frame_->scoped_out[entry.first] = "only in the else-branch" + where + one_branch;
}

void IrGen::note_scoped_out(const Scope &inner, const std::string &why) {
  for (const auto &entry : inner)
    if (!frame_->scope.count(entry.first))
      frame_->scoped_out[entry.first] = why;
}

// ---- for ----

void IrGen::exec_for(const Stmt &s) {
  if (!s.orelse.empty())
    fail(s.loc, "for ... else is not supported in kernels");
  const Expr &iter = *s.value;
  if (iter.kind != ExprKind::Call)
    fail(iter.loc, "a for loop must iterate over range(...), tl.range(...) or tl.static_range(...)");
  Val fn = eval(*iter.children[0]);
  CallArgs args = eval_args(iter);
  builder().set_loc(s.loc);
  if (fn.kind == Val::Kind::Builtin && fn.name == "tl.static_range")
    return exec_static_for(s, args);
  if (fn.kind == Val::Kind::Builtin && (fn.name == "py.range" || fn.name == "tl.range"))
    return exec_runtime_for(s, args);
  fail(iter.loc, "a for loop must iterate over range(...), tl.range(...) or tl.static_range(...)");
}

// One loop may unroll kMaxStaticIterations times; all of a kernel's
// static loops together (nested ones multiply) kMaxUnrolled times, which
// keeps a compile within seconds and the IR within what the later passes
// walk comfortably.
constexpr int64_t kMaxStaticIterations = 4096;
constexpr int64_t kMaxUnrolled = 16384;

void IrGen::exec_static_for(const Stmt &s, const CallArgs &range) {
  if (range.pos.empty() || range.pos.size() > 3)
    fail(s.value->loc, "tl.static_range takes 1 to 3 arguments");
  int64_t start = 0, stop, step = 1;
  if (range.pos.size() == 1) {
    stop = const_int(range.pos[0], "tl.static_range's bound");
  } else {
    start = const_int(range.pos[0], "tl.static_range's start");
    stop = const_int(range.pos[1], "tl.static_range's stop");
    if (range.pos.size() == 3)
      step = const_int(range.pos[2], "tl.static_range's step");
  }
  if (step == 0)
    fail(s.value->loc, "tl.static_range's step must not be zero");
  // In __int128 so that no bounds overflow the count.
  const __int128 count = (static_cast<__int128>(stop) - start) / step;
  if (count > kMaxStaticIterations)
    fail(s.value->loc, "tl.static_range unrolls more than " + std::to_string(kMaxStaticIterations) +
                           " iterations; use range(...) instead");
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
    if (++unrolled_ > kMaxUnrolled)
      fail(s.value->loc,
           "the kernel is too large: its tl.static_range loops unroll more than " +
               std::to_string(kMaxUnrolled) +
               " iterations in total (nested loops multiply); use range(...) for some of them");
    assign(*s.targets[0], Val::constant(ConstValue::of_int(i)));
    exec_body(s.body);
    if (frame_->returned)
      return;
  }
}

void IrGen::exec_runtime_for(const Stmt &s, const CallArgs &range) {
  const Expr &target = *s.targets[0];
  if (target.kind != ExprKind::Name)
    fail(target.loc, "the variable of a range loop must be a single name");
  Val lo = Val::constant(ConstValue::of_int(0)), hi, step = Val::constant(ConstValue::of_int(1));
  const size_t n = range.pos.size();
  if (n == 1) {
    hi = range.pos[0];
  } else if (n == 2 || n == 3) {
    lo = range.pos[0];
    hi = range.pos[1];
    if (n == 3)
      step = range.pos[2];
  } else {
    fail(s.value->loc, "range takes 1 to 3 arguments");
  }
  if (step.is_const() && const_int(step, "the range step") == 0)
    fail(s.value->loc, "the range step must not be zero");

  ir::Builder &b = builder();
  ir::Function &fn = b.function();
  ir::Value *vlo = to_tensor(lo, "the range start"), *vhi = to_tensor(hi, "the range stop"),
            *vstep = to_tensor(step, "the range step");
  for (ir::Value *v : {vlo, vhi, vstep})
    if (v->type.is_block() || !v->type.is_int())
      fail(s.value->loc, "range bounds must be integer scalars, not " + v->type.str());
  Type iv_type = integer_promote(integer_promote(vlo->type, vhi->type), vstep->type);
  vlo = sem().cast(vlo, iv_type);
  vhi = sem().cast(vhi, iv_type);
  vstep = sem().cast(vstep, iv_type);

  const CarriedVars carried = collect_carried(carried_names(s.body), target.id);
  const std::vector<ir::Value *> &inits = carried.inits;

  std::vector<ir::Value *> operands{vlo, vhi, vstep};
  operands.insert(operands.end(), inits.begin(), inits.end());
  ir::Block *outer = b.block();
  ir::Op *op = b.create(OpKind::For, operands, {});
  ir::Block *body = fn.new_block();
  op->regions = {body};
  body->args.push_back(fn.new_value(iv_type, nullptr));
  for (ir::Value *init : inits)
    body->args.push_back(fn.new_value(init->type, nullptr));

  Scope before = frame_->scope;
  frame_->scope[target.id] = Val::tensor(body->args[0]);
  bind_carried(carried, std::vector<ir::Value *>(body->args.begin() + 1, body->args.end()));
  ++frame_->runtime_depth;
  b.set_block(body);
  exec_body(s.body);
  --frame_->runtime_depth;
  if (frame_->returned)
    fail(s.loc, "a return inside a loop is not supported; assign the value and return after the loop");
  b.set_loc(s.loc);
  const std::vector<ir::Value *> yields = yield_carried(carried);
  // A leaf the loop yields unchanged (a block pointer's shape and strides
  // beside the offsets tl.advance moves) is not carried: the body reads its
  // value from before the loop, so that the analyses see the constant or
  // argument itself (a stride of 1 keeps the loads contiguous: vector
  // loads, cp.async).
  std::vector<ir::Value *> kept_yields, after;
  std::vector<ir::Value *> args{body->args[0]};
  op->operands.resize(3);
  for (size_t k = 0; k < inits.size(); ++k) {
    if (yields[k] == body->args[k + 1]) {
      ir::replace_uses(*body, body->args[k + 1], inits[k]);
      after.push_back(inits[k]);
      continue;
    }
    op->operands.push_back(inits[k]);
    args.push_back(body->args[k + 1]);
    kept_yields.push_back(yields[k]);
    op->results.push_back(fn.new_value(inits[k]->type, op));
    after.push_back(op->results.back());
  }
  body->args = std::move(args);
  b.create(OpKind::Yield, kept_yields, {});
  b.set_block(outer);

  const Scope body_scope = std::exchange(frame_->scope, std::move(before));
  bind_carried(carried, after);
  note_scoped_out(body_scope, "only inside the for loop on line " + std::to_string(s.loc.line) +
                                  ", so it does not exist after the loop; assign it before the "
                                  "loop to carry its value out");
}

// ---- while ----

void IrGen::exec_while(const Stmt &s) {
  if (!s.orelse.empty())
    fail(s.loc, "while ... else is not supported in kernels");
  ir::Builder &b = builder();
  ir::Function &fn = b.function();

  const CarriedVars carried = collect_carried(carried_names(s.body), "");
  const std::vector<ir::Value *> &inits = carried.inits;
  ir::Block *outer = b.block();
  ir::Op *op = b.create(OpKind::While, inits, {});
  ir::Block *before_block = fn.new_block(), *after_block = fn.new_block();
  op->regions = {before_block, after_block};
  for (ir::Value *init : inits) {
    before_block->args.push_back(fn.new_value(init->type, nullptr));
    after_block->args.push_back(fn.new_value(init->type, nullptr));
  }

  const Scope before = frame_->scope;
  ++frame_->runtime_depth;
  // The condition sees the carried values of this iteration.
  bind_carried(carried, before_block->args);
  b.set_block(before_block);
  Val cond = eval(*s.test);
  b.set_loc(s.loc);
  ir::Value *c = sem().to_bool(to_tensor(cond, "the while condition"));
  if (c->type.is_block())
    fail(s.test->loc, "the condition of a while loop must be a scalar, not a block " + c->type.str());
  std::vector<ir::Value *> cond_ops{c};
  cond_ops.insert(cond_ops.end(), before_block->args.begin(), before_block->args.end());
  b.create(OpKind::Condition, cond_ops, {});

  bind_carried(carried, after_block->args);
  b.set_block(after_block);
  exec_body(s.body);
  if (frame_->returned)
    fail(s.loc, "a return inside a loop is not supported; assign the value and return after the loop");
  b.set_loc(s.loc);
  b.create(OpKind::Yield, yield_carried(carried), {});
  --frame_->runtime_depth;
  b.set_block(outer);

  const Scope body_scope = std::exchange(frame_->scope, before);
  for (ir::Value *init : inits)
    op->results.push_back(fn.new_value(init->type, op));
  bind_carried(carried, op->results);
  note_scoped_out(body_scope, "only inside the while loop on line " + std::to_string(s.loc.line) +
                                  ", so it does not exist after the loop; assign it before the "
                                  "loop to carry its value out");
}

// ---- return ----

void IrGen::exec_return(const Stmt &s) {
  // A return among the top-level statements of a branch of an early exit.
  if (frame_->runtime_depth > 0 && frame_->runtime_depth != frame_->top_depth)
    fail(s.loc,
         "a return inside a for or while loop is not allowed (Triton refuses it too, also in a "
         "function the loop calls): assign the value to a variable and return it after the loop");
  frame_->result = s.value ? eval(*s.value) : Val::constant(ConstValue::none());
  frame_->result_loc = s.loc;
  frame_->returned = true;
}

// ---- entry point ----

IrGenResult generate_ir(const JitFunctionInfo &kernel,
                        const std::vector<compiler::ParamSpec> &params,
                        const compiler::GlobalValues &globals,
                        const compiler::ModuleGlobals *other_globals, const Options &options,
                        bool gpu_target) {
  IrGenResult r;
  IrGen gen(kernel, globals, other_globals, options, r.program, gpu_target);
  gen.generate_kernel(params);
  r.used_globals = std::move(gen.used_globals);
  return r;
}

} // namespace kiln::frontend
