// What a kernel file binds at module level, as far as a kernel can use it:
// imports of triton (under any alias) and of other kernel files, constexpr
// globals, and jit functions with their decorator options and parameters.
//
// Triton's module model: the whole file is Python, but only jit functions and
// the names they read are compiled. Everything else (host code, `import
// torch`, classes, wrappers) is recorded as a host name and is an error only
// when a kernel reads it.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compiler/frontend/ast.hpp"
#include "compiler/frontend/const_value.hpp"
#include "compiler/frontend/decorators.hpp"

namespace kiln::frontend {

struct ParamInfo {
  std::string name;
  unsigned index = 0;
  std::string annotation;              ///< as written, "" if none
  std::optional<DType> annotated_type; ///< `x: tl.int64`
  bool is_constexpr = false;
  bool is_const = false; ///< `tl.const` annotation: pointer is read-only (`*k...`)
  bool do_not_specialize = false;
  bool do_not_specialize_on_alignment = false;
  std::optional<ConstValue> default_value;
  /// A default kiln could not evaluate (host code computes it, e.g.
  /// `FP8_MIN: tl.constexpr = torch.finfo(...).min`), as written, or
  /// "an expression"; "" when there is none or it was evaluated.
  std::string unevaluated_default;
  Loc loc;
};

struct ModuleInfo;

struct JitFunctionInfo {
  const ModuleInfo *module = nullptr; ///< the module that defines it
  std::string name;                   ///< the name it is bound to (`k = triton.jit(_k)`: "k")
  const Stmt *def = nullptr;
  std::vector<ParamInfo> params;
  bool noinline = false;
  bool debug = false;
  /// A plain def that runs at compile time on compile-time values: one
  /// decorated `@tl.constexpr` / `@triton.constexpr_function`, which kernels
  /// may call, or (undecorated) a plain helper such a function calls.
  bool compile_time = false;
  bool constexpr_decorated = false;
  std::string source; ///< the function's text without decorators
  uint32_t first_line = 0;
  /// `@triton.autotune` / `@triton.heuristics` above the jit decorator.
  std::optional<AutotuneInfo> autotune;
  std::vector<Heuristic> heuristics;
  /// Why a `@triton.heuristics` dict could not be read (host code builds
  /// it); the kernel still runs when a launch gives those values itself.
  std::string heuristics_error;
  /// What is wrong with its signature or decorators, thrown when the
  /// function is used (launched, compiled or called), never at load: one
  /// broken kernel does not break the others of its file.
  std::shared_ptr<const CompileError> error;

  /// Throws `error`, if any.
  void check() const {
    if (error)
      throw *error;
  }
};

/// What a module-level name is bound to when it names part of triton.
enum class ModuleAlias : uint8_t {
  Triton,       ///< `import triton`
  Language,     ///< `import triton.language as tl`
  LanguageMath, ///< `tl.math`
  Extra,        ///< `triton.language.extra` (and its `.cuda`)
  Libdevice,    ///< `from triton.language.extra[.cuda] import libdevice`
  Math,         ///< Python's `math`
};

struct GlobalInfo {
  std::string name;
  ConstValue value;
  bool is_constexpr = false; ///< made with tl.constexpr(...)
  Loc loc;
};

/// A module-level name kiln gives no value to, and why: reading it from a
/// kernel is an error that names it, what it is and where it was bound.
struct HostName {
  std::string what; ///< "a class", "the module 'torch'", "a plain Python function", ...
  Loc loc;
  /// The dotted path when the name is an imported module ("torch"), else "".
  std::string module;
};

class ModuleSet;

/// The analysed module. Immutable after analysis; shared read-only by every
/// compile of its kernels.
struct ModuleInfo {
  Module ast;
  std::map<std::string, ModuleAlias> aliases;
  /// Names bound to members of triton.language or libdevice: `tanh =
  /// libdevice.tanh`, `from triton.language import constexpr`: name ->
  /// (module, member).
  std::map<std::string, std::pair<ModuleAlias, std::string>> language_names;
  std::vector<std::unique_ptr<JitFunctionInfo>> functions; ///< in file order
  std::map<std::string, GlobalInfo> globals;
  /// Jit functions and modules of other kernel files bound by imports.
  std::map<std::string, const JitFunctionInfo *> imported_functions;
  std::map<std::string, const ModuleInfo *> imported_modules;
  std::map<std::string, HostName> host_names;
  /// Plain module-level functions, which a heuristic may call.
  std::map<std::string, const Stmt *> plain_functions;
  /// Plain functions of other files bound by imports (`from
  /// xformers.triton.importing import libdevice_find`): host code at module
  /// level may call them; they run on their own module's names.
  std::map<std::string, std::pair<const ModuleInfo *, const Stmt *>> imported_plain_functions;
  /// Module-level names bound to data kiln did not evaluate (a config list
  /// built by host code), read when a decorator or host function needs them.
  std::map<std::string, const Expr *> data_exprs;
  /// Such data bound by imports (`from .tables import SIZES`): evaluated on
  /// its own module's names.
  std::map<std::string, std::pair<const ModuleInfo *, const Expr *>> imported_data;
  /// Plain defs kiln runs at compile time (JitFunctionInfo::compile_time);
  /// empty unless the module decorates one `@tl.constexpr`.
  std::map<std::string, std::unique_ptr<JitFunctionInfo>> compile_time_functions;
  /// The strings of `__all__ = [...]`, when the module has one kiln can
  /// evaluate: the names `from this import *` binds.
  std::optional<std::vector<std::string>> all_names;
  /// Keeps the modules this one imports (and their imports) alive.
  std::shared_ptr<const ModuleSet> imports;

  /// The canonical path of a dotted name given this module's imports:
  /// "triton.language.constexpr" for `tl.constexpr` after `import
  /// triton.language as tl`; "torch.float32" for `th.float32` after
  /// `import torch as th` (for the plain-data evaluator only); "" when it is
  /// not part of triton, math or torch.
  std::string canonical(const std::string &dotted) const;

  /// Every name bound at module level (jit functions, globals, imports,
  /// host names), sorted: what `from this import *` can bind.
  std::vector<std::string> bound_names() const;

  /// A jit function this module defines.
  const JitFunctionInfo *function(std::string_view name) const;
  /// A jit function a kernel of this module can call by `name`: its own or imported.
  const JitFunctionInfo *visible_function(const std::string &name) const;

  /// Analyses a parsed file; `search_path` is where `import x` looks for
  /// other kernel files (the file's own folder and package root come
  /// first). Throws CompileError only for errors in jit functions'
  /// signatures and decorators.
  static std::shared_ptr<const ModuleInfo> analyze(Module ast, const std::vector<std::string> &search_path = {});
};

class PyEval;

/// An evaluator of `m`'s module-level data, as host code at module level
/// sees it: constants, data assigned to names, and plain functions (its own
/// and imported ones) that build data. What heuristics and decorators run on.
PyEval module_evaluator(const ModuleInfo &m);

/// `if __name__ == "__main__":`, the file's own main program.
bool is_name_main_test(const Expr &e);

/// Whether `path` ("triton.language.extra.libdevice") is a triton module kiln
/// models: what host code may import with importlib at compile time.
bool is_modelled_triton_module(std::string_view path);

} // namespace kiln::frontend
