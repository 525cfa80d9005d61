#include "runtime/background_writer.hpp"

namespace kiln::runtime {

BackgroundWriter::~BackgroundWriter() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  work_cv_.notify_all();
  if (thread_.joinable())
    thread_.join();
}

void BackgroundWriter::post(std::function<void()> write) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(write));
    ++posted_;
    // Started on first use: a process that never defers a write has no
    // thread for it.
    if (!thread_.joinable())
      thread_ = std::thread([this] { work(); });
  }
  work_cv_.notify_one();
}

void BackgroundWriter::flush() {
  std::unique_lock lock(mutex_);
  if (thread_.joinable() && thread_.get_id() == std::this_thread::get_id())
    return; // a write waiting for the writes behind it would wait forever
  const uint64_t target = posted_;
  done_cv_.wait(lock, [&] { return done_ >= target; });
}

size_t BackgroundWriter::pending() const {
  std::lock_guard lock(mutex_);
  return static_cast<size_t>(posted_ - done_);
}

void BackgroundWriter::work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    work_cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty())
      return; // stop_, and nothing left: the destructor drains first
    std::function<void()> write = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    try {
      write();
    } catch (...) {
      // Best effort by contract; the write has reported what it could.
    }
    write = nullptr; // what it captured (a lock, a copy of the entry) goes now
    lock.lock();
    ++done_;
    done_cv_.notify_all();
  }
}

} // namespace kiln::runtime
