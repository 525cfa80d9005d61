// `kiln run` end to end, in-process: the app is built as tools/kiln/main.cpp
// builds it and driven through run_cli on the real kernel file
// shared/kernels/vector_add.py. One good run checks the result and the
// --json report; every other case is bad input, and checks the exit status
// of shared/CLI.md, the words of the one-sentence message on stderr, and
// that the --out file was not written.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "tests/temp_dir.hpp"
#include "tests/text_checks.hpp"
#include "tools/kiln/cli_common.hpp"
#include "tools/kiln/host_tensor.hpp"
#include "tools/kiln/npy.hpp"
#include "tools/kiln/run_command.hpp"

namespace fs = std::filesystem;
using kiln::DType;
using kiln::cli::HostTensor;

using kiln::test::contains;

namespace {

const std::string kVectorAdd = std::string(KILN_SHARED_DIR) + "/kernels/vector_add.py";
constexpr int64_t kN = 10007;

using kiln::test::TempDir;

/// The kernel cache of every run in this process. The runtime reads
/// KILN_CACHE_DIR once, at its first use, so one directory serves all test
/// cases; it lives until the process exits, and keeps the runs out of the
/// user's own cache.
std::string cache_dir() {
  static const TempDir dir;
  return dir.path.string();
}

/// stdout of the run: the run command prints its report to std::cout, not
/// to run_cli's `out` (that one only gets --help), so it is captured here.
class CaptureCout {
public:
  CaptureCout() : saved_(std::cout.rdbuf(captured_.rdbuf())) {}
  ~CaptureCout() { std::cout.rdbuf(saved_); }
  CaptureCout(const CaptureCout &) = delete;
  CaptureCout &operator=(const CaptureCout &) = delete;
  std::string str() const { return captured_.str(); }

private:
  std::ostringstream captured_;
  std::streambuf *saved_;
};

struct CliRun {
  int status = -1;
  std::string out, err;
  /// The first line of stderr: the one sentence of shared/CLI.md.
  std::string first_line() const { return err.substr(0, err.find('\n')); }
};

/// Runs `kiln run ARGS... --backend cpu --cache-dir <cache_dir()>` with the
/// subcommands main() registers that exist as functions (only run so far).
CliRun kiln_run(std::vector<std::string> args) {
  CLI::App app{"kiln: a JIT runtime for Triton-compatible kernels", "kiln"};
  app.require_subcommand(1);
  kiln::cli::CommonOptions common;
  kiln::cli::add_run_command(app, common);

  args.insert(args.begin(), {"kiln", "run"});
  for (const char *a : {"--backend", "cpu", "--cache-dir"})
    args.emplace_back(a);
  args.push_back(cache_dir());
  std::vector<const char *> argv;
  for (const std::string &a : args)
    argv.push_back(a.c_str());

  std::ostringstream out, err;
  CliRun r;
  {
    const CaptureCout cout;
    r.status = kiln::cli::run_cli(app, static_cast<int>(argv.size()), argv.data(), out, err);
    r.out = out.str() + cout.str();
  }
  r.err = err.str();
  return r;
}

/// An f32 vector of `n` distinct values, `seed` telling two apart.
HostTensor sample_vector(int64_t n, float seed) {
  HostTensor t = HostTensor::empty(DType::f32, {n});
  float *p = static_cast<float *>(t.data());
  for (int64_t i = 0; i < n; ++i)
    p[i] = seed * static_cast<float>(i % 101) - 0.25f * static_cast<float>(i % 7);
  return t;
}

/// A directory with x.npy and y.npy of kN elements and the arguments of the
/// issue's command, which writes out_ptr to out.npy there.
struct VectorAddRun {
  TempDir dir;
  std::string x = dir.file("x.npy"), y = dir.file("y.npy"), out = dir.file("out.npy");

  VectorAddRun() {
    kiln::cli::write_npy(x, sample_vector(kN, 0.5f));
    kiln::cli::write_npy(y, sample_vector(kN, -1.75f));
  }

  /// The arguments after FILE KERNEL, with `drop` left out and `extra`
  /// added before --out.
  std::vector<std::string> args(const std::string &drop = "", std::vector<std::string> extra = {},
                                const std::string &kernel = "add_kernel") const {
    std::vector<std::string> a{kVectorAdd,
                               kernel,
                               "--grid",
                               "10",
                               "x_ptr=@" + x,
                               "y_ptr=@" + y,
                               "out_ptr=zeros:" + std::to_string(kN) + ":f32",
                               "n=" + std::to_string(kN),
                               "BLOCK=1024"};
    std::erase_if(a, [&](const std::string &w) { return !drop.empty() && w.starts_with(drop); });
    a.insert(a.end(), extra.begin(), extra.end());
    a.insert(a.end(), {"--out", "out_ptr=" + out});
    return a;
  }
};

/// Exit status `status`, an "error: " sentence on stderr mentioning every
/// word of `words`, nothing on stdout, and no file at `out`.
void check_failed(const CliRun &r, int status, const std::vector<std::string> &words,
                  const std::string &out) {
  CAPTURE(r.err);
  CHECK(r.status == status);
  CHECK(r.first_line().starts_with("error: "));
  for (const std::string &w : words)
    CHECK_MESSAGE(contains(r.first_line(), w), "missing: " << w);
  CHECK(r.out.empty());
  CHECK_FALSE(fs::exists(out));
}

} // namespace

TEST_CASE("cli run: the issue's vector_add command writes x + y to out.npy") {
  const VectorAddRun run;
  const CliRun r = kiln_run(run.args());
  CAPTURE(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  CHECK(contains(r.out, "kernel  add_kernel("));
  CHECK(contains(r.out, "wrote   out_ptr -> " + run.out + " (f32, 10007)"));

  const HostTensor out = kiln::cli::read_npy(run.out);
  REQUIRE(out.dtype() == DType::f32);
  REQUIRE(out.shape() == std::vector<int64_t>{kN});
  const HostTensor x = sample_vector(kN, 0.5f), y = sample_vector(kN, -1.75f);
  const float *px = static_cast<const float *>(x.data());
  const float *py = static_cast<const float *>(y.data());
  const float *po = static_cast<const float *>(out.data());
  int64_t wrong = 0;
  for (int64_t i = 0; i < kN; ++i)
    wrong += po[i] != px[i] + py[i]; // one rounding each side: exact
  CHECK(wrong == 0);
}

TEST_CASE("cli run: tuple arguments, nested constexpr tuples and --out of a tuple's tensor") {
  const TempDir dir;
  const std::string file = dir.file("tuples.py"), x = dir.file("x.npy"), y = dir.file("y.npy");
  std::ofstream(file)
      << "import triton\n"
         "import triton.language as tl\n\n\n"
         "@triton.jit\n"
         "def scale(ptrs, n, AB: tl.constexpr, BLOCK: tl.constexpr):\n"
         "    x_ptr, y_ptr = ptrs\n"
         "    offs = tl.arange(0, BLOCK)\n"
         "    m = offs < n\n"
         "    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) * AB[0] + AB[1][1], mask=m)\n";
  kiln::cli::write_npy(x, sample_vector(100, 0.5f));
  const CliRun r = kiln_run({file, "scale", "--grid", "1", "ptrs=(@" + x + ", zeros:100:f32)",
                             "n=100", "AB=(2, (0, 5))", "BLOCK=128", "--out", "ptrs.1=" + y});
  CAPTURE(r.err);
  REQUIRE(r.status == 0);
  CHECK(contains(r.out, "ptrs: (*fp32:D, *fp32:D)"));
  CHECK(contains(r.out, "AB: (constexpr=2, (constexpr=0, constexpr=5))"));
  CHECK(contains(r.out, "wrote   ptrs.1 -> " + y + " (f32, 100)"));
  const HostTensor out = kiln::cli::read_npy(y), in = sample_vector(100, 0.5f);
  int64_t wrong = 0;
  for (int64_t i = 0; i < 100; ++i)
    wrong += static_cast<const float *>(out.data())[i] !=
             static_cast<const float *>(in.data())[i] * 2 + 5;
  CHECK(wrong == 0);

  // An --out path that names no tensor of the tuple, or no tuple element.
  for (const char *bad : {"ptrs.2", "ptrs.0.1", "n.0"}) {
    CAPTURE(bad);
    const CliRun e =
        kiln_run({file, "scale", "--grid", "1", "ptrs=(@" + x + ", zeros:100:f32)", "n=100",
                  "AB=(2, (0, 5))", "BLOCK=128", "--out", std::string(bad) + "=" + y});
    CHECK(e.status == 2);
    CHECK(contains(e.first_line(), "is not a tensor argument"));
  }
}

TEST_CASE("cli run: None is Python's None (triton-lang/kernels' matmul takes AB_DTYPE=None)") {
  const TempDir dir;
  const std::string file = dir.file("none.py"), y = dir.file("y.npy");
  std::ofstream(file) << "import triton\n"
                         "import triton.language as tl\n\n\n"
                         "@triton.jit\n"
                         "def which(y_ptr, AB_DTYPE: tl.constexpr):\n"
                         "    if AB_DTYPE is not None:\n"
                         "        tl.store(y_ptr, 2.0)\n"
                         "    else:\n"
                         "        tl.store(y_ptr, 1.0)\n";
  for (const auto &[value, want] :
       {std::pair{"None", 1.0f}, {"tl.float16", 2.0f}, {"none", 2.0f}}) {
    CAPTURE(value);
    const CliRun r = kiln_run({file, "which", "--grid", "1", "y_ptr=zeros:1:f32",
                               std::string("AB_DTYPE=") + value, "--out", "y_ptr=" + y});
    CAPTURE(r.err);
    REQUIRE(r.status == 0);
    CHECK(static_cast<const float *>(kiln::cli::read_npy(y).data())[0] == want);
  }
}

TEST_CASE(
    "cli run: tensordesc(...) values are host tensor descriptors, --out writes their tensor") {
  const TempDir dir;
  const std::string file = dir.file("desc.py"), x = dir.file("x.npy"), y = dir.file("y.npy");
  std::ofstream(file) << "import triton\n"
                         "import triton.language as tl\n\n\n"
                         "@triton.jit\n"
                         "def shift(x_desc, y_desc, BLOCK: tl.constexpr):\n"
                         "    off = tl.program_id(0) * BLOCK\n"
                         "    y_desc.store([off], x_desc.load([off]) + 1.0)\n";
  kiln::cli::write_npy(x, sample_vector(100, 0.5f));
  const CliRun r =
      kiln_run({file, "shift", "--grid", "4", "x_desc=tensordesc(@" + x + ", [32], nan)",
                "y_desc=tensordesc(zeros:100:f32, (32,))", "BLOCK=32", "--out", "y_desc=" + y});
  CAPTURE(r.err);
  REQUIRE(r.status == 0);
  CHECK(contains(r.out, "x_desc: tensordesc<fp32[32],nan>, y_desc: tensordesc<fp32[32]>"));
  const HostTensor out = kiln::cli::read_npy(y), in = sample_vector(100, 0.5f);
  int64_t wrong = 0;
  for (int64_t i = 0; i < 100; ++i)
    wrong +=
        static_cast<const float *>(out.data())[i] != static_cast<const float *>(in.data())[i] + 1;
  CHECK(wrong == 0);

  const std::vector<std::pair<std::string, std::string>> bad = {
      {"tensordesc(@" + x + ")", "is not a tensor, a block shape"},
      {"tensordesc(@" + x + ", 32)", "no block shape in brackets"},
      {"tensordesc(@" + x + ", [3x])", "not an integer"},
      {"tensordesc(7, [32])", "does not start with a tensor"},
      {"tensordesc(@" + x + ", [32], inf)", "optional padding"},
      {"tensordesc(@" + x + ", [32]", "unbalanced"},
  };
  for (const auto &[value, why] : bad) {
    CAPTURE(value);
    const CliRun e = kiln_run({file, "shift", "--grid", "4", "x_desc=" + value,
                               "y_desc=tensordesc(zeros:100:f32, [32])", "BLOCK=32"});
    CHECK(e.status == 2);
    CHECK(contains(e.first_line(), why));
  }
  // What TensorDescriptor refuses (a block dim that is no power of two) is the runtime's error.
  const CliRun e = kiln_run({file, "shift", "--grid", "4", "x_desc=tensordesc(@" + x + ", [24])",
                             "y_desc=tensordesc(zeros:100:f32, [32])", "BLOCK=32"});
  CHECK(e.status != 0);
  CHECK(contains(e.first_line(), "powers of two"));
}

TEST_CASE("cli run: a --grid that reads the arguments is evaluated at the launch") {
  const VectorAddRun run;
  std::vector<std::string> a = run.args();
  a[3] = "triton.cdiv(n, BLOCK)"; // 10 programs of 1024 for n = 10007
  const CliRun r = kiln_run(a);
  CAPTURE(r.err);
  REQUIRE(r.status == 0);
  const HostTensor out = kiln::cli::read_npy(run.out);
  const HostTensor x = sample_vector(kN, 0.5f), y = sample_vector(kN, -1.75f);
  CHECK(static_cast<const float *>(out.data())[kN - 1] ==
        static_cast<const float *>(x.data())[kN - 1] +
            static_cast<const float *>(y.data())[kN - 1]);
  for (const char *bad :
       {"cdiv(n,)", "cdiv(n,BLOCK", "1,2,3,cdiv(n,BLOCK)", "cdiv(n,0)", "n/BLOCK"}) {
    CAPTURE(bad);
    a[3] = bad;
    const CliRun e = kiln_run(a);
    CHECK(e.status == 2);
    CHECK(contains(e.first_line(), "--grid"));
  }
  a[3] = "cdiv(n,nope)";
  const CliRun e = kiln_run(a);
  CHECK(e.status == 2);
  CHECK(contains(e.first_line(), "reads 'nope', which is not a parameter of add_kernel"));
}

TEST_CASE("cli run: --json prints one document with the keys of CLI.md") {
  const VectorAddRun run;
  const CliRun r = kiln_run(run.args("", {"--json"}));
  CAPTURE(r.err);
  REQUIRE(r.status == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out); // throws, failing the case, if not JSON
  REQUIRE(j.is_object());
  for (const char *key :
       {"kernel", "key", "source", "compile_ms", "stages_ms", "launch_us", "outputs"})
    CHECK_MESSAGE(j.contains(key), "missing key " << key);
  CHECK(j["kernel"].get<std::string>().starts_with("add_kernel("));
  CHECK(j["key"].get<std::string>().size() == 64);
  const std::string source = j["source"].get<std::string>();
  CHECK((source == "compiled" || source == "memory" || source == "disk" || source == "remote"));
  CHECK(j["compile_ms"].is_number());
  CHECK(j["stages_ms"].is_object());
  CHECK(j["launch_us"].is_number());
  REQUIRE(j["outputs"].is_array());
  REQUIRE(j["outputs"].size() == 1);
  CHECK(j["outputs"][0]["name"] == "out_ptr");
  CHECK(j["outputs"][0]["path"] == run.out);
  CHECK(j["outputs"][0]["dtype"] == "f32");
  CHECK(j["outputs"][0]["shape"] == nlohmann::json::array({kN}));
  CHECK(fs::exists(run.out));
}

TEST_CASE("cli run: a kernel file with a syntax error shows file:line:col, the line and a caret") {
  const VectorAddRun run;
  const std::string bad = run.dir.file("bad.py");
  std::ofstream(bad) << "import triton\n"
                        "import triton.language as tl\n"
                        "\n"
                        "@triton.jit\n"
                        "def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
                        "    offs = tl.arange(0, BLOCK\n"
                        "    tl.store(out_ptr + offs, 0.0)\n";
  std::vector<std::string> args = run.args();
  args[0] = bad;
  const CliRun r = kiln_run(args);
  check_failed(r, 1, {bad, "does not compile"}, run.out);
  CHECK(r.first_line() == "error: " + bad + " does not compile");
  // The detail: file:line:col: message, the source line, a caret under col 21.
  const std::string detail = r.err.substr(r.err.find('\n') + 1);
  CHECK(detail.starts_with(bad + ":6:21: "));
  CHECK(contains(detail, "'(' was never closed"));
  CHECK(contains(detail, "\n        offs = tl.arange(0, BLOCK\n"
                         "                        ^\n"));
}

TEST_CASE("cli run: an unknown kernel name lists the file's functions") {
  const VectorAddRun run;
  const CliRun r = kiln_run(run.args("", {}, "add_kernal"));
  check_failed(r, 1, {"'add_kernal'", "add_kernel, axpy_kernel, empty_kernel"}, run.out);
  CHECK(r.err == "error: no @triton.jit function named 'add_kernal' in " + kVectorAdd +
                     "; it defines: add_kernel, axpy_kernel, empty_kernel\n");
}

TEST_CASE("cli run: a missing argument names the parameter") {
  const VectorAddRun run;
  const CliRun r = kiln_run(run.args("n="));
  check_failed(r, 1, {"add_kernel", "missing", "'n'"}, run.out);
}

TEST_CASE("cli run: an extra argument names it") {
  const VectorAddRun run;
  const CliRun r = kiln_run(run.args("", {"bogus=3"}));
  check_failed(r, 1, {"bogus", "add_kernel"}, run.out);
}

TEST_CASE("cli run: a bad .npy file is an error naming the file") {
  const VectorAddRun run;
  const std::string good = kiln::cli::npy_descr(DType::f32); // "<f4"
  const std::string path = run.dir.file("bad.npy");
  const std::string header_f =
      "{'descr': '" + good + "', 'fortran_order': True, 'shape': (10007,), }";
  const std::string header_c =
      "{'descr': '" + good + "', 'fortran_order': False, 'shape': (10007,), }";
  /// A version 1.0 file: magic, version, header length, header, data.
  auto npy = [](const std::string &dict, std::size_t data_bytes) {
    std::string h = dict;
    while ((10 + h.size() + 1) % 64 != 0)
      h += ' ';
    h += '\n';
    std::string s = std::string("\x93NUMPY\x01\x00", 8);
    s += static_cast<char>(h.size() & 0xFF);
    s += static_cast<char>(h.size() >> 8);
    return s + h + std::string(data_bytes, '\0');
  };
  struct Case {
    const char *what;
    std::string bytes;
    const char *word; ///< what the sentence must say beyond the file name
  };
  const Case cases[] = {
      {"bad magic", "PK\x03\x04 this is a zip file", "not a NumPy .npy file"},
      {"truncated data", npy(header_c, 4 * kN - 12), "truncated"},
      {"fortran order", npy(header_f, 4 * kN), "Fortran"},
      {"empty file", "", "npy"},
  };
  for (const Case &c : cases) {
    CAPTURE(c.what);
    std::ofstream(path, std::ios::binary | std::ios::trunc) << c.bytes;
    std::vector<std::string> args = run.args("x_ptr=");
    args.insert(args.begin() + 4, "x_ptr=@" + path);
    const CliRun r = kiln_run(args);
    check_failed(r, 1, {path, c.word}, run.out);
  }
}

TEST_CASE("cli run: a nonexistent kernel file or .npy file exits 1 naming it") {
  const VectorAddRun run;
  std::vector<std::string> args = run.args();
  args[0] = run.dir.file("no_such_kernel.py");
  check_failed(kiln_run(args), 1, {args[0], "cannot read"}, run.out);

  const std::string missing = run.dir.file("missing.npy");
  args = run.args("y_ptr=");
  args.insert(args.begin() + 4, "y_ptr=@" + missing);
  check_failed(kiln_run(args), 1, {missing, "cannot open"}, run.out);
}

TEST_CASE("cli run: a bad --grid is a usage error (exit 2)") {
  const VectorAddRun run;
  for (const char *grid : {"", "1,2,3,4", "-1", "4,,8", "10.5", "99999999999"}) {
    CAPTURE(grid);
    std::vector<std::string> args = run.args();
    args[3] = grid;
    const CliRun r = kiln_run(args);
    check_failed(r, 2, {"--grid", "is not 1 to 3 non-negative integers"}, run.out);
    CHECK(contains(r.err, "run 'kiln run --help'"));
  }
}

// Files written as Triton users write theirs (examples/triton_files: host
// wrappers, torch, autograd classes, a package with relative imports,
// autotune and heuristics decorators) run through `kiln run` unchanged.
TEST_CASE("kiln run: real-style Triton files run unchanged, heuristics applied and configs tuned") {
  const std::string examples = std::string(KILN_SOURCE_DIR) + "/examples/triton_files";
  TempDir dir;
  constexpr int64_t kRows = 3, kCols = 300;
  HostTensor x = HostTensor::empty(DType::f32, {kRows, kCols});
  HostTensor bias = HostTensor::empty(DType::f32, {kCols});
  float *xp = static_cast<float *>(x.data()), *bp = static_cast<float *>(bias.data());
  for (int64_t i = 0; i < kRows * kCols; ++i)
    xp[i] = 0.01f * static_cast<float>((i * 37) % 401) - 2.0f;
  for (int64_t i = 0; i < kCols; ++i)
    bp[i] = 0.005f * static_cast<float>(i % 50) - 0.1f;
  kiln::cli::write_npy(dir.file("x.npy"), x);
  kiln::cli::write_npy(dir.file("b.npy"), bias);

  SUBCASE("softmax: the block size comes from the heuristic, libdevice from a try/except import") {
    const CliRun r = kiln_run({examples + "/softmax_online.py", "softmax_kernel", "--grid", "3",
                               "out_ptr=zeros:3x300:f32", "in_ptr=@" + dir.file("x.npy"), "in_row_stride=300",
                               "out_row_stride=300", "n_cols=300", "--out", "out_ptr=" + dir.file("y.npy")});
    REQUIRE_MESSAGE(r.status == 0, r.err);
    CHECK(contains(r.out, "BLOCK_SIZE: constexpr=512"));
    const HostTensor y = kiln::cli::read_npy(dir.file("y.npy"));
    const float *yp = static_cast<const float *>(y.data());
    for (int64_t row = 0; row < kRows; ++row) {
      float mx = -INFINITY, sum = 0;
      for (int64_t c = 0; c < kCols; ++c)
        mx = std::max(mx, xp[row * kCols + c]);
      for (int64_t c = 0; c < kCols; ++c)
        sum += std::exp(xp[row * kCols + c] - mx);
      for (int64_t c = 0; c < kCols; ++c)
        CHECK(yp[row * kCols + c] == doctest::Approx(std::exp(xp[row * kCols + c] - mx) / sum).epsilon(1e-5));
    }
  }

  SUBCASE("bias + activation from a package: relative imports, an activation passed by name, autotuned") {
    for (const std::string act : {"gelu", "relu", "leaky_relu"}) {
      CAPTURE(act);
      const std::string out = dir.file("o_" + act + ".npy");
      const CliRun r = kiln_run({examples + "/fused_ops/bias_act.py", "bias_act_kernel", "--grid", "3",
                                 "x_ptr=@" + dir.file("x.npy"), "bias_ptr=@" + dir.file("b.npy"),
                                 "out_ptr=zeros:3x300:f32", "n_cols=300", "ACT=" + act, "--out", "out_ptr=" + out});
      REQUIRE_MESSAGE(r.status == 0, r.err);
      // Tuned over its four configs; which is fastest is the machine's business.
      CHECK((contains(r.out, "BLOCK_N: constexpr=128") || contains(r.out, "BLOCK_N: constexpr=256")));
      const HostTensor o = kiln::cli::read_npy(out);
      const float *op = static_cast<const float *>(o.data());
      for (int64_t i = 0; i < kRows * kCols; ++i) {
        const float v = xp[i] + bp[i % kCols];
        const float want = act == "relu"   ? std::max(v, 0.0f)
                           : act == "gelu" ? 0.5f * v * (1.0f + std::erf(v * 0.7071067811865476f))
                                           : (v >= 0 ? v : 0.01f * v);
        CHECK(op[i] == doctest::Approx(want).epsilon(1e-5));
      }
    }
  }
}
