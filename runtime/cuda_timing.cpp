#include "runtime/cuda_timing.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <vector>

#include "kiln/buffer.hpp"
#include "runtime/bench_stats.hpp"
#include "runtime/context.hpp"
#include "runtime/cuda_driver.hpp"

namespace kiln::runtime {

namespace {

constexpr std::size_t kFlushBytes = 256u << 20;

/// The flush buffer of a device, allocated once and kept for the process.
void *flush_buffer(Device device) {
  static std::mutex mutex;
  static std::map<int, Buffer> buffers;
  std::lock_guard lock(mutex);
  auto it = buffers.find(device.index);
  if (it == buffers.end())
    it = buffers.emplace(device.index, Buffer::allocate(device, kFlushBytes)).first;
  return it->second.data();
}

/// Events owned for one call.
struct Events {
  const cuda::CudaApi &api;
  std::vector<CUevent> e;
  Events(const cuda::CudaApi &a, std::size_t n) : api(a), e(n, nullptr) {
    for (CUevent &x : e)
      api.check(api.EventCreate(&x, CU_EVENT_DEFAULT), "cuEventCreate");
  }
  ~Events() {
    for (CUevent x : e)
      if (x)
        api.EventDestroy(x);
  }
  Events(const Events &) = delete;
  Events &operator=(const Events &) = delete;
};

} // namespace

BenchResult do_bench_cuda(const std::function<void()> &fn, Device device, const BenchOptions &o) {
  auto &d = static_cast<CudaDriver &>(Context::get().driver(Backend::cuda));
  d.make_current(device.index);
  const cuda::CudaApi &api = d.api();
  const auto flush = reinterpret_cast<CUdeviceptr>(flush_buffer(device));
  auto flush_l2 = [&] {
    api.check(api.MemsetD32Async(flush, 0, kFlushBytes / 4, nullptr), "cuMemsetD32Async");
  };

  // Estimate one run from five, each after a flush (the first run before
  // may include a compile).
  fn();
  api.check(api.CtxSynchronize(), "cuCtxSynchronize");
  Events est(api, 2);
  api.check(api.EventRecord(est.e[0], nullptr), "cuEventRecord");
  for (int i = 0; i < 5; ++i) {
    flush_l2();
    fn();
  }
  api.check(api.EventRecord(est.e[1], nullptr), "cuEventRecord");
  api.check(api.EventSynchronize(est.e[1]), "cuEventSynchronize");
  float total = 0;
  api.check(api.EventElapsedTime(&total, est.e[0], est.e[1]), "cuEventElapsedTime");
  const double estimate = std::max(static_cast<double>(total) / 5, 1e-6);
  const int warmup = std::max(1, static_cast<int>(o.warmup_ms / estimate));
  const int reps = std::clamp(static_cast<int>(o.rep_ms / estimate), 1, std::max(1, o.max_reps));
  for (int i = 0; i < warmup; ++i)
    fn();

  Events ev(api, 2 * static_cast<std::size_t>(reps));
  for (int i = 0; i < reps; ++i) {
    flush_l2();
    api.check(api.EventRecord(ev.e[2 * i], nullptr), "cuEventRecord");
    fn();
    api.check(api.EventRecord(ev.e[2 * i + 1], nullptr), "cuEventRecord");
  }
  api.check(api.CtxSynchronize(), "cuCtxSynchronize");
  std::vector<double> times(static_cast<std::size_t>(reps));
  for (int i = 0; i < reps; ++i) {
    float ms = 0;
    api.check(api.EventElapsedTime(&ms, ev.e[2 * i], ev.e[2 * i + 1]), "cuEventElapsedTime");
    times[static_cast<std::size_t>(i)] = ms;
  }
  return bench_stats(std::move(times), o);
}

} // namespace kiln::runtime
