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
    device_ = Device{Backend::cuda, 0};
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

Device Context::device() const {
  std::lock_guard lock(mutex_);
  return device_;
}

void Context::set_device(Device d) {
  std::lock_guard lock(mutex_);
  device_ = d;
}

} // namespace kiln::runtime
