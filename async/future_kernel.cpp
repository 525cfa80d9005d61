// FutureKernel (include/kiln/async.hpp): the public face of an async::Job.
#include "kiln/async.hpp"

#include "async/job.hpp"

namespace kiln {

FutureKernel::FutureKernel(std::shared_ptr<async::Job> job) : job_(std::move(job)) {}

void FutureKernel::wait() const {
  if (!job_)
    throw Error("FutureKernel::wait() on an empty future");
  if (!job_->done()) // a finished job may outlive its scope and pool
    job_->wait(*job_->pool);
}

const CompiledKernel *FutureKernel::result() const {
  wait();
  return job_->finalize();
}

bool FutureKernel::ready() const {
  return job_ && job_->done();
}

std::exception_ptr FutureKernel::error() const {
  return ready() ? job_->error() : nullptr;
}

std::uintptr_t FutureKernel::id() const {
  return reinterpret_cast<std::uintptr_t>(job_.get());
}

AsyncCompileError::AsyncCompileError(std::vector<std::string> messages)
    : Error([&] {
        std::string s = std::to_string(messages.size()) + " compile" +
                        (messages.size() == 1 ? "" : "s") + " failed in the async compile scope:";
        for (const std::string &m : messages)
          s += "\n" + m;
        return s;
      }()),
      messages_(std::move(messages)) {}

} // namespace kiln
