#include "runtime/context.hpp"

#include "kiln/error.hpp"
#include "runtime/cpu_driver.hpp"

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
  throw RuntimeError("the cuda backend is not available in this build yet; use --backend cpu "
                     "(or KILN_BACKEND=cpu)");
}

} // namespace kiln::runtime

namespace kiln {

Hooks &hooks() { return runtime::Context::get().hooks(); }

} // namespace kiln
