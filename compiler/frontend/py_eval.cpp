#include "compiler/frontend/py_eval.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include "compiler/frontend/ir_gen_impl.hpp"
#include "compiler/frontend/module_info.hpp"
#include "compiler/frontend/torch_names.hpp"

namespace kiln::frontend {

namespace {

/// float(s) as Python reads a string: surrounding blanks, an optional sign,
/// "inf" / "infinity" / "nan" in any case, or a decimal literal.
std::optional<double> python_float(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  double sign = 1;
  std::string_view body = s;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
    sign = body[0] == '-' ? -1 : 1;
    body.remove_prefix(1);
  }
  std::string lower(body);
  for (char &c : lower)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "inf" || lower == "infinity")
    return sign * std::numeric_limits<double>::infinity();
  if (lower == "nan")
    return std::numeric_limits<double>::quiet_NaN();
  if (body.empty() || body[0] == '+' || body[0] == '-')
    return std::nullopt;
  double d = 0;
  auto [end, ec] = std::from_chars(body.data(), body.data() + body.size(), d);
  if (ec != std::errc() || end != body.data() + body.size())
    return std::nullopt;
  return sign * d;
}

// Config lists are small; a deeper nesting (or a function calling itself)
// is a hostile or generated file, refused before it can exhaust the stack.
constexpr int kMaxDepth = 200;
// Comprehensions that build more than this are not config lists.
constexpr size_t kMaxItems = 1 << 16;

bool is_sequence(const PyValue &v) {
  return v.kind == PyValue::Kind::List || v.kind == PyValue::Kind::Tuple;
}

std::string describe(const PyValue &v) {
  switch (v.kind) {
  case PyValue::Kind::Const: return v.c.repr();
  case PyValue::Kind::List: return "a list";
  case PyValue::Kind::Tuple: return "a tuple";
  case PyValue::Kind::Dict: return "a dict";
  case PyValue::Kind::Config: return "a triton.Config";
  case PyValue::Kind::Lambda: return "a lambda";
  case PyValue::Kind::Function: return "a function";
  case PyValue::Kind::Opaque: return v.c.s;
  case PyValue::Kind::Triton:
    return "'" + v.c.s + "'";
  case PyValue::Kind::ModuleSpec:
    return "the module spec of '" + v.c.s + "'";
  case PyValue::Kind::Unknown:
    return v.c.s;
  }
  return "a value";
}

bool equal(const PyValue &a, const PyValue &b) {
  if (a.kind != b.kind)
    return false;
  if (a.kind == PyValue::Kind::Const) {
    if (a.c.is_number() && b.c.is_number())
      return a.c.as_double() == b.c.as_double() &&
             (a.c.kind == ConstValue::Kind::Float || b.c.kind == ConstValue::Kind::Float || a.c.i == b.c.i ||
              a.c.kind == ConstValue::Kind::Bool || b.c.kind == ConstValue::Kind::Bool);
    return a.c == b.c;
  }
  if (a.kind == PyValue::Kind::Triton || a.kind == PyValue::Kind::ModuleSpec)
    return a.c.s == b.c.s;
  if (a.items.size() != b.items.size())
    return false;
  for (size_t i = 0; i < a.items.size(); ++i)
    if (!equal(a.items[i], b.items[i]))
      return false;
  return a.kind != PyValue::Kind::Config && a.kind != PyValue::Kind::Lambda &&
         a.kind != PyValue::Kind::Opaque && a.kind != PyValue::Kind::Unknown;
}

[[noreturn]] void fail_unknown(const SourceFile &src, const PyValue &v, Loc loc) {
  throw src.error(
      loc, "this depends on " + v.c.s +
               ", which only the host knows when the kernel runs; kiln evaluates host code at "
               "compile time only where its value does not depend on such facts");
}

} // namespace

std::string dotted_name(const Expr &e) {
  if (e.kind == ExprKind::Name)
    return e.id;
  if (e.kind != ExprKind::Attribute)
    return "";
  std::string base = dotted_name(*e.children[0]);
  return base.empty() ? "" : base + "." + e.id;
}

bool truthy(const PyValue &v) {
  switch (v.kind) {
  case PyValue::Kind::Const: return v.c.truthy();
  case PyValue::Kind::List:
  case PyValue::Kind::Tuple:
  case PyValue::Kind::Dict: return !v.items.empty();
  default: return true;
  }
}

bool PyEval::test(const PyValue &v, Loc loc) const {
  if (v.kind == PyValue::Kind::Unknown)
    fail_unknown(src_, v, loc);
  return truthy(v);
}

const ConstValue &PyEval::as_const(const PyValue &v, Loc loc) const {
  if (v.kind == PyValue::Kind::Unknown)
    fail_unknown(src_, v, loc);
  if (v.kind != PyValue::Kind::Const)
    fail(loc, "expected a number, a bool or a string here, not " + describe(v));
  return v.c;
}

int64_t PyEval::as_int(const PyValue &v, Loc loc, const char *what) const {
  const ConstValue &c = as_const(v, loc);
  if (c.kind == ConstValue::Kind::Int)
    return c.i;
  if (c.kind == ConstValue::Kind::Bool)
    return c.b;
  fail(loc, std::string(what) + " must be an int, not " + c.repr());
}

PyValue PyEval::eval(const Expr &e) {
  if (++depth_ > kMaxDepth) {
    depth_ = 0;
    fail(e.loc, "expression nested too deeply for kiln to evaluate");
  }
  struct Leave {
    int &d;
    ~Leave() { --d; }
  } leave{depth_};
  switch (e.kind) {
  case ExprKind::Int:
    if (e.int_value > static_cast<uint64_t>(INT64_MAX))
      fail(e.loc, "integer constant does not fit in int64");
    return PyValue::of(ConstValue::of_int(static_cast<int64_t>(e.int_value)));
  case ExprKind::Float: return PyValue::of(ConstValue::of_float(e.float_value));
  case ExprKind::Bool: return PyValue::of(ConstValue::of_bool(e.bool_value));
  case ExprKind::None: return PyValue::of(ConstValue::none());
  case ExprKind::Str: return PyValue::of(ConstValue::of_str(e.id));
  case ExprKind::Name: return name(e);
  case ExprKind::List:
  case ExprKind::Tuple:
  case ExprKind::Set: {
    PyValue r;
    r.kind = e.kind == ExprKind::Tuple ? PyValue::Kind::Tuple : PyValue::Kind::List;
    for (const ExprPtr &c : e.children) {
      if (c->kind == ExprKind::Starred) {
        PyValue s = eval(*c->children[0]);
        if (!is_sequence(s))
          fail(c->loc, "can only unpack a list or tuple here, not " + describe(s));
        r.items.insert(r.items.end(), s.items.begin(), s.items.end());
      } else {
        r.items.push_back(eval(*c));
      }
    }
    return r;
  }
  case ExprKind::Dict: {
    PyValue r;
    r.kind = PyValue::Kind::Dict;
    for (size_t i = 0; i + 1 < e.children.size(); i += 2) {
      if (!e.children[i]) { // `**other`
        PyValue o = eval(*e.children[i + 1]);
        if (o.kind != PyValue::Kind::Dict)
          fail(e.children[i + 1]->loc, "can only unpack a dict here, not " + describe(o));
        r.items.insert(r.items.end(), o.items.begin(), o.items.end());
        continue;
      }
      r.items.push_back(eval(*e.children[i]));
      r.items.push_back(eval(*e.children[i + 1]));
    }
    return r;
  }
  case ExprKind::ListComp:
  case ExprKind::SetComp:
  case ExprKind::GeneratorExp:
  case ExprKind::DictComp: return comprehension(e);
  case ExprKind::UnaryOp: {
    const PyValue operand = eval(*e.children[0]);
    if (operand.kind == PyValue::Kind::Unknown && e.op == Op::Not)
      return PyValue::named(PyValue::Kind::Unknown, "not " + operand.c.s);
    const ConstValue v = as_const(operand, e.loc);
    if (e.op == Op::Not)
      return PyValue::of(ConstValue::of_bool(!v.truthy()));
    if (e.op == Op::USub && v.kind == ConstValue::Kind::Float)
      return PyValue::of(ConstValue::of_float(-v.f));
    if (e.op == Op::UAdd && v.is_number())
      return PyValue::of(v);
    if ((e.op == Op::USub || e.op == Op::Invert) && v.is_number() && v.kind != ConstValue::Kind::Float) {
      const int64_t i = v.kind == ConstValue::Kind::Bool ? v.b : v.i;
      if (e.op == Op::USub && i == INT64_MIN)
        fail(e.loc, "integer constant does not fit in int64");
      return PyValue::of(ConstValue::of_int(e.op == Op::USub ? -i : ~i));
    }
    fail(e.loc, std::string("operator '") + op_spelling(e.op) + "' is not defined for " + v.repr());
  }
  case ExprKind::BinOp: return binop(e);
  case ExprKind::BoolOp:
    return bool_op(e, 0);
  case ExprKind::Compare:
    return compare(e);
  case ExprKind::NamedExpr: { // `if spec := find_spec(name):` in a host function
    PyValue v = eval(*e.children[1]);
    if (scopes_.empty() || e.children[0]->kind != ExprKind::Name)
      fail(e.loc, "kiln evaluates ':=' only inside host functions");
    scopes_.back()[e.children[0]->id] = v;
    return v;
  }
  case ExprKind::IfExp:
    return test(eval(*e.children[0]), e.children[0]->loc) ? eval(*e.children[1])
                                                          : eval(*e.children[2]);
  case ExprKind::Lambda: {
    PyValue r;
    r.kind = PyValue::Kind::Lambda;
    r.lambda = &e;
    return r;
  }
  case ExprKind::Call: return call(e);
  case ExprKind::Subscript: return subscript(e);
  case ExprKind::Attribute: {
    const std::string dotted = dotted_name(e);
    const std::string path = dotted.empty() ? "" : canonical_(dotted);
    if (std::optional<DType> t = parse_language_dtype(path)) // `OUT_DTYPE = tl.float16`
      return PyValue::of(ConstValue::of_dtype(*t));
    if (path == "math.pi")
      return PyValue::of(ConstValue::of_float(M_PI));
    if (path == "math.e")
      return PyValue::of(ConstValue::of_float(M_E));
    if (path == "math.inf")
      return PyValue::of(ConstValue::of_float(INFINITY));
    if (path.rfind("torch.", 0) == 0)
      if (std::optional<DType> t = torch_dtype(path.substr(6)))
        return PyValue::of(ConstValue::of_dtype(*t));
    if (std::optional<PyValue> v = dtype_limit(e))
      return *v;
    // kiln compiles for CPUs and NVIDIA GPUs only: wherever its kernels
    // run, PyTorch is not a ROCm build (torchao's is_ROCM()).
    if (path == "torch.version.hip")
      return PyValue::of(ConstValue::none());
    if (path == "triton" || path.rfind("triton.", 0) == 0)
      return PyValue::named(PyValue::Kind::Triton, path);
    if (std::optional<PyValue> v = value_attribute(e))
      return *v;
    fail(e.loc, "kiln cannot evaluate the attribute '" + e.id + "' here (only plain data: numbers, strings, "
                "lists, dicts, comprehensions and triton.Config)");
  }
  default: break;
  }
  fail(e.loc, "kiln cannot evaluate this expression outside a kernel (only plain data: numbers, strings, "
              "lists, dicts, comprehensions, range and triton.Config)");
}

PyValue PyEval::bool_op(const Expr &e, size_t i) {
  const bool is_or = e.op == Op::Or;
  PyValue v = eval(*e.children[i]);
  if (i + 1 == e.children.size())
    return v;
  if (v.kind != PyValue::Kind::Unknown)
    return truthy(v) == is_or ? v : bool_op(e, i + 1);
  // An unknown bool: `u and rest` is False when rest is False whatever u
  // is (torchao's `torch.cuda.is_available() and torch.version.hip is not
  // None`), `u or rest` True when rest is True; otherwise unknown.
  PyValue rest = bool_op(e, i + 1);
  if (rest.kind == PyValue::Kind::Const && rest.c.kind == ConstValue::Kind::Bool &&
      rest.c.b == is_or)
    return rest;
  return PyValue::named(PyValue::Kind::Unknown, v.c.s);
}

std::optional<PyValue> PyEval::value_attribute(const Expr &e) {
  PyValue base;
  try {
    base = eval(*e.children[0]);
  } catch (const CompileError &) {
    return std::nullopt; // the caller's message names the attribute
  }
  if (base.kind == PyValue::Kind::Triton) // `module.rsqrt` of a module from importlib
    return PyValue::named(PyValue::Kind::Triton, base.c.s + "." + e.id);
  if (base.kind == PyValue::Kind::ModuleSpec) {
    if (e.id == "name")
      return PyValue::of(ConstValue::of_str(base.c.s));
    if (e.id == "loader")
      return PyValue::opaque("the loader of '" + base.c.s + "'");
  }
  return std::nullopt;
}

std::optional<PyValue> PyEval::host_library_call(const std::string &path, const Expr &e) {
  auto one_arg = [&](const char *fn) {
    if (e.children.size() != 2 || !e.keywords.empty())
      fail(e.loc, std::string(fn) + " takes one argument here");
    return eval(*e.children[1]);
  };
  auto module_name = [&](const char *fn) {
    const PyValue name = one_arg(fn);
    if (name.kind != PyValue::Kind::Const || name.c.kind != ConstValue::Kind::Str)
      fail(e.children[1]->loc, std::string(fn) + " needs a module name, not " + describe(name));
    if (!is_modelled_triton_module(name.c.s))
      fail(e.children[1]->loc,
           std::string(fn) + "('" + name.c.s +
               "'): kiln evaluates imports only of the triton modules it models "
               "(triton, triton.language, its math, extra and libdevice modules)");
    return name.c.s;
  };
  // xformers' libdevice_find: find_spec, module_from_spec, exec_module, getattr.
  if (path == "importlib.util.find_spec")
    return PyValue::named(PyValue::Kind::ModuleSpec, module_name("importlib.util.find_spec"));
  if (path == "importlib.import_module")
    return PyValue::named(PyValue::Kind::Triton, module_name("importlib.import_module"));
  if (path == "importlib.util.module_from_spec") {
    const PyValue spec = one_arg("importlib.util.module_from_spec");
    if (spec.kind != PyValue::Kind::ModuleSpec)
      fail(e.children[1]->loc,
           "importlib.util.module_from_spec needs a module spec, not " + describe(spec));
    return PyValue::named(PyValue::Kind::Triton, spec.c.s);
  }
  if (path == "torch.cuda.is_available") {
    if (e.children.size() != 1)
      fail(e.loc, "torch.cuda.is_available takes no arguments");
    return PyValue::named(PyValue::Kind::Unknown, "torch.cuda.is_available()");
  }
  return std::nullopt;
}

std::optional<PyValue> PyEval::dtype_limit(const Expr &e) {
  const Expr &info = *e.children[0];
  if (info.kind != ExprKind::Call)
    return std::nullopt;
  const std::string fn = canonical_(dotted_name(*info.children[0]));
  if (fn != "torch.finfo" && fn != "torch.iinfo")
    return std::nullopt;
  if (info.children.size() != 2 || !info.keywords.empty())
    fail(info.loc, fn + " takes one dtype here");
  const PyValue t = eval(*info.children[1]);
  if (t.kind != PyValue::Kind::Const || t.c.kind != ConstValue::Kind::DType)
    fail(info.children[1]->loc, fn + " needs a dtype such as torch.float32, not " + describe(t));
  std::string why;
  if (std::optional<ConstValue> v = torch_dtype_limit(t.c.dtype, fn == "torch.finfo", e.id, why))
    return PyValue::of(*v);
  fail(e.loc, why);
}

PyValue PyEval::name(const Expr &e) {
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
    if (auto v = it->find(e.id); v != it->end())
      return v->second;
  std::string why;
  if (std::optional<PyValue> v = resolve_(e.id, why))
    return *v;
  fail(e.loc, "kiln cannot evaluate '" + e.id + "'" + (why.empty() ? " (it is not defined)" : ": it is " + why));
}

PyValue PyEval::binop(const Expr &e) {
  PyValue a = eval(*e.children[0]);
  PyValue b = eval(*e.children[1]);
  if (e.op == Op::Add && a.kind == b.kind && is_sequence(a)) {
    a.items.insert(a.items.end(), b.items.begin(), b.items.end());
    return a;
  }
  if (e.op == Op::Mul && is_sequence(a) && b.kind == PyValue::Kind::Const) {
    const int64_t n = as_int(b, e.loc, "a repeat count");
    PyValue r;
    r.kind = a.kind;
    if (n > 0 && a.items.size() * static_cast<size_t>(n) > kMaxItems)
      fail(e.loc, "list too long for kiln to evaluate");
    for (int64_t i = 0; i < n; ++i)
      r.items.insert(r.items.end(), a.items.begin(), a.items.end());
    return r;
  }
  return PyValue::of(fold_binary(e.op, as_const(a, e.children[0]->loc), as_const(b, e.children[1]->loc), src_, e.loc));
}

PyValue PyEval::compare(const Expr &e) {
  PyValue left = eval(*e.children[0]);
  for (size_t i = 0; i < e.cmp_ops.size(); ++i) {
    PyValue right = eval(*e.children[i + 1]);
    const Op op = e.cmp_ops[i];
    bool r = false;
    const bool is_test = op == Op::Is || op == Op::IsNot;
    const bool vs_none =
        (left.kind == PyValue::Kind::Const && left.c.kind == ConstValue::Kind::None) ||
        (right.kind == PyValue::Kind::Const && right.c.kind == ConstValue::Kind::None);
    if ((left.kind == PyValue::Kind::Unknown || right.kind == PyValue::Kind::Unknown) &&
        !(is_test && vs_none))
      fail_unknown(src_, left.kind == PyValue::Kind::Unknown ? left : right, e.loc);
    if (op == Op::In || op == Op::NotIn) {
      if (right.kind == PyValue::Kind::Dict) {
        for (size_t k = 0; k < right.items.size() && !r; k += 2)
          r = equal(left, right.items[k]);
      } else if (is_sequence(right)) {
        for (const PyValue &x : right.items)
          r = r || equal(left, x);
      } else if (right.kind == PyValue::Kind::Const && right.c.kind == ConstValue::Kind::Str &&
                 left.kind == PyValue::Kind::Const && left.c.kind == ConstValue::Kind::Str) {
        r = right.c.s.find(left.c.s) != std::string::npos;
      } else {
        fail(e.loc, "'in' needs a list, tuple, dict or string, not " + describe(right));
      }
      r = r != (op == Op::NotIn);
    } else if (op == Op::Is || op == Op::IsNot || op == Op::Eq || op == Op::Ne) {
      r = equal(left, right) != (op == Op::IsNot || op == Op::Ne);
    } else {
      const ConstValue &a = as_const(left, e.loc), &b = as_const(right, e.loc);
      int c = 0;
      if (a.kind == ConstValue::Kind::Str && b.kind == ConstValue::Kind::Str)
        c = a.s.compare(b.s);
      else if (a.is_number() && b.is_number())
        c = a.as_double() < b.as_double() ? -1 : a.as_double() > b.as_double() ? 1 : 0;
      else
        fail(e.loc, std::string("'") + op_spelling(op) + "' is not defined for " + a.repr() + " and " + b.repr());
      r = op == Op::Lt ? c < 0 : op == Op::Le ? c <= 0 : op == Op::Gt ? c > 0 : c >= 0;
    }
    if (!r)
      return PyValue::of(ConstValue::of_bool(false));
    left = std::move(right);
  }
  return PyValue::of(ConstValue::of_bool(true));
}

PyValue PyEval::subscript(const Expr &e) {
  PyValue base = eval(*e.children[0]);
  if (e.children.size() != 2 || e.children[1]->kind == ExprKind::Slice)
    fail(e.loc, "kiln evaluates only single-index subscripts here");
  PyValue index = eval(*e.children[1]);
  if (base.kind == PyValue::Kind::Dict) {
    for (size_t k = 0; k < base.items.size(); k += 2)
      if (equal(base.items[k], index))
        return base.items[k + 1];
    fail(e.loc, "key " + describe(index) + " is not in the dict");
  }
  if (is_sequence(base)) {
    int64_t i = as_int(index, e.children[1]->loc, "an index");
    const int64_t n = static_cast<int64_t>(base.items.size());
    if (i < 0)
      i += n;
    if (i < 0 || i >= n)
      fail(e.loc, "index " + std::to_string(i) + " is out of range");
    return base.items[static_cast<size_t>(i)];
  }
  fail(e.loc, "cannot index " + describe(base));
}

void PyEval::for_each_generator(const Expr &e, size_t gen, const std::function<void()> &body) {
  const size_t first_gen = e.kind == ExprKind::DictComp ? 2 : 1;
  if (first_gen + gen >= e.children.size())
    return body();
  const Expr &g = *e.children[first_gen + gen];
  PyValue iter = eval(*g.children[1]);
  if (iter.kind == PyValue::Kind::Dict) { // iterating a dict gives its keys
    PyValue keys;
    for (size_t k = 0; k < iter.items.size(); k += 2)
      keys.items.push_back(iter.items[k]);
    iter = std::move(keys);
  } else if (!is_sequence(iter)) {
    fail(g.children[1]->loc, "kiln can iterate only over lists, tuples, dicts and range(), not " + describe(iter));
  }
  for (const PyValue &item : iter.items) {
    scopes_.emplace_back();
    std::function<void(const Expr &, const PyValue &)> bind = [&](const Expr &t, const PyValue &v) {
      if (t.kind == ExprKind::Name) {
        scopes_.back()[t.id] = v;
      } else if (t.kind == ExprKind::Tuple || t.kind == ExprKind::List) {
        if (!is_sequence(v) || v.items.size() != t.children.size())
          fail(t.loc, "cannot unpack " + describe(v) + " into " + std::to_string(t.children.size()) + " names");
        for (size_t i = 0; i < t.children.size(); ++i)
          bind(*t.children[i], v.items[i]);
      } else {
        fail(t.loc, "kiln binds only names and tuples of names in a comprehension");
      }
    };
    bind(*g.children[0], item);
    bool keep = true;
    for (size_t c = 2; c < g.children.size() && keep; ++c)
      keep = truthy(eval(*g.children[c]));
    if (keep)
      for_each_generator(e, gen + 1, body);
    scopes_.pop_back();
  }
}

PyValue PyEval::comprehension(const Expr &e) {
  PyValue r;
  r.kind = e.kind == ExprKind::DictComp ? PyValue::Kind::Dict : PyValue::Kind::List;
  for_each_generator(e, 0, [&] {
    if (r.items.size() >= kMaxItems)
      fail(e.loc, "comprehension too long for kiln to evaluate");
    r.items.push_back(eval(*e.children[0]));
    if (e.kind == ExprKind::DictComp)
      r.items.push_back(eval(*e.children[1]));
  });
  return r;
}

PyValue PyEval::call_lambda(const Expr &lambda, PyValue arg) {
  if (lambda.params.size() != 1)
    fail(lambda.loc, "kiln calls only lambdas of one parameter here");
  scopes_.emplace_back();
  scopes_.back()[lambda.params[0].name] = std::move(arg);
  PyValue r = eval(*lambda.children[0]);
  scopes_.pop_back();
  return r;
}

namespace {
/// A `return` leaving a host function kiln interprets.
struct Returned {
  PyValue value;
};
} // namespace

PyValue PyEval::call_function(const Stmt &def, std::vector<PyValue> args, Loc loc) {
  size_t positional = 0;
  for (const Param &p : def.params)
    positional += p.kind == ParamKind::Positional || p.kind == ParamKind::PositionalOnly;
  if (positional != def.params.size() || args.size() > positional)
    fail(loc, "kiln evaluates only calls of plain functions with positional parameters ('" + def.id + "')");
  if (++depth_ > kMaxDepth) {
    depth_ = 0;
    fail(loc, "calls nested too deeply for kiln to evaluate");
  }
  scopes_.emplace_back();
  const size_t frame = scopes_.size();
  for (size_t i = 0; i < def.params.size(); ++i) {
    if (i < args.size())
      scopes_.back()[def.params[i].name] = std::move(args[i]);
    else if (def.params[i].default_value)
      scopes_.back()[def.params[i].name] = eval(*def.params[i].default_value);
    else
      fail(loc, "'" + def.id + "' is missing its argument '" + def.params[i].name + "'");
  }
  PyValue result = PyValue::of(ConstValue::none());
  try {
    exec_body(def.body);
  } catch (Returned &r) {
    result = std::move(r.value);
  }
  scopes_.resize(frame - 1);
  --depth_;
  return result;
}

PyValue PyEval::call_function_value(const PyValue &fn, std::vector<PyValue> args, Loc loc) {
  if (!fn.home)
    return call_function(*fn.def, std::move(args), loc);
  PyEval callee = *fn.home; // names in its body are those of its own module
  callee.depth_ = depth_;
  return callee.call_function(*fn.def, std::move(args), loc);
}

void PyEval::assign(const Expr &target, PyValue v) {
  if (target.kind == ExprKind::Tuple || target.kind == ExprKind::List) {
    // `bm, bn = ...` and `for bm, bn, bk in [...]` in a config builder.
    if (!is_sequence(v) || v.items.size() != target.children.size())
      fail(target.loc, "cannot unpack " + describe(v) + " into " +
                           std::to_string(target.children.size()) + " names");
    for (size_t i = 0; i < target.children.size(); ++i)
      assign(*target.children[i], v.items[i]);
    return;
  }
  if (target.kind != ExprKind::Name)
    fail(target.loc,
         "kiln evaluates only assignments to names and tuples of names in host functions");
  scopes_.back()[target.id] = std::move(v);
}

void PyEval::exec_body(const Body &body) {
  for (const StmtPtr &sp : body) {
    const Stmt &s = *sp;
    switch (s.kind) {
    case StmtKind::Pass: break;
    case StmtKind::Return: throw Returned{s.value ? eval(*s.value) : PyValue::of(ConstValue::none())};
    case StmtKind::Assign:
      for (const ExprPtr &t : s.targets)
        assign(*t, eval(*s.value));
      break;
    case StmtKind::AugAssign: {
      PyValue cur = eval(*s.targets[0]);
      PyValue add = eval(*s.value);
      if (s.op == Op::Add && is_sequence(cur) && cur.kind == add.kind) {
        cur.items.insert(cur.items.end(), add.items.begin(), add.items.end());
        assign(*s.targets[0], std::move(cur));
      } else {
        assign(*s.targets[0],
               PyValue::of(fold_binary(s.op, as_const(cur, s.loc), as_const(add, s.loc), src_, s.loc)));
      }
      break;
    }
    case StmtKind::If:
      exec_body(test(eval(*s.test), s.test->loc) ? s.body : s.orelse);
      break;
    case StmtKind::Assert:
      if (!test(eval(*s.test), s.test->loc))
        fail(s.loc, "this assert of a host function fails when kiln evaluates it");
      break;
    case StmtKind::Raise:
      fail(s.loc, "the host function raises here when kiln evaluates it");
    case StmtKind::For: {
      PyValue iter = eval(*s.value);
      if (!is_sequence(iter))
        fail(s.value->loc, "kiln can iterate only over lists, tuples and range(), not " + describe(iter));
      for (const PyValue &item : iter.items) {
        assign(*s.targets[0], item);
        exec_body(s.body);
      }
      break;
    }
    case StmtKind::ExprStmt: {
      const Expr &v = *s.value;
      if (v.kind == ExprKind::Str)
        break; // a docstring
      // `spec.loader.exec_module(module)` of a triton module kiln models
      // (xformers' libdevice_find): importing it changes nothing kiln sees.
      if (v.kind == ExprKind::Call && v.children[0]->kind == ExprKind::Attribute &&
          v.children[0]->id == "exec_module" && v.children.size() == 2 &&
          eval(*v.children[1]).kind == PyValue::Kind::Triton)
        break;
      // `configs.append(x)` / `configs.extend(xs)` on a local list
      if (v.kind == ExprKind::Call && v.children[0]->kind == ExprKind::Attribute &&
          v.children[0]->children[0]->kind == ExprKind::Name && v.children.size() == 2 &&
          (v.children[0]->id == "append" || v.children[0]->id == "extend")) {
        const Expr &list = *v.children[0]->children[0];
        PyValue cur = eval(list);
        if (cur.kind != PyValue::Kind::List)
          fail(list.loc, "'" + list.id + "' is not a list");
        PyValue x = eval(*v.children[1]);
        if (v.children[0]->id == "append") {
          cur.items.push_back(std::move(x));
        } else {
          if (!is_sequence(x))
            fail(v.loc, "extend() needs a list or tuple");
          cur.items.insert(cur.items.end(), x.items.begin(), x.items.end());
        }
        if (cur.items.size() > kMaxItems)
          fail(v.loc, "list too long for kiln to evaluate");
        assign(list, std::move(cur));
        break;
      }
      fail(s.loc, "kiln cannot evaluate this statement of a host function");
    }
    default: fail(s.loc, "kiln cannot evaluate this statement of a host function");
    }
  }
}

std::shared_ptr<const AutotuneConfig> PyEval::config(const Expr &e) {
  auto c = std::make_shared<AutotuneConfig>();
  c->loc = e.loc;
  static const char *const kPositional[] = {"kwargs", "num_warps", "num_stages", "num_ctas", "maxnreg", "pre_hook"};
  std::vector<std::pair<std::string, const Expr *>> args;
  for (size_t i = 1; i < e.children.size(); ++i) {
    if (i - 1 >= std::size(kPositional))
      fail(e.children[i]->loc, "triton.Config takes at most 6 positional arguments");
    args.emplace_back(kPositional[i - 1], e.children[i].get());
  }
  for (const Keyword &k : e.keywords)
    args.emplace_back(k.name, k.value.get());
  for (const auto &[name, value] : args) {
    if (name == "kwargs") {
      PyValue d = eval(*value);
      if (d.kind != PyValue::Kind::Dict)
        fail(value->loc, "the first argument of triton.Config must be a dict of meta-parameters");
      for (size_t k = 0; k < d.items.size(); k += 2) {
        const ConstValue &key = as_const(d.items[k], value->loc);
        if (key.kind != ConstValue::Kind::Str)
          fail(value->loc, "triton.Config's meta-parameter names must be strings, not " + key.repr());
        c->kwargs.emplace_back(key.s, as_const(d.items[k + 1], value->loc));
      }
    } else if (name == "pre_hook") {
      c->has_pre_hook = !(value->kind == ExprKind::None);
    } else if (name == "num_warps" || name == "num_stages" || name == "num_ctas" || name == "maxnreg") {
      PyValue v = eval(*value);
      if (v.kind == PyValue::Kind::Const && v.c.kind == ConstValue::Kind::None)
        continue;
      const int64_t n = as_int(v, value->loc, name.c_str());
      (name == "num_warps" ? c->num_warps : name == "num_stages" ? c->num_stages
                                          : name == "num_ctas"   ? c->num_ctas
                                                                 : c->maxnreg) = n;
    } else if (name == "num_buffers_warp_spec" || name == "num_consumer_groups" || name == "reg_dec_producer" ||
               name == "reg_inc_consumer" || name == "ir_override") {
      // Options of Triton's other backends; nothing here to apply them to.
    } else {
      fail(value->loc, "triton.Config has no argument '" + name + "'");
    }
  }
  return c;
}

PyValue PyEval::call(const Expr &e) {
  const Expr &callee = *e.children[0];
  // Lambdas and comprehension variables shadow everything.
  if (callee.kind == ExprKind::Name)
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
      if (auto v = it->find(callee.id); v != it->end() && v->second.kind == PyValue::Kind::Lambda) {
        if (e.children.size() != 2)
          fail(e.loc, "kiln calls only lambdas of one argument here");
        return call_lambda(*v->second.lambda, eval(*e.children[1]));
      }
  const std::string dotted = dotted_name(callee);
  const std::string path = dotted.empty() ? "" : canonical_(dotted);
  std::vector<PyValue> args;
  auto positional = [&] {
    for (size_t i = 1; i < e.children.size(); ++i) {
      if (e.children[i]->kind == ExprKind::Starred)
        fail(e.children[i]->loc, "kiln does not evaluate *args here");
      args.push_back(eval(*e.children[i]));
    }
  };
  auto want_args = [&](size_t lo, size_t hi, const char *fn) {
    if (args.size() < lo || args.size() > hi)
      fail(e.loc, std::string(fn) + " takes " + std::to_string(lo) +
                      (lo == hi ? "" : " to " + std::to_string(hi)) + " arguments");
  };
  if (path == "triton.Config")
    return [&] {
      PyValue r;
      r.kind = PyValue::Kind::Config;
      r.config = config(e);
      return r;
    }();
  if (path == "triton.language.constexpr") {
    positional();
    want_args(1, 1, "tl.constexpr");
    return args[0];
  }
  if (path == "triton.next_power_of_2") {
    positional();
    want_args(1, 1, "triton.next_power_of_2");
    int64_t n = as_int(args[0], e.loc, "next_power_of_2's argument") - 1;
    for (int s : {1, 2, 4, 8, 16, 32})
      n |= n >> s;
    return PyValue::of(ConstValue::of_int(n + 1));
  }
  if (path == "triton.cdiv") {
    positional();
    want_args(2, 2, "triton.cdiv");
    const ConstValue x = as_const(args[0], e.loc), y = as_const(args[1], e.loc);
    const ConstValue one = ConstValue::of_int(1);
    return PyValue::of(fold_binary(Op::FloorDiv, fold_binary(Op::Sub, fold_binary(Op::Add, x, y, src_, e.loc), one, src_, e.loc), y,
                                   src_, e.loc));
  }
  if (!path.empty())
    if (std::optional<PyValue> v = host_library_call(path, e))
      return *v;
  if (!path.empty() && path.rfind("math.", 0) == 0) {
    positional();
    const std::string fn = path.substr(5);
    if ((fn == "ceil" || fn == "floor" || fn == "log2" || fn == "sqrt" || fn == "log") && args.size() == 1) {
      const double x = as_const(args[0], e.loc).as_double();
      if (fn == "ceil" || fn == "floor")
        return PyValue::of(ConstValue::of_int(static_cast<int64_t>(fn == "ceil" ? std::ceil(x) : std::floor(x))));
      return PyValue::of(ConstValue::of_float(fn == "log2" ? std::log2(x) : fn == "sqrt" ? std::sqrt(x) : std::log(x)));
    }
  }
  if (callee.kind == ExprKind::Name && path.empty()) {
    std::string why;
    std::optional<PyValue> bound = resolve_(callee.id, why);
    if (bound && bound->kind == PyValue::Kind::Lambda) {
      if (e.children.size() != 2)
        fail(e.loc, "kiln calls only lambdas of one argument here");
      return call_lambda(*bound->lambda, eval(*e.children[1]));
    }
    if (bound && bound->kind == PyValue::Kind::Function) {
      positional();
      if (!e.keywords.empty())
        fail(e.loc, "kiln does not evaluate keyword arguments of '" + callee.id + "'");
      return call_function_value(*bound, std::move(args), e.loc);
    }
    if (!bound && why.empty()) {
      const std::string &fn = callee.id;
      if (fn == "range") {
        positional();
        want_args(1, 3, "range");
        int64_t start = 0, stop = 0, step = 1;
        if (args.size() == 1) {
          stop = as_int(args[0], e.loc, "range's argument");
        } else {
          start = as_int(args[0], e.loc, "range's start");
          stop = as_int(args[1], e.loc, "range's stop");
          if (args.size() == 3)
            step = as_int(args[2], e.loc, "range's step");
        }
        if (step == 0)
          fail(e.loc, "range() step must not be zero");
        PyValue r;
        r.kind = PyValue::Kind::List;
        for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
          if (r.items.size() >= kMaxItems)
            fail(e.loc, "range too long for kiln to evaluate");
          r.items.push_back(PyValue::of(ConstValue::of_int(i)));
        }
        return r;
      }
      if (fn == "dict") {
        PyValue r;
        r.kind = PyValue::Kind::Dict;
        if (e.children.size() > 1)
          fail(e.loc, "kiln evaluates dict() with keyword arguments only");
        for (const Keyword &k : e.keywords) {
          if (k.name.empty())
            fail(k.loc, "kiln does not evaluate **kwargs here");
          r.items.push_back(PyValue::of(ConstValue::of_str(k.name)));
          r.items.push_back(eval(*k.value));
        }
        return r;
      }
      positional();
      if (fn == "getattr" && (args.size() == 2 || args.size() == 3) &&
          args[0].kind == PyValue::Kind::Triton) {
        // `getattr(module, name)` of a triton module: its member (whether it
        // exists is checked where a kernel uses it).
        const ConstValue &member = as_const(args[1], e.loc);
        if (member.kind != ConstValue::Kind::Str)
          fail(e.loc, "getattr needs an attribute name, not " + member.repr());
        return PyValue::named(PyValue::Kind::Triton, args[0].c.s + "." + member.s);
      }
      if (fn == "len") {
        want_args(1, 1, "len");
        if (args[0].kind == PyValue::Kind::Dict)
          return PyValue::of(ConstValue::of_int(static_cast<int64_t>(args[0].items.size() / 2)));
        if (!is_sequence(args[0]))
          fail(e.loc, "len() needs a list, tuple or dict, not " + describe(args[0]));
        return PyValue::of(ConstValue::of_int(static_cast<int64_t>(args[0].items.size())));
      }
      if (fn == "list" || fn == "tuple") {
        want_args(0, 1, fn.c_str());
        PyValue r = args.empty() ? PyValue() : args[0];
        if (!args.empty() && !is_sequence(r))
          fail(e.loc, fn + "() needs a list or tuple here, not " + describe(r));
        r.kind = fn == "list" ? PyValue::Kind::List : PyValue::Kind::Tuple;
        return r;
      }
      if (fn == "min" || fn == "max") {
        std::vector<PyValue> xs = args.size() == 1 && is_sequence(args[0]) ? args[0].items : args;
        if (xs.empty())
          fail(e.loc, fn + "() needs at least one value");
        PyValue best = xs[0];
        for (size_t i = 1; i < xs.size(); ++i) {
          const double a = as_const(xs[i], e.loc).as_double(), b = as_const(best, e.loc).as_double();
          if (fn == "min" ? a < b : a > b)
            best = xs[i];
        }
        return best;
      }
      if (fn == "int" || fn == "float" || fn == "abs" || fn == "bool") {
        want_args(1, 1, fn.c_str());
        const ConstValue &v = as_const(args[0], e.loc);
        if (fn == "float" && v.kind == ConstValue::Kind::Str) {
          if (std::optional<double> d = python_float(v.s))
            return PyValue::of(ConstValue::of_float(*d));
          fail(e.loc, "could not convert string to float: " + v.repr());
        }
        if (!v.is_number())
          fail(e.loc, fn + "() of " + v.repr() + " is not evaluated by kiln");
        if (fn == "float")
          return PyValue::of(ConstValue::of_float(v.as_double()));
        if (fn == "bool")
          return PyValue::of(ConstValue::of_bool(v.truthy()));
        if (fn == "int")
          return PyValue::of(ConstValue::of_int(v.kind == ConstValue::Kind::Float ? static_cast<int64_t>(v.f)
                                                                                   : v.kind == ConstValue::Kind::Bool ? v.b
                                                                                                                      : v.i));
        if (v.kind == ConstValue::Kind::Float)
          return PyValue::of(ConstValue::of_float(std::fabs(v.f)));
        return PyValue::of(ConstValue::of_int(v.i < 0 ? -v.i : v.i));
      }
    }
    if (!bound)
      fail(callee.loc, "kiln cannot evaluate the call to '" + callee.id + "'" +
                           (why.empty() ? "" : ": it is " + why));
  }
  if (!dotted.empty())
    fail(callee.loc,
         "kiln cannot evaluate the call to '" + dotted +
             "' (host code; kiln evaluates only range, len, min, max, int, float, abs, dict, list, "
             "getattr, triton.Config, triton.cdiv, triton.next_power_of_2, plain functions and "
             "lambdas over plain data)");
  fail(callee.loc, "kiln cannot evaluate this call outside a kernel (only range, len, min, max, int, float, abs, "
                   "dict, list, triton.Config, triton.cdiv, triton.next_power_of_2 and lambdas over plain data)");
}

} // namespace kiln::frontend
