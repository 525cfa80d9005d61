#include "runtime/grace_period.hpp"

#include <atomic>

namespace kiln::runtime {

namespace {

// One per thread that ever read, in a list that only grows (a slot is
// reused by a later thread once its thread has exited), so a scan needs no
// lock and a slot is never freed under it. This is process-wide state, like
// RCU's: a reader does not know which structure's objects it may see.
struct alignas(64) Slot {
  std::atomic<uint64_t> epoch{0}; ///< 0: outside; else the epoch its section entered
  std::atomic<bool> taken{true};
  uint32_t depth = 0; ///< nesting, touched by the owning thread only
  Slot *next = nullptr;
};

std::atomic<uint64_t> g_epoch{1};
std::atomic<Slot *> g_slots{nullptr};

Slot *acquire_slot() {
  for (Slot *s = g_slots.load(std::memory_order_acquire); s; s = s->next) {
    bool free = false;
    if (!s->taken.load(std::memory_order_relaxed) &&
        s->taken.compare_exchange_strong(free, true, std::memory_order_acquire))
      return s;
  }
  Slot *s = new Slot; // once per thread, on its first read section
  Slot *head = g_slots.load(std::memory_order_relaxed);
  do
    s->next = head;
  while (!g_slots.compare_exchange_weak(head, s, std::memory_order_release,
                                        std::memory_order_relaxed));
  return s;
}

// The calling thread's slot, handed back when the thread exits.
struct ThreadSlot {
  Slot *slot = acquire_slot();
  ~ThreadSlot() {
    slot->epoch.store(0, std::memory_order_release);
    slot->depth = 0;
    slot->taken.store(false, std::memory_order_release);
  }
};

Slot &my_slot() {
  thread_local ThreadSlot t;
  return *t.slot;
}

} // namespace

GracePeriod::Reader::Reader() {
  Slot &s = my_slot();
  if (s.depth++ != 0)
    return;
  // Release: a writer that reads this epoch also sees that this thread's
  // earlier sections are over. The fence orders the store before the
  // section's loads (a writer's fence after its unlink pairs with it:
  // either the writer sees this epoch, or this section sees the unlink).
  s.epoch.store(g_epoch.load(std::memory_order_acquire), std::memory_order_release);
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

GracePeriod::Reader::~Reader() {
  Slot &s = my_slot();
  if (--s.depth == 0)
    s.epoch.store(0, std::memory_order_release);
}

uint64_t GracePeriod::retire_stamp() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  // A reader that enters from now on reads an epoch above the stamp, and
  // (acquiring it) sees the unlink.
  return g_epoch.fetch_add(1, std::memory_order_acq_rel);
}

uint64_t GracePeriod::oldest_reader() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  uint64_t oldest = kNone;
  for (Slot *s = g_slots.load(std::memory_order_acquire); s; s = s->next)
    if (const uint64_t e = s->epoch.load(std::memory_order_acquire); e != 0 && e < oldest)
      oldest = e;
  return oldest;
}

} // namespace kiln::runtime
