#include "runtime/cuda_driver.hpp"

#include <cstddef>
#include <cstring>
#include <mutex>
#include <string>

#include "kiln/error.hpp"
#include "runtime/spec_key.hpp"

namespace kiln::runtime {

namespace {

/// What a debug kernel's first out-of-bounds access leaves in device memory
/// (compiler/llvm/lower_tile_ir.hpp).
struct BoundsRecord {
  int32_t claimed = 0, argument = 0, line = 0, is_store = 0;
  int64_t offset = 0, extent = 0;
};
static_assert(sizeof(BoundsRecord) == 32 && offsetof(BoundsRecord, offset) == 16);

class CudaBinary final : public LoadedBinary {
public:
  CudaBinary(const cuda::CudaApi &api, CUcontext c, CUmodule m, CUfunction f, unsigned threads, unsigned shared)
      : api_(api), context(c), module(m), function(f), block_threads(threads), shared_bytes(shared) {}
  ~CudaBinary() override {
    if (record)
      api_.MemFree(record);
    api_.ModuleUnload(module);
  }

  const cuda::CudaApi &api_;
  CUcontext context;
  CUmodule module;
  CUfunction function;
  unsigned block_threads;
  unsigned shared_bytes;
  /// Debug builds: the out-of-bounds record, and what its report names.
  CUdeviceptr record = 0;
  std::string kernel;
  std::vector<std::string> params;
  std::mutex record_mutex; ///< one debug launch at a time reads and resets the record
};

} // namespace

CudaDriver::CudaDriver(const cuda::CudaApi &api) : api_(api) {
  int n = 0;
  api_.check(api_.DeviceGetCount(&n), "cuDeviceGetCount");
  if (n == 0)
    throw RuntimeError("the CUDA driver reports no GPU; use --backend cpu");
  for (int i = 0; i < n; ++i) {
    DeviceInfo d;
    api_.check(api_.DeviceGet(&d.handle, i), "cuDeviceGet");
    int major = 0, minor = 0;
    api_.check(api_.DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d.handle),
               "cuDeviceGetAttribute");
    api_.check(api_.DeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d.handle),
               "cuDeviceGetAttribute");
    d.sm = major * 10 + minor;
    devices_.push_back(d);
  }
}

const CudaDriver::DeviceInfo &CudaDriver::device(int i) const {
  if (i < 0 || i >= static_cast<int>(devices_.size()))
    throw ArgumentError("cuda:" + std::to_string(i) + " does not exist; this machine has " +
                        std::to_string(devices_.size()) + " GPU(s)");
  return devices_[i];
}

compiler::Target CudaDriver::target(int i) const { return compiler::Target::cuda(device(i).sm); }

void CudaDriver::make_current(int i) {
  device(i); // validates i
  DeviceInfo &d = devices_[i];
  if (!d.context)
    api_.check(api_.DevicePrimaryCtxRetain(&d.context, d.handle), "cuDevicePrimaryCtxRetain");
  api_.check(api_.CtxSetCurrent(d.context), "cuCtxSetCurrent");
}

std::unique_ptr<LoadedBinary> CudaDriver::load(const CompiledKernel &k, int i) {
  if (k.binary_kind != "cubin" && k.binary_kind != "ptx")
    throw RuntimeError("kernel '" + k.name + "' was compiled for " + k.target + ", not for a GPU");
  make_current(i);
  CUmodule m = nullptr;
  // cuModuleLoadData takes a cubin, or NUL-terminated PTX for the driver's JIT.
  std::vector<uint8_t> image(k.binary);
  if (k.binary_kind == "ptx")
    image.push_back(0);
  api_.check(api_.ModuleLoadData(&m, image.data()), ("loading kernel '" + k.name + "'").c_str());
  CUfunction f = nullptr;
  if (CUresult r = api_.ModuleGetFunction(&f, m, k.entry.c_str()); r != CUDA_SUCCESS) {
    api_.ModuleUnload(m);
    api_.check(r, ("finding '" + k.entry + "' in the module of '" + k.name + "'").c_str());
  }
  if (k.shared_bytes > 48 * 1024)
    api_.check(api_.FuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                     static_cast<int>(k.shared_bytes)),
               "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
  auto b = std::make_unique<CudaBinary>(api_, devices_[i].context, m, f,
                                        32u * static_cast<unsigned>(k.options.num_warps),
                                        k.shared_bytes);
  if (k.options.debug) {
    api_.check(api_.MemAlloc(&b->record, sizeof(BoundsRecord)),
               "cuMemAlloc (the debug bounds record)");
    const BoundsRecord clear;
    api_.check(api_.MemcpyHtoD(b->record, &clear, sizeof clear), "cuMemcpyHtoD");
    b->kernel = k.name;
    for (const LaunchParam &p : k.params)
      b->params.push_back(p.name);
  }
  return b;
}

const char *CudaDriver::pointer_problem(const void *p, int device) {
  if (!p || !api_.PointerGetAttribute)
    return nullptr;
  // Pointers this thread already proved usable on a device, direct-mapped:
  // a program launches the same tensors again and again, and a hit costs a
  // compare instead of a driver call. Device allocations stay device memory
  // for as long as they are valid, so a proof does not go stale.
  struct Proof {
    const void *p;
    int device;
  };
  thread_local Proof proven[64] = {};
  Proof &slot = proven[(reinterpret_cast<uintptr_t>(p) >> 6) % 64];
  if (slot.p == p && slot.device == device)
    return nullptr;
  const auto addr = reinterpret_cast<CUdeviceptr>(p);
  // The query needs a context on this thread; the launch would set it anyway.
  if (device >= 0 && static_cast<size_t>(device) < devices_.size() && devices_[device].context)
    api_.CtxSetCurrent(devices_[device].context);
  unsigned type = 0;
  const CUresult r = api_.PointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, addr);
  // Only "an address the driver does not know" is a verdict; any other
  // failure leaves it to the launch to report what goes wrong.
  if (r == CUDA_ERROR_INVALID_VALUE)
    return "is not memory the GPU can reach (a host array?); allocate it on the cuda device "
           "(kiln::Buffer, a CUDA tensor through DLPack) or launch on the cpu backend";
  if (r != CUDA_SUCCESS)
    return nullptr;
  if (type == CU_MEMORYTYPE_DEVICE) {
    int ordinal = -1;
    if (api_.PointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, addr) ==
            CUDA_SUCCESS &&
        ordinal != device)
      return "is memory of another GPU than the launch's; copy it over or launch on its device";
  }
  slot = Proof{p, device};
  return nullptr;
}

void CudaDriver::launch(const LoadedBinary &b, Grid grid, void **args, Stream stream) {
  const auto &cb = static_cast<const CudaBinary &>(b);
  // The thread's current context, asked of the driver (a read of its thread
  // state, far cheaper than the launch): a memo of our own would go stale
  // when the program (or torch, or a Buffer on another device) switches it.
  CUcontext current = nullptr;
  if (!api_.CtxGetCurrent || api_.CtxGetCurrent(&current) != CUDA_SUCCESS || current != cb.context)
    api_.check(api_.CtxSetCurrent(cb.context), "cuCtxSetCurrent");
  if (cb.record) {
    launch_checked(const_cast<CudaBinary &>(cb), grid, args, stream);
    return;
  }
  api_.check(api_.LaunchKernel(cb.function, grid.x, grid.y, grid.z, cb.block_threads, 1, 1, cb.shared_bytes,
                               static_cast<CUstream>(stream), args, nullptr),
             "cuLaunchKernel");
}

// Debug launches wait for the kernel (as CUDA_LAUNCH_BLOCKING would) to read
// its out-of-bounds record: slow, and meant to be.
void CudaDriver::launch_checked(LoadedBinary &b, Grid grid, void **args, Stream stream) {
  auto &cb = static_cast<CudaBinary &>(b);
  const size_t n = cb.params.size();
  if (n > kMaxParams)
    throw RuntimeError("kernel '" + cb.kernel + "' has more parameters than kiln launches");
  // The arguments, each one's tensor size (after them in `args`; -1 where
  // the caller gave none), and the record, as the kernel's parameters.
  void *params[2 * kMaxParams + 1];
  int64_t unknown[kMaxParams];
  const auto *extents = static_cast<const int64_t *>(args[n]);
  for (size_t i = 0; i < n; ++i) {
    unknown[i] = -1;
    params[i] = args[i];
    params[n + i] = const_cast<int64_t *>(extents ? &extents[i] : &unknown[i]);
  }
  CUdeviceptr record = cb.record;
  params[2 * n] = &record;
  std::lock_guard lock(cb.record_mutex);
  const auto s = static_cast<CUstream>(stream);
  api_.check(api_.LaunchKernel(cb.function, grid.x, grid.y, grid.z, cb.block_threads, 1, 1,
                               cb.shared_bytes, s, params, nullptr),
             "cuLaunchKernel");
  api_.check(api_.StreamSynchronize(s), "cuStreamSynchronize (a debug launch)");
  BoundsRecord r;
  api_.check(api_.MemcpyDtoH(&r, record, sizeof r), "cuMemcpyDtoH (the debug bounds record)");
  if (!r.claimed)
    return;
  const BoundsRecord clear;
  api_.check(api_.MemcpyHtoD(record, &clear, sizeof clear), "cuMemcpyHtoD");
  const std::string name = r.argument >= 0 && static_cast<size_t>(r.argument) < n
                               ? cb.params[static_cast<size_t>(r.argument)]
                               : std::to_string(r.argument);
  // The CPU's words (cpu_driver.cpp), so a test or a user sees one error.
  throw RuntimeError(std::string("out-of-bounds ") + (r.is_store ? "store" : "load") +
                     " in kernel '" + cb.kernel + "' at line " + std::to_string(r.line) +
                     " through argument '" + name + "': byte offset " + std::to_string(r.offset) +
                     " of a tensor of " + std::to_string(r.extent) + " bytes");
}

} // namespace kiln::runtime
