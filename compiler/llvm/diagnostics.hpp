// LLVM reports some errors in the code it compiles (inline assembly it
// cannot print, constraints it cannot allocate registers for) through its
// context's diagnostic handler, whose default prints them and exits the
// process. A compile collects them instead and throws them as an Error, so
// one bad kernel loses nothing else.
#pragma once

namespace llvm {
class LLVMContext;
}

namespace kiln::llvmgen {

/// From now on, `ctx` keeps error diagnostics (and drops warnings and remarks).
void collect_diagnostics(llvm::LLVMContext &ctx);

/// Throws Error naming `what` (the stage: "code generation") with the
/// errors collected since the last call; returns when there were none.
void throw_collected(llvm::LLVMContext &ctx, const char *what);

} // namespace kiln::llvmgen
