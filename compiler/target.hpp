// What a compile produces code for.
#pragma once

#include <string>

namespace kiln::compiler {

struct Target {
  enum class Kind : unsigned char { Cpu, Cuda };
  Kind kind = Kind::Cpu;
  std::string triple;   ///< LLVM target triple
  std::string cpu;      ///< LLVM CPU name ("znver3", "sm_90")
  std::string features; ///< LLVM feature string
  int sm = 0;           ///< compute capability * 10 for cuda (90 for sm_90)

  /// The host CPU, with the features LLVM detects on this machine.
  static Target host();
  static Target cuda(int sm);
  /// "cpu:x86_64-pc-linux-gnu:znver3" or "cuda:sm_90".
  std::string str() const;
};

} // namespace kiln::compiler
