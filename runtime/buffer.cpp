// kiln::Buffer: device memory through the backend's driver.
#include "kiln/buffer.hpp"

#include <cstdlib>
#include <cstring>

#include "kiln/error.hpp"
#include "runtime/context.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/device_copy.hpp"

namespace kiln {

namespace {

runtime::CudaDriver &cuda_driver(int device) {
  auto &d = static_cast<runtime::CudaDriver &>(runtime::Context::get().driver(Backend::cuda));
  d.make_current(device);
  return d;
}

} // namespace

namespace runtime {

void copy_to_host(Device device, void *dst, const void *src, std::size_t bytes) {
  if (device.backend == Backend::cpu) {
    std::memcpy(dst, src, bytes);
    return;
  }
  auto &d = cuda_driver(device.index);
  d.api().check(d.api().MemcpyDtoH(dst, reinterpret_cast<CUdeviceptr>(src), bytes), "cuMemcpyDtoH");
}

void copy_from_host(Device device, void *dst, const void *src, std::size_t bytes) {
  if (device.backend == Backend::cpu) {
    std::memcpy(dst, src, bytes);
    return;
  }
  auto &d = cuda_driver(device.index);
  d.api().check(d.api().MemcpyHtoD(reinterpret_cast<CUdeviceptr>(dst), src, bytes), "cuMemcpyHtoD");
}

} // namespace runtime

Buffer Buffer::allocate(Device device, std::size_t bytes) {
  const std::size_t n = bytes ? bytes : 1;
  if (device.backend == Backend::cpu) {
    void *p = std::aligned_alloc(64, (n + 63) / 64 * 64);
    if (!p)
      throw RuntimeError("out of host memory allocating " + std::to_string(bytes) + " bytes");
    return Buffer(device, p, bytes);
  }
  auto &d = cuda_driver(device.index);
  CUdeviceptr p = 0;
  d.api().check(d.api().MemAlloc(&p, n), ("allocating " + std::to_string(bytes) + " bytes on " + device.str()).c_str());
  return Buffer(device, reinterpret_cast<void *>(p), bytes);
}

Buffer::Buffer(Buffer &&o) noexcept : device_(o.device_), data_(o.data_), bytes_(o.bytes_) {
  o.data_ = nullptr;
  o.bytes_ = 0;
}

Buffer &Buffer::operator=(Buffer &&o) noexcept {
  if (this != &o) {
    this->~Buffer();
    new (this) Buffer(std::move(o));
  }
  return *this;
}

Buffer::~Buffer() {
  if (!data_)
    return;
  if (device_.backend == Backend::cpu) {
    std::free(data_);
  } else {
    auto &d = static_cast<runtime::CudaDriver &>(runtime::Context::get().driver(Backend::cuda));
    d.api().MemFree(reinterpret_cast<CUdeviceptr>(data_));
  }
  data_ = nullptr;
}

Tensor Buffer::tensor(DType dtype, std::initializer_list<int64_t> shape) const {
  return Tensor(data_, dtype, shape, device_);
}

void Buffer::copy_from_host(const void *src, std::size_t bytes) {
  if (bytes > bytes_)
    throw ArgumentError("copy of " + std::to_string(bytes) + " bytes into a buffer of " + std::to_string(bytes_));
  runtime::copy_from_host(device_, data_, src, bytes);
}

void Buffer::copy_to_host(void *dst, std::size_t bytes) const {
  if (bytes > bytes_)
    throw ArgumentError("copy of " + std::to_string(bytes) + " bytes out of a buffer of " + std::to_string(bytes_));
  runtime::copy_to_host(device_, dst, data_, bytes);
}

void synchronize(Device device) {
  if (device.backend == Backend::cpu)
    return; // cpu launches return when their programs have run
  auto &d = cuda_driver(device.index);
  d.api().check(d.api().CtxSynchronize(), "cuCtxSynchronize");
}

bool cuda_available() {
  try {
    return runtime::Context::get().driver(Backend::cuda).device_count() > 0;
  } catch (const Error &) {
    return false;
  }
}

} // namespace kiln
