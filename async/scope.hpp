// The async compile scope's machinery behind kiln::AsyncCompileMode: the
// thread's active scope, submit with de-duplication by JobKey, adopting
// another scope's compile, and the completion-ordered drain. The runtime
// hands it jobs as closures; it knows nothing of kernels or caches.
#pragma once

#include <cstddef>
#include <exception>
#include <memory>
#include <vector>

#include "async/job.hpp"
#include "async/job_key.hpp"
#include "kiln/async.hpp"

namespace kiln::async {

/// Thread-safe: any thread may submit, adopt and query at once (several
/// threads share a scope through AsyncCompileMode::Attach). finish() runs on
/// the scope's owner.
class Scope {
public:
  using CompileFn = Job::CompileFn;
  using StageFn = Job::StageFn;
  using FinalizeFn = Job::FinalizeFn;

  /// A pool of `threads` threads (0: as many as cores), made the
  /// calling thread's active scope; throws Error if the thread has one.
  /// `mode` is the public object that owns this scope (AsyncCompileMode::active()).
  Scope(int threads, bool ignore_errors, AsyncCompileMode *mode);
  /// Waits for the pool's threads; finish() is what finalizes the jobs.
  ~Scope();
  Scope(const Scope &) = delete;
  Scope &operator=(const Scope &) = delete;

  /// The calling thread's active scope, or null.
  static Scope *active();
  /// Makes `s` (or none) the calling thread's active scope; returns the one before.
  static Scope *exchange_active(Scope *s);
  /// Stops being the calling thread's active scope, if it is.
  void deactivate();

  AsyncCompileMode *mode() const { return mode_; }
  int threads() const;
  bool ignore_errors() const { return ignore_errors_; }
  /// Jobs submitted and not yet finalized.
  std::size_t outstanding() const;

  /// Runs `stages` (at most Job::kMaxStages, one task-graph node each), then
  /// `result`, on the pool; the same key gives the same future while that
  /// job is in this scope (a failed one its submitter finalized is compiled
  /// again). `finalize` runs once, on the thread that first asks for the
  /// result or in finish(), with the result or null and the error.
  FutureKernel submit(const JobKey &key, std::vector<StageFn> stages, CompileFn result,
                      FinalizeFn finalize);
  FutureKernel submit(const JobKey &key, CompileFn compile, FinalizeFn finalize) {
    return submit(key, {}, std::move(compile), std::move(finalize));
  }

  /// Makes this scope wait for, and report the failure of, a compile that
  /// another scope submitted.
  void adopt(const FutureKernel &future);

  /// Finalizes every outstanding job in completion order, then forgets them.
  /// Throws AsyncCompileError with every failure (unless ignore_errors).
  void finish();

  /// The job behind a future (null for an empty one): for the runtime's
  /// and the tests' use, never part of the public API.
  static const std::shared_ptr<Job> &job_of(const FutureKernel &f) { return f.job_; }

private:
  struct State;
  bool ignore_errors_;
  AsyncCompileMode *mode_;
  std::unique_ptr<State> state_;
};

} // namespace kiln::async
