// A bounded pool of compile workers on a oneTBB arena. Jobs wait in a FIFO;
// a job someone is blocked on jumps the queue, and the blocked thread may
// simply run it itself (Job::wait), so a launch never waits behind
// background warmup.
#pragma once

#include <deque>
#include <memory>
#include <mutex>

#include <tbb/global_control.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include "async/job.hpp"

namespace kiln::async {

class CompilePool {
public:
  /// `threads` workers at most (0: all cores).
  explicit CompilePool(int threads);
  /// Waits for the workers to go idle.
  ~CompilePool();
  CompilePool(const CompilePool &) = delete;
  CompilePool &operator=(const CompilePool &) = delete;

  int threads() const { return threads_; }
  void submit(const std::shared_ptr<Job> &job);
  /// Moves `job` ahead of every queued job that nobody waits for.
  void prioritize(const std::shared_ptr<Job> &job);

private:
  void run_next();

  int threads_;
  // oneTBB's default is one worker fewer than cores, counting on the caller
  // to work too; our callers only enqueue, so ask for `threads` workers.
  tbb::global_control workers_;
  tbb::task_arena arena_;
  tbb::task_group group_;
  std::mutex mutex_;
  std::deque<std::shared_ptr<Job>> urgent_, queue_;
};

} // namespace kiln::async
