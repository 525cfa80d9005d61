// Cache keys: the function key (the seed's JITFunction.cache_key) and the
// compile key that names a compiled binary on disk and in remote caches.
#pragma once

#include <string>
#include <vector>

#include "compiler/specialization.hpp"
#include "compiler/target.hpp"
#include "kiln/options.hpp"

namespace kiln::runtime {

/// Hex SHA-256 over the function's source, its decorator options (noinline,
/// debug), the keys of every jit function it calls (transitively; a
/// placeholder breaks cycles), its first line, and the values of the
/// constexpr globals it reads. `globals` are the current values of the
/// function's own module; `others` those of the other modules it reaches
/// (a module not listed counts with the values it was analysed with).
std::string function_cache_key(const frontend::JitFunctionInfo &fn,
                               const compiler::GlobalValues &globals,
                               const compiler::ModuleGlobals *others = nullptr);

/// What decides a binary besides the kernel's own function key.
struct CompileKeyInputs {
  std::string function_key;
  std::string specialization;
  /// The full function key of every jit function passed as a constexpr
  /// argument, in parameter order (the specialization names them only).
  std::vector<std::string> constexpr_function_keys;
  Options options;
  compiler::Target target;
  /// Every environment knob that changes the code (KILN_OVERRIDE_DIR).
  std::string code_knobs;
};

/// Hex SHA-256 of everything that decides a binary: the inputs above plus
/// kiln's version and build id.
std::string compile_key(const CompileKeyInputs &in);

} // namespace kiln::runtime
