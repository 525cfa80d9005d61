#include "compiler/nvptx/assembler_threads.hpp"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <thread>

namespace kiln::nvptx {

namespace {

class AssemblerThreads {
public:
  /// Never destroyed: its threads wait on `ready_` until the process ends.
  static AssemblerThreads &get() {
    static auto *pool = new AssemblerThreads;
    return *pool;
  }

  std::future<void> submit(std::function<void()> job) {
    std::packaged_task<void()> task(std::move(job));
    std::future<void> done = task.get_future();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back(std::move(task));
      // Every idle thread may already have a queued job to wake for.
      if (queue_.size() > idle_ && threads_ < max_threads_) {
        ++threads_;
        std::thread([this] { serve(); }).detach();
      }
    }
    ready_.notify_one();
    return done;
  }

private:
  void serve() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      ++idle_;
      ready_.wait(lock, [this] { return !queue_.empty(); });
      --idle_;
      std::packaged_task<void()> task = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      task();
      lock.lock();
    }
  }

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::packaged_task<void()>> queue_;
  size_t idle_ = 0, threads_ = 0;
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
