// The compile task graph: a oneTBB flow graph in an arena of `threads`
// workers, with a node per compile stage (pick -> stage 0 .. 3 -> finish), so
// the stages of many compiles run as separate tasks and the arena bounds how
// many run at once (LLVM is single-threaded inside each, so there is no
// oversubscription). Jobs wait in a FIFO until the pick node takes one; a job
// someone is blocked on jumps the queue, and the blocked thread may simply
// run it itself if it has not started (Job::wait), so a launch never waits
// behind background warmup.
#pragma once

#include <deque>
#include <memory>
#include <mutex>

#include <tbb/flow_graph.h>
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
  /// The pick node: the most urgent queued job this pool can claim, or null.
  std::shared_ptr<Job> pick();

  int threads_;
  // oneTBB's default is one worker fewer than cores, counting on the caller
  // to work too; our callers only enqueue, so ask for `threads` workers.
  tbb::global_control workers_;
  tbb::task_arena arena_;
  tbb::task_group group_; // the feeding tasks, so the destructor can wait for them
  std::unique_ptr<tbb::flow::graph> graph_;
  using JobPtr = std::shared_ptr<Job>;
  std::unique_ptr<tbb::flow::function_node<int, JobPtr>> pick_;
  std::vector<std::unique_ptr<tbb::flow::function_node<JobPtr, JobPtr>>> stages_;
  std::unique_ptr<tbb::flow::function_node<JobPtr>> finish_;
  std::mutex mutex_;
  std::deque<std::shared_ptr<Job>> urgent_, queue_;
};

} // namespace kiln::async
