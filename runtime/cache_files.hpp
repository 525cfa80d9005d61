// The file operations the persistent caches share (the disk cache, the
// tuning cache): publication that a crash or a concurrent writer cannot
// tear, and reads that trust only what this user alone could have written.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

namespace kiln::runtime {

/// Closes a descriptor on every path out.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0)
      ::close(fd);
  }
  Fd(const Fd &) = delete;
  Fd &operator=(const Fd &) = delete;
};

/// Owned by this user (`me`, the effective uid) and writable by nobody
/// else: what a cache may trust. A caller checking several files passes
/// `me` from one geteuid(): each call is a system call, dear on a VM.
bool trusted(const struct stat &st, uid_t me = ::geteuid());

/// The whole of a regular, trusted file (opened without following a
/// symlink), or nullopt with `why` set.
std::optional<std::string> read_trusted(const std::string &path, std::string &why);

/// read_trusted() of `name` in the folder open as `dirfd` (AT_FDCWD: `name`
/// is a path), so that several files of one folder cost one look-up of the
/// folder's path; `st`, when not null, receives the file's status; `me` as
/// for trusted(). Bytes: std::string, or std::vector<uint8_t> for a binary
/// read where it is kept (no copy of a kernel object on a disk hit).
template <class Bytes = std::string>
std::optional<Bytes> read_trusted_at(int dirfd, const std::string &name, std::string &why,
                                     struct stat *st = nullptr, uid_t me = ::geteuid());

/// Writes `data` to `dir/name` atomically: a temporary name (".tmp.*") in
/// the same folder, created 0600, fsynced, renamed over the name. Throws
/// RuntimeError; leaves no temporary file behind when it throws.
void write_atomic(const std::string &dir, const std::string &name, std::string_view data);

/// Makes a rename in `dir` durable (best effort).
void fsync_dir(const std::string &dir);

/// Creates `dir` (0700, with its parents) unless it exists; throws
/// RuntimeError unless it is then a folder this user owns, and makes it
/// private (0700) if it was not. `what` names it in the error ("the kiln
/// cache folder").
void ensure_own_dir(const std::string &dir, const std::string &what = "the kiln cache folder");

/// strerror(errno).
std::string errno_text();

} // namespace kiln::runtime
