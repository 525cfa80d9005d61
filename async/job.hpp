// One compile job: queued, running, done; its result or error, and its
// finalizer, which runs exactly once.
#pragma once

#include <atomic>
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "async/job_key.hpp"
#include "compiler/stage_names.hpp"
#include "kiln/compiled_kernel.hpp"

namespace kiln::async {

class CompilePool;

class Job {
public:
  enum class State : int { Queued, Running, Done };
  using CompileFn = std::function<std::shared_ptr<void>()>;
  using StageFn = std::function<void()>;
  using FinalizeFn = std::function<const CompiledKernel *(std::shared_ptr<void>, std::exception_ptr)>;
  /// The pool's task graph has a node per compiler stage
  /// (compiler::kStageNames); a job has at most this many.
  static constexpr std::size_t kMaxStages = compiler::kStageNames.size();

  /// `stages` run in order (each may be on another thread), then `result`
  /// gives the job's result; the first one to throw ends the job.
  Job(JobKey key, std::vector<StageFn> stages, CompileFn result, FinalizeFn finalize,
      bool ignore_errors)
      : key_(std::move(key)), stages_(std::move(stages)), compile_(std::move(result)),
        finalize_(std::move(finalize)), ignore_errors_(ignore_errors) {
    live_.fetch_add(1, std::memory_order_relaxed);
  }
  Job(JobKey key, CompileFn compile, FinalizeFn finalize, bool ignore_errors)
      : Job(std::move(key), {}, std::move(compile), std::move(finalize), ignore_errors) {}
  ~Job() { live_.fetch_sub(1, std::memory_order_relaxed); }
  Job(const Job &) = delete;
  Job &operator=(const Job &) = delete;

  /// Jobs alive in the process: a scope's are freed when it ends (tests).
  static long live() { return live_.load(std::memory_order_relaxed); }

  const JobKey &key() const { return key_; }
  State state() const { return state_.load(std::memory_order_acquire); }
  bool done() const { return state() == State::Done; }

  /// Claims a queued job for the calling thread; false if someone else has it.
  bool claim() {
    State expected = State::Queued;
    return state_.compare_exchange_strong(expected, State::Running, std::memory_order_acq_rel);
  }
  /// Runs a claimed job's stages and result and wakes its waiters. Never throws.
  void execute();
  /// Stage `i` of a claimed job, unless an earlier one failed. Never throws.
  void run_stage(std::size_t i);
  /// After the stages: the result, then done; wakes the waiters. Never throws.
  void complete();
  /// Blocks until done (the pool runs it, or this thread does if still queued).
  void wait(CompilePool &pool);
  /// Runs the finalizer once and returns its kernel; rethrows the compile
  /// error unless errors are ignored. Safe from several threads at once;
  /// `ran_here` tells whether this call ran the finalizer.
  const CompiledKernel *finalize(bool *ran_here = nullptr);
  /// The compile error, if any (after done()).
  std::exception_ptr error() const { return error_; }
  bool finalized() const { return finalized_.load(std::memory_order_acquire); }

  /// Called when the job completes (the scope's completion queue).
  std::function<void(const std::shared_ptr<Job> &)> on_done;
  std::weak_ptr<Job> self;
  CompilePool *pool = nullptr;

private:
  static inline std::atomic<long> live_{0};
  JobKey key_;
  std::vector<StageFn> stages_;
  CompileFn compile_;
  FinalizeFn finalize_;
  bool ignore_errors_;
  std::atomic<State> state_{State::Queued};
  std::shared_ptr<void> result_;
  std::exception_ptr error_;
  std::mutex mutex_;
  std::condition_variable done_cv_;
  std::once_flag finalize_once_;
  std::atomic<bool> finalized_{false};
  const CompiledKernel *kernel_ = nullptr;
  std::exception_ptr finalize_error_;
};

} // namespace kiln::async
