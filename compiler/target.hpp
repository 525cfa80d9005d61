// What a compile produces code for.
#pragma once

#include <string>

namespace kiln::compiler {

struct Target {
  enum class Kind : unsigned char { Cpu, Cuda };
  Kind kind = Kind::Cpu;
  std::string triple;   ///< LLVM target triple
  std::string cpu;      ///< LLVM CPU name ("znver3", "sm_90", "sm_90a")
  std::string features; ///< LLVM feature string
  int sm = 0;           ///< compute capability * 10 for cuda (90 for sm_90)
  /// tl.dot may use sm_90's warpgroup tensor-core instructions (wgmma), which
  /// need the arch-specific target sm_90a; off with KILN_DISABLE_WGMMA=1.
  bool wgmma = false;

  /// The host CPU, with the features LLVM detects on this machine.
  static Target host();
  /// wgmma where `sm` is 90 unless KILN_DISABLE_WGMMA is set (a user error
  /// when it is not a boolean).
  static Target cuda(int sm);
  /// "cpu:x86_64-pc-linux-gnu:znver3" or "cuda:sm_90a" (the LLVM CPU name).
  std::string str() const;
};

} // namespace kiln::compiler
