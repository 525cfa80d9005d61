#include "compiler/target.hpp"

#include <llvm/ADT/StringMap.h>
#include <llvm/TargetParser/Host.h>

namespace kiln::compiler {

Target Target::host() {
  // Computed once: the host's features do not change while we run.
  static const Target host = [] {
    Target t;
    t.kind = Kind::Cpu;
    t.triple = llvm::sys::getProcessTriple();
    t.cpu = llvm::sys::getHostCPUName().str();
    std::string features;
    for (const auto &f : llvm::sys::getHostCPUFeatures())
      features += (features.empty() ? "" : ",") + std::string(f.second ? "+" : "-") + f.first().str();
    t.features = features;
    return t;
  }();
  return host;
}

Target Target::cuda(int sm) {
  Target t;
  t.kind = Kind::Cuda;
  t.triple = "nvptx64-nvidia-cuda";
  t.cpu = "sm_" + std::to_string(sm);
  t.features = "+ptx80";
  t.sm = sm;
  return t;
}

std::string Target::str() const {
  if (kind == Kind::Cuda)
    return "cuda:" + cpu;
  return "cpu:" + triple + ":" + cpu;
}

} // namespace kiln::compiler
