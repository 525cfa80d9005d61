// The CUDA driver API's types and the few constants kiln uses. libcuda is
// loaded with dlopen (cuda_api.cpp), so these are all kiln needs of CUDA at
// build time: from the toolkit's cuda.h where CMake found it
// (KILN_HAVE_CUDA_H), else declared here from the driver's ABI, which CUDA
// keeps stable. tests/cuda_driver_test.cpp checks the values against cuda.h.
#pragma once

namespace kiln::runtime::cuda::abi {
constexpr int success = 0;
constexpr int error_invalid_value = 1;
constexpr int error_not_found = 500;
constexpr int error_launch_out_of_resources = 701;
constexpr int device_attribute_compute_capability_major = 75;
constexpr int device_attribute_compute_capability_minor = 76;
constexpr int func_attribute_max_dynamic_shared_size_bytes = 8;
constexpr int pointer_attribute_memory_type = 2;
constexpr int pointer_attribute_device_ordinal = 9;
constexpr int memorytype_device = 2;
constexpr unsigned event_default = 0;
} // namespace kiln::runtime::cuda::abi

#ifdef KILN_HAVE_CUDA_H
#include <cuda.h>
#else
namespace kiln_cuda_abi = kiln::runtime::cuda::abi;
extern "C" {
typedef enum kiln_cuda_result : int {
  CUDA_SUCCESS = kiln_cuda_abi::success,
  CUDA_ERROR_INVALID_VALUE = kiln_cuda_abi::error_invalid_value,
  CUDA_ERROR_NOT_FOUND = kiln_cuda_abi::error_not_found,
  CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = kiln_cuda_abi::error_launch_out_of_resources,
} CUresult;
typedef enum kiln_cuda_device_attribute : int {
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR =
      kiln_cuda_abi::device_attribute_compute_capability_major,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR =
      kiln_cuda_abi::device_attribute_compute_capability_minor,
} CUdevice_attribute;
typedef enum kiln_cuda_function_attribute : int {
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES =
      kiln_cuda_abi::func_attribute_max_dynamic_shared_size_bytes,
} CUfunction_attribute;
typedef enum kiln_cuda_pointer_attribute : int {
  CU_POINTER_ATTRIBUTE_MEMORY_TYPE = kiln_cuda_abi::pointer_attribute_memory_type,
  CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = kiln_cuda_abi::pointer_attribute_device_ordinal,
} CUpointer_attribute;
typedef enum kiln_cuda_memorytype : int {
  CU_MEMORYTYPE_DEVICE = kiln_cuda_abi::memorytype_device,
} CUmemorytype;
enum : unsigned { CU_EVENT_DEFAULT = kiln_cuda_abi::event_default };
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUevent_st *CUevent;
typedef struct CUstream_st *CUstream;
}
#endif
