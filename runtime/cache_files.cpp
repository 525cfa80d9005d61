#include "runtime/cache_files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "kiln/error.hpp"

namespace kiln::runtime {

namespace fs = std::filesystem;

std::string errno_text() {
  return std::strerror(errno);
}

bool trusted(const struct stat &st, uid_t me) {
  return st.st_uid == me && (st.st_mode & 022) == 0;
}

std::optional<std::string> read_trusted(const std::string &path, std::string &why) {
  return read_trusted_at(AT_FDCWD, path, why);
}

template <class Bytes>
std::optional<Bytes> read_trusted_at(int dirfd, const std::string &path, std::string &why,
                                     struct stat *status, uid_t me) {
  Fd f(::openat(dirfd, path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (f.fd < 0) {
    why = path + ": " + errno_text();
    return std::nullopt;
  }
  struct stat st {};
  if (::fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode) || !trusted(st, me)) {
    why = path + " is not a regular file owned by this user and writable only by it";
    return std::nullopt;
  }
  if (status)
    *status = st;
  Bytes data(static_cast<size_t>(st.st_size), 0);
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::read(f.fd, data.data() + done, data.size() - done);
    if (n <= 0) {
      why = path + ": short read";
      return std::nullopt;
    }
    done += static_cast<size_t>(n);
  }
  return data;
}

template std::optional<std::string> read_trusted_at(int, const std::string &, std::string &,
                                                    struct stat *, uid_t);
template std::optional<std::vector<uint8_t>> read_trusted_at(int, const std::string &,
                                                             std::string &, struct stat *, uid_t);

void write_atomic(const std::string &dir, const std::string &name, std::string_view data) {
  static std::atomic<uint64_t> counter{0};
  const std::string tmp = dir + "/.tmp." + name + "." + std::to_string(::getpid()) + "." +
                          std::to_string(counter.fetch_add(1, std::memory_order_relaxed));
  Fd f(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (f.fd < 0)
    throw RuntimeError("cannot write " + tmp + ": " + errno_text());
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(f.fd, data.data() + done, data.size() - done);
    if (n <= 0) {
      const std::string e = errno_text();
      ::unlink(tmp.c_str());
      throw RuntimeError("cannot write " + tmp + ": " + e);
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(f.fd) != 0 || ::rename(tmp.c_str(), (dir + "/" + name).c_str()) != 0) {
    const std::string e = errno_text();
    ::unlink(tmp.c_str());
    throw RuntimeError("cannot publish " + dir + "/" + name + ": " + e);
  }
}

void fsync_dir(const std::string &dir) {
  Fd f(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (f.fd >= 0)
    ::fsync(f.fd);
}

void ensure_own_dir(const std::string &dir, const std::string &what) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0)
    throw RuntimeError(
        "cannot create " + what + " " + dir + ": " + (ec ? ec.message() : errno_text()) +
        "; set KILN_CACHE_DIR (or --cache-dir) to a folder you can write, or use --no-cache");
  if (!S_ISDIR(st.st_mode))
    throw RuntimeError(what + " " + dir +
                       " is not a folder; set KILN_CACHE_DIR (or --cache-dir) "
                       "to a folder, or use --no-cache");
  if (st.st_uid != ::geteuid())
    throw RuntimeError(
        what + " " + dir + " belongs to another user (uid " + std::to_string(st.st_uid) +
        ", you are uid " + std::to_string(::geteuid()) +
        "); kiln does not load binaries another user could have written. Use a folder of your "
        "own (KILN_CACHE_DIR or --cache-dir), or --no-cache");
  if ((st.st_mode & 077) != 0)
    ::chmod(dir.c_str(), 0700); // ours: make it private, as a new one would be
}

} // namespace kiln::runtime
