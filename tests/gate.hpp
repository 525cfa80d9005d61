// A door a compile (or a pool job) waits behind, for deterministic async
// tests: the test knows when the job has started and decides when it ends.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kiln::testing {

/// Copies share one door, so a job can hold it for as long as it runs.
class Gate {
public:
  /// Called by the job: says it has started, then blocks until open().
  void pass() const {
    std::unique_lock lock(s_->mutex);
    ++s_->entered;
    s_->cv.notify_all();
    s_->cv.wait(lock, [&] { return s_->open; });
  }
  void open() const {
    std::lock_guard lock(s_->mutex);
    s_->open = true;
    s_->cv.notify_all();
  }
  /// Waits until `n` jobs are inside pass(). False after a minute: not a
  /// timing assertion but a deadlock guard (no worker ever ran the job).
  bool wait_entered(int n = 1) const {
    std::unique_lock lock(s_->mutex);
    return s_->cv.wait_for(lock, std::chrono::minutes(1), [&] { return s_->entered >= n; });
  }

private:
  struct State {
    std::mutex mutex;
    std::condition_variable cv;
    int entered = 0;
    bool open = false;
  };
  std::shared_ptr<State> s_ = std::make_shared<State>();
};

/// Opens a gate when the test leaves its scope, failed checks included.
/// Declare it after the pool or AsyncCompileMode so it is destroyed first and
/// their drain does not wait on a closed gate forever.
struct OpenOnExit {
  Gate gate;
  ~OpenOnExit() { gate.open(); }
};

/// Records an order of events (job keys) from any thread.
struct Order {
  std::mutex mutex;
  std::vector<std::string> keys;
  void add(const std::string &k) {
    std::lock_guard lock(mutex);
    keys.push_back(k);
  }
  std::vector<std::string> get() {
    std::lock_guard lock(mutex);
    return keys;
  }
};

} // namespace kiln::testing
