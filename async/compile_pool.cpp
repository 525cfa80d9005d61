#include "async/compile_pool.hpp"

#include <algorithm>

#include <tbb/info.h>

// oneTBB is not built with ThreadSanitizer, so TSan cannot see how it hands a
// task to a worker. Under TSan, say it: a submitter releases `tsan_handoff`
// once the task is built, a task acquires it before it reads anything
// (its own captures included) and releases it when done, and the destructor
// acquires it after the wait. No effect in other builds.
#if defined(__SANITIZE_THREAD__)
extern "C" void __tsan_acquire(void *addr);
extern "C" void __tsan_release(void *addr);
namespace {
char tsan_handoff;
}
#define KILN_TSAN_ACQUIRE() __tsan_acquire(&tsan_handoff)
#define KILN_TSAN_RELEASE() __tsan_release(&tsan_handoff)
#else
#define KILN_TSAN_ACQUIRE() ((void)0)
#define KILN_TSAN_RELEASE() ((void)0)
#endif

namespace kiln::async {

CompilePool::CompilePool(int threads)
    // Submitters only enqueue, so `threads` slots go to workers; one more is
    // reserved for the destructor, which then waits (and helps) in the arena
    // itself instead of handing its wait to a worker once one is free.
    : threads_(threads > 0 ? threads : tbb::info::default_concurrency()),
      workers_(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads_) + 1),
      arena_(threads_ + 1, 1) {}

CompilePool::~CompilePool() {
  arena_.execute([&] { group_.wait(); });
  KILN_TSAN_ACQUIRE();
}

void CompilePool::submit(const std::shared_ptr<Job> &job) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(job);
  }
  // One runner per job; a runner takes whichever job is most urgent when it
  // starts, not necessarily the one it was spawned for. enqueue, not
  // execute(run): execute() must take an arena slot, and while the workers
  // hold them all it blocks until one is free, so a launch would wait behind
  // the compiles in flight (holding its cache entry's lock).
  tbb::task_handle task = group_.defer([this] {
    KILN_TSAN_ACQUIRE();
    run_next();
    KILN_TSAN_RELEASE();
  });
  KILN_TSAN_RELEASE();
  arena_.enqueue(std::move(task));
}

void CompilePool::prioritize(const std::shared_ptr<Job> &job) {
  std::lock_guard lock(mutex_);
  auto it = std::find(queue_.begin(), queue_.end(), job);
  if (it != queue_.end()) {
    queue_.erase(it);
    urgent_.push_back(job);
  }
}

void CompilePool::run_next() {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::lock_guard lock(mutex_);
      auto &q = !urgent_.empty() ? urgent_ : queue_;
      if (q.empty())
        return;
      job = std::move(q.front());
      q.pop_front();
    }
    // A waiter may have claimed it to run it itself; then try the next one.
    if (job->claim()) {
      job->execute();
      return;
    }
  }
}

} // namespace kiln::async
