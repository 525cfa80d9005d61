// Read sections and grace periods for lock-free readers (an epoch scheme,
// as userspace RCU's): the launch path reads the kernel table without a
// lock, so an entry the table evicts may still be in a reader's hands. The
// evicting side unlinks it, takes a stamp (retire_stamp), and frees it only
// once oldest_reader() has moved past that stamp: every reader that could
// have seen it has left its read section.
//
// Thread safety: everything here is safe from any number of threads. A
// read section costs two stores and a fence, and no allocation or lock
// once the thread has made its first one (which registers a slot for the
// thread, reused by later threads after it exits).
#pragma once

#include <cstdint>
#include <limits>

namespace kiln::runtime {

class GracePeriod {
public:
  /// No reader is inside a read section: oldest_reader() says so.
  static constexpr uint64_t kNone = std::numeric_limits<uint64_t>::max();

  /// A read section on the calling thread, for as long as it lives. Nests.
  /// Pointers read from a lock-free structure inside it stay valid until
  /// it ends.
  class Reader {
  public:
    Reader();
    ~Reader();
    Reader(const Reader &) = delete;
    Reader &operator=(const Reader &) = delete;
  };

  /// Call after unlinking objects (so no new reader can find them): their
  /// stamp. They may be freed once oldest_reader() > stamp.
  static uint64_t retire_stamp();
  /// The epoch of the oldest read section still open (kNone: none is).
  static uint64_t oldest_reader();
};

} // namespace kiln::runtime
