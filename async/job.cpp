#include "async/job.hpp"

#include "async/compile_pool.hpp"

namespace kiln::async {

void Job::execute() {
  for (std::size_t i = 0; i < stages_.size(); ++i)
    run_stage(i);
  complete();
}

void Job::run_stage(std::size_t i) {
  if (error_ || i >= stages_.size())
    return;
  try {
    stages_[i]();
  } catch (...) {
    error_ = std::current_exception();
  }
}

void Job::complete() {
  if (!error_) {
    try {
      result_ = compile_();
    } catch (...) {
      error_ = std::current_exception();
    }
  }
  stages_.clear(); // drop what the compile captured as soon as it is done
  compile_ = nullptr;
  {
    std::lock_guard lock(mutex_);
    state_.store(State::Done, std::memory_order_release);
  }
  done_cv_.notify_all();
  if (on_done)
    on_done(self.lock());
}

void Job::wait(CompilePool &p) {
  if (done())
    return;
  // Still queued: run it here and now rather than behind other work.
  if (claim()) {
    execute();
    return;
  }
  p.prioritize(self.lock());
  std::unique_lock lock(mutex_);
  done_cv_.wait(lock, [&] { return done(); });
}

const CompiledKernel *Job::finalize(bool *ran_here) {
  bool here = false;
  std::call_once(finalize_once_, [&] {
    here = true;
    try {
      // A copy: the job keeps its result, so the kernel it returns stays
      // valid for the future's holders even after its cache evicts it.
      kernel_ = finalize_(result_, error_);
    } catch (...) {
      finalize_error_ = std::current_exception();
    }
    finalize_ = nullptr;
    finalized_.store(true, std::memory_order_release);
  });
  if (ran_here)
    *ran_here = here;
  if (finalize_error_)
    std::rethrow_exception(finalize_error_);
  if (error_ && !ignore_errors_)
    std::rethrow_exception(error_);
  return kernel_;
}

} // namespace kiln::async
