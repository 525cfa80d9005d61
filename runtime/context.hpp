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
#include "runtime/background_writer.hpp"
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
  /// The device this thread's launches use: the one this thread set with
  /// set_device, else the process's default (KILN_BACKEND). Per thread, as
  /// the seed's current device is. Lock-free: read on every launch.
  Device device() const {
    const uint32_t d = thread_device_ ? thread_device_ : default_device_;
    return Device{static_cast<Backend>((d >> 16) - 1), static_cast<int>(d & 0xFFFF)};
  }
  /// Sets the calling thread's device only.
  static void set_device(Device d) { thread_device_ = encode(d); }

  /// Makes the calling thread use `d` until it ends, then what it used
  /// before: how work spread over pool threads keeps the caller's device.
  class ThreadDevice {
  public:
    explicit ThreadDevice(Device d) : saved_(thread_device_) { thread_device_ = encode(d); }
    ~ThreadDevice() { thread_device_ = saved_; }
    ThreadDevice(const ThreadDevice &) = delete;
    ThreadDevice &operator=(const ThreadDevice &) = delete;

  private:
    uint32_t saved_;
  };
  Hooks &hooks() { return hooks_; }
  /// The persistent cache levels in look-up order (disk, then remote),
  /// made from the knobs on first use; empty with KILN_NO_CACHE. Throws
  /// RuntimeError, each time, when the configured cache cannot be used.
  std::vector<CacheLevel *> cache_levels();
  /// The thread that writes what launches should not wait for (a remote
  /// hit's disk entry, tuning records); flushed at exit.
  BackgroundWriter &writer() { return writer_; }
  /// Waits for every write in flight (the levels', the writer's).
  void flush_writes();

private:
  Context();
  Knobs knobs_;
  Hooks hooks_;
  std::mutex mutex_;
  BackgroundWriter writer_;
  std::unique_ptr<Driver> cpu_, cuda_;
  std::once_flag levels_once_;
  std::vector<std::unique_ptr<CacheLevel>> levels_;
  std::string levels_error_;
  // 1 + backend in the high half, the index in the low one; 0 is unset.
  static uint32_t encode(Device d) {
    return (uint32_t(d.backend) + 1) << 16 | uint32_t(d.index & 0xFFFF);
  }
  uint32_t default_device_ = encode(Device{}); ///< written once, in the constructor
  static inline thread_local uint32_t thread_device_ = 0;
};

} // namespace kiln::runtime
