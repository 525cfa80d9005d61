// The data of `@triton.autotune` and `@triton.heuristics` decorators, kept on
// the jit function they decorate. kiln reads them from the file without
// running Python: configs must be plain data (lists, dicts, comprehensions,
// arithmetic on constants), heuristics lambdas over the launch arguments.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/frontend/ast.hpp"
#include "compiler/frontend/const_value.hpp"

namespace kiln::frontend {

/// One `triton.Config({"BLOCK": 128, ...}, num_warps=4, num_stages=3, ...)`.
struct AutotuneConfig {
  std::vector<std::pair<std::string, ConstValue>> kwargs; ///< the constexpr values, in order
  std::optional<int64_t> num_warps, num_stages, num_ctas, maxnreg;
  bool has_pre_hook = false; ///< a Python callable; kiln takes hooks from C++
  Loc loc;
};

/// `@triton.autotune(configs=[...], key=[...], ...)`.
struct AutotuneInfo {
  std::vector<AutotuneConfig> configs;
  std::vector<std::string> key;
  std::vector<std::string> reset_to_zero;
  std::vector<std::string> restore_value;
  std::optional<int64_t> warmup, rep;
  /// Arguments that are Python callables (prune_configs_by, perf_model,
  /// pre_hook, post_hook, ...): kiln takes them as C++ callbacks instead.
  std::vector<std::string> callables;
  /// Why kiln could not read the configs (they are built by host code it
  /// does not run), or "" when `configs` holds them. Reported only when a
  /// launch needs a config's values.
  std::string error;
  Loc loc;
};

/// `"NAME": lambda args: EXPR` of `@triton.heuristics({...})`: NAME's value is
/// EXPR evaluated at launch over the bound arguments (a parameter, or an
/// option such as num_warps). A module-level `def f(args)` may stand for the
/// lambda, as FlagGems writes some.
struct Heuristic {
  std::string name;
  const Expr *lambda = nullptr; ///< the lambda, owned by the module's tree
  const Stmt *def = nullptr;    ///< or the plain function
  Loc loc;
};

class PyEval;
struct JitFunctionInfo;

/// Reads `@triton.autotune(...)` or `@triton.heuristics(...)` (`path` says
/// which) into `fn`. Throws CompileError for malformed decorators; configs
/// that are not plain data are kept as AutotuneInfo::error.
void read_decorator(JitFunctionInfo &fn, const std::string &path, const Expr &decorator, PyEval &eval);

} // namespace kiln::frontend
