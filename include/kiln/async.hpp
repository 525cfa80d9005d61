// Scoped asynchronous compilation (the seed's _async_compile):
//
//   {
//     kiln::AsyncCompileMode mode;           // this thread's compiles go to the pool
//     for (auto &k : kernels) k.warmup(...); // returns at once
//     add[{g}](x, y, out, n, ...);           // blocks only on add's own compile
//   }                                        // finalizes what is still outstanding
//
// Compiles run on a oneTBB arena of KILN_COMPILE_THREADS threads (default:
// all cores) that the scope starts for itself; it sets no process-wide
// tbb::global_control, so the host program's TBB limits stay its own. LLVM
// runs single-threaded inside each job, so there is no oversubscription. A
// launch that needs a job still queued runs it next.
#pragma once

#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "kiln/compiled_kernel.hpp"
#include "kiln/error.hpp"

namespace kiln {

namespace async {
class Job;
class Scope;
} // namespace async

/// The pending result of one compile: what a warmup inside an
/// AsyncCompileMode returns (LaunchResult::future). Copies share it. Every
/// call is safe from any number of threads at once: the first result()
/// finalizes, all get the same outcome.
class FutureKernel {
public:
  /// An empty future (valid() is false).
  FutureKernel() = default;

  /// Waits for the compile (running it now if it is still queued), runs its
  /// finalizer once (publishing the kernel to its cache), and returns the
  /// kernel. On a compile error: rethrows it, or returns null when the mode
  /// ignores errors. Throws Error on an empty future.
  const CompiledKernel *result() const;
  const CompiledKernel *get() const { return result(); }
  /// Waits for the compile to finish (running it now if it is still
  /// queued) without finalizing it; error() then tells how it went.
  void wait() const;
  /// The compile finished (successfully or not); result() would not wait for it.
  bool ready() const;
  bool valid() const { return job_ != nullptr; }
  /// The compile's error once ready(), or null.
  std::exception_ptr error() const;
  /// Names the compile: equal for futures of one compile (copies, and the
  /// same key submitted twice in a scope), 0 for an empty future.
  std::uintptr_t id() const;

private:
  friend class async::Scope; // the only maker of futures
  explicit FutureKernel(std::shared_ptr<async::Job> job);
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
/// outstanding job in completion order. Compiles of one key for one kernel
/// cache are submitted once per scope, however many launches ask.
/// Thread safety: threads(), outstanding() and the launches of attached
/// threads are safe at once; finish() and the destructor belong to the
/// thread that opened the scope.
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
    async::Scope *previous_;
  };

  /// Finalizes every outstanding job in completion order, then forgets them.
  /// Throws AsyncCompileError with every failure (unless ignore_errors).
  void finish();

  bool ignore_errors() const { return config_.ignore_errors; }
  int threads() const;
  /// Jobs submitted and not yet finalized.
  std::size_t outstanding() const;

private:
  Config config_;
  std::unique_ptr<async::Scope> scope_;
  int uncaught_at_start_;
};

} // namespace kiln
