// The compiler's entry point: (kernel, specialization, options, target) to a
// CompiledKernel. Knows nothing of devices, caches, hooks or threads; safe to
// call from many threads at once (each compile has its own LLVMContext).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "compiler/frontend/module_info.hpp"
#include "compiler/specialization.hpp"
#include "compiler/target.hpp"
#include "kiln/compiled_kernel.hpp"
#include "kiln/options.hpp"

namespace kiln::compiler {

struct CompileRequest {
  std::shared_ptr<const frontend::ModuleInfo> module;
  const frontend::JitFunctionInfo *function = nullptr;
  std::vector<ParamSpec> params; ///< one per parameter of `function`
  const GlobalValues *globals = nullptr; ///< defaults to the module's own
  Options options;
  Target target;
  /// When set, every stage is also written under this folder (KILN_DUMP_DIR).
  std::string dump_dir;
};

struct CompileOutput {
  CompiledKernel kernel;
  /// Every module global the kernel and its callees read, with the value used.
  std::map<std::string, frontend::ConstValue> used_globals;
};

/// Throws CompileError for the user's mistakes.
CompileOutput compile(const CompileRequest &request);

/// "(x_ptr: *fp32:D, n: i32, BLOCK: constexpr=1024)".
std::string specialization_str(const frontend::JitFunctionInfo &fn,
                               const std::vector<ParamSpec> &params);

} // namespace kiln::compiler
