// AsyncCompileMode (include/kiln/async.hpp): the public face of an
// async::Scope. The runtime's only part is the default pool size, a runtime
// knob (KILN_COMPILE_THREADS); the scope itself lives in async/.
#include <exception>

#include "async/scope.hpp"
#include "kiln/async.hpp"
#include "runtime/context.hpp"

namespace kiln {

AsyncCompileMode::AsyncCompileMode(Config config)
    : config_(config), uncaught_at_start_(std::uncaught_exceptions()) {
  if (config_.threads <= 0)
    config_.threads = runtime::Context::get().knobs().compile_threads;
  scope_ = std::make_unique<async::Scope>(config_.threads, config_.ignore_errors, this);
}

AsyncCompileMode::~AsyncCompileMode() noexcept(false) {
  // Launches from here on (a finalizer's hooks) compile synchronously.
  scope_->deactivate();
  try {
    finish();
  } catch (...) {
    // Never throw while another exception unwinds the stack.
    if (std::uncaught_exceptions() > uncaught_at_start_)
      return;
    throw;
  }
}

AsyncCompileMode *AsyncCompileMode::active() {
  const async::Scope *s = async::Scope::active();
  return s ? s->mode() : nullptr;
}

AsyncCompileMode::Attach::Attach(AsyncCompileMode &mode)
    : previous_(async::Scope::exchange_active(mode.scope_.get())) {}
AsyncCompileMode::Attach::~Attach() {
  async::Scope::exchange_active(previous_);
}

void AsyncCompileMode::finish() {
  scope_->finish();
}

int AsyncCompileMode::threads() const {
  return scope_->threads();
}

std::size_t AsyncCompileMode::outstanding() const {
  return scope_->outstanding();
}

} // namespace kiln
