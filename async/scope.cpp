#include "async/scope.hpp"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "async/compile_pool.hpp"

namespace kiln::async {

namespace {

thread_local Scope *t_active = nullptr;

std::string message_of(const std::exception_ptr &e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception &x) {
    return x.what();
  } catch (...) {
    return "unknown error";
  }
}

} // namespace

struct Scope::State {
  explicit State(int threads) : pool(threads) {}

  mutable std::mutex mutex;
  std::condition_variable completed_cv;
  std::unordered_map<JobKey, std::shared_ptr<Job>, JobKeyHash> by_key;
  std::size_t outstanding = 0;                // submitted, not yet taken by finish()
  std::deque<std::shared_ptr<Job>> completed; // in completion order
  std::vector<std::shared_ptr<Job>> adopted;  // other scopes' jobs this one waits for (adopt())
  // Last, so it is destroyed first: its destructor waits for the pool's
  // threads, and a worker's on_done still uses mutex and completed_cv after
  // finish() has seen its job.
  CompilePool pool;
};

Scope::Scope(int threads, bool ignore_errors, AsyncCompileMode *mode)
    : ignore_errors_(ignore_errors), mode_(mode) {
  if (t_active)
    throw Error(
        "an AsyncCompileMode is already active on this thread; nest the work in the existing scope "
        "instead of opening a second one");
  state_ = std::make_unique<State>(threads);
  t_active = this;
}

Scope::~Scope() {
  deactivate();
}

Scope *Scope::active() {
  return t_active;
}

Scope *Scope::exchange_active(Scope *s) {
  return std::exchange(t_active, s);
}

void Scope::deactivate() {
  if (t_active == this)
    t_active = nullptr;
}

int Scope::threads() const {
  return state_->pool.threads();
}

std::size_t Scope::outstanding() const {
  std::lock_guard lock(state_->mutex);
  return state_->outstanding;
}

FutureKernel Scope::submit(const JobKey &key, std::vector<StageFn> stages, CompileFn result,
                           FinalizeFn finalize) {
  if (stages.size() > Job::kMaxStages)
    throw Error("a compile job has at most " + std::to_string(Job::kMaxStages) +
                " stages (the compiler's: frontend, optimize, codegen)");
  State &st = *state_;
  std::shared_ptr<Job> job;
  {
    std::lock_guard lock(st.mutex);
    // A long-lived scope must not hold every job it ever ran: those whose
    // finalizer already ran (a launch waited for them and saw the outcome)
    // need nothing more from finish().
    std::erase_if(st.completed, [&](const std::shared_ptr<Job> &j) {
      if (!j->finalized())
        return false;
      --st.outstanding;
      return true;
    });
    // A failed job whose finalizer has run was given up by its submitter
    // (the runtime drops its placeholder so the next launch retries):
    // compile again instead of handing back the stale failure.
    if (auto it = st.by_key.find(key);
        it != st.by_key.end() && !(it->second->finalized() && it->second->error()))
      return FutureKernel(it->second);
    job = std::make_shared<Job>(key, std::move(stages), std::move(result), std::move(finalize),
                                ignore_errors_);
    job->self = job;
    job->pool = &st.pool;
    job->on_done = [&st](const std::shared_ptr<Job> &j) {
      {
        std::lock_guard l(st.mutex);
        st.completed.push_back(j);
      }
      st.completed_cv.notify_all();
    };
    st.by_key.insert_or_assign(key, job);
    ++st.outstanding;
  }
  st.pool.submit(job);
  return FutureKernel(job);
}

void Scope::adopt(const FutureKernel &future) {
  const std::shared_ptr<Job> &job = job_of(future);
  if (!job)
    return;
  std::lock_guard lock(state_->mutex);
  if (auto it = state_->by_key.find(job->key()); it != state_->by_key.end() && it->second == job)
    return; // this scope's own job: finish() reports it anyway
  for (const auto &j : state_->adopted)
    if (j == job)
      return;
  state_->adopted.push_back(job);
}

void Scope::finish() {
  State &st = *state_;
  std::vector<std::string> errors;
  // Other scopes' compiles this one asked for: wait, and report a failure
  // here too. Their own scope finalizes them (and reports there as well).
  std::vector<std::shared_ptr<Job>> adopted;
  {
    std::lock_guard lock(st.mutex);
    adopted.swap(st.adopted);
  }
  for (const auto &job : adopted) {
    if (!job->done())
      job->wait(*job->pool);
    if (std::exception_ptr e = job->error())
      errors.push_back(message_of(e));
  }
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock lock(st.mutex);
      if (st.outstanding == 0)
        break;
      st.completed_cv.wait(lock, [&] { return !st.completed.empty(); });
      job = std::move(st.completed.front());
      st.completed.pop_front();
      --st.outstanding;
    }
    // One failure does not stop the others; each is reported once, by
    // whoever ran its finalizer (a result() call that saw it, or us).
    bool ran_here = false;
    try {
      job->finalize(&ran_here);
    } catch (...) {
      if (ran_here)
        errors.push_back(message_of(std::current_exception()));
    }
  }
  {
    std::lock_guard lock(st.mutex);
    st.by_key.clear();
  }
  if (!errors.empty() && !ignore_errors_)
    throw AsyncCompileError(std::move(errors));
}

} // namespace kiln::async
