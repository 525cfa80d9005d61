// Scoped asynchronous compilation (the seed's _async_compile):
//
//   {
//     kiln::AsyncCompileMode mode;           // this thread's compiles go to the pool
//     for (auto &k : kernels) k.warmup(...); // returns at once
//     add[{g}](x, y, out, n, ...);           // blocks only on add's own compile
//   }                                        // finalizes what is still outstanding
//
// Compiles run on a oneTBB arena of KILN_COMPILE_THREADS threads (default:
// all cores); LLVM runs single-threaded inside each job, so there is no
// oversubscription. A launch that needs a job still queued runs it next.
#pragma once

#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kiln/compiled_kernel.hpp"
#include "kiln/error.hpp"

namespace kiln {

namespace async {
class Job;
class CompilePool;
} // namespace async

/// The pending result of one compile. Copies share it. result() is safe from
/// any number of threads at once: the first caller finalizes, all get the
/// same outcome.
class FutureKernel {
public:
  FutureKernel() = default;
  explicit FutureKernel(std::shared_ptr<async::Job> job) : job_(std::move(job)) {}

  /// Waits for the compile (running it now if it is still queued), runs its
  /// finalizer once (publishing the kernel to its cache), and returns the
  /// kernel. On a compile error: rethrows it, or returns null when the mode
  /// ignores errors.
  const CompiledKernel *result() const;
  /// The compile finished (successfully or not); result() would not wait for it.
  bool ready() const;
  bool valid() const { return job_ != nullptr; }
  /// The compile's error once ready(), or null.
  std::exception_ptr error() const;

  const std::shared_ptr<async::Job> &job() const { return job_; }

private:
  std::shared_ptr<async::Job> job_;
};

/// Several compiles failed in one scope; what() lists every one of them.
class AsyncCompileError : public Error {
public:
  explicit AsyncCompileError(std::vector<std::string> messages);
  const std::vector<std::string> &messages() const { return messages_; }

private:
  std::vector<std::string> messages_;
};

/// A scope that sends this thread's compiles to a thread pool. At most one is
/// active per thread (a second is an Error). Another thread joins it with
/// AsyncCompileMode::Attach. Leaving the scope (or finish()) finalizes every
/// outstanding job in completion order.
class AsyncCompileMode {
public:
  struct Config {
    int threads = 0;            ///< 0: KILN_COMPILE_THREADS, else all cores
    bool ignore_errors = false; ///< failed compiles are dropped instead of rethrown
  };

  AsyncCompileMode() : AsyncCompileMode(Config{}) {}
  explicit AsyncCompileMode(Config config);
  /// Finalizes what is outstanding. Throws AsyncCompileError if compiles
  /// failed (unless ignore_errors or an exception is already in flight).
  ~AsyncCompileMode() noexcept(false);
  AsyncCompileMode(const AsyncCompileMode &) = delete;
  AsyncCompileMode &operator=(const AsyncCompileMode &) = delete;

  /// The mode active on the calling thread, or null.
  static AsyncCompileMode *active();

  /// Makes `mode` active on the current thread for this guard's lifetime.
  class Attach {
  public:
    explicit Attach(AsyncCompileMode &mode);
    ~Attach();
    Attach(const Attach &) = delete;
    Attach &operator=(const Attach &) = delete;

  private:
    AsyncCompileMode *previous_;
  };

  /// Runs `compile` on the pool and returns its future; the same key gives
  /// the same future. `compile` returns an owned result (shared_ptr<void>);
  /// `finalize` runs once, on the thread that first asks for the result or
  /// at scope exit, with that result or null and the error; it returns the
  /// published kernel.
  using CompileFn = std::function<std::shared_ptr<void>()>;
  using FinalizeFn = std::function<const CompiledKernel *(std::shared_ptr<void> result, std::exception_ptr error)>;
  FutureKernel submit(const std::string &key, CompileFn compile, FinalizeFn finalize);
  /// The same, with the work split into stages that run as separate nodes of
  /// the pool's task graph (at most 4; then `result` gives the result).
  using StageFn = std::function<void()>;
  FutureKernel submit(const std::string &key, std::vector<StageFn> stages, CompileFn result, FinalizeFn finalize);

  /// Makes this scope wait for, and report the failure of, a compile that
  /// another scope submitted (this thread's launch asked for the same key
  /// while it was in flight there).
  void adopt(const FutureKernel &future);

  /// Finalizes every outstanding job in completion order, then forgets them.
  /// Throws AsyncCompileError with every failure (unless ignore_errors).
  void finish();

  bool ignore_errors() const { return config_.ignore_errors; }
  int threads() const;
  /// Jobs submitted and not yet finalized.
  std::size_t outstanding() const;

private:
  struct State;
  Config config_;
  std::unique_ptr<State> state_;
  int uncaught_at_start_;
};

} // namespace kiln
