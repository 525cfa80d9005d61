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

struct PyValue {
  enum class Kind : uint8_t {
    Const,  ///< c
    List,   ///< items
    Tuple,  ///< items
    Dict,   ///< items: key0, value0, key1, value1, ...
    Config, ///< config: a triton.Config
    Lambda,   ///< lambda: a `lambda` expression, not called here
    Function, ///< def: a plain module-level function kiln may interpret
    Opaque, ///< a value kiln has but cannot compute with (a pointer argument): c.s says what
  };
  Kind kind = Kind::Const;
  ConstValue c;
  std::vector<PyValue> items;
  std::shared_ptr<const AutotuneConfig> config;
  const Expr *lambda = nullptr;
  const Stmt *def = nullptr;

  static PyValue of(ConstValue v) {
    PyValue p;
    p.c = std::move(v);
    return p;
  }
  static PyValue opaque(std::string what) {
    PyValue p;
    p.kind = Kind::Opaque;
    p.c = ConstValue::of_str(std::move(what));
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

private:
  [[noreturn]] void fail(Loc loc, const std::string &msg) const { throw src_.error(loc, msg); }
  PyValue name(const Expr &e);
  /// `torch.finfo(t).max` and the like; nullopt when `e` is no such read.
  std::optional<PyValue> dtype_limit(const Expr &e);
  PyValue call(const Expr &e);
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
