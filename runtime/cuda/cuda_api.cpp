#include "runtime/cuda/cuda_api.hpp"

#include <dlfcn.h>

#include "kiln/error.hpp"

namespace kiln::runtime::cuda {

namespace {

struct Loaded {
  CudaApi api{};
  std::string error;
  bool ok = false;
};

Loaded load_once() {
  Loaded l;
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    l.error = "libcuda.so.1 is not available (no NVIDIA driver on this machine)";
    return l;
  }
  auto sym = [&](auto &fn, const char *name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
    if (!fn && l.error.empty())
      l.error = std::string("libcuda.so.1 has no ") + name + "; the driver is too old";
  };
  CudaApi &a = l.api;
  sym(a.Init, "cuInit");
  sym(a.DeviceGetCount, "cuDeviceGetCount");
  sym(a.DeviceGet, "cuDeviceGet");
  sym(a.DeviceGetAttribute, "cuDeviceGetAttribute");
  sym(a.DeviceGetName, "cuDeviceGetName");
  sym(a.DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  sym(a.CtxSetCurrent, "cuCtxSetCurrent");
  sym(a.CtxGetCurrent, "cuCtxGetCurrent");
  sym(a.CtxSynchronize, "cuCtxSynchronize");
  sym(a.ModuleLoadData, "cuModuleLoadData");
  sym(a.ModuleUnload, "cuModuleUnload");
  sym(a.ModuleGetFunction, "cuModuleGetFunction");
  sym(a.FuncSetAttribute, "cuFuncSetAttribute");
  sym(a.LaunchKernel, "cuLaunchKernel");
  sym(a.MemAlloc, "cuMemAlloc_v2");
  sym(a.MemFree, "cuMemFree_v2");
  sym(a.MemcpyHtoD, "cuMemcpyHtoD_v2");
  sym(a.MemcpyDtoH, "cuMemcpyDtoH_v2");
  sym(a.StreamSynchronize, "cuStreamSynchronize");
  sym(a.GetErrorString, "cuGetErrorString");
  sym(a.EventCreate, "cuEventCreate");
  sym(a.EventRecord, "cuEventRecord");
  sym(a.EventSynchronize, "cuEventSynchronize");
  sym(a.EventDestroy, "cuEventDestroy_v2");
  sym(a.MemsetD32Async, "cuMemsetD32Async");
  sym(a.PointerGetAttribute, "cuPointerGetAttribute");
  // CUDA 12.8 renamed it (same signature); older drivers have only the first.
  a.EventElapsedTime =
      reinterpret_cast<decltype(a.EventElapsedTime)>(dlsym(lib, "cuEventElapsedTime_v2"));
  sym(a.EventElapsedTime, a.EventElapsedTime ? "cuEventElapsedTime_v2" : "cuEventElapsedTime");
  if (!l.error.empty())
    return l;
  if (CUresult r = a.Init(0); r != CUDA_SUCCESS) {
    l.error = "cuInit failed (CUDA error " + std::to_string(r) + "): no usable GPU";
    return l;
  }
  l.ok = true;
  return l;
}

} // namespace

const CudaApi *CudaApi::load(std::string *why) {
  static const Loaded loaded = load_once();
  if (!loaded.ok) {
    if (why)
      *why = loaded.error;
    return nullptr;
  }
  return &loaded.api;
}

void CudaApi::check(CUresult r, const char *what) const {
  if (r == CUDA_SUCCESS)
    return;
  const char *msg = nullptr;
  if (!GetErrorString || GetErrorString(r, &msg) != CUDA_SUCCESS || !msg)
    msg = "unknown error";
  throw RuntimeError(std::string(what) + " failed: " + msg + " (CUDA error " + std::to_string(r) + ")");
}

} // namespace kiln::runtime::cuda
