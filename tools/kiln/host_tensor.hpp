// An owning tensor in host memory, and the CLI's tensor specs that make one:
// `zeros:1000x64:f32`, `empty:N:f16`, `@in.npy`, `@in.npy:bf16` (shared/CLI.md).
//
// kiln::Tensor is a non-owning view; the `kiln` command needs something that
// owns the bytes it reads from a .npy file or allocates, keeps them alive for
// the launch, and writes them back with --out. Not thread-safe: one owner.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/device.hpp"
#include "kiln/dtype.hpp"
#include "kiln/tensor.hpp"

namespace kiln::cli {

/// A C-order array of `dtype` elements in a 64-byte-aligned host buffer.
/// Move-only; moving keeps the buffer (and so every view of it) in place.
class HostTensor {
public:
  /// 64 bytes: a cache line and an AVX-512 vector, so the cpu backend's
  /// aligned loads are legal and the "D" (divisible by 16) specialization
  /// applies to every tensor the tool makes.
  static constexpr std::size_t kAlignment = 64;

  /// Uninitialized contents, as torch.empty. Throws ArgumentError when the
  /// shape has a negative extent or its byte size overflows.
  static HostTensor empty(DType dtype, std::vector<int64_t> shape);
  /// Zero-filled.
  static HostTensor zeros(DType dtype, std::vector<int64_t> shape);

  DType dtype() const { return dtype_; }
  /// Any number of dimensions; empty for a 0-d (scalar) array.
  const std::vector<int64_t> &shape() const { return shape_; }
  int64_t numel() const { return numel_; }
  std::size_t nbytes() const { return nbytes_; }

  /// Never null, even for zero elements: a kernel given an empty tensor still
  /// receives a valid, aligned address.
  void *data() { return data_.get(); }
  const void *data() const { return data_.get(); }
  std::span<std::byte> bytes() { return {data_.get(), nbytes_}; }
  std::span<const std::byte> bytes() const { return {data_.get(), nbytes_}; }

  /// Reads the same bytes as elements of `t`, which must have the same size
  /// (a uint16 .npy file as bf16 bit patterns). Throws ArgumentError otherwise.
  void reinterpret_as(DType t);

  /// A deep copy (for --repeat, which restores the inputs between launches).
  HostTensor clone() const;
  /// Overwrites the contents with those of `src`, which must have as many bytes.
  void copy_from(const HostTensor &src);

  /// A non-owning kiln::Tensor of this buffer, valid while this object lives.
  /// kiln::Tensor holds at most 4 dimensions; more are folded into the first
  /// one, which keeps numel() and nbytes() and the (C-order) layout.
  Tensor view(Device device = {});

private:
  struct Free {
    void operator()(std::byte *p) const;
  };

  HostTensor(DType dtype, std::vector<int64_t> shape);

  std::unique_ptr<std::byte[], Free> data_;
  DType dtype_ = DType::f32;
  std::vector<int64_t> shape_;
  int64_t numel_ = 0;
  std::size_t nbytes_ = 0;
};

/// "1000x64" for {1000, 64}, "1000" for {1000}, "scalar" for {}.
std::string format_shape(std::span<const int64_t> shape);

/// Parses a CLI shape: extents joined by 'x' ("1000", "1000x64", "0x3").
/// Throws ArgumentError on anything else (empty part, sign, non-digit,
/// overflow).
std::vector<int64_t> parse_shape(std::string_view text);

/// A tensor VALUE of the command line, before any file is read or memory
/// allocated.
struct TensorSpec {
  enum class Kind : uint8_t { zeros, empty, npy };
  Kind kind = Kind::zeros;
  DType dtype = DType::f32;     ///< zeros and empty
  std::vector<int64_t> shape;   ///< zeros and empty
  std::string path;             ///< npy: the file
  std::optional<DType> read_as; ///< npy: ":bf16" or ":fp8e4nv" &c., the overrides NumPy needs

  friend bool operator==(const TensorSpec &, const TensorSpec &) = default;
};

/// Parses `zeros:SHAPE:DTYPE`, `empty:SHAPE:DTYPE`, `@PATH` or
/// `@PATH.npy:bf16`. Returns nullopt when `text` does not start like a
/// tensor spec at all ("@", "zeros:", "empty:"); throws ArgumentError when it
/// does but is malformed (unknown dtype, bad shape, empty path, an override
/// other than bf16).
std::optional<TensorSpec> parse_tensor_spec(std::string_view text);

/// Allocates (zeros, empty) or reads (npy) the tensor. Throws ArgumentError
/// for a malformed .npy file and RuntimeError for one that cannot be read.
HostTensor make_host_tensor(const TensorSpec &spec);

} // namespace kiln::cli
