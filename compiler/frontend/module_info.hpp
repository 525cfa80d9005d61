// What a kernel file declares at module level: imports, constexpr globals
// and @triton.jit functions with their decorator options and parameters.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compiler/frontend/ast.hpp"
#include "compiler/frontend/const_value.hpp"

namespace kiln::frontend {

struct ParamInfo {
  std::string name;
  unsigned index = 0;
  std::string annotation;          ///< as written, "" if none
  std::optional<DType> annotated_type; ///< `x: tl.int64`, `p: tl.pointer_type(...)` unsupported
  bool is_constexpr = false;
  bool is_const = false;           ///< `tl.const` annotation: pointer is read-only (`*k...`)
  bool do_not_specialize = false;
  bool do_not_specialize_on_alignment = false;
  std::optional<ConstValue> default_value;
  Loc loc;
};

struct ModuleInfo;

struct JitFunctionInfo {
  const ModuleInfo *module = nullptr; ///< the module that defines it
  std::string name;
  const Stmt *def = nullptr;
  std::vector<ParamInfo> params;
  bool noinline = false;
  bool debug = false;
  std::string source; ///< the function's text without decorators
  uint32_t first_line = 0;
};

/// What a module-level name is bound to.
enum class ModuleAlias : uint8_t { Triton, Language, Math };

struct GlobalInfo {
  std::string name;
  ConstValue value;
  bool is_constexpr = false; ///< made with tl.constexpr(...)
  Loc loc;
};

/// The analysed module. Immutable after analyze(); shared read-only by every
/// compile of its kernels.
struct ModuleInfo {
  Module ast;
  std::map<std::string, ModuleAlias> aliases;
  std::set<std::string> jit_names; ///< names bound by `from triton import jit`
  std::vector<std::unique_ptr<JitFunctionInfo>> functions; ///< in file order
  std::map<std::string, GlobalInfo> globals;

  const JitFunctionInfo *function(std::string_view name) const;

  /// Checks the module-level statements (only imports of triton and math,
  /// constant globals and @triton.jit functions are allowed) and collects
  /// them. Throws CompileError.
  static std::shared_ptr<const ModuleInfo> analyze(Module ast);
};

} // namespace kiln::frontend
