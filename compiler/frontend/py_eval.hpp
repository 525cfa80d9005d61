// An evaluator for the plain-data Python that surrounds kernels: the config
// lists of `@triton.autotune` (lists, dicts, comprehensions, `range`,
// arithmetic, `triton.Config(...)`) and the lambdas of `@triton.heuristics`
// (evaluated at launch over the bound arguments). kiln never runs host
// code; whatever this cannot evaluate is an error that names the construct.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/frontend/ast.hpp"
#include "compiler/frontend/const_value.hpp"
#include "compiler/frontend/decorators.hpp"
#include "compiler/frontend/source.hpp"

namespace kiln::frontend {

class PyEval;

struct PyValue {
  enum class Kind : uint8_t {
    Const,    ///< c
    List,     ///< items
    Tuple,    ///< items
    Dict,     ///< items: key0, value0, key1, value1, ...
    Config,   ///< config: a triton.Config
    Lambda,   ///< lambda: a `lambda` expression, not called here
    Function, ///< def: a plain module-level function kiln may interpret
    Opaque,   ///< a value kiln has but cannot compute with (a pointer argument): c.s says what
    /// A module or member of triton that kiln models, by its canonical
    /// path in c.s ("triton.language.extra.libdevice.rsqrt"): what host
    /// code such as xformers' `libdevice_find("rsqrt")` returns.
    Triton,
    /// The importlib module spec of the module c.s names (`find_spec`).
    ModuleSpec,
    /// A bool only the host knows when the kernel runs (c.s names it:
    /// "torch.cuda.is_available()"). Expressions whose value does not
    /// depend on it fold (`unknown and False`); others are an error.
    Unknown,
  };
  Kind kind = Kind::Const;
  ConstValue c;
  std::vector<PyValue> items;
  std::shared_ptr<const AutotuneConfig> config;
  const Expr *lambda = nullptr;
  const Stmt *def = nullptr;
  /// Function: the evaluator of the module that defines it, when that is
  /// not the module of the call (a host function imported from another
  /// file runs on that file's names).
  std::shared_ptr<const PyEval> home;

  static PyValue of(ConstValue v) {
    PyValue p;
    p.c = std::move(v);
    return p;
  }
  static PyValue opaque(std::string what) { return named(Kind::Opaque, std::move(what)); }
  static PyValue named(Kind k, std::string text) {
    PyValue p;
    p.kind = k;
    p.c = ConstValue::of_str(std::move(text));
    return p;
  }
};

class PyEval {
public:
  /// A module-level name's value, or nullopt when it has none kiln knows
  /// (then `why` may say what the name is).
  using Resolver = std::function<std::optional<PyValue>(const std::string &name, std::string &why)>;
  /// The canonical path of a dotted name ("triton.Config" for `triton.Config`).
  using Canonical = std::function<std::string(const std::string &dotted)>;

  PyEval(const SourceFile &src, Resolver resolve, Canonical canonical)
      : src_(src), resolve_(std::move(resolve)), canonical_(std::move(canonical)) {}

  /// Throws CompileError at the construct that cannot be evaluated.
  PyValue eval(const Expr &e);
  /// Calls a one-parameter lambda with `arg`.
  PyValue call_lambda(const Expr &lambda, PyValue arg);
  /// Interprets a plain function that builds data (`def get_configs():
  /// configs = []; for ...: configs.append(triton.Config(...)); return configs`).
  PyValue call_function(const Stmt &def, std::vector<PyValue> args, Loc loc);
  /// Calls a Function value: in its home module's evaluator when it has one.
  PyValue call_function_value(const PyValue &fn, std::vector<PyValue> args, Loc loc);

private:
  [[noreturn]] void fail(Loc loc, const std::string &msg) const { throw src_.error(loc, msg); }
  PyValue name(const Expr &e);
  /// `torch.finfo(t).max` and the like; nullopt when `e` is no such read.
  std::optional<PyValue> dtype_limit(const Expr &e);
  PyValue call(const Expr &e);
  /// Calls of importlib and torch that host code uses to pick a triton
  /// member or test the platform; nullopt when `path` is none of them.
  std::optional<PyValue> host_library_call(const std::string &path, const Expr &call);
  /// `a and b or ...` from operand i on, as Python evaluates it, with
  /// Unknown operands folded where the result does not depend on them.
  PyValue bool_op(const Expr &e, size_t i);
  /// `base.attr` on a value (a module spec, a triton module); nullopt when
  /// kiln has no such attribute.
  std::optional<PyValue> value_attribute(const Expr &e);
  /// Python's truth test of a value kiln must know (an Unknown fails).
  bool test(const PyValue &v, Loc loc) const;
  PyValue subscript(const Expr &e);
  PyValue binop(const Expr &e);
  PyValue compare(const Expr &e);
  PyValue comprehension(const Expr &e);
  void exec_body(const Body &body);
  void assign(const Expr &target, PyValue v);
  void for_each_generator(const Expr &e, size_t gen, const std::function<void()> &body);
  std::shared_ptr<const AutotuneConfig> config(const Expr &e);
  int64_t as_int(const PyValue &v, Loc loc, const char *what) const;
  const ConstValue &as_const(const PyValue &v, Loc loc) const;

  const SourceFile &src_;
  Resolver resolve_;
  Canonical canonical_;
  std::vector<std::map<std::string, PyValue>> scopes_; ///< comprehension and lambda variables
  int depth_ = 0;
};

/// "a.b.c" for an attribute chain on a name ("tl.constexpr"), "" for anything else.
std::string dotted_name(const Expr &e);

/// Python's truthiness of a value.
bool truthy(const PyValue &v);

} // namespace kiln::frontend
