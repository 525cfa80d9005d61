// The IR generator: a jit function's syntax tree plus a specialization to
// the tile IR. This is where the language's meaning lives: name lookup,
// constexpr folding, static_range unrolling, inlining of called functions,
// runtime control flow and the tl.* builtins.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "compiler/frontend/module_info.hpp"
#include "compiler/ir/ir.hpp"
#include "compiler/specialization.hpp"
#include "kiln/options.hpp"

namespace kiln::frontend {

struct IrGenResult {
  ir::Program program;
  std::map<compiler::GlobalRef, ConstValue> used_globals;
};

/// Throws CompileError at the offending expression.
IrGenResult generate_ir(const JitFunctionInfo &kernel,
                        const std::vector<compiler::ParamSpec> &params,
                        const compiler::GlobalValues &globals,
                        const compiler::ModuleGlobals *other_globals, const Options &options,
                        bool gpu_target = false);

} // namespace kiln::frontend
