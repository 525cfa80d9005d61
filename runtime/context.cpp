#include "runtime/context.hpp"

#include <cstdlib>

#include "compiler/nvptx/ptx_to_cubin.hpp"
#include "compiler/support/sha256.hpp"
#include "kiln/error.hpp"
#include "runtime/cpu_driver.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/disk_cache.hpp"
#include "runtime/redis_cache.hpp"

namespace kiln::runtime {

Context &Context::get() {
  // Never destroyed: kernels held in static objects may be released after
  // main returns, and their binaries need the drivers and the JIT.
  static Context *ctx = new Context;
  return *ctx;
}

Context::Context() : knobs_(Knobs::from_env()) {
  if (knobs_.backend == "cuda") {
    default_device_ = encode(Device{Backend::cuda, 0});
  } else if (knobs_.backend == "auto") {
    // auto: the GPU when there is one and its driver works, else the host.
    int n = 0;
    if (const cuda::CudaApi *api = cuda::CudaApi::load(nullptr); api && api->DeviceGetCount(&n) == CUDA_SUCCESS && n > 0)
      default_device_ = encode(Device{Backend::cuda, 0});
  }
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

std::vector<CacheLevel *> Context::cache_levels() {
  std::call_once(levels_once_, [&] {
    // An override changes the binary without changing any key the cache
    // could see (the user edits the file between runs): no persistent cache.
    if (knobs_.no_cache || !knobs_.override_dir.empty())
      return;
    try {
      if (!knobs_.cache_dir.empty())
        levels_.push_back(std::make_unique<DiskCache>(knobs_.cache_dir, knobs_.cache_max_bytes,
                                                      knobs_.keep_stages, &writer_));
      if (!knobs_.redis_url.empty()) {
        levels_.push_back(std::make_unique<RedisCache>(RedisCache::Config::from_knobs(knobs_)));
      }
      // The levels' writes in flight (Redis's sends, disk entries of remote
      // hits, tuning records) finish at exit, or a short-lived process would
      // share nothing. OpenSSL (which the writes hash with) cleans up in an
      // atexit handler of its own: it is initialized first, so that its
      // handler runs after this one.
      (void)sha256_hex("");
      std::atexit([] { Context::get().flush_writes(); });
    } catch (const Error &e) {
      levels_error_ = e.what();
    }
  });
  if (!levels_error_.empty())
    throw RuntimeError(levels_error_);
  std::vector<CacheLevel *> out;
  for (const auto &l : levels_)
    out.push_back(l.get());
  return out;
}

void Context::flush_writes() {
  writer_.flush(); // first: a tuning record written here may queue a Redis write
  for (const auto &l : levels_)
    l->flush();
}

} // namespace kiln::runtime

namespace kiln {

Hooks &hooks() { return runtime::Context::get().hooks(); }
void set_device(Device d) { runtime::Context::get().set_device(d); }
Device current_device() { return runtime::Context::get().device(); }

} // namespace kiln
