// Long-lived threads that run nvJitLink. Its first call on a thread costs far
// more than the next ones on the same thread (softmax 4096 on the H200 machine:
// ~46 ms on a fresh compile worker against ~25 ms on a thread that assembled
// before; here 44 ms against 20, with ~2,400 more page faults), so every
// assembly runs on a thread that stays, not on whichever compile worker the
// task graph picked.
#pragma once

#include <functional>

namespace kiln::nvptx {

/// Runs `job` on an idle assembler thread and waits for it; starts a thread
/// when none is idle (at most one per hardware thread, then jobs queue).
/// Rethrows what `job` throws.
void run_on_assembler_thread(const std::function<void()> &job);

/// Queues `job` on an assembler thread without waiting (the warm-up).
void start_on_assembler_thread(std::function<void()> job);

} // namespace kiln::nvptx
