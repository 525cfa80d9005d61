// CUDA's libdevice bitcode (__nv_tanhf & co.) linked into an NVPTX module
// that calls it, as Triton does for its libdevice functions.
#pragma once

namespace llvm {
class Module;
} // namespace llvm

namespace kiln::nvptx {

/// Links the libdevice functions `m` declares (and only those) into `m` as
/// internal functions, so the optimizer inlines them and drops the rest.
/// Does nothing when `m` calls none. The bitcode is looked up in
/// $KILN_LIBDEVICE (a file), $CUDA_HOME/nvvm/libdevice and
/// /usr/local/cuda/nvvm/libdevice; throws kiln::Error naming the function
/// when none is found. Thread-safe: each call reads and parses its own copy.
void link_libdevice(llvm::Module &m);

} // namespace kiln::nvptx
