// A backend's driver: what the runtime needs from a device to load and run
// compiled kernels. The CPU driver is an ORC JIT plus a oneTBB grid; the
// CUDA driver is a table of libcuda functions loaded with dlopen.
#pragma once

#include <memory>

#include "compiler/target.hpp"
#include "kiln/compiled_kernel.hpp"
#include "kiln/device.hpp"
#include "kiln/grid.hpp"

namespace kiln::runtime {

/// A kernel binary loaded on one device; what a launch calls.
class LoadedBinary {
public:
  virtual ~LoadedBinary() = default;
};

class Driver {
public:
  virtual ~Driver() = default;
  virtual Backend backend() const = 0;
  virtual int device_count() const = 0;
  virtual compiler::Target target(int device) const = 0;
  /// Loads a binary compiled for target(device). Throws RuntimeError.
  virtual std::unique_ptr<LoadedBinary> load(const CompiledKernel &k, int device) = 0;
  /// Runs `grid` programs; `args[i]` points at the i-th launch parameter's
  /// value, and args[n] (after the n parameters) at n int64 sizes in bytes
  /// of the tensors pointer parameters came from (-1: unknown; debug
  /// launches check accesses against them). Must not allocate (the launch
  /// hot path). Throws RuntimeError.
  virtual void launch(const LoadedBinary &b, Grid grid, void **args, Stream stream) = 0;
  /// Why pointer `p` cannot be a kernel argument on `device` ("is host
  /// memory ..."), or null when it can (null pointers can: kernels test
  /// them). On the launch path: must be cheap on a repeated pointer.
  virtual const char *pointer_problem(const void *p, int device) { return nullptr; }
};

} // namespace kiln::runtime
