// Tuning results persist (issue 15): the config the autotuner chose is
// stored per kernel source, configs, key and device, and another process
// launches it without benchmarking. The store's own rules (atomic files,
// mismatched or corrupt records ignored) are checked directly.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <sstream>
#include <string>

#include "runtime/background_writer.hpp"
#include "runtime/tuning_cache.hpp"
#include "tests/redis_server.hpp"
#include "tests/shell.hpp"
#include "tests/temp_dir.hpp"
#include "tests/text_checks.hpp"

namespace fs = std::filesystem;
using kiln::runtime::TuningCache;
using kiln::runtime::TuningRecord;

using kiln::test::contains;

namespace {

using kiln::test::TempDir;

/// stdout and stderr of a shell command, which must exit 0.
std::string shell_ok(const std::string &cmd) {
  const kiln::test::Child c = kiln::test::shell(cmd, 120);
  CAPTURE(c.output);
  REQUIRE(c.status == 0);
  return c.output;
}

} // namespace

TEST_CASE("tuning cache: a stored choice is read back only for the configs it was made for") {
  const TempDir dir;
  const TuningCache cache(dir.path.string());
  const std::vector<std::string> configs = {"BLOCK=16, num_warps=1", "BLOCK=32, num_warps=2"};
  const std::string id = TuningCache::id("kernel source + configs + key + device");
  CHECK(id.size() == 64);
  CHECK(!cache.get(id, configs));
  cache.put(id, "fill", TuningRecord{1, configs[1], "n=100", {0.5, 0.25}});
  REQUIRE(cache.get(id, configs));
  CHECK(cache.get(id, configs)->config == 1u);
  // The config list changed under the same id (it should not, the id hashes
  // it): the record names another config, so it is not trusted.
  CHECK(!cache.get(id, {"BLOCK=16, num_warps=1", "BLOCK=64, num_warps=2"}));
  CHECK(!cache.get(id, {"BLOCK=16, num_warps=1"})); // index out of range
  // A corrupt or truncated file is a miss, not an error.
  for (const char *bad :
       {"", "{", "[]", "{\"config\": -1, \"config_text\": \"x\"}", "{\"config\": 1}"}) {
    CAPTURE(bad);
    std::ofstream(dir.path / "tuning" / (id + ".json"), std::ios::trunc) << bad;
    CHECK(!cache.get(id, configs));
  }
  // Without a cache folder (KILN_NO_CACHE) nothing is stored or found.
  const TuningCache none("");
  none.put(id, "fill", TuningRecord{0, configs[0], "", {}});
  CHECK(!none.get(id, configs));
}

namespace {

/// What `f` writes on std::cerr.
template <class F> std::string cerr_of(F f) {
  std::ostringstream captured;
  std::streambuf *old = std::cerr.rdbuf(captured.rdbuf());
  try {
    f();
  } catch (...) {
    std::cerr.rdbuf(old);
    throw;
  }
  std::cerr.rdbuf(old);
  return captured.str();
}

} // namespace

TEST_CASE("tuning cache: records are written atomically and privately (0700 folder, 0600 file, "
          "no temporary left)") {
  const TempDir dir;
  const TuningCache cache(dir.path.string());
  const std::vector<std::string> configs = {"BLOCK=16", "BLOCK=32"};
  const std::string id = TuningCache::id("atomic");
  cache.put(id, "fill", TuningRecord{0, configs[0], "n=1", {1.0, 2.0}});
  struct stat st {};
  REQUIRE(::stat((dir.path / "tuning").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  REQUIRE(::stat((dir.path / "tuning" / (id + ".json")).c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  // Replaced in place by a later store, never left half written.
  cache.put(id, "fill", TuningRecord{1, configs[1], "n=1", {2.0, 1.0}});
  REQUIRE(cache.get(id, configs));
  CHECK(cache.get(id, configs)->config == 1u);
  for (const auto &f : fs::directory_iterator(dir.path / "tuning"))
    CHECK(f.path().filename().string().rfind(".tmp", 0) != 0);
}

TEST_CASE(
    "tuning cache: a corrupt, foreign or unreadable record is ignored with one clear warning") {
  const TempDir dir;
  const TuningCache cache(dir.path.string());
  const std::vector<std::string> configs = {"BLOCK=16", "BLOCK=32"};
  struct Bad {
    const char *text;
    const char *why;
  };
  int n = 0;
  for (const Bad &b : {Bad{"{\"config\": 1, \"conf", "not JSON (truncated or corrupt)"},
                       Bad{"[1, 2]", "no config index and text"},
                       Bad{"{\"config\": 5, \"config_text\": \"BLOCK=16\"}",
                           "names a config the kernel does not have"}}) {
    CAPTURE(b.text);
    const std::string id = TuningCache::id("corrupt " + std::to_string(n++));
    fs::create_directories(dir.path / "tuning");
    const fs::path file = dir.path / "tuning" / (id + ".json");
    std::ofstream(file, std::ios::trunc) << b.text;
    std::string err = cerr_of([&] { CHECK(!cache.get(id, configs)); });
    CHECK(contains(err, "kiln: warning: ignoring the tuning record " + file.string()));
    CHECK(contains(err, b.why));
    CHECK(contains(err, "tuned again"));
    // Once per file: a launch asking again is quiet.
    err = cerr_of([&] { CHECK(!cache.get(id, configs)); });
    CHECK(err.empty());
    // Tuning again replaces it with a good record.
    cache.put(id, "fill", TuningRecord{1, configs[1], "", {}});
    REQUIRE(cache.get(id, configs));
    CHECK(cache.get(id, configs)->config == 1u);
  }
  // Writable by others: not trusted, whatever it says.
  const std::string id = TuningCache::id("foreign");
  cache.put(id, "fill", TuningRecord{1, configs[1], "", {}});
  const fs::path file = dir.path / "tuning" / (id + ".json");
  ::chmod(file.c_str(), 0666);
  const std::string err = cerr_of([&] { CHECK(!cache.get(id, configs)); });
  CHECK(contains(err, "ignoring the tuning record " + file.string()));
  CHECK(contains(err, "writable only by it"));
  // A record that is simply not there is a quiet miss.
  CHECK(cerr_of([&] { CHECK(!cache.get(TuningCache::id("absent"), configs)); }).empty());
}

TEST_CASE("tuning cache: with a background writer, put() returns before the record is written, "
          "flush() writes it") {
  const TempDir dir;
  kiln::runtime::BackgroundWriter writer;
  const TuningCache cache(dir.path.string(), {}, &writer);
  const std::vector<std::string> configs = {"BLOCK=16", "BLOCK=32"};
  const std::string id = TuningCache::id("later");
  std::promise<void> go;
  std::shared_future<void> released = go.get_future().share();
  writer.post([released] { released.wait(); }); // the writer is busy
  cache.put(id, "fill", TuningRecord{1, configs[1], "", {}});
  CHECK(!fs::exists(dir.path / "tuning" / (id + ".json")));
  go.set_value();
  writer.flush();
  REQUIRE(cache.get(id, configs));
  CHECK(cache.get(id, configs)->config == 1u);
}

TEST_CASE("tuning cache: kiln tune stores the choice, a second process launches it without "
          "benchmarking") {
  const TempDir dir;
  const std::string file = (dir.path / "tuned.py").string();
  std::ofstream(file)
      << "import triton\n"
         "import triton.language as tl\n\n\n"
         "@triton.autotune(configs=[triton.Config({'BLOCK': b}, num_warps=w) for b in (16, 32)\n"
         "                          for w in (1, 2)], key=['n'], warmup=1, rep=2)\n"
         "@triton.jit\n"
         "def fill(out_ptr, n, BLOCK: tl.constexpr):\n"
         "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
         "    tl.store(out_ptr + offs, offs * 2, mask=offs < n)\n";
  const std::string env =
      "env -u KILN_NO_CACHE KILN_CACHE_DIR='" + (dir.path / "cache").string() + "' ";
  const std::string words =
      " '" + file + "' fill --grid 8 out_ptr=zeros:100:i32 n=100 --backend cpu";
  const std::string first =
      shell_ok(env + "'" KILN_BIN "' tune" + words); // tune prints without the knob
  const std::string run = env + "KILN_PRINT_AUTOTUNING=1 '" KILN_BIN "' run" + words;
  CAPTURE(first);
  CHECK(contains(first, "kiln autotune: fill [n=100] tuned 4 configs"));
  const std::string chosen = first.substr(
      first.find("best: ") + 6, first.find(" (", first.find("best: ")) - first.find("best: ") - 6);
  const std::string second = shell_ok(run);
  CAPTURE(second);
  CHECK(contains(second, "kiln autotune: fill [n=100] from the tuning cache: " + chosen));
  CHECK(!contains(second, "tuned 4 configs"));
  CHECK(contains(second, "binary  disk cache hit"));
}

TEST_CASE("tuning cache: kiln tune of a kernel without autotune configs is a usage error") {
  const std::string out = [] {
    std::string o;
    FILE *pipe = popen(
        "'" KILN_BIN "' tune '" KILN_SHARED_DIR "/kernels/vector_add.py' add_kernel --grid 1 "
        "x_ptr=zeros:8:f32 y_ptr=zeros:8:f32 out_ptr=zeros:8:f32 n=8 BLOCK=8 --backend cpu 2>&1; "
        "echo status=$?",
        "r");
    REQUIRE(pipe);
    char buf[4096];
    while (size_t n = fread(buf, 1, sizeof buf, pipe))
      o.append(buf, n);
    pclose(pipe);
    return o;
  }();
  CAPTURE(out);
  CHECK(contains(out, "status=2"));
  CHECK(contains(out, "add_kernel has no @triton.autotune configs to tune"));
}

namespace {

/// A 4-config kernel file in `dir`, and the words that launch it.
struct TunedFile {
  std::string file, words;
  explicit TunedFile(const fs::path &dir, const std::string &extra = "") {
    file = (dir / "tuned.py").string();
    std::ofstream(file)
        << "import triton\n"
           "import triton.language as tl\n\n\n"
           "@triton.autotune(configs=[triton.Config({'BLOCK': b}, num_warps=w) for b in (16, 32)\n"
           "                          for w in (1, 2)], key=['n'], warmup=1, rep=2"
        << extra
        << ")\n"
           "@triton.jit\n"
           "def fill(out_ptr, n, BLOCK: tl.constexpr):\n"
           "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
           "    tl.store(out_ptr + offs, offs * 2, mask=offs < n)\n";
    words = " '" + file + "' fill --grid 8 out_ptr=zeros:100:i32 n=100 --backend cpu";
  }
};

std::string cache_env(const fs::path &dir) {
  return "env -u KILN_NO_CACHE KILN_CACHE_DIR='" + dir.string() + "' ";
}

size_t count(const std::string &s, const std::string &part) {
  size_t n = 0;
  for (size_t pos = 0; (pos = s.find(part, pos)) != std::string::npos; pos += part.size())
    ++n;
  return n;
}

} // namespace

TEST_CASE("tuning cache: through Redis, a second machine's cache folder gets the choice (then "
          "from its disk), another HMAC key tunes again") {
  const kiln::testing::RedisServer server;
  if (!server.running()) {
    MESSAGE("[SKIP] redis-server is not installed");
    return;
  }
  const TempDir dir;
  const TunedFile f(dir.path);
  const std::string redis = "KILN_REDIS_URL=" + server.url() + " KILN_CACHE_HMAC_KEY=fleet ";
  const std::string first =
      shell_ok(cache_env(dir.path / "a") + redis + "'" KILN_BIN "' tune" + f.words);
  CAPTURE(first);
  REQUIRE(contains(first, "tuned 4 configs"));
  const std::string run = "KILN_PRINT_AUTOTUNING=1 '" KILN_BIN "' run" + f.words;
  const std::string second = shell_ok(cache_env(dir.path / "b") + redis + run);
  CAPTURE(second);
  CHECK(contains(second, "[n=100] from the remote tuning cache: "));
  CHECK(!contains(second, "tuned 4 configs"));
  const std::string third = shell_ok(cache_env(dir.path / "b") + redis + run);
  CAPTURE(third);
  CHECK(contains(third, "[n=100] from the tuning cache: "));
  const std::string wrong = shell_ok(cache_env(dir.path / "c") + "KILN_REDIS_URL=" + server.url() +
                                     " KILN_CACHE_HMAC_KEY=other " + run);
  CAPTURE(wrong);
  CHECK(contains(wrong, "tuned 4 configs"));
}

TEST_CASE("tuning cache: with Redis down, kiln tune still tunes and stores, with one warning") {
  const TempDir dir;
  const TunedFile f(dir.path);
  const std::string out =
      shell_ok(cache_env(dir.path / "cache") + "KILN_REDIS_URL=redis://127.0.0.1:" +
               std::to_string(kiln::testing::free_port()) + " '" KILN_BIN "' tune" + f.words);
  CAPTURE(out);
  CHECK(contains(out, "tuned 4 configs"));
  CHECK(count(out, "kiln: warning") == 1);
  CHECK(fs::exists(dir.path / "cache" / "tuning"));
}

TEST_CASE("tuning cache: kiln warmup compiles the stored choice of a tuned kernel, every config "
          "without one") {
  const TempDir dir;
  const TunedFile f(dir.path);
  const std::string lines = (dir.path / "warm.jsonl").string();
  std::ofstream(lines)
      << R"({"file": "tuned.py", "kernel": "fill", "args": {"out_ptr": "*i32:D", "n": 100}})"
      << "\n";
  const std::string warm =
      "KILN_PRINT_AUTOTUNING=1 '" KILN_BIN "' warmup '" + lines + "' --backend cpu --json";
  // Nothing stored: every config, as Triton's warmup.
  const std::string cold = shell_ok(cache_env(dir.path / "cold") + warm);
  CAPTURE(cold);
  CHECK(contains(cold, "\"compiled\":4"));
  // After kiln tune: the chosen config only.
  const std::string tuned =
      shell_ok(cache_env(dir.path / "cache") + "'" KILN_BIN "' tune" + f.words);
  const std::string chosen = tuned.substr(
      tuned.find("best: ") + 6, tuned.find(" (", tuned.find("best: ")) - tuned.find("best: ") - 6);
  const std::string hot = shell_ok(cache_env(dir.path / "cache") + warm);
  CAPTURE(hot);
  CHECK(contains(hot, "fill [n=100] from the tuning cache: " + chosen));
  CHECK(contains(hot, "\"compiled\":1"));
}

TEST_CASE("tuning cache: a file's Python pre_hook and prune_configs_by are noted and ignored, and "
          "the kernel tunes") {
  const TempDir dir;
  const TunedFile f(dir.path,
                    ", pre_hook=lambda args: None, prune_configs_by={'perf_model': None}");
  const std::string out = shell_ok(cache_env(dir.path / "cache") + "'" KILN_BIN "' tune" + f.words);
  CAPTURE(out);
  CHECK(contains(
      out, "note: the decorator's Python callables (pre_hook, prune_configs_by) are ignored"));
  CHECK(contains(out, "tuned 4 configs"));
}
