// Writes that a launch should not wait for: a disk-cache entry found
// elsewhere (a remote hit) and the autotuner's choices are published with
// fsyncs that cost tens of milliseconds; a launch queues them here and goes
// on. One thread, started on the first post, runs them in order.
//
// Nothing queued is lost while the process ends normally: flush() (called at
// exit by the runtime's Context) and the destructor wait for every queued
// write. A process killed mid-write leaves at most a temporary file, which
// the caches' atomic publication (temporary name, fsync, rename) never shows
// to a reader.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace kiln::runtime {

/// Thread-safe: post() and flush() may be called from any thread, also from
/// inside a posted write (which then does not wait for itself).
class BackgroundWriter {
public:
  BackgroundWriter() = default;
  /// Runs every queued write, then stops the thread.
  ~BackgroundWriter();
  BackgroundWriter(const BackgroundWriter &) = delete;
  BackgroundWriter &operator=(const BackgroundWriter &) = delete;

  /// Queues `write`; it runs on the writer's thread after those posted
  /// before it. A write must not throw (an exception is dropped: a cache
  /// write is best effort, and reports its own failures).
  void post(std::function<void()> write);
  /// Waits until every write posted before this call has run.
  void flush();
  /// Writes queued or running (for tests and statistics).
  size_t pending() const;

private:
  void work();

  mutable std::mutex mutex_;
  std::condition_variable work_cv_; ///< the thread: a write was posted, or stop
  std::condition_variable done_cv_; ///< flush(): a write finished
  std::deque<std::function<void()>> queue_;
  uint64_t posted_ = 0, done_ = 0;
  bool stop_ = false;
  std::thread thread_;
};

} // namespace kiln::runtime
