#include "kiln/tensor_descriptor.hpp"

#include <bit>
#include <string>

#include "kiln/error.hpp"

namespace kiln {

namespace {

[[noreturn]] void bad(const std::string &what) {
  throw ArgumentError("TensorDescriptor: " + what);
}

} // namespace

TensorDescriptor::TensorDescriptor(const Tensor &base, std::span<const int64_t> shape,
                                   std::span<const int64_t> strides,
                                   std::span<const int64_t> block_shape, Padding padding) {
  const size_t n = shape.size();
  if (n == 0 || n > kMaxDims)
    bad("a descriptor has 1 to 5 dims, not " + std::to_string(n));
  if (strides.size() != n || block_shape.size() != n)
    bad("shape, strides and block_shape need one entry per dim (" + std::to_string(n) + "), not " +
        std::to_string(strides.size()) + " strides and " + std::to_string(block_shape.size()) +
        " block dims");
  // Triton's own checks (what TMA needs), so that a file that runs under
  // Triton runs here and one that would not fails the same way.
  if (reinterpret_cast<uintptr_t>(base.data) % 16 != 0)
    bad("the base must be 16-byte aligned");
  const int64_t elem = static_cast<int64_t>(dtype_size(base.dtype));
  for (size_t d = 0; d + 1 < n; ++d)
    if (strides[d] * elem % 16 != 0)
      bad("strides must be multiples of 16 bytes; stride " + std::to_string(d) + " is " +
          std::to_string(strides[d]) + " elements of " + std::to_string(elem) + " bytes");
  if (strides[n - 1] != 1)
    bad("the last dimension must be contiguous (stride 1), not " + std::to_string(strides[n - 1]));
  for (size_t d = 0; d < n; ++d) {
    if (shape[d] < 0)
      bad("shape " + std::to_string(d) + " is negative");
    if (block_shape[d] <= 0 || !std::has_single_bit(static_cast<uint64_t>(block_shape[d])))
      bad("block dims must be powers of two, not " + std::to_string(block_shape[d]));
  }
  if (padding == Padding::nan && !is_float(base.dtype))
    bad("padding=\"nan\" needs a floating-point tensor, not " +
        std::string(dtype_name(base.dtype)));
  ndim_ = static_cast<int>(n);
  parts_[0] = Arg(base);
  for (size_t d = 0; d < n; ++d) {
    parts_[1 + d] = Arg(shape[d]);
    parts_[1 + n + d] = Arg(strides[d]);
    parts_[1 + 2 * n + d] = Arg(block_shape[d]);
  }
  parts_[1 + 3 * n] = Arg(padding == Padding::nan);
}

TensorDescriptor TensorDescriptor::from_tensor(const Tensor &t,
                                               std::span<const int64_t> block_shape,
                                               Padding padding) {
  if (t.ndim == 0)
    bad("from_tensor needs a tensor with a shape");
  std::array<int64_t, Tensor::kMaxDims> strides{};
  int64_t step = 1;
  for (int d = t.ndim - 1; d >= 0; --d) {
    strides[d] = step;
    step *= t.shape[d];
  }
  return TensorDescriptor(t, std::span<const int64_t>(t.shape.data(), t.ndim),
                          std::span<const int64_t>(strides.data(), t.ndim), block_shape, padding);
}

} // namespace kiln
