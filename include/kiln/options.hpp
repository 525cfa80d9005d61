// Compile options of a launch (Triton's num_warps=..., num_stages=..., ...).
#pragma once

#include <string>

namespace kiln {

/// Options are part of every cache key. Given at launch as named arguments
/// (`kiln::arg("num_warps", 8)`); an unknown name is an ArgumentError.
struct Options {
  int num_warps = 4;             ///< threads per program = num_warps * 32 on cuda
  int num_stages = 3;            ///< software pipelining depth (cuda)
  int num_ctas = 1;              ///< CTAs per program (cuda); only 1 is supported
  bool enable_fp_fusion = true;  ///< allow a*b+c to contract into an FMA
  bool debug = false;            ///< check device_assert / assert

  friend bool operator==(const Options &, const Options &) = default;
  /// "num_warps=4, num_ctas=1, num_stages=3, enable_fp_fusion=true" (the repr's bracket).
  std::string str() const;
};

} // namespace kiln
