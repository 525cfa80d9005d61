// Axis info (Triton's AxisInfo): per dim of a block value, how its elements
// run. The GPU backend reads it to choose layouts whose accesses coalesce and
// to move 16 bytes per access; it is a pure analysis of the tile IR.
#pragma once

#include <array>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "compiler/ir/ir.hpp"

namespace kiln::analysis {

/// Along dim d: runs of `contig[d]` consecutive values (pointers: one
/// element apart), every run's first value divisible by `div[d]` (pointers:
/// `div[d]` bytes aligned), runs of `constancy[d]` equal values; each run
/// starts at a multiple of its length. A scalar uses dim 0.
struct AxisInfo {
  using PerDim = std::array<int64_t, ir::Type::kMaxRank>;
  static constexpr PerDim ones() {
    PerDim a{};
    a.fill(1);
    return a;
  }
  PerDim contig = ones(), div = ones(), constancy = ones();
};

class AxisInfoAnalysis {
public:
  AxisInfoAnalysis() = default;
  /// Also knows the induction variables of `p`'s loops: a multiple of the
  /// step's divisor from a multiple of it.
  explicit AxisInfoAnalysis(const ir::Program &p);

  /// Computed on first use and remembered; values must outlive the analysis.
  const AxisInfo &get(const ir::Value *v);

  /// The largest power of two dividing v (2^30 for 0).
  static int64_t pow2_divisor(int64_t v);

private:
  AxisInfo compute(const ir::Value *v);
  static AxisInfo with_hints(const ir::Value *v, AxisInfo a);
  void find_loops(const ir::Block &b);
  /// A value a For carries (its i-th): what its start and every value the
  /// body yields for it have in common, found by iterating from the start.
  /// All of a loop's carried values are solved together (the body may
  /// compute one from another), once per loop until `forget` drops it.
  AxisInfo carried(const ir::Op &loop, size_t i);
  void forget(const ir::Block &b);
  std::unordered_map<const ir::Value *, AxisInfo> memo_;
  std::unordered_map<const ir::Op *, std::vector<AxisInfo>> solved_; ///< For -> its carried values
  std::unordered_map<const ir::Op *, bool> solving_;                 ///< Fors being solved now
  std::unordered_map<const ir::Value *, const ir::Op *>
      induction_; ///< induction variable -> its For
  std::unordered_map<const ir::Value *, std::pair<const ir::Op *, size_t>>
      carried_; ///< loop-carried block argument -> its For and index
};

} // namespace kiln::analysis
