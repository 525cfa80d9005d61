// The disk cache (DESIGN.md section 5, issue 12): entries round-trip
// exactly; a truncated, bit-flipped, wrongly-owned or others-writable entry
// is a miss and is removed; a folder of another user is refused; pruning
// keeps the most recently used. Then whole processes (tests/cache_child.cpp)
// sharing one folder: a second process hits the disk, four processes
// started together compile once, and a damaged entry is recompiled with
// the right result.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/error.hpp"
#include "runtime/background_writer.hpp"
#include "runtime/disk_cache.hpp"
#include "tests/cache_child.hpp"

namespace fs = std::filesystem;
using kiln::runtime::CachedKernel;
using kiln::runtime::DiskCache;
using kiln::testing::child_command;
using kiln::testing::child_results;
using kiln::testing::ChildResult;
using kiln::testing::shell_output;
using kiln::testing::TempDir;

namespace {

const std::string kKey = std::string(64, 'a');

CachedKernel sample(const std::string &name = "add_kernel", size_t binary_bytes = 64) {
  CachedKernel c;
  kiln::CompiledKernel &k = c.kernel;
  k.name = name;
  k.target = "cpu:x86_64";
  k.binary_kind = "obj";
  for (size_t i = 0; i < binary_bytes; ++i)
    k.binary.push_back(static_cast<uint8_t>(i * 7));
  k.stages = {{"ir", "tile ir"}, {"llir", "define void @k()"}};
  k.entry = name;
  k.params = {{"x_ptr", kiln::DType::f32, true}, {"n", kiln::DType::i32, false}};
  k.specialization = "(x_ptr: *fp32:D, n: i32)";
  k.options.num_stages = 257;
  k.options.debug = true;
  k.scratch_bytes = 1 << 22; // a CPU kernel with blocks off its stack
  k.times = {{"ir", 1.5}};
  c.globals.push_back({"m.py", "SCALE", kiln::frontend::ConstValue::of_float(0.1)});
  return c;
}

std::string key_of(int i) {
  std::string k = kKey;
  k[0] = "0123456789"[i % 10];
  return k;
}

std::string binary_path(const DiskCache &c, const std::string &key) {
  return c.dir() + "/" + DiskCache::entry_name(key) + "/kernel.obj";
}

bool entry_exists(const DiskCache &c, const std::string &key) {
  return fs::exists(c.dir() + "/" + DiskCache::entry_name(key));
}

} // namespace

TEST_CASE("disk cache: entry names are base32 of the key's SHA-256") {
  const std::string n = DiskCache::entry_name(kKey);
  CHECK(n.size() == 52);
  CHECK(n.find_first_not_of("abcdefghijklmnopqrstuvwxyz234567") == std::string::npos);
  CHECK(DiskCache::entry_name(kKey) == n);
  CHECK(DiskCache::entry_name(key_of(1)) != n);
  // A hex key is decoded, not hashed again: 0xaa repeated is 1010... in base32.
  std::string vk;
  for (int i = 0; i < 51; ++i)
    vk += i % 2 ? 'k' : 'v';
  CHECK(n == vk + "a");
  // Either case of hex names one entry; what is not hex is hashed first.
  CHECK(DiskCache::entry_name(std::string(64, 'A')) == n);
  std::string not_hex = kKey;
  not_hex[63] = 'g';
  const std::string h = DiskCache::entry_name(not_hex);
  CHECK(h.size() == 52);
  CHECK(h != n);
  CHECK(DiskCache::entry_name("short") == DiskCache::entry_name("short"));
  CHECK(DiskCache::entry_name("short").size() == 52);
}

TEST_CASE("disk cache: an entry round-trips exactly, with private permissions") {
  const TempDir t;
  DiskCache c(t.path + "/cache", 0);
  CHECK_FALSE(c.get(kKey));
  const CachedKernel in = sample();
  c.put(kKey, in);
  const std::optional<CachedKernel> out = c.get(kKey);
  REQUIRE(out);
  const kiln::CompiledKernel &k = out->kernel;
  CHECK(k.binary == in.kernel.binary);
  CHECK(k.name == "add_kernel");
  CHECK(k.key == kKey);
  CHECK(k.options == in.kernel.options);
  CHECK(k.specialization == in.kernel.specialization);
  CHECK(k.scratch_bytes == in.kernel.scratch_bytes);
  REQUIRE(k.params.size() == 2);
  CHECK(k.params[0].is_pointer);
  CHECK(k.params[1].dtype == kiln::DType::i32);
  REQUIRE(out->globals.size() == 1);
  CHECK(out->globals[0].value == in.globals[0].value); // 0.1 exactly
  CHECK(out->globals[0].module_path == "m.py");
  struct stat st {};
  REQUIRE(::stat(c.dir().c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  REQUIRE(::stat(binary_path(c, kKey).c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  CHECK(fs::exists(c.dir() + "/" + DiskCache::entry_name(kKey) + "/stage.llir"));
  // No temporary file is left behind.
  for (const auto &f : fs::directory_iterator(c.dir() + "/" + DiskCache::entry_name(kKey)))
    CHECK(f.path().filename().string().rfind(".tmp", 0) != 0);
}

TEST_CASE("disk cache: put_later returns before the entry is written, holds the key's lock until "
          "it is, and flush() waits for it") {
  const TempDir t;
  kiln::runtime::BackgroundWriter writer;
  DiskCache c(t.path, 0, false, &writer);
  // A write ahead of ours that does not end until the test says so: the
  // state a launch sees while the disk is busy with fsyncs.
  std::promise<void> go;
  std::shared_future<void> released = go.get_future().share();
  writer.post([released] { released.wait(); });
  std::unique_ptr<kiln::runtime::KeyLock> lock = c.lock(kKey);
  REQUIRE(lock);
  c.put_later(kKey, sample(), std::move(lock));
  CHECK_FALSE(entry_exists(c, kKey)); // returned without writing
  // Another process asking for the key waits on its lock meanwhile (a
  // second open file description conflicts with the writer's flock).
  const std::string lock_path = c.dir() + "/locks/" + DiskCache::entry_name(kKey);
  const int fd = ::open(lock_path.c_str(), O_RDWR);
  REQUIRE(fd >= 0);
  CHECK(::flock(fd, LOCK_EX | LOCK_NB) != 0);
  go.set_value();
  c.flush();
  const std::optional<CachedKernel> out = c.get(kKey);
  REQUIRE(out);
  CHECK(out->kernel.binary == sample().kernel.binary);
  CHECK(::flock(fd, LOCK_EX | LOCK_NB) == 0); // let go once published
  ::close(fd);
  // The key is this process's to lock again.
  CHECK(c.lock(kKey));
}

TEST_CASE("disk cache: entries queued by put_later are written before the cache is destroyed") {
  const TempDir t;
  {
    DiskCache c(t.path, 0); // its own writer thread
    std::promise<void> go;
    std::shared_future<void> released = go.get_future().share();
    c.writer().post([released] { released.wait(); });
    for (int i = 0; i < 5; ++i)
      c.put_later(key_of(i), sample(), nullptr);
    CHECK(c.writer().pending() == 6);
    go.set_value();
  }
  DiskCache again(t.path, 0);
  for (int i = 0; i < 5; ++i) {
    CAPTURE(i);
    const std::optional<CachedKernel> out = again.get(key_of(i));
    REQUIRE(out);
    CHECK(out->kernel.binary == sample().kernel.binary);
  }
  // No temporary file is left behind.
  for (const auto &d : fs::recursive_directory_iterator(t.path))
    CHECK(d.path().filename().string().rfind(".tmp", 0) != 0);
}

namespace {

/// Replaces the first `from` in the file at `path` by `to`; the text must hold it.
void rewrite(const std::string &path, const std::string &from, const std::string &to) {
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  std::string s = text.str();
  const size_t at = s.find(from);
  REQUIRE(at != std::string::npos);
  s.replace(at, from.size(), to);
  std::ofstream(path, std::ios::trunc) << s;
}

} // namespace

TEST_CASE("disk cache: a damaged entry is a miss and is removed") {
  const TempDir t;
  DiskCache c(t.path, 0);
  struct Damage {
    const char *what;
    void (*apply)(const std::string &binary, const std::string &meta);
  };
  const Damage damages[] = {
      {"truncated binary",
       [](const std::string &b, const std::string &) { fs::resize_file(b, 10); }},
      {"bit-flipped binary",
       [](const std::string &b, const std::string &) {
         std::fstream f(b, std::ios::in | std::ios::out | std::ios::binary);
         f.seekg(5);
         char ch = 0;
         f.read(&ch, 1);
         ch ^= 0x10;
         f.seekp(5);
         f.write(&ch, 1);
       }},
      {"truncated metadata",
       [](const std::string &, const std::string &m) { fs::resize_file(m, 20); }},
      {"missing binary", [](const std::string &b, const std::string &) { fs::remove(b); }},
      {"metadata with a field of another type",
       [](const std::string &, const std::string &m) {
         rewrite(m, "\"num_warps\": 4", "\"num_warps\": \"4\"");
       }},
      {"metadata with an integer out of its range",
       [](const std::string &, const std::string &m) {
         rewrite(m, "\"shared_bytes\": 0", "\"shared_bytes\": -1");
       }},
      {"metadata with invalid UTF-8",
       [](const std::string &, const std::string &m) {
         rewrite(m, "\"kernel\": \"", "\"kernel\": \"\xff");
       }},
      {"metadata followed by garbage",
       [](const std::string &, const std::string &m) { std::ofstream(m, std::ios::app) << "}x"; }},
      {"metadata nested 100000 deep",
       [](const std::string &, const std::string &m) {
         std::ofstream(m) << std::string(100000, '[');
       }},
      {"binary writable by others",
       [](const std::string &b, const std::string &) { ::chmod(b.c_str(), 0666); }},
  };
  for (const Damage &d : damages) {
    CAPTURE(d.what);
    c.put(kKey, sample());
    REQUIRE(c.get(kKey));
    const std::string meta = c.dir() + "/" + DiskCache::entry_name(kKey) + "/meta.json";
    d.apply(binary_path(c, kKey), meta);
    CHECK_FALSE(c.get(kKey));
    CHECK_FALSE(entry_exists(c, kKey));
    c.put(kKey, sample()); // and a new entry can take its place
    CHECK(c.get(kKey));
  }
}

TEST_CASE("disk cache: under KILN_KEEP_STAGES a hit reads the stage files, checked against their "
          "hashes") {
  const TempDir t;
  DiskCache plain(t.path, 0), keeping(t.path, 0, /*keep_stages=*/true);
  CachedKernel in = sample();
  in.kernel.stages["cubin_log"] = "ptxas info: 32 registers";
  plain.put(kKey, in);
  const auto kept = keeping.get(kKey);
  REQUIRE(kept);
  CHECK(kept->kernel.stages == in.kernel.stages);
  // Without the knob only the assembler's log, which launches report.
  const auto lean = plain.get(kKey);
  REQUIRE(lean);
  CHECK(lean->kernel.stages ==
        std::map<std::string, std::string>{{"cubin_log", "ptxas info: 32 registers"}});
  // A stage file that does not match its hash is damage: the entry goes.
  std::ofstream(t.path + "/" + DiskCache::entry_name(kKey) + "/stage.llir", std::ios::app)
      << " ; edited";
  CHECK_FALSE(keeping.get(kKey));
  CHECK_FALSE(entry_exists(keeping, kKey));
}

TEST_CASE("disk cache: an entry owned by another user is a miss, a cache folder of another user is "
          "refused") {
  if (::geteuid() != 0) {
    MESSAGE("[SKIP] changing a file's owner needs root");
    return;
  }
  const TempDir t;
  DiskCache c(t.path + "/mine", 0);
  c.put(kKey, sample());
  REQUIRE(::chown(binary_path(c, kKey).c_str(), 65534, 65534) == 0);
  CHECK_FALSE(c.get(kKey));
  CHECK_FALSE(entry_exists(c, kKey));

  const std::string theirs = t.path + "/theirs";
  fs::create_directory(theirs);
  REQUIRE(::chown(theirs.c_str(), 65534, 65534) == 0);
  try {
    DiskCache refused(theirs, 0);
    FAIL("a cache folder of another user must be refused");
  } catch (const kiln::RuntimeError &e) {
    const std::string what = e.what();
    CAPTURE(what);
    CHECK(what.find("another user") != std::string::npos);
    CHECK(what.find("KILN_CACHE_DIR") != std::string::npos);
  }
}

TEST_CASE("disk cache: pruning removes the least recently used first") {
  const TempDir t;
  DiskCache c(t.path, 0);
  for (int i = 0; i < 3; ++i) {
    c.put(key_of(i), sample("k" + std::to_string(i), 1000));
    // Distinct use times, oldest first, whatever the clock's granularity.
    const std::string meta = c.dir() + "/" + DiskCache::entry_name(key_of(i)) + "/meta.json";
    const timespec times[2] = {{1000 + i, 0}, {1000 + i, 0}};
    REQUIRE(::utimensat(AT_FDCWD, meta.c_str(), times, 0) == 0);
  }
  CHECK(c.get(key_of(0))); // entry 0 is now the most recently used
  const std::vector<DiskCache::Entry> all = c.entries();
  REQUIRE(all.size() == 3);
  CHECK(all.front().kernel == "k1");
  CHECK(all.back().kernel == "k0");
  CHECK(c.prune(all[1].bytes + all[2].bytes) == 1);
  CHECK(entry_exists(c, key_of(0)));
  CHECK_FALSE(entry_exists(c, key_of(1)));
  CHECK(entry_exists(c, key_of(2)));
  CHECK(c.clear() == 2);
  CHECK(c.entries().empty());
}

TEST_CASE("disk cache: a hit records its use only when the last is a minute old or more") {
  // The touch is a syscall on every hit; pruning needs no finer order.
  const TempDir t;
  DiskCache c(t.path, 0);
  c.put(key_of(0), sample());
  const std::string meta = c.dir() + "/" + DiskCache::entry_name(key_of(0)) + "/meta.json";
  auto mtime = [&] {
    struct stat st {};
    REQUIRE(::stat(meta.c_str(), &st) == 0);
    return st.st_mtim;
  };
  timespec now{};
  REQUIRE(::clock_gettime(CLOCK_REALTIME, &now) == 0);
  const timespec recent[2] = {{now.tv_sec - 10, 0}, {now.tv_sec - 10, 0}};
  REQUIRE(::utimensat(AT_FDCWD, meta.c_str(), recent, 0) == 0);
  CHECK(c.get(key_of(0)));
  CHECK(mtime().tv_sec == now.tv_sec - 10);
  const timespec old[2] = {{now.tv_sec - 61, 0}, {now.tv_sec - 61, 0}};
  REQUIRE(::utimensat(AT_FDCWD, meta.c_str(), old, 0) == 0);
  CHECK(c.get(key_of(0)));
  CHECK(mtime().tv_sec >= now.tv_sec);
}

TEST_CASE("disk cache: a size limit prunes on every store") {
  const TempDir t;
  DiskCache c(t.path, 1); // smaller than any entry: only the newest survives a store
  c.put(key_of(0), sample());
  c.put(key_of(1), sample());
  CHECK(c.entries().size() <= 1);
}

// ---- whole processes ----

namespace {

/// Runs `count` cache_child processes at once on cache folder `dir`.
std::vector<ChildResult> run_children(const std::string &dir, int count) {
  const std::string out =
      shell_output("for i in $(seq " + std::to_string(count) + "); do " +
                   child_command("KILN_NO_CACHE=0 KILN_CACHE_DIR='" + dir + "'") + " & done; wait");
  CAPTURE(out);
  std::vector<ChildResult> results = child_results(out);
  REQUIRE(results.size() == static_cast<size_t>(count));
  return results;
}

std::string only_entry_binary(const std::string &dir) {
  for (const auto &d : fs::directory_iterator(dir))
    if (d.is_directory() && d.path().filename() != "locks")
      return (d.path() / "kernel.obj").string();
  FAIL("no cache entry in " << dir);
  return "";
}

} // namespace

TEST_CASE("disk cache: a second process hits the disk") {
  const TempDir t;
  const ChildResult first = run_children(t.path, 1)[0];
  CHECK(first.source == "compiled");
  CHECK(first.correct);
  const ChildResult second = run_children(t.path, 1)[0];
  CHECK(second.source == "disk");
  CHECK(second.correct);
}

TEST_CASE("disk cache: four processes started together on one key compile it once") {
  const TempDir t;
  int compiled = 0;
  for (const ChildResult &r : run_children(t.path, 4)) {
    CHECK(r.correct);
    CHECK((r.source == "compiled" || r.source == "disk"));
    compiled += r.source == "compiled";
  }
  CHECK(compiled == 1);
}

TEST_CASE("disk cache: a truncated, bit-flipped or wrongly-owned binary is recompiled, with the "
          "right result") {
  const TempDir t;
  REQUIRE(run_children(t.path, 1)[0].source == "compiled");
  const std::string cases[] = {"truncated", "bit-flipped", "wrongly-owned"};
  for (const std::string &what : cases) {
    CAPTURE(what);
    const std::string binary = only_entry_binary(t.path);
    if (what == "truncated") {
      fs::resize_file(binary, fs::file_size(binary) / 2);
    } else if (what == "bit-flipped") {
      std::fstream f(binary, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(static_cast<std::streamoff>(fs::file_size(binary) / 2));
      f.put('\x5a');
    } else if (::geteuid() == 0) {
      REQUIRE(::chown(binary.c_str(), 65534, 65534) == 0);
    } else {
      ::chmod(binary.c_str(), 0666); // without root: writable by others is as untrusted
    }
    const ChildResult r = run_children(t.path, 1)[0];
    CHECK(r.source == "compiled");
    CHECK(r.correct);
    CHECK(run_children(t.path, 1)[0].source == "disk"); // and stored again
  }
}
