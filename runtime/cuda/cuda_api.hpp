// The CUDA driver as a table of functions (Halide's cuda_functions.h habit):
// loaded from libcuda.so.1 with dlopen, so kiln starts where there is no
// driver, or filled with fakes so CI can run the launch path without a GPU.
#pragma once

#include <memory>
#include <string>

#include "runtime/cuda/cuda_types.hpp"

namespace kiln::runtime::cuda {

struct CudaApi {
  CUresult (*Init)(unsigned);
  CUresult (*DeviceGetCount)(int *);
  CUresult (*DeviceGet)(CUdevice *, int);
  CUresult (*DeviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
  CUresult (*DeviceGetName)(char *, int, CUdevice);
  CUresult (*DevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*CtxSetCurrent)(CUcontext);
  CUresult (*CtxGetCurrent)(CUcontext *);
  CUresult (*CtxSynchronize)();
  CUresult (*ModuleLoadData)(CUmodule *, const void *);
  CUresult (*ModuleUnload)(CUmodule);
  CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*FuncSetAttribute)(CUfunction, CUfunction_attribute, int);
  CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                           CUstream, void **, void **);
  CUresult (*MemAlloc)(CUdeviceptr *, size_t);
  CUresult (*MemFree)(CUdeviceptr);
  CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*StreamSynchronize)(CUstream);
  // Timing (kiln::do_bench): events, and a memset that flushes L2.
  CUresult (*EventCreate)(CUevent *, unsigned);
  CUresult (*EventRecord)(CUevent, CUstream);
  CUresult (*EventSynchronize)(CUevent);
  CUresult (*EventElapsedTime)(float *, CUevent, CUevent);
  CUresult (*EventDestroy)(CUevent);
  CUresult (*MemsetD32Async)(CUdeviceptr, unsigned, size_t, CUstream);
  // What memory a launch's pointer argument is (host arrays are refused).
  CUresult (*PointerGetAttribute)(void *, CUpointer_attribute, CUdeviceptr);
  CUresult (*GetErrorString)(CUresult, const char **);

  /// The real driver, or null with `why` set when libcuda.so.1 or a symbol is
  /// missing. Loaded once per process; never unloaded.
  static const CudaApi *load(std::string *why);

  /// Throws RuntimeError "<what> failed: <driver's message> (CUDA error N)" unless r is CUDA_SUCCESS.
  void check(CUresult r, const char *what) const;
};

} // namespace kiln::runtime::cuda
