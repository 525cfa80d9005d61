// The CUDA toolkit's libdevice (NVIDIA's bitcode math library, the same one
// nvcc and Triton use): the GPU's accurate math (erf, pow, fp64
// transcendentals) comes from it rather than from our own approximations.
#pragma once

namespace llvm {
class Module;
} // namespace llvm

namespace kiln::nvptx {

/// Links the libdevice functions `m` calls (`__nv_*`) into it, as internal
/// definitions; a module that calls none is left alone. Looks for
/// nvvm/libdevice/libdevice.10.bc under $CUDA_HOME, $CUDA_PATH and
/// /usr/local/cuda; throws kiln::Error naming the function when it is missing.
void link_libdevice(llvm::Module &m);

} // namespace kiln::nvptx
