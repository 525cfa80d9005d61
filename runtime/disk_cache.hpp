// The disk cache (DESIGN.md section 5): one folder per compile key under
// KILN_CACHE_DIR, holding meta.json (the kernel's metadata, the globals
// its compile read and the SHA-256 of every file), the binary and the
// stage files.
//
// Safe against crashes, races and tampering: every file is written under a
// temporary name in its folder, fsynced and renamed, meta.json last, so a
// reader sees a whole entry or none; an entry whose files do not match
// their hashes, are truncated, unreadable, or not owned by this user (or
// writable by others) is discarded and recompiled, never loaded. A lock
// file per key (flock) makes N processes asking for one key compile it
// once. Folders are 0700, files 0600. Least recently used entries are
// pruned past KILN_CACHE_MAX_BYTES. An entry found in Redis is written by a
// background thread (its fsyncs cost tens of milliseconds), holding the
// key's lock until it is published; flush() and the destructor wait for it.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "runtime/background_writer.hpp"
#include "runtime/cache_level.hpp"

namespace kiln::runtime {

/// Thread-safe, and safe for several processes sharing one folder.
class DiskCache final : public CacheLevel {
public:
  /// Opens `dir`, creating it (0700) if needed. Throws RuntimeError when it
  /// is not a folder, cannot be created, or is owned by another user.
  /// `max_bytes` 0: no limit. `keep_stages` (KILN_KEEP_STAGES): a hit
  /// reads the stage texts too (checked against their hashes as the binary
  /// is); otherwise only the assembler's log, which launches report.
  /// `writer`: the thread put_later() queues on (the process's, shared with
  /// the tuning cache); null: one of this cache's own.
  DiskCache(std::string dir, uint64_t max_bytes, bool keep_stages = false,
            BackgroundWriter *writer = nullptr);
  /// Waits for the entries put_later() queued.
  ~DiskCache() override;

  BinarySource source() const override { return BinarySource::disk; }
  std::optional<CachedKernel> get(const std::string &key) override;
  void put(const std::string &key, const CachedKernel &entry) override;
  std::unique_ptr<KeyLock> lock(const std::string &key) override;
  /// Queued on the writer's thread; returns at once.
  void put_later(const std::string &key, CachedKernel entry,
                 std::unique_ptr<KeyLock> lock) override;
  void flush() override { writer_->flush(); }
  BackgroundWriter &writer() { return *writer_; }

  struct Entry {
    std::string name;   ///< the folder
    std::string kernel; ///< "" when its metadata is unreadable
    std::string target;
    uint64_t bytes = 0;
    int64_t used_ns = 0; ///< last written or read (ns since the epoch)
  };
  /// Every entry, least recently used first.
  std::vector<Entry> entries() const;
  /// Removes least recently used entries until the rest fit in `max_bytes`,
  /// skipping any another process holds locked; returns how many it removed.
  size_t prune(uint64_t max_bytes);
  /// Removes every entry; returns how many.
  size_t clear();
  const std::string &dir() const { return dir_; }
  uint64_t max_bytes() const { return max_bytes_; }

  /// The folder of a compile key: base32 (RFC 4648, lower case, no
  /// padding) of its 32-byte SHA-256.
  static std::string entry_name(const std::string &hex_key);

private:
  std::string entry_dir(const std::string &key) const { return dir_ + "/" + entry_name(key); }
  /// Deletes what crashed writers left behind.
  void sweep();
  /// Moves an entry aside and deletes it (a reader never sees half of it).
  void discard(const std::string &path, const std::string &why);

  class FlockLock;

  std::string dir_;
  uint64_t max_bytes_;
  bool keep_stages_;
  std::mutex held_mutex_;
  std::set<std::string> held_; ///< keys whose lock this process holds
  std::unique_ptr<BackgroundWriter> own_writer_;
  BackgroundWriter *writer_;
};

} // namespace kiln::runtime
