#include "compiler/target.hpp"

#include <llvm/ADT/StringMap.h>
#include <llvm/TargetParser/Host.h>

#include <cstdlib>

#include "kiln/error.hpp"

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

namespace {

/// KILN_DISABLE_WGMMA: read here rather than with the runtime's knobs because
/// it decides the target itself (and so every cache key made from it).
bool wgmma_disabled() {
  const char *v = std::getenv("KILN_DISABLE_WGMMA");
  const std::string s = v ? v : "";
  if (s.empty() || s == "0" || s == "false" || s == "off" || s == "no")
    return false;
  if (s == "1" || s == "true" || s == "on" || s == "yes")
    return true;
  throw ArgumentError("KILN_DISABLE_WGMMA='" + s + "' is not a boolean; use 1 or 0");
}

} // namespace

Target Target::cuda(int sm) {
  Target t;
  t.kind = Kind::Cuda;
  t.triple = "nvptx64-nvidia-cuda";
  // wgmma exists on sm_90 only (sm_100 has other instructions), as sm_90a.
  t.wgmma = sm == 90 && !wgmma_disabled();
  t.cpu = "sm_" + std::to_string(sm) + (t.wgmma ? "a" : "");
  // PTX 8.4 (CUDA 12.4) for mma.sync on fp8 operands; older instructions
  // assemble the same.
  t.features = "+ptx84";
  t.sm = sm;
  return t;
}

std::string Target::str() const {
  if (kind == Kind::Cuda)
    return "cuda:" + cpu;
  return "cpu:" + triple + ":" + cpu;
}

} // namespace kiln::compiler
