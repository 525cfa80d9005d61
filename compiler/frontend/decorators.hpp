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
  Loc loc;
};

/// `"NAME": lambda args: EXPR` of `@triton.heuristics({...})`: NAME's value is
/// EXPR evaluated at launch over the bound arguments.
struct Heuristic {
  std::string name;
  std::string args_name; ///< the lambda's parameter ("args", "META", ...)
  const Expr *body = nullptr;
  Loc loc;
};

} // namespace kiln::frontend
