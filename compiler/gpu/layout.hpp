// Distributed layouts of GPU block values: which thread holds which element.
//
// Two forms, as in Triton's TritonGPU dialect (read for the idea; nothing
// here is taken from it):
// - an Encoding says how a value is spread, independently of its shape:
//   `blocked` (runs per thread, threads per warp, warps per CTA, an order
//   of dims, fastest first), `slice` (a blocked parent with one dim reduced
//   away, so expand_dims + broadcast back needs no data movement) or
//   `linear` (a BitMap for one shape, what a reshape or transpose leaves);
//   Tensor cores add `mma` (an accumulator) and `dot_operand` (its A and B
//   fragments), gpu/mma_layout.hpp;
// - a BitMap is an encoding applied to one shape. Every dim is a power of
//   two, so the row-major index of an element has a fixed number of bits,
//   and each bit of a thread's register slot, lane and warp number sets
//   one bit of that index, or none (a copy: several threads or slots hold
//   the same element). This is Triton's "linear layout" restricted to
//   permutation-like maps, which is all blocked and slice layouts need.
//
// The lowering compares BitMaps, never encodings: two encodings that place
// elements the same way need no conversion. Pure data, no LLVM: unit
// tested in tests/layout_test.cpp.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kiln::gpu {

/// Shape of a block: dims are powers of two (an empty shape is a scalar).
using Shape = std::vector<int64_t>;

struct BitMap {
  static constexpr int kLaneBits = 5;
  int bits = 0;         ///< log2 of the number of elements
  std::vector<int> reg; ///< per slot bit: the element-index bit it sets, or -1
  std::array<int, kLaneBits> lane{-1, -1, -1, -1, -1};
  std::vector<int> warp; ///< per warp-number bit

  int64_t slots() const { return int64_t{1} << reg.size(); }
  /// The element-index bits slot `s` sets.
  int64_t reg_offset(int64_t s) const;
  /// Lanes and warps whose bit maps nowhere hold copies; the owner of an
  /// element is the copy with all those bits 0 (side effects happen once).
  uint32_t copy_lane_mask() const;
  uint32_t copy_warp_mask() const;
  bool operator==(const BitMap &) const = default;
  std::string str() const;
};

struct Encoding;
using EncodingPtr = std::shared_ptr<const Encoding>;

struct Encoding {
  enum class Kind : uint8_t { Blocked, Slice, Linear, Mma, DotOperand };
  Kind kind = Kind::Blocked;
  // Blocked: one entry per dim; order[0] is the fastest dim.
  std::vector<int> size_per_thread, threads_per_warp, warps_per_cta, order;
  // Slice: the parent with dim `dim` removed.
  int dim = 0;
  EncodingPtr parent;
  // Linear: a map for exactly `linear_shape`.
  BitMap linear;
  Shape linear_shape;
  // Mma (gpu/mma_layout.hpp): warps over M and N. DotOperand: operand
  // `dim` (0: A, 1: B) of the Mma `parent`, elements of `elem_bytes`.
  std::array<int, 2> mma_warps{1, 1};
  /// Mma of wgmma warpgroups that split N: each warpgroup (4 warps over M,
  /// the low warp bits) owns this many contiguous columns, its
  /// instruction's N. 0: warps over N interleave by 8 columns (mma.sync).
  int wg_cols = 0;
  int elem_bytes = 2;

  int rank() const;
  std::string str() const;
};

EncodingPtr blocked(std::vector<int> spt, std::vector<int> tpw, std::vector<int> wpc,
                    std::vector<int> order);
EncodingPtr slice(EncodingPtr parent, int dim);
EncodingPtr linear(BitMap map, Shape shape);

/// The default layout of a shape: runs of `vec` elements along `order[0]`,
/// lanes then warps filling dims in `order`, extra threads holding copies.
EncodingPtr default_blocked(const Shape &shape, int num_warps, int vec,
                            std::vector<int> order = {});

/// A layout for scanning along `axis`: along it every thread holds one
/// contiguous run, lanes and warps follow in order, nothing wraps around.
EncodingPtr scan_blocked(const Shape &shape, int axis, int num_warps);

/// The encoding applied to `shape`. Blocked: for each dim in order, its low
/// bits go to the slot (up to size_per_thread), then to lanes, then warps;
/// bits beyond one CTA's tile go to more slots; lanes and warps beyond the
/// shape hold copies.
BitMap map_of(const Encoding &e, const Shape &shape, int num_warps);

/// The map with every bit of `dim` removed (the layout of a reduction's
/// result): copies for lanes and warps that held that dim, fewer slots.
BitMap drop_dim(const BitMap &m, const Shape &shape, int dim);

// How a consumer sees its operand: given the consumer's map over the
// result shape, the map over the operand's shape that reads the same
// thread and slot. Slots keep their numbering (a stretched dim's slot
// bits map nowhere), so the consumer's slot number indexes both.
BitMap view_through_broadcast(const BitMap &m, const Shape &result, const Shape &operand);
BitMap view_through_trans(const BitMap &m, const Shape &result, const std::vector<int64_t> &perm);

/// Forward: the map of trans(x) given x's map (for an encoding of the result).
BitMap trans_forward(const BitMap &m, const Shape &operand, const std::vector<int64_t> &perm);

/// Whether a consumer reading through `view` finds each element in this
/// thread's own slots of a buffer laid out as `held`; if so, for each bit of
/// the consumer's slot the bit of the buffer slot it selects (-1: none).
std::optional<std::vector<int>> slot_map(const BitMap &view, const BitMap &held);
int64_t apply_slot_map(const std::vector<int> &sm, int64_t slot);

/// The map with copies among slots removed (a canonical buffer layout).
BitMap without_slot_copies(const BitMap &m);

/// The element-index bit of bit 0 of dim `d` (row-major: the last dim is lowest).
int dim_offset(const Shape &shape, int d);
/// The dim, and the bit within it, of element-index bit `b`.
std::pair<int, int> bit_owner(const Shape &shape, int b);
/// An element index with the bits of `dim` removed (its index in the shape without `dim`).
int64_t drop_dim_bits(int64_t index, const Shape &shape, int dim);

/// How many low slot bits form one run of consecutive elements along a dim
/// starting at that dim's bit 0 (a run of 2^k elements a vector access can
/// move); the dim goes to `*dim`. 0 when slot bit 0 is no such run.
int run_bits(const BitMap &m, const Shape &shape, int *dim);

inline int log2_exact(int64_t n) {
  int b = 0;
  while ((int64_t{1} << b) < n)
    ++b;
  return b;
}

} // namespace kiln::gpu
