// Issue 17: no input kills the host process. Every input here once ended the
// process with a signal, so each runs in a child (the kiln binary), and the
// suite survives a regression to report it.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <kiln/kiln.hpp>

#include "async/job.hpp"
#include "compiler/target.hpp"
#include "runtime/jit_function.hpp"
#include "tests/shell.hpp"
#include "tests/text_checks.hpp"

using kiln::test::contains;

namespace {

using kiln::test::Child;
using kiln::test::shell;

/// Runs `kiln ARGS` (a shell word list) in a child process.
Child run_kiln(const std::string &args) {
  return shell("'" KILN_BIN "' " + args);
}

/// Runs the test case `name` of this binary in a child process, with
/// KILN_RELIABILITY_CHILD set so that its body runs (see in_child()).
/// `env` adds VAR=VALUE words to the child's environment.
Child child_case(const std::string &name, const std::string &env = "") {
  return shell("env KILN_RELIABILITY_CHILD=1 " + env + " /proc/" + std::to_string(::getpid()) +
               "/exe -tc='" + name + "'");
}

/// Runs child_case(name, env) and checks that it exits 0 printing `expected`.
void check_child(const std::string &name, const std::string &expected,
                 const std::string &env = "") {
  const Child c = child_case(name, env);
  INFO(c.output);
  CHECK(c.status == 0);
  CHECK(c.output.find(expected) != std::string::npos);
}

/// Whether this process is a child_case(): test cases named "child: ..."
/// do their dangerous part only there.
bool in_child() {
  return std::getenv("KILN_RELIABILITY_CHILD") != nullptr;
}

/// A kernel file (or any text) in a fresh temporary file; its path.
std::string write_temp(const std::string &name, const std::string &text) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("kiln-reliability-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  std::ofstream(path) << text;
  return path.string();
}

const std::string kShared = KILN_SHARED_DIR;

} // namespace

TEST_CASE(
    "issue 17.1: a 2^20-element softmax row runs on several programs (blocks off the stack)") {
  const Child c =
      run_kiln("run " + kShared +
               "/kernels/softmax.py softmax_kernel --grid 4 out_ptr=zeros:4x1048576:f32 "
               "in_ptr=zeros:4x1048576:f32 in_stride=1048576 out_stride=1048576 n_cols=1048576 "
               "BLOCK=1048576 --json");
  INFO(c.output);
  CHECK(c.status == 0);
}

TEST_CASE("issue 17.1: a 1024x1024 block runs, on one program and on several") {
  // The kernel of the text test that checks where its buffers live.
  const std::string file = KILN_SOURCE_DIR "/tests/lit/big_blocks.py";
  const std::string out = write_temp("out.npy", "");
  for (const char *grid : {"1", "3"}) {
    CAPTURE(grid);
    const Child c = run_kiln(
        "run " + file + " add_row_sums --grid " + grid +
        " x_ptr=zeros:3x1024x1024:f32 out_ptr=zeros:3x1024x1024:f32 R=1024 C=1024 --out out_ptr=" +
        out);
    INFO(c.output);
    REQUIRE(c.status == 0);
    // Every element of the programs that ran is 0 + 1 + 0.
    std::ifstream in(out, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    REQUIRE(bytes.size() > 3u * 1024 * 1024 * 4);
    const char *data = bytes.data() + bytes.size() - 3u * 1024 * 1024 * 4;
    const size_t ran = std::stoul(grid) * 1024 * 1024;
    float first = 0, last = 0;
    std::memcpy(&first, data, 4);
    std::memcpy(&last, data + (ran - 1) * 4, 4);
    CHECK(first == 1.0f);
    CHECK(last == 1.0f);
  }
}

namespace {

const char *kHeader = "import triton\nimport triton.language as tl\n\n\n";

/// A kernel whose body adds `terms` ones to a block, in one expression.
std::string long_sum_kernel(int terms) {
  std::string sum = "offs";
  for (int i = 0; i < terms; ++i)
    sum += " + 1";
  return std::string(kHeader) +
         "@triton.jit\ndef k(x_ptr, BLOCK: tl.constexpr):\n    offs = tl.arange(0, BLOCK)\n" +
         "    tl.store(x_ptr + offs, " + sum + ")\n";
}

/// Three nested tl.static_range(N) loops accumulating into a block.
std::string nested_static_kernel() {
  return std::string(kHeader) + R"(@triton.jit
def k(x_ptr, N: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.int32)
    for i in tl.static_range(N):
        for j in tl.static_range(N):
            for l in tl.static_range(N):
                acc += i + j + l
    tl.store(x_ptr + offs, acc)
)";
}

} // namespace

TEST_CASE("issue 17.2: a 20,000-term expression is a clear compile error, not a stack overflow") {
  const std::string file = write_temp("long_sum.py", long_sum_kernel(20000));
  const Child c = run_kiln("compile " + file + " k 'x_ptr=*i32' BLOCK=16");
  CHECK(c.status == 1);
  CHECK(contains(c.output, "nested too deeply"));
  // Just under the limit compiles, and runs right.
  const std::string ok = write_temp("long_sum_ok.py", long_sum_kernel(990));
  const std::string out = std::filesystem::path(ok).parent_path() / "long_sum.npy";
  const Child r =
      run_kiln("run " + ok + " k --grid 1 x_ptr=zeros:16:i32 BLOCK=16 --out x_ptr=" + out);
  INFO(r.output);
  REQUIRE(r.status == 0);
  std::ifstream in(out, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  int32_t last = 0;
  std::memcpy(&last, bytes.data() + bytes.size() - 4, 4);
  CHECK(last == 15 + 990);
}

TEST_CASE("issue 17.2: deeply nested parentheses are a clear compile error") {
  const std::string file = write_temp(
      "parens.py", std::string(kHeader) + "@triton.jit\ndef k(x_ptr):\n    tl.store(x_ptr, " +
                       std::string(5000, '(') + "1" + std::string(5000, ')') + ")\n");
  const Child c = run_kiln("compile " + file + " k 'x_ptr=*i32'");
  CHECK(c.status == 1);
  CHECK(contains(c.output, "nested too deeply"));
}

TEST_CASE("issue 17.2: nested tl.static_range loops share one unroll budget") {
  const std::string file = write_temp("nested_static.py", nested_static_kernel());
  // 25^3 (+ the outer loops) is within the budget: a long chain of block
  // additions that the lowering must not recurse through.
  const Child fits = run_kiln("compile " + file + " k 'x_ptr=*i32' N=25 BLOCK=16 --emit ir");
  CHECK(fits.status == 0);
  for (const char *n : {"40", "200"}) {
    CAPTURE(n);
    const auto start = std::chrono::steady_clock::now();
    const Child c = run_kiln("compile " + file + " k 'x_ptr=*i32' N=" + n + " BLOCK=16");
    CHECK(c.status == 1);
    CHECK(contains(c.output, "the kernel is too large"));
    CHECK(contains(c.output, "16384 iterations in total"));
    // Refused at once, not after unrolling millions of bodies (generous for
    // a loaded machine: the point is seconds, not the minutes it once took).
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));
  }
}

TEST_CASE("issue 17.3: a warmup line that cannot compile is that line's error, the rest compile") {
  write_temp("long_sum.py", long_sum_kernel(20000));
  write_temp("nested_static.py", nested_static_kernel());
  write_temp("good.py", long_sum_kernel(3));
  const std::string jsonl =
      write_temp("warm.jsonl",
                 R"({"file": "good.py", "kernel": "k", "args": {"x_ptr": "*i32", "BLOCK": 16}}
{"file": "long_sum.py", "kernel": "k", "args": {"x_ptr": "*i32", "BLOCK": 16}}
{"file": "nested_static.py", "kernel": "k", "args": {"x_ptr": "*i32", "N": 200, "BLOCK": 16}}
{"file": "nested_static.py", "kernel": "k", "args": {"x_ptr": "*i32", "N": 40, "BLOCK": 16}}
{"file": "good.py", "kernel": "k", "args": {"x_ptr": "*i32", "BLOCK": 32}}
{"file": 7, "kernel": "k", "args": {}}
)");
  const Child c = run_kiln("warmup --json " + jsonl);
  INFO(c.output);
  CHECK(c.status == 1);
  CHECK(contains(c.output, R"("specs":6)"));
  CHECK(contains(c.output, R"("compiled":2)"));
  CHECK(contains(c.output, R"("failed":4)"));
  CHECK(contains(c.output, R"({"line":2,"message":")"));
  CHECK(contains(c.output, "nested too deeply"));
  CHECK(contains(c.output, R"({"line":3,"message":")"));
  CHECK(contains(c.output, R"({"line":4,"message":")"));
  CHECK(contains(c.output, "the kernel is too large"));
  // A valid JSON line with a field of the wrong type says which and what (17.9).
  CHECK(contains(c.output, R"({"line":6,"message":"\"file\" must be a string, not a number"})"));
}

TEST_CASE("issue 17.4: grids beyond CUDA's limits are usage errors in kiln run") {
  const std::string file = write_temp("good.py", long_sum_kernel(3));
  for (const char *grid :
       {"4194304,2097152,2097152", "2147483648", "1,65536", "1,1,65536", "4294967296", "-1"}) {
    CAPTURE(grid);
    const Child c = run_kiln("run " + file + " k --grid " + grid + " x_ptr=zeros:16:i32 BLOCK=16");
    CHECK(c.status == 2);
    CHECK(contains(c.output, "--grid"));
  }
  const Child c =
      run_kiln("run " + file + " k --grid 4194304,2097152,2097152 x_ptr=zeros:16:i32 BLOCK=16");
  CHECK(contains(c.output, "x at most 2147483647, y and z at most 65535"));
}

TEST_CASE("issue 14: a too-small output array in kiln run on the cpu is an error naming it, not a "
          "crash") {
  const std::string words =
      "run " KILN_SHARED_DIR "/kernels/vector_add.py add_kernel --grid 10 --backend cpu "
      "x_ptr=zeros:10007:f32 y_ptr=zeros:10007:f32 out_ptr=zeros:100:f32 n=10007 BLOCK=1024";
  Child c = run_kiln(words);
  CAPTURE(c.output);
  CHECK(c.status == 1);
  CHECK(contains(c.output, "out-of-bounds store"));
  CHECK(contains(c.output, "'out_ptr'"));
  c = run_kiln(
      "run " KILN_SHARED_DIR "/kernels/vector_add.py add_kernel --grid 10 --backend cpu "
      "x_ptr=zeros:10007:f32 y_ptr=zeros:10007:f32 out_ptr=zeros:10007:f32 n=10007 BLOCK=1024");
  CHECK(c.status == 0);
}

TEST_CASE("issue 17.4: Grid refuses negative and oversized axes, a launch refuses one beyond the "
          "limits") {
  using kiln::Grid;
  CHECK_THROWS_WITH_AS(Grid(-1), doctest::Contains("grid axis x = -1 is negative"),
                       kiln::ArgumentError);
  CHECK_THROWS_WITH_AS(Grid(1, -2), doctest::Contains("grid axis y = -2 is negative"),
                       kiln::ArgumentError);
  CHECK_THROWS_WITH_AS(Grid(int64_t{1} << 32), doctest::Contains("does not fit in 32 bits"),
                       kiln::ArgumentError);
  CHECK(Grid(int64_t{7}, 2u, uint8_t{3}).size() == 42);
  CHECK(Grid(Grid::kMaxX, Grid::kMaxYZ, Grid::kMaxYZ).within_limits());
  CHECK(!Grid(Grid::kMaxX + 1u).within_limits());
  CHECK(!Grid(1, Grid::kMaxYZ + 1).within_limits());

  kiln::Module m = kiln::Module::from_string(long_sum_kernel(3), "grid_limits.py");
  kiln::Kernel k = m.kernel("k");
  int32_t out[16] = {};
  for (Grid g : {Grid(Grid::kMaxX + 1u), Grid(1, Grid::kMaxYZ + 1), Grid(1, 1, Grid::kMaxYZ + 1)}) {
    CAPTURE(g.x);
    CHECK_THROWS_WITH_AS(k[g](out, kiln::arg("BLOCK", 16)),
                         doctest::Contains("beyond what a launch takes"), kiln::ArgumentError);
  }
  k[Grid(1)](out, kiln::arg("BLOCK", 16));
  CHECK(out[15] == 15 + 3);
}

namespace {

std::string int32_kernel() {
  return std::string(kHeader) + R"(@triton.jit
def fill(x_ptr, n: tl.int32, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, offs * 0 + n)
)";
}

} // namespace

TEST_CASE("issue 17.7: an annotated tl.int32 given a value beyond 32 bits is an ArgumentError") {
  kiln::Module m = kiln::Module::from_string(int32_kernel(), "int32.py");
  kiln::Kernel k = m.kernel("fill");
  int32_t out[16] = {};
  CHECK_THROWS_WITH_AS(k[1](out, int64_t{1} << 32, kiln::arg("BLOCK", 16)),
                       doctest::Contains("argument 'n' = 4294967296 is out of range for i32"),
                       kiln::ArgumentError);
  CHECK_THROWS_AS(k[1](out, int64_t{-1} - INT32_MAX - 1, kiln::arg("BLOCK", 16)),
                  kiln::ArgumentError);
  k[1](out, int64_t{INT32_MIN}, kiln::arg("BLOCK", 16));
  CHECK(out[3] == INT32_MIN);
  k[1](out, 5, kiln::arg("BLOCK", 16));
  CHECK(out[3] == 5);
}

TEST_CASE("child: launch with an Arg::mock") {
  if (!in_child())
    return;
  kiln::Module m = kiln::Module::from_string(int32_kernel(), "mock.py");
  kiln::Kernel k = m.kernel("fill");
  try {
    k[1](kiln::Arg::mock(kiln::DType::i32), 5, kiln::arg("BLOCK", 16));
  } catch (const kiln::ArgumentError &e) {
    std::printf("refused: %s\n", e.what());
    return;
  }
  std::printf("launched\n");
}

TEST_CASE("issue 17.7: launching an Arg::mock is refused with an ArgumentError, not a segfault") {
  check_child("child: launch with an Arg::mock",
              "refused: fill: argument 'x_ptr' is a mock tensor (Arg::mock)");
}

TEST_CASE("issue 17.9: kiln warmup with no specializations, or a folder, is an error") {
  const std::string empty = write_temp("empty.jsonl", "\n  \n");
  const Child c = run_kiln("warmup " + empty);
  CHECK(c.status == 1);
  CHECK(contains(c.output, "has no specializations"));
  const Child d = run_kiln("warmup " + std::filesystem::path(empty).parent_path().string());
  CHECK(d.status == 2);
  CHECK(contains(d.output, "is a directory"));
}

TEST_CASE("issue 17.9: kiln run refuses a kernel file that is not a regular file, or too big") {
  const Child c = run_kiln("run /dev/zero k --grid 1");
  CHECK(c.status == 1);
  CHECK(contains(c.output, "not a regular file"));
  const std::string big = write_temp("big.py", std::string(17u << 20, '#'));
  const Child d = run_kiln("run " + big + " k --grid 1");
  CHECK(d.status == 1);
  CHECK(contains(d.output, "MiB are refused"));
  std::filesystem::remove(big);
}

TEST_CASE(
    "issue 17.9: a UTF-8 byte order mark and non-ASCII identifiers are accepted, as in Python") {
  const std::string file = write_temp(
      "bom.py",
      "\xef\xbb\xbf" + std::string(kHeader) +
          "@triton.jit\ndef k(x_ptr, BLOCK: tl.constexpr):\n    \xc3\xa9t\xc3\xa9 = "
          "tl.arange(0, BLOCK)\n    tl.store(x_ptr + \xc3\xa9t\xc3\xa9, \xc3\xa9t\xc3\xa9)\n");
  const Child c = run_kiln("run " + file + " k --grid 1 x_ptr=zeros:16:i32 BLOCK=16");
  INFO(c.output);
  CHECK(c.status == 0);
}

TEST_CASE("issue 17.9: usage errors of kiln compile exit 2: a NAME given twice, --num-warps 3") {
  const std::string file = write_temp("good.py", long_sum_kernel(3));
  const Child twice = run_kiln("compile " + file + " k 'x_ptr=*i32' BLOCK=16 BLOCK=32");
  CHECK(twice.status == 2);
  CHECK(contains(twice.output, "argument 'BLOCK' is given twice"));
  const Child spec = run_kiln("compile " + file + " k 'x_ptr=*fp33' BLOCK=16");
  CHECK(spec.status == 2);
  CHECK(contains(spec.output, "'*fp33' is not a specialization"));
  for (const char *cmd : {"compile --num-warps 3 ", "run --grid 1 --num-warps 3 "}) {
    CAPTURE(cmd);
    const Child c = run_kiln(std::string(cmd) + file + " k BLOCK=16");
    CHECK(c.status == 2);
    CHECK(contains(c.output, "'3' is not a power of two from 1 to 32"));
  }
}

TEST_CASE(
    "issue 14: kiln compile takes num_warps=N as kiln run does, and names a misspelt parameter") {
  const std::string file = write_temp("good.py", long_sum_kernel(3));
  Child c = run_kiln("compile " + file + " k 'x_ptr=*i32' BLOCK=16 num_warps=8 --emit ir");
  CAPTURE(c.output);
  CHECK(c.status == 0);
  c = run_kiln("compile --num-warps 4 " + file + " k 'x_ptr=*i32' BLOCK=16 num_warps=8");
  CHECK(c.status == 2);
  CHECK(contains(c.output, "num_warps is given both as --num-warps and as num_warps="));
  c = run_kiln("compile " + file + " k 'x_ptr=*i32' BLOCK=16 debug=maybe");
  CHECK(c.status == 2);
  c = run_kiln("compile " + file + " k 'x_ptr=*i32' BLCK=16");
  CHECK(c.status == 2);
  CHECK(contains(c.output, "k has no parameter 'BLCK'; did you mean 'BLOCK'?"));
  c = run_kiln("run " + file + " k --grid 1 x_ptr=zeros:16:i32 BLCK=16");
  CHECK(c.status != 0);
  CHECK(contains(c.output, "did you mean 'BLOCK'?"));
}

TEST_CASE("issue 14: kiln warmup's summary on one thread, and -v's compile times by stage") {
  const std::string kernel = write_temp("good.py", long_sum_kernel(3));
  const std::string jsonl =
      write_temp("specs.jsonl",
                 "{\"file\": \"" + kernel +
                     "\", \"kernel\": \"k\", \"args\": {\"x_ptr\": \"*i32\", \"BLOCK\": 16}}\n");
  const Child c = run_kiln("warmup " + jsonl + " --threads 1 --no-cache -v");
  CAPTURE(c.output);
  CHECK(c.status == 0);
  CHECK(contains(c.output, "on 1 compile thread\n"));
  CHECK_FALSE(contains(c.output, "over one thread"));
  CHECK(contains(c.output, "compile time by stage"));
}

namespace {

/// A kernel that fails to compile only for N == 1 (a static_assert), so one
/// file gives both failing and good keys.
std::string failing_kernel() {
  return std::string(kHeader) + R"(@triton.jit
def f(x_ptr, N: tl.constexpr):
    tl.static_assert(N != 1, "N must not be 1")
    tl.store(x_ptr, N)
)";
}

} // namespace

TEST_CASE("child: a jit_cache_hook that warms the same key") {
  if (!in_child())
    return;
  kiln::Module m = kiln::Module::from_string(int32_kernel(), "hook.py");
  kiln::Kernel k = m.kernel("fill");
  int32_t out[16] = {};
  int calls = 0;
  kiln::hooks().jit_cache_hook = [&](const kiln::CompileEvent &) {
    if (++calls == 1)
      k.warmup_with(out, 7, kiln::arg("BLOCK", 16));
    return false;
  };
  k[1](out, 7, kiln::arg("BLOCK", 16));
  kiln::hooks().jit_cache_hook = nullptr;
  std::printf("done: out[3] = %d, hook calls %d\n", out[3], calls);
}

TEST_CASE("issue 17.6: a jit_cache_hook that warms the key it is asked about does not deadlock") {
  check_child("child: a jit_cache_hook that warms the same key", "done: out[3] = 7, hook calls 2");
}

TEST_CASE("issue 17.6: a scope that asks for a key another scope is compiling sees its failure") {
  kiln::Module m = kiln::Module::from_string(failing_kernel(), "shared_failure.py");
  kiln::Kernel k = m.kernel("f");
  int32_t out[1] = {};
  kiln::AsyncCompileMode first;
  k.warmup_with(out, kiln::arg("N", 1)); // queued in the first scope
  std::string second_error;
  std::thread([&] {
    try {
      kiln::AsyncCompileMode second;
      k.warmup_with(out, kiln::arg("N", 1)); // the same key, in flight in the first scope
    } catch (const kiln::Error &e) {
      second_error = e.what();
    }
  }).join();
  CHECK(contains(second_error, "N must not be 1"));
  CHECK_THROWS_WITH_AS(first.finish(), doctest::Contains("N must not be 1"),
                       kiln::AsyncCompileError);
}

TEST_CASE("issue 17.5: failed launches in a long-lived scope do not pile up") {
  kiln::Module m = kiln::Module::from_string(failing_kernel(), "scope_failures.py");
  kiln::Kernel k = m.kernel("f");
  int32_t out[1] = {};
  kiln::AsyncCompileMode mode(kiln::AsyncCompileMode::Config{1, /*ignore_errors=*/true});
  for (int i = 0; i < 50; ++i)
    CHECK_THROWS_AS(k[1](out, kiln::arg("N", 1)), kiln::Error);
  // Each failure was seen by its launch; the scope holds on to at most the
  // last two (a worker queues a job as completed just after it is done).
  CHECK(mode.outstanding() <= 2);
  k[1](out, kiln::arg("N", 3));
  CHECK(out[0] == 3);
}

TEST_CASE("issue 17.5: the memory cache keeps binaries and metadata, stage texts only on request") {
  kiln::Module m = kiln::Module::from_string(int32_kernel(), "stages.py");
  kiln::Kernel k = m.kernel("fill");
  int32_t out[16] = {};
  const kiln::LaunchResult r = k[1](out, 9, kiln::arg("BLOCK", 16));
  REQUIRE(r.kernel);
  CHECK(!r.kernel->binary.empty());
  CHECK(!r.kernel->params.empty());
  CHECK(r.kernel->stages.count("llir") == 0);
  CHECK(r.kernel->stages.count("ir") == 0);
  // compile_only (kiln compile) still has every stage.
  const int32_t *p = out;
  const kiln::CompiledKernel c = k.impl()->compile_only(
      std::vector<kiln::Arg>{p, 9, kiln::arg("BLOCK", 16)}, kiln::compiler::Target::host());
  CHECK(c.stages.count("llir") == 1);
}

TEST_CASE("child: KILN_KEEP_STAGES=1 keeps stage texts") {
  if (!in_child())
    return;
  kiln::Module m = kiln::Module::from_string(int32_kernel(), "keep.py");
  int32_t out[16] = {};
  const kiln::LaunchResult r = m.kernel("fill")[1](out, 9, kiln::arg("BLOCK", 16));
  std::printf("llir kept: %d\n", static_cast<int>(r.kernel->stages.count("llir")));
}

TEST_CASE("issue 17.5: KILN_KEEP_STAGES=1 keeps the stage texts in memory") {
  check_child("child: KILN_KEEP_STAGES=1 keeps stage texts", "llir kept: 1", "KILN_KEEP_STAGES=1");
}

// KILN_MEMORY_CACHE_MAX=3 (set by the test below): twelve launches of six
// specializations evict and recompile, and every result is right; a
// LaunchResult keeps its kernel after the table evicted it.
TEST_CASE("child: many specializations under a small KILN_MEMORY_CACHE_MAX") {
  if (!in_child())
    return;
  kiln::Module m = kiln::Module::from_string(int32_kernel(), "bounded.py");
  kiln::Kernel k = m.kernel("fill");
  kiln::runtime::KernelCache &table = k.impl()->device_cache(kiln::Device{}).kernels;
  std::vector<kiln::LaunchResult> kept;
  long wrong = 0;
  size_t most = 0;
  for (int round = 0; round < 2; ++round)
    for (int b = 0; b < 6; ++b) {
      const int block = 4 << b, n = 100 * round + b;
      std::vector<int32_t> out(static_cast<size_t>(block), -1);
      kept.push_back(k[1](out.data(), n, kiln::arg("BLOCK", block)));
      for (int32_t v : out)
        wrong += v != n;
      most = std::max(most, table.size());
    }
  for (const kiln::LaunchResult &r : kept)
    wrong += r.kernel->name != "fill" || r.kernel->binary.empty();
  // Six kernels through three places: at least three evictions.
  std::printf("most %zu evictions %s wrong %ld\n", most,
              table.evictions() >= 3 ? "enough" : "too few", wrong);
}

TEST_CASE("issue 17.5: KILN_MEMORY_CACHE_MAX bounds the memory cache, results stay right") {
  check_child("child: many specializations under a small KILN_MEMORY_CACHE_MAX",
              "most 3 evictions enough wrong 0", "KILN_MEMORY_CACHE_MAX=3");
}

// KILN_MEMORY_CACHE_MAX=2: four threads launch one specialization over and
// over (lock-free hits, each in a read section) while a fifth keeps missing
// with others, so the table evicts under them. Run under ASan, a kernel freed
// under a launch is a use after free.
TEST_CASE("child: launches while the memory cache evicts") {
  if (!in_child())
    return;
  kiln::Module m = kiln::Module::from_string(int32_kernel(), "evicting.py");
  kiln::Kernel k = m.kernel("fill");
  std::atomic<bool> stop{false};
  std::atomic<long> launches{0}, wrong{0};
  std::vector<std::thread> hot;
  for (int t = 0; t < 4; ++t)
    hot.emplace_back([&, t] {
      int32_t out[16];
      for (int i = 0; !stop; ++i) {
        const int n = t * 1000 + i % 1000;
        const kiln::LaunchResult r = k[1](out, n, kiln::arg("BLOCK", 16));
        for (int32_t v : out)
          wrong += v != n;
        wrong += r.kernel->name != "fill";
        ++launches;
      }
    });
  int32_t out[128];
  for (int i = 0; i < 12; ++i) {
    const int block = 32 << (i % 3);
    k[1](out, i, kiln::arg("BLOCK", block));
    for (int j = 0; j < block; ++j)
      wrong += out[j] != i;
  }
  stop = true;
  for (auto &th : hot)
    th.join();
  const kiln::runtime::KernelCache &table = k.impl()->device_cache(kiln::Device{}).kernels;
  // The bound yields only while every entry is in use (each hot thread may
  // pin one while it recompiles its evicted kernel).
  std::printf("launches %s evictions %s size %s wrong %ld\n", launches > 0 ? "some" : "none",
              table.evictions() > 0 ? "some" : "none", table.size() <= 2 + 4 ? "bounded" : "grown",
              wrong.load());
}

TEST_CASE("issue 17.5: a kernel launched concurrently while the memory cache evicts is not "
          "freed under the launch") {
  check_child("child: launches while the memory cache evicts",
              "launches some evictions some size bounded wrong 0", "KILN_MEMORY_CACHE_MAX=2");
}

TEST_CASE("issue 17.5: a bad KILN_MEMORY_CACHE_MAX is a clear error, not a crash") {
  const std::string file = write_temp("knob.py", int32_kernel());
  for (const char *bad : {"ten", "-1", "99999999999"}) {
    CAPTURE(bad);
    const Child c = shell(std::string("env KILN_MEMORY_CACHE_MAX=") + bad + " '" KILN_BIN "' run " +
                          file + " fill --grid 1 x_ptr=zeros:16:i32 n=3 BLOCK=16");
    INFO(c.output);
    CHECK(c.status != 0);
    CHECK(c.status < 128); // an error exit, not a signal
    CHECK(contains(c.output, "KILN_MEMORY_CACHE_MAX"));
  }
}

// Issue 17.5: a scope's compile jobs, failed ones included, are freed when
// it ends (nothing keeps them in a cycle), so scope after scope does not grow.
TEST_CASE("issue 17.5: an async compile scope's jobs are released when the scope ends") {
  kiln::Module m =
      kiln::Module::from_string(int32_kernel() + "\n\n" + failing_kernel(), "scopes.py");
  kiln::Kernel fill = m.kernel("fill"), bad = m.kernel("f");
  const long before = kiln::async::Job::live();
  for (int i = 0; i < 3; ++i) {
    kiln::AsyncCompileMode mode(kiln::AsyncCompileMode::Config{2, /*ignore_errors=*/true});
    int32_t out[64] = {};
    const kiln::LaunchResult good = fill.warmup_with(out, 5, kiln::arg("BLOCK", 16 << i));
    const kiln::LaunchResult failing = bad.warmup_with(out, kiln::arg("N", 1));
    REQUIRE(good.future.valid());
    REQUIRE(failing.future.valid());
    CHECK(kiln::async::Job::live() > before);
  }
  CHECK(kiln::async::Job::live() == before);
}

namespace {

long rss_kb() {
  std::ifstream in("/proc/self/statm");
  long pages = 0, resident = 0;
  in >> pages >> resident;
  return resident * (::sysconf(_SC_PAGESIZE) / 1024);
}

} // namespace

// A measurement rather than a test (it takes a while): with
// KILN_RELIABILITY_CHILD=1 and -tc='child: resident memory...' it prints the
// resident set every 5,000 of 40,000 failing launches in one scope.
TEST_CASE("child: resident memory over failing launches in a scope") {
  if (!in_child() || !std::getenv("KILN_RSS_PROBE"))
    return;
  kiln::Module m = kiln::Module::from_string(failing_kernel(), "rss.py");
  kiln::Kernel k = m.kernel("f");
  int32_t out[1] = {};
  kiln::AsyncCompileMode mode(kiln::AsyncCompileMode::Config{2, /*ignore_errors=*/true});
  for (int i = 1; i <= 40000; ++i) {
    try {
      k[1](out, kiln::arg("N", 1));
    } catch (const kiln::Error &) {
    }
    if (i % 5000 == 0)
      std::printf("%d failures: %ld KB resident\n", i, rss_kb());
  }
}

// A measurement rather than a test: with KILN_RELIABILITY_CHILD=1,
// KILN_STRESS_SECONDS=S and -tc='child: stress...' it runs 16 threads for S
// seconds of launches and warmups, sync and in async scopes, of good and
// failing specializations, with hooks (one re-entrant) and fresh modules, and
// prints counts and the resident set along the way.
TEST_CASE("child: stress of 16 threads over sync and async scopes, failing specs and hooks") {
  const char *seconds = std::getenv("KILN_STRESS_SECONDS");
  if (!in_child() || !seconds)
    return;
  std::atomic<long> launches{0}, failures{0}, wrong{0}, hook_calls{0}, compiles{0}, scopes{0},
      evictions{0};
  // Set around some launches: the cache hook then warms that same key
  // from inside itself (re-entrant, once).
  thread_local std::function<void()> reenter;
  kiln::hooks().jit_cache_hook = [&](const kiln::CompileEvent &) {
    ++hook_calls;
    if (auto f = std::exchange(reenter, nullptr))
      f();
    return false;
  };
  kiln::hooks().jit_post_compile_hook = [&](const kiln::CompileEvent &) { ++compiles; };
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(std::atoi(seconds));
  std::atomic<bool> stop{false};
  std::thread monitor([&] {
    for (int t = 0; !stop; ++t) {
      if (t % 20 == 0)
        std::printf("t=%ds launches %ld failures %ld compiles %ld rss %ld KB\n", t / 2,
                    launches.load(), failures.load(), compiles.load(), rss_kb());
      std::fflush(stdout);
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t)
    threads.emplace_back([&, t] {
      uint64_t rng = 0x9e3779b97f4a7c15ull * (t + 1);
      auto next = [&] {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return rng;
      };
      kiln::Module shared =
          kiln::Module::from_string(int32_kernel() + "\n\n" + failing_kernel(), "stress.py");
      for (long i = 0; std::chrono::steady_clock::now() < end; ++i) {
        // Every so often a fresh module: new cache entries, new compiles.
        kiln::Module m = next() % 8 == 0
                             ? kiln::Module::from_string(int32_kernel() + "\n\n" + failing_kernel(),
                                                         "stress" + std::to_string(i % 3) + ".py")
                             : shared;
        kiln::Kernel fill = m.kernel("fill"), bad = m.kernel("f");
        const int block = 16 << (next() % 4);
        const int n = static_cast<int>(next() % 1000);
        const int failing_n = static_cast<int>(next() % 3); // 1 fails
        int32_t out[128] = {};
        auto one = [&] {
          try {
            fill[1](out, n, kiln::arg("BLOCK", block));
            if (out[block - 1] != n)
              ++wrong;
            ++launches;
            int32_t o[1] = {};
            bad[1](o, kiln::arg("N", failing_n));
            ++launches;
          } catch (const kiln::Error &) {
            ++failures;
          }
        };
        switch (next() % 3) {
        case 0:
          one();
          break;
        case 1: {
          try {
            kiln::AsyncCompileMode mode(kiln::AsyncCompileMode::Config{2, next() % 2 == 0});
            ++scopes;
            fill.warmup_with(out, n, kiln::arg("BLOCK", block * 2 > 128 ? 16 : block * 2));
            bad.warmup_with(out, kiln::arg("N", failing_n));
            one();
          } catch (const kiln::Error &) {
            ++failures;
          }
          break;
        }
        default:
          reenter = [&] { fill.warmup_with(out, n, kiln::arg("BLOCK", block)); };
          one();
          reenter = nullptr;
        }
      }
      // With KILN_MEMORY_CACHE_MAX, what the bounded tables of this thread's
      // long-lived module evicted.
      for (const char *name : {"fill", "f"})
        evictions += static_cast<long>(
            shared.kernel(name).impl()->device_cache(kiln::Device{}).kernels.evictions());
    });
  for (auto &th : threads)
    th.join();
  stop = true;
  monitor.join();
  kiln::hooks().jit_cache_hook = nullptr;
  kiln::hooks().jit_post_compile_hook = nullptr;
  std::printf("done: launches %ld failures %ld wrong %ld compiles %ld hook calls %ld scopes %ld "
              "evictions %ld rss %ld KB\n",
              launches.load(), failures.load(), wrong.load(), compiles.load(), hook_calls.load(),
              scopes.load(), evictions.load(), rss_kb());
}

TEST_CASE("issue 17.8: in debug mode an out-of-bounds store is an error naming kernel, line, "
          "argument, offset") {
  const std::string file = write_temp("oob.py", std::string(kHeader) + R"(@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.store(x_ptr + offs, x + 1)
)");
  const Child c = run_kiln("run --debug " + file + " k --grid 1 x_ptr=zeros:16:i32 n=16 BLOCK=64");
  CHECK(c.status == 1);
  CHECK(contains(c.output, "out-of-bounds store in kernel 'k' at line 9 through argument 'x_ptr': "
                           "byte offset 64 of a tensor "
                           "of 64 bytes"));
  // Masked accesses are checked only where the mask holds.
  const Child ok = run_kiln("run --debug " + file + " k --grid 1 x_ptr=zeros:64:i32 n=16 BLOCK=64");
  INFO(ok.output);
  CHECK(ok.status == 0);
  // The first failure is the one reported: here the load, before the store.
  const Child load =
      run_kiln("run --debug " + file + " k --grid 1 x_ptr=zeros:32:i32 n=64 BLOCK=64");
  CHECK(load.status == 1);
  CHECK(contains(load.output,
                 "out-of-bounds load in kernel 'k' at line 8 through argument 'x_ptr': byte offset "
                 "128 of a tensor of 128 bytes"));
}

TEST_CASE("issue 17.8: a kiln::Tensor's size bounds a debug launch's accesses, without a shape "
          "nothing is checked") {
  kiln::Module m = kiln::Module::from_string(int32_kernel(), "oob_api.py");
  kiln::Kernel k = m.kernel("fill");
  int32_t out[64] = {};
  CHECK_THROWS_WITH_AS(
      k[1](kiln::Tensor(out, {16}), 5, kiln::arg("BLOCK", 32), kiln::arg("debug", true)),
      doctest::Contains("out-of-bounds store in kernel 'fill'"), kiln::RuntimeError);
  CHECK(out[16] == 0); // the access outside was not made
  k[1](kiln::Tensor(out, {32}), 5, kiln::arg("BLOCK", 32), kiln::arg("debug", true));
  CHECK(out[31] == 5);
  k[1](out, 6, kiln::arg("BLOCK", 64), kiln::arg("debug", true)); // a raw pointer: size unknown
  CHECK(out[63] == 6);
}

TEST_CASE("child: KILN_DEBUG and an explicit debug=") {
  if (!in_child())
    return;
  kiln::Module m = kiln::Module::from_string(int32_kernel(), "debug_knob.py");
  kiln::Kernel k = m.kernel("fill");
  const auto plain = k.warmup_with(kiln::Arg::mock(kiln::DType::i32), 5, kiln::arg("BLOCK", 16));
  const auto off = k.warmup_with(kiln::Arg::mock(kiln::DType::i32), 5, kiln::arg("BLOCK", 16),
                                 kiln::arg("debug", false));
  std::printf("debug=%d explicit_off=%d\n", int(plain.kernel->options.debug),
              int(off.kernel->options.debug));
}

TEST_CASE("issue 13: KILN_DEBUG=1 turns debug on for launches that do not pass debug=") {
  // The knob is read once per process, so each setting runs in a child.
  check_child("child: KILN_DEBUG and an explicit debug=", "debug=1 explicit_off=0", "KILN_DEBUG=1");
  check_child("child: KILN_DEBUG and an explicit debug=", "debug=0 explicit_off=0");
}
