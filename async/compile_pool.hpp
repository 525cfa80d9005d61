// The compile task graph: a oneTBB flow graph in an arena of `threads`
// threads, with a node per compiler stage (pick -> frontend -> optimize ->
// codegen -> finish; compiler::kStageNames), so the stages of many compiles
// run as separate tasks and the arena bounds how many run at once (LLVM is
// single-threaded inside each, so there is no oversubscription). Jobs wait in
// a FIFO until the pick node takes one; a job someone is blocked on jumps the
// queue, and the blocked thread may simply run it itself if it has not
// started (Job::wait), so a launch never waits behind background warmup.
//
// The pool's threads are its own: `threads` std::threads that enter the
// arena (every slot reserved for them) and wait there, taking its tasks, until
// the pool is destroyed. oneTBB's workers would need a process-wide
// tbb::global_control to be more than cores - 1, which would change the host
// program's TBB limit (up or down) for as long as the pool lived.
#pragma once

#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <string_view>
#include <thread>
#include <vector>

#include <tbb/flow_graph.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include "async/job.hpp"

namespace kiln::async {

class CompilePool {
public:
  /// `threads` threads (0: as many as cores), started here.
  explicit CompilePool(int threads);
  /// Waits for the queued jobs to finish, then stops the threads.
  ~CompilePool();
  CompilePool(const CompilePool &) = delete;
  CompilePool &operator=(const CompilePool &) = delete;

  int threads() const { return threads_; }
  /// The task graph's stage nodes, in order: the compiler's stages.
  static std::span<const std::string_view> stage_names() { return compiler::kStageNames; }
  void submit(const std::shared_ptr<Job> &job);
  /// Moves `job` ahead of every queued job that nobody waits for.
  void prioritize(const std::shared_ptr<Job> &job);

private:
  /// The pick node: the most urgent queued job this pool can claim, or null.
  std::shared_ptr<Job> pick();

  int threads_;
  tbb::task_arena arena_;
  // One per pool thread: a task_group holding a deferred task, so that the
  // thread's wait() in the arena lasts until the destructor runs that task.
  std::vector<std::unique_ptr<tbb::task_group>> stay_;
  std::vector<tbb::task_handle> release_;
  std::vector<std::thread> threads_in_arena_;
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
