// AsyncCompileMode and FutureKernel (include/kiln/async.hpp): the scope,
// its de-duplication by key and its completion-ordered drain, over the
// async layer's jobs and pool. It lives in the runtime because its default
// pool size is a runtime knob (KILN_COMPILE_THREADS).
#include <condition_variable>
#include <deque>
#include <exception>
#include <unordered_map>

#include "async/compile_pool.hpp"
#include "async/job.hpp"
#include "kiln/async.hpp"
#include "runtime/context.hpp"

namespace kiln {

namespace {

thread_local AsyncCompileMode *t_active = nullptr;

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

struct AsyncCompileMode::State {
  explicit State(int threads) : pool(threads) {}

  mutable std::mutex mutex;
  std::condition_variable completed_cv;
  std::unordered_map<std::string, std::shared_ptr<async::Job>> by_key;
  std::size_t outstanding = 0;                        // submitted, not yet taken by finish()
  std::deque<std::shared_ptr<async::Job>> completed;  // in completion order
  std::vector<std::shared_ptr<async::Job>>
      adopted; // other scopes' jobs this one waits for (adopt())
  // Last, so it is destroyed first: its destructor waits for the workers,
  // and a worker's on_done still uses mutex and completed_cv after finish()
  // has seen its job.
  async::CompilePool pool;
};

AsyncCompileError::AsyncCompileError(std::vector<std::string> messages)
    : Error([&] {
        std::string s = std::to_string(messages.size()) + " compile" + (messages.size() == 1 ? "" : "s") +
                        " failed in the async compile scope:";
        for (const std::string &m : messages)
          s += "\n" + m;
        return s;
      }()),
      messages_(std::move(messages)) {}

AsyncCompileMode::AsyncCompileMode(Config config) : config_(config), uncaught_at_start_(std::uncaught_exceptions()) {
  if (t_active)
    throw Error("an AsyncCompileMode is already active on this thread; nest the work in the existing scope "
                "instead of opening a second one");
  if (config_.threads <= 0)
    config_.threads = runtime::Context::get().knobs().compile_threads;
  state_ = std::make_unique<State>(config_.threads);
  t_active = this;
}

AsyncCompileMode::~AsyncCompileMode() noexcept(false) {
  if (t_active == this)
    t_active = nullptr;
  try {
    finish();
  } catch (...) {
    // Never throw while another exception unwinds the stack.
    if (std::uncaught_exceptions() > uncaught_at_start_)
      return;
    throw;
  }
}

AsyncCompileMode *AsyncCompileMode::active() { return t_active; }

AsyncCompileMode::Attach::Attach(AsyncCompileMode &mode) : previous_(t_active) { t_active = &mode; }
AsyncCompileMode::Attach::~Attach() { t_active = previous_; }

int AsyncCompileMode::threads() const { return state_->pool.threads(); }

std::size_t AsyncCompileMode::outstanding() const {
  std::lock_guard lock(state_->mutex);
  return state_->outstanding;
}

FutureKernel AsyncCompileMode::submit(const std::string &key, CompileFn compile, FinalizeFn finalize) {
  return submit(key, {}, std::move(compile), std::move(finalize));
}

FutureKernel AsyncCompileMode::submit(const std::string &key, std::vector<StageFn> stages, CompileFn compile,
                                      FinalizeFn finalize) {
  if (stages.size() > async::Job::kMaxStages)
    throw Error("a compile job has at most " + std::to_string(async::Job::kMaxStages) + " stages");
  State &st = *state_;
  std::shared_ptr<async::Job> job;
  {
    std::lock_guard lock(st.mutex);
    // A long-lived scope must not hold every job it ever ran: those whose
    // finalizer already ran (a launch waited for them and saw the outcome)
    // need nothing more from finish().
    std::erase_if(st.completed, [&](const std::shared_ptr<async::Job> &j) {
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
    job = std::make_shared<async::Job>(key, std::move(stages), std::move(compile), std::move(finalize),
                                       config_.ignore_errors);
    job->self = job;
    job->pool = &st.pool;
    job->on_done = [&st](const std::shared_ptr<async::Job> &j) {
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

void AsyncCompileMode::adopt(const FutureKernel &future) {
  if (!future.valid())
    return;
  std::lock_guard lock(state_->mutex);
  if (auto it = state_->by_key.find(future.job()->key());
      it != state_->by_key.end() && it->second == future.job())
    return; // this scope's own job: finish() reports it anyway
  for (const auto &j : state_->adopted)
    if (j == future.job())
      return;
  state_->adopted.push_back(future.job());
}

void AsyncCompileMode::finish() {
  State &st = *state_;
  std::vector<std::string> errors;
  // Other scopes' compiles this one asked for: wait, and report a failure
  // here too. Their own scope finalizes them (and reports there as well).
  std::vector<std::shared_ptr<async::Job>> adopted;
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
    std::shared_ptr<async::Job> job;
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
  if (!errors.empty() && !config_.ignore_errors)
    throw AsyncCompileError(std::move(errors));
}

const CompiledKernel *FutureKernel::result() const {
  if (!job_)
    throw Error("FutureKernel::result() on an empty future");
  if (!job_->done()) // a finished job may outlive its scope and pool
    job_->wait(*job_->pool);
  return job_->finalize();
}

bool FutureKernel::ready() const { return job_ && job_->done(); }

std::exception_ptr FutureKernel::error() const { return ready() ? job_->error() : nullptr; }

} // namespace kiln
