// The runtime's process-wide state: knobs read once, and the drivers,
// created on first use. One instance per process (the default context),
// as Triton has one active driver; everything else takes it explicitly.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <atomic>

#include "kiln/device.hpp"
#include "kiln/hooks.hpp"
#include "runtime/cache_level.hpp"
#include "runtime/driver.hpp"
#include "runtime/knobs.hpp"

namespace kiln::runtime {

class Context {
public:
  /// The default context. Thread-safe.
  static Context &get();

  const Knobs &knobs() const { return knobs_; }
  /// The driver of `b`, created on first use. Throws RuntimeError when the
  /// backend is not available here.
  Driver &driver(Backend b);
  /// The device launches use: KILN_BACKEND, or the one set by set_device.
  /// Lock-free: read on every launch.
  Device device() const {
    const uint32_t d = device_.load(std::memory_order_acquire);
    return Device{static_cast<Backend>(d >> 16), static_cast<int>(d & 0xFFFF)};
  }
  void set_device(Device d) {
    device_.store(uint32_t(d.backend) << 16 | uint32_t(d.index), std::memory_order_release);
  }
  Hooks &hooks() { return hooks_; }
  /// The persistent cache levels in look-up order (disk, then remote),
  /// made from the knobs on first use; empty with KILN_NO_CACHE. Throws
  /// RuntimeError, each time, when the configured cache cannot be used.
  std::vector<CacheLevel *> cache_levels();

private:
  Context();
  Knobs knobs_;
  Hooks hooks_;
  std::mutex mutex_;
  std::unique_ptr<Driver> cpu_, cuda_;
  std::once_flag levels_once_;
  std::vector<std::unique_ptr<CacheLevel>> levels_;
  std::string levels_error_;
  std::atomic<uint32_t> device_{0};
};

} // namespace kiln::runtime
