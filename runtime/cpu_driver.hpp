// The host CPU as a device: kernels are objects linked in-process by ORC and
// a grid's programs run in parallel on oneTBB.
#pragma once

#include "runtime/driver.hpp"

namespace kiln::cpu {
class ObjectLoader;
}

namespace kiln::runtime {

class CpuDriver final : public Driver {
public:
  CpuDriver();
  ~CpuDriver() override;

  Backend backend() const override { return Backend::cpu; }
  int device_count() const override { return 1; }
  compiler::Target target(int device) const override;
  std::unique_ptr<LoadedBinary> load(const CompiledKernel &k, int device) override;
  void launch(const LoadedBinary &b, Grid grid, void **args, Stream stream) override;

private:
  std::unique_ptr<cpu::ObjectLoader> loader_;
};

} // namespace kiln::runtime
