// The CUDA driver's launch path against a fake driver table (tinygrad's
// MOCKGPU habit): module load, parameter packing, grid and block, stream,
// errors. The real driver is exercised on the GPU machine; here it reports
// [SKIP] when libcuda is missing.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "compiler/nvptx/nvjitlink_types.hpp"
#include "kiln/buffer.hpp"
#include "kiln/device.hpp"
#include "kiln/error.hpp"
#include "kiln/kernel.hpp"
#include "kiln/module.hpp"
#include "runtime/cuda/cuda_api.hpp"
#include "runtime/cuda_driver.hpp"

namespace {

using kiln::runtime::cuda::CudaApi;

#ifdef KILN_HAVE_CUDA_H
// What runtime/cuda/cuda_types.hpp declares where there is no cuda.h must be
// cuda.h's own values: they are the driver's ABI.
namespace abi = kiln::runtime::cuda::abi;
static_assert(CUDA_SUCCESS == abi::success &&
              CUDA_ERROR_INVALID_VALUE == abi::error_invalid_value &&
              CUDA_ERROR_NOT_FOUND == abi::error_not_found &&
              CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES == abi::error_launch_out_of_resources);
static_assert(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR ==
                  abi::device_attribute_compute_capability_major &&
              CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR ==
                  abi::device_attribute_compute_capability_minor);
static_assert(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES ==
              abi::func_attribute_max_dynamic_shared_size_bytes);
static_assert(CU_POINTER_ATTRIBUTE_MEMORY_TYPE == abi::pointer_attribute_memory_type &&
              CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL == abi::pointer_attribute_device_ordinal &&
              CU_MEMORYTYPE_DEVICE == abi::memorytype_device &&
              CU_EVENT_DEFAULT == abi::event_default);
static_assert(sizeof(CUdeviceptr) == 8 && sizeof(CUdevice) == sizeof(int) &&
              sizeof(CUresult) == sizeof(int));
#endif
#ifdef KILN_HAVE_NVJITLINK_H
namespace nvjitlink_abi = kiln::compiler::nvjitlink_abi;
static_assert(NVJITLINK_SUCCESS == nvjitlink_abi::success &&
              NVJITLINK_INPUT_PTX == nvjitlink_abi::input_ptx);
#endif

/// What the fake driver saw.
struct Recorder {
  std::vector<uint8_t> image;
  std::string function;
  unsigned grid[3] = {}, block[3] = {}, shared = 0;
  void *stream = nullptr;
  std::vector<uint64_t> params;
  int shared_attribute = -1;
  bool unloaded = false;
  CUresult launch_result = CUDA_SUCCESS;
  CUcontext current = nullptr; ///< the thread's current context, as the fake driver keeps it
  int context_sets = 0;
} rec;

CudaApi fake_api() {
  CudaApi a{};
  a.Init = [](unsigned) { return CUDA_SUCCESS; };
  a.DeviceGetCount = [](int *n) {
    *n = 1;
    return CUDA_SUCCESS;
  };
  a.DeviceGet = [](CUdevice *d, int i) {
    *d = i;
    return CUDA_SUCCESS;
  };
  a.DeviceGetAttribute = [](int *v, CUdevice_attribute attr, CUdevice) {
    *v = attr == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR ? 9 : 0;
    return CUDA_SUCCESS;
  };
  a.DevicePrimaryCtxRetain = [](CUcontext *c, CUdevice) {
    *c = reinterpret_cast<CUcontext>(0x1);
    return CUDA_SUCCESS;
  };
  a.CtxSetCurrent = [](CUcontext c) {
    rec.current = c;
    ++rec.context_sets;
    return CUDA_SUCCESS;
  };
  a.CtxGetCurrent = [](CUcontext *c) {
    *c = rec.current;
    return CUDA_SUCCESS;
  };
  a.ModuleLoadData = [](CUmodule *m, const void *image) {
    const char *p = static_cast<const char *>(image);
    rec.image.assign(p, p + 4);
    *m = reinterpret_cast<CUmodule>(0x2);
    return CUDA_SUCCESS;
  };
  a.ModuleUnload = [](CUmodule) {
    rec.unloaded = true;
    return CUDA_SUCCESS;
  };
  a.ModuleGetFunction = [](CUfunction *f, CUmodule, const char *name) {
    rec.function = name;
    if (rec.function == "missing")
      return CUDA_ERROR_NOT_FOUND;
    *f = reinterpret_cast<CUfunction>(0x3);
    return CUDA_SUCCESS;
  };
  a.FuncSetAttribute = [](CUfunction, CUfunction_attribute, int v) {
    rec.shared_attribute = v;
    return CUDA_SUCCESS;
  };
  a.LaunchKernel = [](CUfunction, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                      unsigned shared, CUstream s, void **params, void **) {
    rec.grid[0] = gx, rec.grid[1] = gy, rec.grid[2] = gz;
    rec.block[0] = bx, rec.block[1] = by, rec.block[2] = bz;
    rec.shared = shared;
    rec.stream = s;
    rec.params.clear();
    for (int i = 0; i < 3; ++i) {
      uint64_t v = 0;
      std::memcpy(&v, params[i], i == 2 ? 4 : 8);
      rec.params.push_back(v);
    }
    return rec.launch_result;
  };
  a.GetErrorString = [](CUresult r, const char **s) {
    *s = r == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES ? "too many resources requested for launch" : "named symbol not found";
    return CUDA_SUCCESS;
  };
  return a;
}

kiln::CompiledKernel fake_cubin(unsigned shared = 0) {
  kiln::CompiledKernel k;
  k.name = "add_kernel";
  k.entry = "add_kernel";
  k.binary_kind = "cubin";
  k.binary = {0x7f, 'E', 'L', 'F'};
  k.options.num_warps = 8;
  k.shared_bytes = shared;
  return k;
}

} // namespace

TEST_CASE("cuda driver: the fake device reports sm_90") {
  const CudaApi api = fake_api();
  kiln::runtime::CudaDriver driver(api);
  CHECK(driver.device_count() == 1);
  CHECK(driver.target(0).str() == "cuda:sm_90a"); // wgmma's arch-specific target
  CHECK(driver.target(0).wgmma);
  CHECK_THROWS_WITH_AS(driver.target(3), doctest::Contains("cuda:3 does not exist"), kiln::ArgumentError);
}

TEST_CASE(
    "cuda driver: a launch makes its context current when the thread's current one is another") {
  rec = Recorder{};
  const CudaApi api = fake_api();
  kiln::runtime::CudaDriver driver(api);
  auto bin = driver.load(fake_cubin(), 0);
  float *x = reinterpret_cast<float *>(0x1000);
  int32_t n = 1;
  void *args[] = {&x, &x, &n};
  driver.launch(*bin, kiln::Grid{1}, args, nullptr);
  const int sets = rec.context_sets;
  driver.launch(*bin, kiln::Grid{1}, args, nullptr); // already current: no set
  CHECK(rec.context_sets == sets);
  rec.current = reinterpret_cast<CUcontext>(0x99); // the program switched contexts
  driver.launch(*bin, kiln::Grid{1}, args, nullptr);
  CHECK(rec.context_sets == sets + 1);
  CHECK(rec.current == reinterpret_cast<CUcontext>(0x1));
}

TEST_CASE("cuda driver: a host pointer is refused, device pointers are proved once per thread") {
  // The fake's memory map: below 0x10000 is device 0, 0x10000.. device 1,
  // anything else unregistered host memory.
  static int queries = 0;
  queries = 0;
  CudaApi api = fake_api();
  api.PointerGetAttribute = [](void *out, CUpointer_attribute attr, CUdeviceptr p) {
    ++queries;
    if (p >= 0x20000)
      return CUDA_ERROR_INVALID_VALUE;
    if (attr == CU_POINTER_ATTRIBUTE_MEMORY_TYPE)
      *static_cast<unsigned *>(out) = CU_MEMORYTYPE_DEVICE;
    else if (attr == CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL)
      *static_cast<int *>(out) = p >= 0x10000 ? 1 : 0;
    return CUDA_SUCCESS;
  };
  kiln::runtime::CudaDriver driver(api);
  const auto *device0 = reinterpret_cast<const void *>(0x1000),
             *device1 = reinterpret_cast<const void *>(0x11000);
  std::vector<float> host(4);
  CHECK(driver.pointer_problem(device0, 0) == nullptr);
  const int after_first = queries;
  CHECK(driver.pointer_problem(device0, 0) == nullptr); // proved: no driver call
  CHECK(queries == after_first);
  const char *why = driver.pointer_problem(host.data(), 0);
  REQUIRE(why != nullptr);
  CHECK(std::string(why).find("host array") != std::string::npos);
  why = driver.pointer_problem(device1, 0);
  REQUIRE(why != nullptr);
  CHECK(std::string(why).find("another GPU") != std::string::npos);
  CHECK(driver.pointer_problem(nullptr, 0) == nullptr); // kernels may test a null pointer
}

TEST_CASE("cuda driver: load and launch pack the grid, block, shared memory and parameters") {
  rec = Recorder{};
  const CudaApi api = fake_api();
  kiln::runtime::CudaDriver driver(api);
  {
    auto bin = driver.load(fake_cubin(64 * 1024), 0);
    CHECK(rec.image == std::vector<uint8_t>{0x7f, 'E', 'L', 'F'});
    CHECK(rec.function == "add_kernel");
    CHECK(rec.shared_attribute == 64 * 1024); // above 48 KiB needs the attribute

    float *x = reinterpret_cast<float *>(0x1000), *y = reinterpret_cast<float *>(0x2000);
    int32_t n = 10007;
    void *args[] = {&x, &y, &n};
    int stream_tag = 0;
    driver.launch(*bin, kiln::Grid{10, 2, 1}, args, &stream_tag);
    CHECK(rec.grid[0] == 10);
    CHECK(rec.grid[1] == 2);
    CHECK(rec.block[0] == 256); // num_warps * 32
    CHECK(rec.block[1] == 1);
    CHECK(rec.shared == 64 * 1024);
    CHECK(rec.stream == &stream_tag);
    CHECK(rec.params == std::vector<uint64_t>{0x1000, 0x2000, 10007});
  }
  CHECK(rec.unloaded); // the module goes with its LoadedBinary
}

TEST_CASE("cuda driver: driver errors become messages") {
  rec = Recorder{};
  const CudaApi api = fake_api();
  kiln::runtime::CudaDriver driver(api);
  kiln::CompiledKernel k = fake_cubin();
  k.entry = "missing";
  CHECK_THROWS_WITH_AS(driver.load(k, 0), doctest::Contains("named symbol not found"), kiln::RuntimeError);

  auto bin = driver.load(fake_cubin(), 0);
  rec.launch_result = CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
  float *x = nullptr, *y = nullptr;
  int32_t n = 1;
  void *args[] = {&x, &y, &n};
  CHECK_THROWS_WITH_AS(driver.launch(*bin, kiln::Grid{1}, args, nullptr),
                       doctest::Contains("cuLaunchKernel failed: too many resources requested for launch"),
                       kiln::RuntimeError);

  kiln::CompiledKernel cpu = fake_cubin();
  cpu.binary_kind = "obj";
  CHECK_THROWS_WITH_AS(driver.load(cpu, 0), doctest::Contains("not for a GPU"), kiln::RuntimeError);
}

namespace {

/// The fake's device memory for the debug bounds record (32 bytes).
alignas(8) unsigned char fake_record[32];
/// What the fake kernel does in a debug launch: nothing, or claim the
/// record as the kernel's first out-of-bounds access would.
bool fake_kernel_violates = false;
/// The by-value parameters the fake saw after the three arguments.
std::vector<int64_t> seen_extents;
CUdeviceptr seen_record = 0;
int syncs = 0;

CudaApi debug_api() {
  CudaApi a = fake_api();
  a.MemAlloc = [](CUdeviceptr *p, size_t n) {
    REQUIRE(n == sizeof fake_record);
    *p = reinterpret_cast<CUdeviceptr>(fake_record);
    return CUDA_SUCCESS;
  };
  a.MemFree = [](CUdeviceptr) { return CUDA_SUCCESS; };
  a.MemcpyHtoD = [](CUdeviceptr d, const void *h, size_t n) {
    std::memcpy(reinterpret_cast<void *>(d), h, n);
    return CUDA_SUCCESS;
  };
  a.MemcpyDtoH = [](void *h, CUdeviceptr d, size_t n) {
    std::memcpy(h, reinterpret_cast<const void *>(d), n);
    return CUDA_SUCCESS;
  };
  a.StreamSynchronize = [](CUstream) {
    ++syncs;
    return CUDA_SUCCESS;
  };
  a.LaunchKernel = [](CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                      unsigned, CUstream, void **params, void **) {
    seen_extents.clear();
    for (int i = 3; i < 6; ++i)
      seen_extents.push_back(*static_cast<int64_t *>(params[i]));
    seen_record = *static_cast<CUdeviceptr *>(params[6]);
    if (fake_kernel_violates) {
      // {claimed, argument, line, is_store, offset, extent}: a store through
      // argument 1 at line 9, 64 bytes into a 64-byte tensor.
      const int32_t head[4] = {1, 1, 9, 1};
      const int64_t where[2] = {64, 64};
      auto *rec_bytes = reinterpret_cast<unsigned char *>(seen_record);
      std::memcpy(rec_bytes, head, sizeof head);
      std::memcpy(rec_bytes + 16, where, sizeof where);
    }
    return CUDA_SUCCESS;
  };
  return a;
}

} // namespace

TEST_CASE("cuda driver: a debug launch passes the tensor sizes and a device record, and reports "
          "the kernel's out-of-bounds access as the CPU does") {
  rec = Recorder{};
  std::memset(fake_record, 0xff, sizeof fake_record);
  fake_kernel_violates = false;
  syncs = 0;
  const CudaApi api = debug_api();
  kiln::runtime::CudaDriver driver(api);
  kiln::CompiledKernel k = fake_cubin();
  k.options.debug = true;
  k.params = {{"x_ptr", kiln::DType::f32, true},
              {"y_ptr", kiln::DType::f32, true},
              {"n", kiln::DType::i32, false}};
  auto bin = driver.load(k, 0);
  CHECK(fake_record[0] == 0); // allocated and cleared at load

  float *x = reinterpret_cast<float *>(0x1000), *y = reinterpret_cast<float *>(0x2000);
  int32_t n = 16;
  int64_t extents[3] = {64, 128, -1};
  void *args[] = {&x, &y, &n, extents};
  driver.launch(*bin, kiln::Grid{1}, args, nullptr);
  CHECK(seen_extents == std::vector<int64_t>{64, 128, -1});
  CHECK(seen_record == reinterpret_cast<CUdeviceptr>(fake_record));
  CHECK(syncs == 1); // the record is read after the kernel finished

  fake_kernel_violates = true;
  CHECK_THROWS_WITH_AS(driver.launch(*bin, kiln::Grid{1}, args, nullptr),
                       "out-of-bounds store in kernel 'add_kernel' at line 9 through argument "
                       "'y_ptr': byte offset 64 of a tensor of 64 bytes",
                       kiln::RuntimeError);
  // The record was cleared for the next launch, which runs clean.
  fake_kernel_violates = false;
  driver.launch(*bin, kiln::Grid{1}, args, nullptr);

  // A launch that gives no sizes (a null array) checks nothing: all -1.
  void *no_sizes[] = {&x, &y, &n, nullptr};
  driver.launch(*bin, kiln::Grid{1}, no_sizes, nullptr);
  CHECK(seen_extents == std::vector<int64_t>{-1, -1, -1});
}

TEST_CASE("cuda driver: the real driver, where there is one") {
  std::string why;
  const CudaApi *api = CudaApi::load(&why);
  if (!api) {
    // Printed, not MESSAGE: ctest's SKIP_REGULAR_EXPRESSION must see it.
    std::printf("[SKIP] no CUDA driver here: %s\n", why.c_str());
    CHECK(!why.empty());
    return;
  }
  kiln::runtime::CudaDriver driver(*api);
  CHECK(driver.device_count() >= 1);
  CHECK(driver.target(0).str().rfind("cuda:sm_", 0) == 0);

  // The issue's case on a real GPU: host memory passed to a cuda launch is
  // refused naming the argument (it once read back zeros), device memory runs.
  kiln::set_device({kiln::Backend::cuda, 0});
  const kiln::Module m = kiln::Module::from_string(R"(import triton
import triton.language as tl


@triton.jit
def add_one(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1.0, mask=offs < n)
)",
                                                   "add_one.py");
  std::vector<float> host(100, 1.0f);
  CHECK_THROWS_WITH_AS(m.kernel("add_one")[{1}](host.data(), 100, kiln::arg("BLOCK", 128)),
                       doctest::Contains("x_ptr"), kiln::ArgumentError);
  kiln::Buffer buf = kiln::Buffer::allocate({kiln::Backend::cuda, 0}, 100 * sizeof(float));
  buf.copy_from_host(host.data(), 100 * sizeof(float));
  m.kernel("add_one")[{1}](buf.tensor(kiln::DType::f32, {100}), 100, kiln::arg("BLOCK", 128));
  buf.copy_to_host(host.data(), 100 * sizeof(float));
  CHECK(host[0] == 2.0f);
  CHECK(host[99] == 2.0f);

  // Debug mode on the GPU (issue 17.8): a store past the tensor's end is an
  // error naming kernel, line and argument, and is not made (the element
  // after it keeps its value); the record is clean for the next launch.
  const kiln::Module oob = kiln::Module::from_string(R"(import triton
import triton.language as tl


@triton.jit
def past_end(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, offs * 1.0)
)",
                                                     "past_end.py");
  kiln::Buffer big = kiln::Buffer::allocate({kiln::Backend::cuda, 0}, 128 * sizeof(float));
  std::vector<float> sentinel(128, -7.0f);
  big.copy_from_host(sentinel.data(), 128 * sizeof(float));
  CHECK_THROWS_WITH_AS(oob.kernel("past_end")[{1}](big.tensor(kiln::DType::f32, {100}),
                                                   kiln::arg("BLOCK", 128),
                                                   kiln::arg("debug", true)),
                       doctest::Contains("out-of-bounds store in kernel 'past_end' at line 8 "
                                         "through argument 'x_ptr': byte offset "),
                       kiln::RuntimeError);
  big.copy_to_host(sentinel.data(), 128 * sizeof(float));
  CHECK(sentinel[99] == 99.0f);
  CHECK(sentinel[100] == -7.0f);
  oob.kernel("past_end")[{1}](big.tensor(kiln::DType::f32, {128}), kiln::arg("BLOCK", 128),
                              kiln::arg("debug", true));
  kiln::set_device({kiln::Backend::cpu, 0});
}
