// LLVM's middle and back end, shared by the CPU and NVPTX paths: target
// machines, the O3 pipeline, and object / assembly emission.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compiler/target.hpp"
#include "kiln/options.hpp"

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace kiln::llvmgen {

/// A target machine for `t`. Registers LLVM's targets on first use (thread-safe).
std::unique_ptr<llvm::TargetMachine> target_machine(const compiler::Target &t, const Options &o);

/// Sets the module's triple and data layout to the machine's.
void prepare_module(llvm::Module &m, llvm::TargetMachine &tm);

/// CPU: the O3 pipeline with loop and SLP vectorization, math calls mapped
/// to glibc's vector math library (libmvec). NVPTX: O2 without vectorizers.
/// `stop`, when set, is asked before each pass: once it says true, the
/// passes left are skipped (the result is no longer wanted).
void optimize(llvm::Module &m, llvm::TargetMachine &tm, const std::function<bool()> &stop = {});

std::vector<uint8_t> emit_object(llvm::Module &m, llvm::TargetMachine &tm);
std::string emit_assembly(llvm::Module &m, llvm::TargetMachine &tm);
std::string print_module(const llvm::Module &m);

} // namespace kiln::llvmgen
