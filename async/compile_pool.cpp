#include "async/compile_pool.hpp"

#include <algorithm>

#include <tbb/info.h>

namespace kiln::async {

CompilePool::CompilePool(int threads)
    // No slot is reserved for the submitting thread: it only enqueues, so
    // all `threads` slots go to workers.
    : threads_(threads > 0 ? threads : tbb::info::default_concurrency()),
      workers_(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads_) + 1),
      arena_(threads_, 0) {}

CompilePool::~CompilePool() {
  arena_.execute([&] { group_.wait(); });
}

void CompilePool::submit(const std::shared_ptr<Job> &job) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(job);
  }
  // One runner per job; a runner takes whichever job is most urgent when it
  // starts, not necessarily the one it was spawned for. enqueue, not
  // execute(run): with no slot reserved for submitters, execute() blocks
  // until a worker frees its slot, so a launch would wait behind every
  // compile in flight (while holding its cache entry's lock).
  arena_.enqueue(group_.defer([this] { run_next(); }));
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
