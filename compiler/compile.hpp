// The compiler's entry point: (kernel, specialization, options, target) to a
// CompiledKernel. Knows nothing of devices, caches, hooks or threads; safe to
// call from many threads at once (each compile has its own LLVMContext).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "compiler/frontend/module_info.hpp"
#include "compiler/specialization.hpp"
#include "compiler/stage_names.hpp"
#include "compiler/target.hpp"
#include "kiln/compiled_kernel.hpp"
#include "kiln/options.hpp"

namespace kiln::compiler {

struct CompileRequest {
  std::shared_ptr<const frontend::ModuleInfo> module;
  const frontend::JitFunctionInfo *function = nullptr;
  std::vector<ParamSpec> params; ///< one per parameter of `function`
  const GlobalValues *globals = nullptr; ///< defaults to the module's own
  const ModuleGlobals *other_globals = nullptr; ///< callees' modules; unset: their analysed values
  Options options;
  Target target;
  /// When set, every stage is also written under this folder (KILN_DUMP_DIR).
  std::string dump_dir;
  /// When set, a user-edited stage file here replaces the compiler's
  /// (KILN_OVERRIDE_DIR): `<name>.llir` (LLVM IR, optimized) or, on cuda,
  /// `<name>.ptx`, looked up first in the folder KILN_DUMP_DIR would write
  /// (`<name>.<id>/`), then at the top. Throws CompileError for a file
  /// LLVM cannot parse.
  std::string override_dir;
  /// When set, asked between stages and before the long steps inside them
  /// (lowering, code generation) with `may_wait` true, and before each pass
  /// of the optimizer with false (then it must answer at once): false stops
  /// the compile (its result is no longer wanted: the remote cache had the
  /// binary), every later stage does nothing, and stopped() says so. With
  /// `may_wait` it may block (a fleet's single flight waits there for
  /// another machine's compile).
  std::function<bool(bool may_wait)> proceed;
};

struct CompileOutput {
  CompiledKernel kernel;
  /// Every module global the kernel and its callees read, with the value used.
  std::map<GlobalRef, frontend::ConstValue> used_globals;
};

/// Throws CompileError for the user's mistakes.
CompileOutput compile(const CompileRequest &request);

/// One compile, stage by stage, so that a task graph can run the stages of
/// many compiles as separate nodes: frontend (tile IR), optimize (LLVM IR:
/// O3 on the CPU, O2 on the GPU), codegen (object, or PTX and cubin). Stages run in order, one at a
/// time, on any thread. Each throws as compile() does.
class Compilation {
public:
  /// frontend, optimize, codegen (compiler/stage_names.hpp): run_stage(i)
  /// runs kStageNames[i].
  static constexpr int kStages = static_cast<int>(kStageNames.size());

  explicit Compilation(CompileRequest request);
  ~Compilation();
  Compilation(Compilation &&) noexcept;

  void frontend();
  void optimize();
  void codegen();
  /// Stage `i` of kStages.
  void run_stage(int i);
  /// Whether CompileRequest::proceed stopped the compile.
  bool stopped() const;
  /// The result, after every stage ran, unless stopped().
  CompileOutput take();

private:
  struct State;
  std::unique_ptr<State> s_;
};

/// "(x_ptr: *fp32:D, n: i32, BLOCK: constexpr=1024)".
std::string specialization_str(const frontend::JitFunctionInfo &fn,
                               const std::vector<ParamSpec> &params);

} // namespace kiln::compiler
