// The runtime's process-wide state: knobs read once, and the drivers,
// created on first use. One instance per process (the default context),
// as Triton has one active driver; everything else takes it explicitly.
#pragma once

#include <memory>
#include <mutex>

#include "kiln/device.hpp"
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
  Device device() const;
  void set_device(Device d);

private:
  Context();
  Knobs knobs_;
  mutable std::mutex mutex_;
  std::unique_ptr<Driver> cpu_;
  Device device_{};
};

} // namespace kiln::runtime
