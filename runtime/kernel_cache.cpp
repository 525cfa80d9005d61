#include "runtime/kernel_cache.hpp"

#include <algorithm>

#include "runtime/grace_period.hpp"

namespace kiln::runtime {

namespace {

/// An evicted entry's slot: probes go on past it (the chain it sat in may
/// continue), an insert may reuse it.
CacheEntry *tombstone() {
  static CacheEntry t;
  return &t;
}

/// Room for `live` entries at a load of at most one quarter, so that
/// tombstones have space to gather before the next rebuild.
std::size_t capacity_for(std::size_t live) {
  std::size_t cap = 64;
  while (cap < live * 4)
    cap *= 2;
  return cap;
}

} // namespace

KernelCache::KernelCache(std::size_t max_entries) : max_(max_entries) {
  current_ = std::make_unique<Table>(64);
  table_.store(current_.get(), std::memory_order_release);
}

KernelCache::~KernelCache() = default;

KernelCache::Pin::~Pin() {
  std::lock_guard lock(cache_->mutex_);
  --entry_->pins;
}

CacheEntry *KernelCache::probe(const Table &t, const SpecKey &key, uint64_t hash) {
  const std::size_t mask = t.slots.size() - 1;
  for (std::size_t i = hash & mask;; i = (i + 1) & mask) {
    CacheEntry *e = t.slots[i].load(std::memory_order_acquire);
    if (!e)
      return nullptr;
    if (e != tombstone() && e->hash == hash && key.equals(e->key))
      return e;
  }
}

CacheEntry *KernelCache::find(const SpecKey &key, uint64_t hash) const {
  CacheEntry *e = probe(*table_.load(std::memory_order_acquire), key, hash);
  // Only when clear: a store on every hit would bounce the line between cores.
  if (e && !e->referenced.load(std::memory_order_relaxed))
    e->referenced.store(true, std::memory_order_relaxed);
  return e;
}

KernelCache::Pin KernelCache::find_or_insert(const SpecKey &key, uint64_t hash) {
  std::vector<Retired> freed; // destroyed after the lock is released
  CacheEntry *e = nullptr;
  {
    std::lock_guard lock(mutex_);
    e = probe(*current_, key, hash);
    if (e) {
      e->referenced.store(true, std::memory_order_relaxed);
    } else {
      // A new entry starts unreferenced: one that is never hit again goes
      // before those that were (when every entry is referenced, the clock
      // is first in, first out).
      if (max_ && entries_.size() >= max_)
        evict_for_one();
      auto owned = std::make_unique<CacheEntry>();
      owned->key = key.store();
      owned->hash = hash;
      e = owned.get();
      entries_.push_back(std::move(owned));
      Table &t = *current_;
      // Keep live entries and tombstones under one half so probes stay
      // short and always end.
      if ((entries_.size() + t.tombstones) * 2 > t.slots.size()) {
        rebuild(capacity_for(entries_.size()));
      } else {
        const std::size_t mask = t.slots.size() - 1;
        std::size_t i = hash & mask;
        for (;; i = (i + 1) & mask) {
          CacheEntry *s = t.slots[i].load(std::memory_order_relaxed);
          if (!s)
            break;
          if (s == tombstone()) {
            --t.tombstones;
            break;
          }
        }
        t.slots[i].store(e, std::memory_order_release);
      }
    }
    ++e->pins;
    freed = reclaimable();
  }
  return Pin(*this, *e);
}

bool KernelCache::evictable(CacheEntry &e) const {
  if (e.pins != 0)
    return false;
  // A compile in flight (its finalizer holds the entry) or a thread preparing
  // one: in use. Held by someone right now: in use too.
  std::unique_lock l(e.compile_mutex, std::try_to_lock);
  return l.owns_lock() && !e.future.valid() && e.preparing == std::thread::id();
}

void KernelCache::evict_for_one() {
  const std::size_t first = retired_.size();
  // Two turns of the clock: the first may only clear referenced bits.
  for (std::size_t steps = 2 * entries_.size(); steps > 0 && entries_.size() >= max_; --steps) {
    if (hand_ >= entries_.size())
      hand_ = 0;
    CacheEntry &e = *entries_[hand_];
    if (e.referenced.load(std::memory_order_relaxed)) {
      e.referenced.store(false, std::memory_order_relaxed);
      ++hand_;
      continue;
    }
    if (!evictable(e)) {
      ++hand_;
      continue;
    }
    Table &t = *current_;
    const std::size_t mask = t.slots.size() - 1;
    std::size_t i = e.hash & mask;
    while (t.slots[i].load(std::memory_order_relaxed) != &e)
      i = (i + 1) & mask;
    t.slots[i].store(tombstone(), std::memory_order_release);
    ++t.tombstones;
    retired_.push_back(Retired{0, std::move(entries_[hand_]), nullptr});
    entries_[hand_] = std::move(entries_.back());
    entries_.pop_back();
    ++evictions_;
  }
  // Every entry in use: the bound is exceeded for now rather than a kernel
  // freed under a launch; a later insert tries again.
  if (retired_.size() == first)
    return;
  const uint64_t stamp = GracePeriod::retire_stamp();
  for (std::size_t r = first; r < retired_.size(); ++r)
    retired_[r].stamp = stamp;
}

void KernelCache::rebuild(std::size_t capacity) {
  auto fresh = std::make_unique<Table>(capacity);
  const std::size_t mask = capacity - 1;
  for (const auto &x : entries_) {
    std::size_t i = x->hash & mask;
    while (fresh->slots[i].load(std::memory_order_relaxed))
      i = (i + 1) & mask;
    fresh->slots[i].store(x.get(), std::memory_order_relaxed);
  }
  table_.store(fresh.get(), std::memory_order_release);
  retired_.push_back(Retired{0, nullptr, std::move(current_)});
  current_ = std::move(fresh);
  retired_.back().stamp = GracePeriod::retire_stamp();
}

std::vector<KernelCache::Retired> KernelCache::reclaimable() {
  std::vector<Retired> out;
  if (retired_.empty())
    return out;
  const uint64_t oldest = GracePeriod::oldest_reader();
  auto keep = std::stable_partition(retired_.begin(), retired_.end(),
                                    [&](const Retired &r) { return r.stamp >= oldest; });
  std::move(keep, retired_.end(), std::back_inserter(out));
  retired_.erase(keep, retired_.end());
  return out;
}

std::size_t KernelCache::size() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

uint64_t KernelCache::evictions() const {
  std::lock_guard lock(mutex_);
  return evictions_;
}

std::size_t KernelCache::retired() const {
  std::lock_guard lock(mutex_);
  return retired_.size();
}

std::vector<std::shared_ptr<LoadedKernel>> KernelCache::loaded() const {
  std::lock_guard lock(mutex_);
  std::vector<std::shared_ptr<LoadedKernel>> out;
  for (const auto &e : entries_)
    if (e->ready.load(std::memory_order_acquire))
      out.push_back(e->owned);
  return out;
}

} // namespace kiln::runtime
