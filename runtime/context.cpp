#include "runtime/context.hpp"

#include "compiler/nvptx/ptx_to_cubin.hpp"
#include "kiln/error.hpp"
#include "runtime/cpu_driver.hpp"
#include "runtime/cuda_driver.hpp"

namespace kiln::runtime {

Context &Context::get() {
  static Context ctx;
  return ctx;
}

Context::Context() : knobs_(Knobs::from_env()) {
  if (knobs_.backend == "cuda")
    set_device(Device{Backend::cuda, 0});
}

Driver &Context::driver(Backend b) {
  std::lock_guard lock(mutex_);
  if (b == Backend::cpu) {
    if (!cpu_)
      cpu_ = std::make_unique<CpuDriver>();
    return *cpu_;
  }
  if (!cuda_) {
    std::string why;
    const cuda::CudaApi *api = cuda::CudaApi::load(&why);
    if (!api)
      throw RuntimeError("the cuda backend is not available: " + why + "; use --backend cpu (or KILN_BACKEND=cpu)");
    cuda_ = std::make_unique<CudaDriver>(*api);
    // nvJitLink's first use costs about 250 ms: pay it now, off the critical path.
    nvptx::warm_up_nvjitlink(cuda_->target(0).sm);
  }
  return *cuda_;
}

} // namespace kiln::runtime

namespace kiln {

Hooks &hooks() { return runtime::Context::get().hooks(); }

} // namespace kiln
