#include "compiler/nvptx/assembler_threads.hpp"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace kiln::nvptx {

namespace {

/// Idle threads wait on their own slot and the most recently idle one takes
/// the next job: a thread's glibc arena and caches are warm from the last
/// assembly, so handing work to the thread that ran the warm-up (rather than
/// to whichever waiter a shared condition variable wakes) keeps the first
/// real compile off a cold arena (~2,500 page faults, ~20 ms for softmax).
class AssemblerThreads {
public:
  /// Never destroyed: its threads wait for work until the process ends.
  static AssemblerThreads &get() {
    static auto *pool = new AssemblerThreads;
    return *pool;
  }

  std::future<void> submit(std::function<void()> fn) {
    Job job{std::move(fn), {}};
    std::future<void> done = job.done.get_future();
    std::lock_guard<std::mutex> lock(mutex_);
    if (!idle_.empty()) {
      Slot *s = idle_.back();
      idle_.pop_back();
      s->job = std::move(job);
      s->ready.notify_one();
      return done;
    }
    queue_.push_back(std::move(job));
    if (threads_ < max_threads_) {
      ++threads_;
      std::thread([this] { serve(); }).detach();
    }
    return done;
  }

private:
  struct Job {
    std::function<void()> fn;
    std::promise<void> done;
  };
  struct Slot {
    std::condition_variable ready;
    std::optional<Job> job;
  };

  void serve() {
    Slot slot;
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      if (!slot.job) {
        if (!queue_.empty()) {
          slot.job = std::move(queue_.front());
          queue_.pop_front();
        } else {
          idle_.push_back(&slot);
          slot.ready.wait(lock, [&] { return slot.job.has_value(); });
        }
      }
      Job job = std::move(*slot.job);
      slot.job.reset();
      lock.unlock();
      std::exception_ptr error;
      try {
        job.fn();
      } catch (...) {
        error = std::current_exception();
      }
      // Idle (or holding the next queued job) before the caller hears that
      // this one is done, so that the caller's next job comes back here.
      lock.lock();
      if (!queue_.empty()) {
        slot.job = std::move(queue_.front());
        queue_.pop_front();
      } else {
        idle_.push_back(&slot);
      }
      lock.unlock();
      if (error)
        job.done.set_exception(error);
      else
        job.done.set_value();
      lock.lock();
      if (!slot.job)
        slot.ready.wait(lock, [&] { return slot.job.has_value(); });
    }
  }

  std::mutex mutex_;
  std::deque<Job> queue_;
  std::vector<Slot *> idle_; ///< the most recently idle last
  size_t threads_ = 0;
  const size_t max_threads_ = std::max(1u, std::thread::hardware_concurrency());
};

} // namespace

void run_on_assembler_thread(const std::function<void()> &job) {
  AssemblerThreads::get().submit([&job] { job(); }).get();
}

void start_on_assembler_thread(std::function<void()> job) {
  AssemblerThreads::get().submit(std::move(job));
}

} // namespace kiln::nvptx
