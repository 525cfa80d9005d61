// oneTBB is not built with ThreadSanitizer, so TSan cannot see how it hands
// a task to a worker. Code that does so says it: the submitter releases a
// handoff address once the task is built, the task acquires it before it
// reads anything and releases it when done, and the waiter acquires it
// after the wait. No effect in other builds.
#pragma once

#if defined(__SANITIZE_THREAD__)
extern "C" void __tsan_acquire(void *addr);
extern "C" void __tsan_release(void *addr);
#endif

namespace kiln::async {

inline void tsan_acquire([[maybe_unused]] void *handoff) {
#if defined(__SANITIZE_THREAD__)
  __tsan_acquire(handoff);
#endif
}

inline void tsan_release([[maybe_unused]] void *handoff) {
#if defined(__SANITIZE_THREAD__)
  __tsan_release(handoff);
#endif
}

} // namespace kiln::async
