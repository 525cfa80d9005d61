#include "runtime/disk_cache.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "compiler/support/sha256.hpp"
#include "kiln/error.hpp"
#include "runtime/cache_files.hpp"
#include "runtime/cached_kernel_json.hpp"

namespace kiln::runtime {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int kFormat = 1;
constexpr const char *kMeta = "meta.json";

/// A stage's file name, from names the compiler chose ("llir", "ptx").
std::string stage_file(const std::string &stage) {
  std::string s = "stage.";
  for (char c : stage)
    s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return s;
}

uint64_t folder_bytes(const std::string &path) {
  uint64_t n = 0;
  std::error_code ec;
  for (const auto &f : fs::directory_iterator(path, ec))
    if (f.is_regular_file(ec))
      n += f.file_size(ec);
  return n;
}

/// A use this recent is not written down again (see DiskCache::get).
constexpr int64_t kTouchSeconds = 60;

/// Whether a hit on the entry whose meta.json has status `st` should
/// record the use: its last is kTouchSeconds old or more, or in the future
/// (a clock set back: the entry would otherwise look newer than it is).
bool touch_due(const struct stat &st) {
  timespec now{};
  if (::clock_gettime(CLOCK_REALTIME, &now) != 0)
    return true;
  const int64_t age = int64_t(now.tv_sec) - int64_t(st.st_mtim.tv_sec);
  return age >= kTouchSeconds || age < 0;
}

/// Warns once per process: a cache that cannot write must not flood stderr.
void warn_once(const std::string &message) {
  static std::atomic<bool> warned{false};
  if (!warned.exchange(true))
    std::cerr << "kiln: warning: " << message
              << " (the disk cache is skipped; launches still work)\n";
}

} // namespace

/// The lock file of one key, held; also marks the key held in this process.
class DiskCache::FlockLock final : public KeyLock {
public:
  FlockLock(DiskCache &cache, std::string name, int fd)
      : cache_(cache), name_(std::move(name)), fd_(fd) {}
  ~FlockLock() override {
    if (fd_ >= 0) {
      ::flock(fd_, LOCK_UN);
      ::close(fd_);
    }
    std::lock_guard lock(cache_.held_mutex_);
    cache_.held_.erase(name_);
  }
  void set_fd(int fd) { fd_ = fd; }

private:
  DiskCache &cache_;
  std::string name_;
  int fd_;
};

DiskCache::DiskCache(std::string dir, uint64_t max_bytes, bool keep_stages,
                     BackgroundWriter *writer)
    : dir_(std::move(dir)), max_bytes_(max_bytes), keep_stages_(keep_stages),
      own_writer_(writer ? nullptr : std::make_unique<BackgroundWriter>()),
      writer_(writer ? writer : own_writer_.get()) {
  while (dir_.size() > 1 && dir_.back() == '/')
    dir_.pop_back();
  ensure_own_dir(dir_);
  ensure_own_dir(dir_ + "/locks");
}

DiskCache::~DiskCache() {
  // The queued writes use this cache (and their locks its `held_`).
  writer_->flush();
}

void DiskCache::put_later(const std::string &key, CachedKernel entry,
                          std::unique_ptr<KeyLock> lock) {
  // shared_ptr: std::function needs a copyable callable.
  auto job = std::make_shared<std::pair<CachedKernel, std::unique_ptr<KeyLock>>>(std::move(entry),
                                                                                 std::move(lock));
  writer_->post([this, key, job] {
    put(key, job->first);
    job->second.reset(); // published: processes waiting on the key find it now
  });
}

std::string DiskCache::entry_name(const std::string &hex_key) {
  // The key is hex SHA-256 already; anything else is hashed first.
  std::array<uint8_t, 32> bytes{};
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9')
      return c - '0';
    if (c >= 'a' && c <= 'f')
      return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
      return c - 'A' + 10;
    return -1;
  };
  bool hex = hex_key.size() == 64;
  for (size_t i = 0; hex && i < 32; ++i) {
    const int hi = nibble(hex_key[2 * i]), lo = nibble(hex_key[2 * i + 1]);
    hex = hi >= 0 && lo >= 0;
    bytes[i] = static_cast<uint8_t>(hi << 4 | (lo & 15));
  }
  if (!hex)
    bytes = Sha256().update(hex_key).digest();
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz234567";
  std::string out;
  out.reserve(52);
  uint32_t buffer = 0;
  int bits = 0;
  for (uint8_t b : bytes) {
    buffer = buffer << 8 | b;
    bits += 8;
    while (bits >= 5) {
      out += kAlphabet[(buffer >> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0)
    out += kAlphabet[(buffer << (5 - bits)) & 31];
  return out;
}

void DiskCache::discard(const std::string &path, const std::string &why) {
  static std::atomic<uint64_t> counter{0};
  const std::string aside = dir_ + "/.trash." + std::to_string(::getpid()) + "." +
                            std::to_string(counter.fetch_add(1, std::memory_order_relaxed));
  std::error_code ec;
  if (::rename(path.c_str(), aside.c_str()) == 0)
    fs::remove_all(aside, ec);
  (void)why; // recompiling is the whole of the remedy; the reason is for debugging
}

std::optional<CachedKernel> DiskCache::get(const std::string &key) {
  const std::string dir = entry_dir(key);
  std::string why;
  // The folder is opened once and its files read relative to it: each
  // absolute path costs a walk of the cache's path, dear on a hit.
  // O_NOFOLLOW as lstat did: a symlink in place of the folder is not ours.
  const Fd d(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (d.fd < 0) {
    if (errno == ELOOP || errno == ENOTDIR || errno == EACCES)
      discard(dir, "entry folder not ours");
    return std::nullopt; // a plain miss
  }
  const uid_t me = ::geteuid(); // once for the folder and its files
  struct stat dst {};
  if (::fstat(d.fd, &dst) != 0 || !S_ISDIR(dst.st_mode) || !trusted(dst, me)) {
    discard(dir, "entry folder not ours");
    return std::nullopt;
  }
  struct stat mst {};
  std::optional<std::string> meta_text = read_trusted_at(d.fd, kMeta, why, &mst, me);
  if (!meta_text) {
    if (::faccessat(d.fd, kMeta, F_OK, 0) == 0 || errno != ENOENT)
      discard(dir, why);
    return std::nullopt; // no metadata: being written, or a crash before it was
  }
  try {
    const JsonDocument doc(*meta_text);
    const JsonObject meta(doc.root());
    if (meta.integer<int>("format") != kFormat || meta.string_view("key") != key)
      throw std::runtime_error("another format or key");
    CachedKernel out = from_metadata_json(meta);
    CompiledKernel &k = out.kernel;
    const JsonObject files = meta.object("files");
    const std::string binary_file = meta.string("binary_file");
    std::optional<std::vector<uint8_t>> binary =
        read_trusted_at<std::vector<uint8_t>>(d.fd, binary_file, why, nullptr, me);
    if (!binary)
      throw std::runtime_error(why);
    const JsonObject bf = files.object(binary_file.c_str());
    const std::string_view bytes(reinterpret_cast<const char *>(binary->data()), binary->size());
    k.hash = bf.string("sha256");
    if (binary->size() != bf.uint64("bytes") || sha256_hex(bytes) != k.hash)
      throw std::runtime_error("binary does not match its hash");
    k.binary = std::move(*binary);
    k.key = key;
    for (const auto &member : files.value().GetObject()) {
      const JsonObject f(member.value, "a file's entry");
      if (!f.has("stage"))
        continue;
      const std::string name(member.name.GetString(), member.name.GetStringLength());
      const std::string stage = f.string("stage");
      if (name != stage_file(stage))
        throw std::runtime_error("stage file " + name + " is not named for its stage");
      if (!keep_stages_ && stage != "cubin_log")
        continue;
      std::optional<std::string> text = read_trusted_at(d.fd, name, why, nullptr, me);
      if (!text)
        throw std::runtime_error(why);
      if (text->size() != f.uint64("bytes") || sha256_hex(*text) != f.string_view("sha256"))
        throw std::runtime_error("stage " + stage + " does not match its hash");
      k.stages[stage] = std::move(*text);
    }
    // Least recently used: a hit counts as a use, recorded as meta.json's
    // modification time. Not again within kTouchSeconds of the last: the
    // syscall is a tenth of a small kernel's hit, and pruning's order only
    // loses precision among entries used in the last minute.
    if (touch_due(mst))
      ::utimensat(d.fd, kMeta, nullptr, AT_SYMLINK_NOFOLLOW);
    return out;
  } catch (const std::exception &e) {
    discard(dir, e.what());
    return std::nullopt;
  }
}

void DiskCache::put(const std::string &key, const CachedKernel &entry) {
  const CompiledKernel &k = entry.kernel;
  std::optional<json> meta = metadata_json(entry);
  if (!meta)
    return; // cannot be written down faithfully: leave it uncached
  const std::string dir = entry_dir(key);
  try {
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
      throw RuntimeError("cannot create " + dir + ": " + errno_text());
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || !trusted(st)) {
      discard(dir, "entry folder not ours");
      return;
    }
    json files = json::object();
    const std::string binary_file =
        "kernel." + (k.binary_kind.empty() ? std::string("bin") : k.binary_kind);
    const std::string_view binary(reinterpret_cast<const char *>(k.binary.data()), k.binary.size());
    write_atomic(dir, binary_file, binary);
    files[binary_file] = {{"sha256", sha256_hex(binary)}, {"bytes", binary.size()}};
    for (const auto &[stage, text] : k.stages) {
      const std::string name = stage_file(stage);
      write_atomic(dir, name, text);
      files[name] = {{"sha256", sha256_hex(text)}, {"bytes", text.size()}, {"stage", stage}};
    }
    (*meta)["format"] = kFormat;
    (*meta)["key"] = key;
    (*meta)["binary_file"] = binary_file;
    (*meta)["files"] = std::move(files);
    // Last: its presence publishes the entry, and its hashes name the files.
    write_atomic(dir, kMeta, meta->dump(1));
    fsync_dir(dir);
  } catch (const std::exception &e) {
    warn_once(e.what());
    return;
  }
  if (max_bytes_)
    prune(max_bytes_);
}

std::unique_ptr<KeyLock> DiskCache::lock(const std::string &key) {
  const std::string name = entry_name(key);
  {
    // A key this process already compiles (two Modules of one file) is
    // compiled again rather than waited for: the waiting job could hold the
    // compile pool's only worker that the holder's next stage needs.
    std::lock_guard lock(held_mutex_);
    if (!held_.insert(name).second)
      return nullptr;
  }
  auto held = std::make_unique<FlockLock>(*this, name, -1);
  const std::string path = dir_ + "/locks/" + name;
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    warn_once("cannot open the lock file " + path + ": " + errno_text());
    return nullptr;
  }
  // Only other processes can hold it now, and they do not wait on us.
  while (::flock(fd, LOCK_EX) != 0) {
    if (errno != EINTR) {
      ::close(fd);
      return nullptr;
    }
  }
  held->set_fd(fd);
  return held;
}

std::vector<DiskCache::Entry> DiskCache::entries() const {
  std::vector<Entry> out;
  std::error_code ec;
  for (const auto &d : fs::directory_iterator(dir_, ec)) {
    const std::string name = d.path().filename().string();
    if (name.empty() || name[0] == '.' || name == "locks" || !d.is_directory(ec))
      continue;
    Entry e;
    e.name = name;
    e.bytes = folder_bytes(d.path().string());
    const std::string meta_path = d.path().string() + "/" + kMeta;
    struct stat st {};
    if (::stat(meta_path.c_str(), &st) == 0)
      e.used_ns = int64_t(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
    std::string why;
    if (auto text = read_trusted(meta_path, why)) {
      const json meta = json::parse(*text, nullptr, false);
      if (meta.is_object()) {
        e.kernel = meta.value("kernel", "");
        e.target = meta.value("target", "");
      }
    }
    out.push_back(std::move(e));
  }
  std::sort(out.begin(), out.end(), [](const Entry &a, const Entry &b) {
    return a.used_ns != b.used_ns ? a.used_ns < b.used_ns : a.name < b.name;
  });
  return out;
}

void DiskCache::sweep() {
  // What crashed writers left: folders moved aside but not deleted, and
  // temporary files never renamed (an hour old: no writer is that slow).
  const auto stale = fs::file_time_type::clock::now() - std::chrono::hours(1);
  std::error_code ec;
  for (const auto &d : fs::directory_iterator(dir_, ec)) {
    const std::string name = d.path().filename().string();
    if (name.rfind(".trash.", 0) == 0) {
      fs::remove_all(d.path(), ec);
      continue;
    }
    if (name.empty() || name[0] == '.' || name == "locks" || !d.is_directory(ec))
      continue;
    for (const auto &f : fs::directory_iterator(d.path(), ec))
      if (f.path().filename().string().rfind(".tmp.", 0) == 0 && f.last_write_time(ec) < stale)
        fs::remove(f.path(), ec);
  }
}

size_t DiskCache::prune(uint64_t max_bytes) {
  sweep();
  std::vector<Entry> all = entries();
  uint64_t total = 0;
  for (const Entry &e : all)
    total += e.bytes;
  size_t removed = 0;
  for (const Entry &e : all) {
    if (total <= max_bytes)
      break;
    // An entry a process is writing or waiting on stays.
    const std::string lock_path = dir_ + "/locks/" + e.name;
    Fd f(::open(lock_path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (f.fd < 0 || ::flock(f.fd, LOCK_EX | LOCK_NB) != 0)
      continue;
    discard(dir_ + "/" + e.name, "pruned");
    total -= e.bytes;
    ++removed;
  }
  return removed;
}

size_t DiskCache::clear() {
  size_t removed = 0;
  for (const Entry &e : entries()) {
    discard(dir_ + "/" + e.name, "cleared");
    ++removed;
  }
  return removed;
}

} // namespace kiln::runtime
