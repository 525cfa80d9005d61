// NVIDIA GPUs as devices, through the CudaApi table (real or fake): primary
// contexts, cubin modules, cuLaunchKernel with packed parameters.
#pragma once

#include <mutex>
#include <vector>

#include "runtime/cuda/cuda_api.hpp"
#include "runtime/driver.hpp"

namespace kiln::runtime {

class CudaDriver final : public Driver {
public:
  /// Uses `api` (the real driver from CudaApi::load, or a fake for tests).
  /// Throws RuntimeError when there is no device.
  explicit CudaDriver(const cuda::CudaApi &api);

  Backend backend() const override { return Backend::cuda; }
  int device_count() const override { return static_cast<int>(devices_.size()); }
  compiler::Target target(int device) const override;
  std::unique_ptr<LoadedBinary> load(const CompiledKernel &k, int device) override;
  void launch(const LoadedBinary &b, Grid grid, void **args, Stream stream) override;
  const char *pointer_problem(const void *p, int device) override;

  const cuda::CudaApi &api() const { return api_; }
  /// Makes the device's primary context current on the calling thread.
  void make_current(int device);

private:
  struct DeviceInfo {
    CUdevice handle = 0;
    CUcontext context = nullptr;
    int sm = 0;
  };
  const DeviceInfo &device(int i) const;
  /// A debug build's launch: with the tensor sizes and the bounds record,
  /// then the record read back (RuntimeError for an access outside).
  void launch_checked(LoadedBinary &b, Grid grid, void **args, Stream stream);

  const cuda::CudaApi &api_;
  std::vector<DeviceInfo> devices_;
};

} // namespace kiln::runtime
