// A tensor descriptor made on the host: Triton's
// `triton.tools.tensor_descriptor.TensorDescriptor`, passed to a kernel whose
// parameter it is (`a_desc.load([m, k])`, `c_desc.store([m, n], acc)`).
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "kiln/arg.hpp"
#include "kiln/dtype.hpp"
#include "kiln/tensor.hpp"

namespace kiln {

class TensorDescriptor {
public:
  static constexpr int kMaxDims = 5;
  /// What a load reads outside the tensor: zeros, or NaNs (floating point only).
  enum class Padding : uint8_t { zero, nan };

  /// `base` with `shape` and `strides` (in elements), loaded and stored in
  /// blocks of `block_shape`. Checked as Triton checks its host descriptors
  /// (ArgumentError): 1 to 5 dims, a 16-byte aligned base, strides but the
  /// last a multiple of 16 bytes, the last stride 1, block dims powers of two.
  TensorDescriptor(const Tensor &base, std::span<const int64_t> shape,
                   std::span<const int64_t> strides, std::span<const int64_t> block_shape,
                   Padding padding = Padding::zero);

  /// A contiguous tensor with a shape (row-major strides), as
  /// `TensorDescriptor.from_tensor(t, block_shape)`.
  static TensorDescriptor from_tensor(const Tensor &t, std::span<const int64_t> block_shape,
                                      Padding padding = Padding::zero);
  static TensorDescriptor from_tensor(const Tensor &t, std::initializer_list<int64_t> block_shape,
                                      Padding padding = Padding::zero) {
    return from_tensor(t, std::span<const int64_t>(block_shape.begin(), block_shape.size()),
                       padding);
  }

  int ndim() const { return ndim_; }
  DType dtype() const { return parts_[0].dtype(); }

  /// The argument a launch binds; this descriptor must outlive the launch call.
  operator Arg() const {
    return Arg::descriptor(std::span<const Arg>(parts_.data(), 3 * ndim_ + 2));
  }

private:
  // base, shape..., strides..., block_shape..., padding: the layout
  // Arg::descriptor's readers (the specializer, the argument packer) expect.
  std::array<Arg, 3 * kMaxDims + 2> parts_{};
  int ndim_ = 0;
};

} // namespace kiln
