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
      arena_(threads_ + 1, 1) {
  namespace flow = tbb::flow;
  // Built inside the arena, the graph runs its tasks there.
  arena_.execute([&] {
    graph_ = std::make_unique<flow::graph>();
    // Each node tells TSan about the hand-off from the node before (see above).
    pick_ = std::make_unique<flow::function_node<int, JobPtr>>(*graph_, flow::unlimited, [this](int) {
      KILN_TSAN_ACQUIRE();
      JobPtr job = pick();
      KILN_TSAN_RELEASE();
      return job;
    });
    for (std::size_t i = 0; i < Job::kMaxStages; ++i)
      stages_.push_back(std::make_unique<flow::function_node<JobPtr, JobPtr>>(
          *graph_, flow::unlimited, [i](JobPtr job) {
            KILN_TSAN_ACQUIRE();
            if (job)
              job->run_stage(i);
            KILN_TSAN_RELEASE();
            return job;
          }));
    finish_ = std::make_unique<flow::function_node<JobPtr>>(*graph_, flow::unlimited, [](JobPtr job) {
      KILN_TSAN_ACQUIRE();
      if (job)
        job->complete();
      KILN_TSAN_RELEASE();
      return flow::continue_msg();
    });
    flow::make_edge(*pick_, *stages_.front());
    for (std::size_t i = 1; i < stages_.size(); ++i)
      flow::make_edge(*stages_[i - 1], *stages_[i]);
    flow::make_edge(*stages_.back(), *finish_);
  });
}

CompilePool::~CompilePool() {
  arena_.execute([&] {
    group_.wait();
    graph_->wait_for_all();
  });
  KILN_TSAN_ACQUIRE();
}

void CompilePool::submit(const std::shared_ptr<Job> &job) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(job);
  }
  // One token into the graph per job; the pick node takes whichever job is
  // most urgent when it runs, not necessarily this one. The token goes in
  // from a task enqueued in the arena, not from here: execute() or a
  // try_put from outside must take an arena slot, and while the workers hold
  // them all it blocks until one is free, so a launch would wait behind the
  // compiles in flight (holding its cache entry's lock).
  tbb::task_handle task = group_.defer([this] {
    KILN_TSAN_ACQUIRE();
    pick_->try_put(0);
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

std::shared_ptr<Job> CompilePool::pick() {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::lock_guard lock(mutex_);
      auto &q = !urgent_.empty() ? urgent_ : queue_;
      if (q.empty())
        return nullptr;
      job = std::move(q.front());
      q.pop_front();
    }
    // A waiter may have claimed it to run it itself; then try the next one.
    if (job->claim())
      return job;
  }
}

} // namespace kiln::async
