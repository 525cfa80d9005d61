#include "runtime/kernel_cache.hpp"

namespace kiln::runtime {

KernelCache::KernelCache() {
  tables_.push_back(std::make_unique<Table>(64));
  table_.store(tables_.back().get(), std::memory_order_release);
}

KernelCache::~KernelCache() = default;

CacheEntry *KernelCache::probe(const Table &t, const SpecKey &key, uint64_t hash) {
  const std::size_t mask = t.slots.size() - 1;
  for (std::size_t i = hash & mask;; i = (i + 1) & mask) {
    CacheEntry *e = t.slots[i].load(std::memory_order_acquire);
    if (!e)
      return nullptr;
    if (e->hash == hash && key.equals(e->key))
      return e;
  }
}

CacheEntry *KernelCache::find(const SpecKey &key, uint64_t hash) const {
  return probe(*table_.load(std::memory_order_acquire), key, hash);
}

CacheEntry *KernelCache::find_or_insert(const SpecKey &key, uint64_t hash) {
  std::lock_guard lock(mutex_);
  Table *t = table_.load(std::memory_order_relaxed);
  if (CacheEntry *e = probe(*t, key, hash))
    return e;
  auto owned = std::make_unique<CacheEntry>();
  owned->key = key.store();
  owned->hash = hash;
  CacheEntry *e = owned.get();
  entries_.push_back(std::move(owned));
  // Keep the load under one half so probes stay short and always end.
  if (entries_.size() * 2 > t->slots.size()) {
    auto bigger = std::make_unique<Table>(t->slots.size() * 2);
    const std::size_t mask = bigger->slots.size() - 1;
    for (const auto &x : entries_) {
      std::size_t i = x->hash & mask;
      while (bigger->slots[i].load(std::memory_order_relaxed))
        i = (i + 1) & mask;
      bigger->slots[i].store(x.get(), std::memory_order_relaxed);
    }
    tables_.push_back(std::move(bigger));
    table_.store(tables_.back().get(), std::memory_order_release);
    return e;
  }
  const std::size_t mask = t->slots.size() - 1;
  std::size_t i = hash & mask;
  while (t->slots[i].load(std::memory_order_relaxed))
    i = (i + 1) & mask;
  t->slots[i].store(e, std::memory_order_release);
  return e;
}

std::size_t KernelCache::size() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

std::vector<CacheEntry *> KernelCache::entries() const {
  std::lock_guard lock(mutex_);
  std::vector<CacheEntry *> out;
  for (const auto &e : entries_)
    out.push_back(e.get());
  return out;
}

} // namespace kiln::runtime
