// The GPU layout pass: gives the block values of a tile-IR program their
// layouts before lowering (Triton's TritonGPU step, kept small).
//
// Anchors choose: a load, store or atomic takes the layout its pointer's
// axis info asks for (runs along the most contiguous dim, up to 16 bytes per
// thread, lanes then warps along it so accesses coalesce); a reduction's
// result is a slice of its input's layout; a scan takes a layout where each
// thread holds one run along the axis; a dot's result the tensor cores'
// accumulator layout where it runs on them (gpu/mma_layout.hpp; loop-carried
// accumulators keep it across iterations), else a blocked layout; a
// gather's result the layout of its index (it reads its source from shared
// memory).
// Elementwise and shape ops inherit the layout of their first operand that
// has one (a broadcast keeps it, expand_dims of a slice gives the parent
// back, a transpose permutes it). Values computed only from arange,
// program ids and scalars have none: they are recomputed in whatever layout
// their consumer wants. Loop-carried values take the layout of what the loop
// yields, found by iterating to a fixed point.
//
// Where a consumer reads a value held in another layout, the lowering
// converts it through shared memory (gpu/lower_layouts.cpp).
#pragma once

#include <string>
#include <unordered_map>
#include <unordered_set>

#include "compiler/analysis/axis_info.hpp"
#include "compiler/gpu/layout.hpp"
#include "compiler/gpu/mma_layout.hpp"
#include "compiler/ir/ir.hpp"

namespace kiln::gpu {

Shape shape_of(const ir::Type &t);

class LayoutPlan {
public:
  /// `sm`: the compute capability * 10 (0: no tensor cores); `wgmma`: dots
  /// that fit sm_90's warpgroup instructions run on them.
  LayoutPlan(const ir::Program &p, int num_warps, int sm = 0, bool wgmma = false);

  int num_warps() const { return warps_; }
  /// The layout `v` comes with, or null when it is recomputable anywhere.
  EncodingPtr natural(const ir::Value *v);
  /// `natural(v)`, else the default blocked layout of its shape.
  EncodingPtr layout(const ir::Value *v);
  /// The layout of a load, store or atomic through block pointer `ptr`.
  EncodingPtr access_layout(const ir::Value *ptr);
  BitMap map(const EncodingPtr &e, const ir::Type &t) const {
    return map_of(*e, shape_of(t), warps_);
  }
  analysis::AxisInfoAnalysis &axis() { return axis_; }
  /// Whether tensor-core dot `op` runs on wgmma (gpu/mma_layout.hpp).
  bool wgmma(const ir::Op &op) const;
  /// The tensor-core instruction of dot `op` (MmaKind::None: FMAs).
  MmaKind mma_kind(const ir::Op &op) const;

private:
  void settle(const ir::Block &b, bool &changed);
  void carry(const ir::Value *v, const EncodingPtr &e, bool &changed);
  EncodingPtr compute(const ir::Value *v);
  EncodingPtr default_layout(const ir::Type &t) const;
  EncodingPtr dot_layout(const ir::Op &op) const;
  void find_fragment_loads(const ir::Block &b);
  EncodingPtr accumulator_slice(const ir::Value *load);
  const ir::Op *only_user(const ir::Value *v) const;

  int warps_, sm_;
  bool wgmma_;
  int dots_ = 0; ///< several dots (attention's chained ones) put warps over M only
  /// Loads used only as operand A of a tensor-core dot in a loop below them
  /// (attention's q): loaded straight into the A fragments, once.
  std::unordered_map<const ir::Value *, EncodingPtr> fragment_loads_;
  /// Pointers of loads in a loop used only by a tensor-core dot there: read
  /// in runs along the contiguous dim even where not aligned for a vector
  /// (one address a run, the rest at constant offsets; the runs' sectors
  /// shared in L1), since every thread's 64-bit address per element would
  /// need more registers than the accumulator leaves.
  std::unordered_set<const ir::Value *> dot_ptrs_;
  std::unordered_map<const ir::Value *, std::vector<const ir::Op *>> users_; ///< an op per use
  std::unordered_set<const ir::Value *> asking_; ///< accumulator_slice in progress
  analysis::AxisInfoAnalysis axis_;
  std::unordered_map<const ir::Value *, EncodingPtr>
      carried_; ///< block args and results of control flow
  std::unordered_map<const ir::Value *, EncodingPtr> memo_;
};

} // namespace kiln::gpu
