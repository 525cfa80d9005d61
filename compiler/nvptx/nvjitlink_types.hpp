// nvJitLink's types and the two constants kiln uses. The library is loaded
// with dlopen (ptx_to_cubin.cpp), so these are all kiln needs of it at build
// time: from the toolkit's nvJitLink.h where CMake found it
// (KILN_HAVE_NVJITLINK_H), else declared here from its ABI.
#pragma once

namespace kiln::compiler::nvjitlink_abi {
constexpr int success = 0;
constexpr int input_ptx = 2;
} // namespace kiln::compiler::nvjitlink_abi

#ifdef KILN_HAVE_NVJITLINK_H
#include <nvJitLink.h>
#else
extern "C" {
typedef enum kiln_nvjitlink_result : int {
  NVJITLINK_SUCCESS = kiln::compiler::nvjitlink_abi::success,
} nvJitLinkResult;
typedef enum kiln_nvjitlink_input_type : int {
  NVJITLINK_INPUT_PTX = kiln::compiler::nvjitlink_abi::input_ptx,
} nvJitLinkInputType;
typedef struct nvJitLink *nvJitLinkHandle;
}
#endif
