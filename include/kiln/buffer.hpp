// Device memory: an owning buffer on a device, with copies to and from host.
#pragma once

#include <cstddef>
#include <memory>

#include "kiln/device.hpp"
#include "kiln/dtype.hpp"
#include "kiln/tensor.hpp"

namespace kiln {

/// Owns `bytes` of memory on `device` (64-byte aligned host memory for the
/// cpu). Movable, not copyable. Copies are synchronous.
class Buffer {
public:
  /// Throws RuntimeError when the device has no memory to give.
  static Buffer allocate(Device device, std::size_t bytes);

  Buffer(Buffer &&other) noexcept;
  Buffer &operator=(Buffer &&other) noexcept;
  ~Buffer();

  void *data() const { return data_; }
  std::size_t size() const { return bytes_; }
  Device device() const { return device_; }
  /// A tensor view of the buffer with this dtype and shape.
  Tensor tensor(DType dtype, std::initializer_list<int64_t> shape = {}) const;

  void copy_from_host(const void *src, std::size_t bytes);
  void copy_to_host(void *dst, std::size_t bytes) const;

private:
  Buffer(Device d, void *p, std::size_t n) : device_(d), data_(p), bytes_(n) {}
  Device device_;
  void *data_ = nullptr;
  std::size_t bytes_ = 0;
};

/// Waits for every launch on `device` to finish.
void synchronize(Device device);

/// Whether a GPU and the CUDA driver are present (what --backend auto asks).
bool cuda_available();

} // namespace kiln
