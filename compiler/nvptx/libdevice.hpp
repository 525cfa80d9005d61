// CUDA's libdevice bitcode (NVIDIA's math library, the one nvcc and Triton
// use: __nv_tanhf & co.) linked into an NVPTX module that calls it. The
// GPU's accurate math (tl.math / libdevice functions, erf, pow, fp64
// transcendentals) comes from it rather than from approximations of ours;
// llvm/math_library.hpp emits the calls.
#pragma once

namespace llvm {
class Module;
} // namespace llvm

namespace kiln::nvptx {

/// Links the libdevice functions `m` declares (`__nv_*`, and only those)
/// into `m` as internal functions, so the optimizer inlines them and drops
/// the rest; a module that calls none is left alone. The bitcode is looked
/// up in $KILN_LIBDEVICE (a file), then nvvm/libdevice/libdevice.10.bc under
/// $CUDA_HOME, $CUDA_PATH and /usr/local/cuda; throws kiln::Error naming the
/// function when none is found. Thread-safe: each call reads its own copy.
void link_libdevice(llvm::Module &m);

} // namespace kiln::nvptx
