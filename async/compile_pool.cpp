#include "async/compile_pool.hpp"

#include <algorithm>

#include <tbb/info.h>

#include "async/tsan_handoff.hpp"

// The pool's tasks go through oneTBB's flow graph: each says its hand-off to
// TSan (async/tsan_handoff.hpp) through one address.
namespace {
char tsan_handoff;
}
#define KILN_TSAN_ACQUIRE() kiln::async::tsan_acquire(&tsan_handoff)
#define KILN_TSAN_RELEASE() kiln::async::tsan_release(&tsan_handoff)

namespace kiln::async {

CompilePool::CompilePool(int threads)
    // `threads` slots for the pool's own threads and one for the constructor
    // and destructor, which build the graph and then wait (and help) in the
    // arena itself. Every slot is reserved for threads that enter it, so the
    // arena asks oneTBB for no workers: what runs the tasks is exactly the
    // threads started below, however many cores there are and whatever
    // global_control the host program has.
    : threads_(threads > 0 ? threads : tbb::info::default_concurrency()),
      arena_(threads_ + 1, static_cast<unsigned>(threads_) + 1) {
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
    for (std::size_t i = 0; i < stage_names().size(); ++i)
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
  for (int i = 0; i < threads_; ++i) {
    stay_.push_back(std::make_unique<tbb::task_group>());
    release_.push_back(stay_.back()->defer([] {}));
  }
  for (int i = 0; i < threads_; ++i)
    threads_in_arena_.emplace_back([this, i] { arena_.execute([&] { stay_[i]->wait(); }); });
}

CompilePool::~CompilePool() {
  arena_.execute([&] {
    group_.wait();
    graph_->wait_for_all();
  });
  // Each thread's wait ends once its deferred task has run.
  for (tbb::task_handle &h : release_)
    arena_.enqueue(std::move(h));
  for (std::thread &t : threads_in_arena_)
    t.join();
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
