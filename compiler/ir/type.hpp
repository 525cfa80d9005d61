// Types of the tile IR: scalars, pointers to scalars, and blocks of either.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "kiln/dtype.hpp"

namespace kiln::ir {

/// A value type. `rank == 0` is a scalar (or a pointer); otherwise a block of
/// `shape[0..rank)` elements, each a power of two known at compile time.
struct Type {
  /// Triton has no bound; kiln's covers what real kernels build: nested
  /// `tl.join`s (lmdeploy's AWQ dequant, 5-D) and the hypercube reshapes of
  /// Triton's bitonic sort (`[2] * log2(n)`, 11-D for 2048 elements).
  static constexpr int kMaxRank = 16;

  DType elem = DType::i32;
  bool pointer = false; ///< an element is a pointer to `elem`
  uint8_t rank = 0;
  std::array<int64_t, kMaxRank> shape{};

  static Type scalar(DType t) { return Type{t, false, 0, {}}; }
  static Type ptr(DType t) { return Type{t, true, 0, {}}; }

  bool is_block() const { return rank > 0; }
  bool is_float() const { return !pointer && kiln::is_float(elem); }
  bool is_int() const { return !pointer && kiln::is_int(elem); }
  bool is_bool() const { return !pointer && elem == DType::i1; }
  bool is_signed() const { return !pointer && is_signed_int(elem); }

  int64_t numel() const;
  /// The element type: this type with rank 0.
  Type element() const { return Type{elem, pointer, 0, {}}; }
  /// The same element with the given shape (rank 0 for a scalar).
  Type with_shape(const int64_t *dims, int n) const;
  Type with_element(const Type &e) const {
    Type t = *this;
    t.elem = e.elem;
    t.pointer = e.pointer;
    return t;
  }
  bool same_shape(const Type &o) const;

  friend bool operator==(const Type &, const Type &) = default;
  /// "f32", "ptr<f16>", "<128xi32>", "<64x32xptr<f16>>".
  std::string str() const;
};

/// Bits of an integer or float element (1 for i1, 64 for pointers).
int bit_width(const Type &t);

} // namespace kiln::ir
