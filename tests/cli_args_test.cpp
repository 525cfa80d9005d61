// The `kiln` command's argument handling (tools/kiln/): tensor specs,
// NAME=VALUE classification, --grid, the common options, and how usage
// errors and exceptions become messages and exit statuses. Nothing here
// loads a kernel file: every usage error is caught before that.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "kiln/error.hpp"
#include "tests/text_checks.hpp"
#include "tools/kiln/cli_common.hpp"
#include "tools/kiln/compile_command.hpp"
#include "tools/kiln/host_tensor.hpp"
#include "tools/kiln/run_command.hpp"
#include "tools/kiln/stage_times.hpp"

using kiln::DType;
using kiln::cli::ArgValue;
using kiln::cli::HostTensor;
using kiln::cli::TensorSpec;

using kiln::test::contains;
using kiln::test::error_of;

namespace {

ArgValue classify(const std::string &value, std::vector<std::string> functions = {}) {
  return kiln::cli::classify_value("x", value, functions);
}

/// Runs `kiln ARGS...` with only the run subcommand registered, or (`more`)
/// compile and a hidden subcommand too.
struct CliRun {
  int status = -1;
  std::string out, err;
};
CliRun run_kiln(std::vector<const char *> args, bool more = false) {
  CLI::App app{"kiln test", "kiln"};
  app.require_subcommand(1);
  kiln::cli::CommonOptions common;
  kiln::cli::add_run_command(app, common);
  if (more) {
    kiln::cli::add_compile_command(app, common);
    app.add_subcommand("__hidden", "internal")->group("");
  }
  args.insert(args.begin(), "kiln");
  std::ostringstream out, err;
  CliRun r;
  r.status = kiln::cli::run_cli(app, static_cast<int>(args.size()), args.data(), out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

} // namespace

TEST_CASE("cli: zeros:1000x64:f32 is a zero-filled, aligned 1000x64 f32 tensor") {
  const std::optional<TensorSpec> spec = kiln::cli::parse_tensor_spec("zeros:1000x64:f32");
  REQUIRE(spec);
  CHECK(spec->kind == TensorSpec::Kind::zeros);
  CHECK(spec->dtype == DType::f32);
  CHECK(spec->shape == std::vector<int64_t>{1000, 64});
  const HostTensor t = kiln::cli::make_host_tensor(*spec);
  CHECK(t.dtype() == DType::f32);
  CHECK(t.shape() == std::vector<int64_t>{1000, 64});
  CHECK(t.numel() == 64000);
  CHECK(t.nbytes() == 256000);
  CHECK(reinterpret_cast<uintptr_t>(t.data()) % HostTensor::kAlignment == 0);
  bool all_zero = true;
  for (std::byte b : t.bytes())
    all_zero = all_zero && b == std::byte{0};
  CHECK(all_zero);
}

TEST_CASE("cli: empty: specs and every dtype spelling") {
  const auto spec = kiln::cli::parse_tensor_spec("empty:7:f16");
  REQUIRE(spec);
  CHECK(spec->kind == TensorSpec::Kind::empty);
  CHECK(spec->dtype == DType::f16);
  CHECK(spec->shape == std::vector<int64_t>{7});
  const HostTensor t = kiln::cli::make_host_tensor(*spec);
  CHECK(t.nbytes() == 14);
  for (const char *dt :
       {"f16", "bf16", "f32", "f64", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "i1"}) {
    CAPTURE(dt);
    const auto s = kiln::cli::parse_tensor_spec(std::string("zeros:2x3:") + dt);
    REQUIRE(s);
    CHECK(kiln::dtype_short_name(s->dtype) == dt);
  }
  // Zero-size tensors are fine and still have an address.
  const HostTensor none = kiln::cli::make_host_tensor(*kiln::cli::parse_tensor_spec("zeros:0:i32"));
  CHECK(none.numel() == 0);
  CHECK(none.data() != nullptr);
}

TEST_CASE("cli: a bad dtype or shape in a tensor spec is an ArgumentError saying which") {
  using kiln::ArgumentError;
  auto error = [](const char *text) {
    return error_of<ArgumentError>([&] { kiln::cli::parse_tensor_spec(text); });
  };
  CHECK(contains(error("zeros:10:f33"), "unknown dtype 'f33'"));
  CHECK(contains(error("zeros:10:f33"), "f16 bf16 f32"));
  CHECK(contains(error("zeros:10"), "dtype is missing"));
  CHECK(contains(error("zeros:10x:f32"), "an extent is missing"));
  CHECK(contains(error("zeros::f32"), "bad shape"));
  CHECK(contains(error("zeros:-4:f32"), "not a non-negative integer"));
  CHECK(contains(error("zeros:4x+4:f32"), "not a non-negative integer"));
  CHECK(contains(error("zeros:axb:f32"), "'a' is not a non-negative integer"));
  CHECK(contains(error("zeros:99999999999999999999:f32"), "too large"));
  CHECK(contains(error("empty:4294967296x4294967296:f64"), "too large"));
  CHECK(kiln::cli::parse_shape("1000x64") == std::vector<int64_t>{1000, 64});
  CHECK(kiln::cli::parse_shape("3") == std::vector<int64_t>{3});
}

TEST_CASE("cli: @file.npy specs, with ':bf16' the only override") {
  auto spec = kiln::cli::parse_tensor_spec("@in.npy");
  REQUIRE(spec);
  CHECK(spec->kind == TensorSpec::Kind::npy);
  CHECK(spec->path == "in.npy");
  CHECK_FALSE(spec->read_as);

  spec = kiln::cli::parse_tensor_spec("@/tmp/d/in.npy:bf16");
  REQUIRE(spec);
  CHECK(spec->path == "/tmp/d/in.npy");
  CHECK(spec->read_as == DType::bf16);

  // A ':' that does not follow ".npy" belongs to the path.
  spec = kiln::cli::parse_tensor_spec("@run:3/in.npy");
  REQUIRE(spec);
  CHECK(spec->path == "run:3/in.npy");

  CHECK_THROWS_AS(kiln::cli::parse_tensor_spec("@in.npy:f32"), kiln::ArgumentError);
  CHECK_THROWS_AS(kiln::cli::parse_tensor_spec("@"), kiln::ArgumentError);
  // Not tensor specs at all: the caller tries other readings.
  CHECK_FALSE(kiln::cli::parse_tensor_spec("relu"));
  CHECK_FALSE(kiln::cli::parse_tensor_spec("zeros"));
  CHECK_FALSE(kiln::cli::parse_tensor_spec("1.5"));
}

TEST_CASE("cli: HostTensor views, copies and reinterpretation") {
  HostTensor t = HostTensor::zeros(DType::u16, {2, 3, 4, 5, 6});
  // kiln::Tensor holds 4 dims: the leading ones fold, numel stays.
  const kiln::Tensor v = t.view();
  CHECK(v.data == t.data());
  CHECK(v.ndim == 4);
  CHECK(v.shape[0] == 6);
  CHECK(v.shape[3] == 6);
  CHECK(v.dtype == DType::u16);

  HostTensor c = t.clone();
  CHECK(c.data() != t.data());
  static_cast<uint16_t *>(c.data())[3] = 7;
  t.copy_from(c);
  CHECK(static_cast<const uint16_t *>(t.data())[3] == 7);
  CHECK_THROWS_AS(t.copy_from(HostTensor::zeros(DType::u16, {1})), kiln::ArgumentError);

  t.reinterpret_as(DType::bf16);
  CHECK(t.dtype() == DType::bf16);
  CHECK_THROWS_AS(t.reinterpret_as(DType::f32), kiln::ArgumentError);

  const HostTensor scalar = HostTensor::zeros(DType::f64, {});
  CHECK(scalar.numel() == 1);
  CHECK(kiln::cli::format_shape(scalar.shape()) == "scalar");
}

TEST_CASE("cli: VALUE classification: bools, integers, floats") {
  CHECK(std::get<bool>(classify("true")) == true);
  CHECK(std::get<bool>(classify("false")) == false);
  CHECK(std::get<int64_t>(classify("10007")) == 10007);
  CHECK(std::get<int64_t>(classify("-3")) == -3);
  CHECK(std::get<int64_t>(classify("+3")) == 3);
  CHECK(std::get<int64_t>(classify("0x10")) == 16);
  CHECK(std::get<int64_t>(classify("-0xFF")) == -255);
  CHECK(std::get<int64_t>(classify("9223372036854775807")) == INT64_MAX);
  CHECK(std::get<int64_t>(classify("-9223372036854775808")) == INT64_MIN);
  CHECK(std::get<uint64_t>(classify("9223372036854775808")) == 9223372036854775808ull);
  CHECK(std::get<uint64_t>(classify("0xFFFFFFFFFFFFFFFF")) == UINT64_MAX);
  CHECK_THROWS_AS(classify("18446744073709551616"), kiln::cli::UsageError);
  CHECK_THROWS_AS(classify("-9223372036854775809"), kiln::cli::UsageError);

  CHECK(std::get<double>(classify("1.5")) == 1.5);
  CHECK(std::get<double>(classify("1e-5")) == 1e-5);
  CHECK(std::get<double>(classify("1e-05")) == 1e-5); // Python's repr of 1e-5
  CHECK(std::get<double>(classify("-2.")) == -2.0);
  CHECK(std::get<double>(classify(".25")) == 0.25);
  CHECK(std::get<double>(classify("3E2")) == 300.0);
  CHECK(std::isinf(std::get<double>(classify("inf"))));
  CHECK(std::get<double>(classify("-inf")) < 0);
  CHECK(std::isnan(std::get<double>(classify("nan"))));
  CHECK_THROWS_AS(classify("1e999"), kiln::cli::UsageError);
}

TEST_CASE("cli: VALUE classification: tensors, jit functions, and the rest") {
  const ArgValue z = classify("zeros:8:i32");
  REQUIRE(std::holds_alternative<TensorSpec>(z));
  CHECK(std::get<TensorSpec>(z).dtype == DType::i32);
  const ArgValue f = classify("@in.npy:bf16");
  REQUIRE(std::holds_alternative<TensorSpec>(f));
  CHECK(std::get<TensorSpec>(f).read_as == DType::bf16);

  const ArgValue fn = classify("relu", {"square", "relu"});
  REQUIRE(std::holds_alternative<kiln::cli::FunctionRef>(fn));
  CHECK(std::get<kiln::cli::FunctionRef>(fn).name == "relu");

  // Unknown words name the argument and what the file has.
  const std::string unknown = error_of<kiln::cli::UsageError>(
      [] { kiln::cli::classify_value("ACT", "rleu", std::vector<std::string>{"relu"}); });
  CHECK(contains(unknown, "argument 'ACT': 'rleu' is not"));
  CHECK(contains(unknown, "(relu)"));
  // A malformed tensor spec is a usage error naming the argument.
  const std::string bad = error_of<kiln::cli::UsageError>(
      [] { kiln::cli::classify_value("out_ptr", "zeros:8:q32", {}); });
  CHECK(contains(bad, "argument 'out_ptr'"));
  CHECK(contains(bad, "unknown dtype 'q32'"));
  for (const char *word : {"1.2.3", "0x", "12abc", "tru", "-", "0xg1"}) {
    CAPTURE(word);
    CHECK_THROWS_AS(classify(word), kiln::cli::UsageError);
  }
}

TEST_CASE("cli: VALUE classification: dtypes, and strings for constexpr parameters") {
  const ArgValue t = classify("tl.float16");
  REQUIRE(std::holds_alternative<DType>(t));
  CHECK(std::get<DType>(t) == DType::f16);
  CHECK(std::get<DType>(classify("triton.language.bfloat16")) == DType::bf16);
  // A word that is no function is a string only where the parameter is a
  // constexpr (`ACTIVATION=leaky_relu`); elsewhere a typo stays an error.
  const ArgValue s =
      kiln::cli::classify_value("ACTIVATION", "leaky_relu", std::vector<std::string>{"relu"}, true);
  REQUIRE(std::holds_alternative<kiln::cli::StringValue>(s));
  CHECK(std::get<kiln::cli::StringValue>(s).text == "leaky_relu");
  CHECK(std::holds_alternative<kiln::cli::FunctionRef>(
      kiln::cli::classify_value("ACTIVATION", "relu", std::vector<std::string>{"relu"}, true)));
  CHECK_THROWS_AS(kiln::cli::classify_value("n", "leaky_relu", std::vector<std::string>{}, false),
                  kiln::cli::UsageError);
  // Quoted, as kiln compile's specs take it: the string, even where a jit
  // function has the name (DeepSeek-V3's scale_fmt="ue8m0"; attorch's act_func).
  for (const char *quoted : {"'relu'", "\"relu\""}) {
    const ArgValue q =
        kiln::cli::classify_value("ACTIVATION", quoted, std::vector<std::string>{"relu"}, true);
    REQUIRE(std::holds_alternative<kiln::cli::StringValue>(q));
    CHECK(std::get<kiln::cli::StringValue>(q).text == "relu");
  }
}

TEST_CASE("cli: tuples: split_tuple, VALUE classification and --out element paths") {
  using V = std::vector<std::string>;
  CHECK(kiln::cli::split_tuple("(i32:D, 1, (4, 8))") == V{"i32:D", "1", "(4, 8)"});
  CHECK(kiln::cli::split_tuple("(4,)") == V{"4"});
  CHECK(kiln::cli::split_tuple("()").empty());
  for (const char *bad : {"(1,,2)", "(1, (2)", "(1))", "(,)", "(1"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(kiln::cli::split_tuple(bad), kiln::cli::UsageError);
  }
  const ArgValue t = kiln::cli::classify_value("t", "(4, zeros:8:f32, (relu, 2.5))",
                                               std::vector<std::string>{"relu"}, true);
  REQUIRE(std::holds_alternative<kiln::cli::TupleValue>(t));
  const auto &e = std::get<kiln::cli::TupleValue>(t).elems;
  REQUIRE(e.size() == 3);
  CHECK(std::get<int64_t>(e[0]) == 4);
  CHECK(std::holds_alternative<kiln::cli::TensorSpec>(e[1]));
  const auto &inner = std::get<kiln::cli::TupleValue>(e[2]).elems;
  CHECK(std::get<kiln::cli::FunctionRef>(inner[0]).name == "relu");
  CHECK(std::get<double>(inner[1]) == 2.5);
  CHECK(kiln::cli::parse_assignment("ptrs.1=y.npy", "--out", true).name == "ptrs.1");
  CHECK_THROWS_AS(kiln::cli::parse_assignment("ptrs.1=y.npy", "argument"), kiln::cli::UsageError);
  CHECK_THROWS_AS(kiln::cli::parse_assignment("ptrs.=y.npy", "--out", true), kiln::cli::UsageError);
}

TEST_CASE("cli: --grid takes 1 to 3 non-negative integers") {
  CHECK(kiln::cli::parse_grid("10") == kiln::Grid(10));
  CHECK(kiln::cli::parse_grid("4,8") == kiln::Grid(4, 8));
  CHECK(kiln::cli::parse_grid("4,8,2") == kiln::Grid(4, 8, 2));
  CHECK(kiln::cli::parse_grid("0") == kiln::Grid(0));
  // CUDA's limits, on every backend (issue 17.4).
  CHECK(kiln::cli::parse_grid("2147483647,65535,65535") == kiln::Grid(2147483647, 65535, 65535));
  for (const char *g : {"", "4,", ",4", "1,2,3,4", "a", "-1", "4x8", "4294967296", " 4", "4, 8",
                        "2147483648", "1,65536", "1,1,65536", "4194304,2097152,2097152"}) {
    CAPTURE(g);
    CHECK_THROWS_AS(kiln::cli::parse_grid(g), kiln::cli::UsageError);
  }
}

TEST_CASE("cli: NAME=VALUE splitting") {
  const kiln::cli::Assignment a = kiln::cli::parse_assignment("BLOCK=1024", "argument");
  CHECK(a.name == "BLOCK");
  CHECK(a.value == "1024");
  CHECK(kiln::cli::parse_assignment("p=@a=b.npy", "argument").value == "@a=b.npy");
  CHECK(contains(
      error_of<kiln::cli::UsageError>([] { kiln::cli::parse_assignment("foo", "argument"); }),
      "argument 'foo' is not NAME=VALUE"));
  for (const char *w : {"=1", "1x=2", "a-b=3", "n="}) {
    CAPTURE(w);
    CHECK_THROWS_AS(kiln::cli::parse_assignment(w, "argument"), kiln::cli::UsageError);
  }
}

TEST_CASE("cli: the common options parse into CommonOptions") {
  CLI::App app{"test", "kiln"};
  kiln::cli::CommonOptions o;
  kiln::cli::add_common_options(app, o);
  app.parse("--backend cuda --cache-dir /c --no-cache --threads 3 --json -v -v");
  CHECK(o.backend == "cuda");
  CHECK(o.cache_dir == "/c");
  CHECK(o.no_cache);
  CHECK(o.threads == 3);
  CHECK(o.json);
  CHECK(o.verbosity == 2);

  kiln::cli::CommonOptions defaults;
  CHECK(defaults.backend == "auto");
  CHECK(defaults.threads == 0);
  CHECK_FALSE(defaults.json);
}

TEST_CASE("cli: apply_common_options hands the knobs to the runtime's environment") {
  // Save and restore: other tests in this binary read the same variables.
  const char *names[] = {"KILN_CACHE_DIR", "KILN_COMPILE_THREADS", "KILN_NO_CACHE"};
  std::vector<std::optional<std::string>> saved;
  for (const char *n : names)
    saved.push_back(std::getenv(n) ? std::optional<std::string>(std::getenv(n)) : std::nullopt);

  kiln::cli::CommonOptions o;
  o.cache_dir = "/tmp/kiln-cli-test-cache";
  o.threads = 5;
  o.no_cache = true;
  kiln::cli::apply_common_options(o);
  CHECK(std::string(std::getenv("KILN_CACHE_DIR")) == "/tmp/kiln-cli-test-cache");
  CHECK(std::string(std::getenv("KILN_COMPILE_THREADS")) == "5");
  CHECK(std::string(std::getenv("KILN_NO_CACHE")) == "1"); // no disk or remote cache

  for (std::size_t i = 0; i < saved.size(); ++i) {
    if (saved[i])
      ::setenv(names[i], saved[i]->c_str(), 1);
    else
      ::unsetenv(names[i]);
  }
}

TEST_CASE("cli: usage errors exit 2 with one sentence and the --help hint") {
  struct Usage {
    std::vector<const char *> args;
    const char *says;
  };
  const Usage cases[] = {
      {{"run", "k.py", "add"}, "--grid is required"},
      {{"run", "k.py", "add", "--grid", "1", "--bogus"}, "--bogus"},
      {{"run", "k.py", "add", "--grid", "1,2,3,4"}, "--grid '1,2,3,4'"},
      {{"run", "k.py", "add", "--grid", "4x8"}, "--grid '4x8'"},
      {{"run", "k.py", "add", "--grid", "1", "n"}, "argument 'n' is not NAME=VALUE"},
      {{"run", "k.py", "add", "--grid", "1", "n=1", "n=2"}, "argument 'n' is given twice"},
      {{"run", "k.py", "add", "--grid", "1", "--out", "y=y.npy", "x=zeros:4:f32"},
       "--out y: there is no argument 'y'"},
      {{"run", "k.py", "add", "--grid", "1", "--num-warps", "8", "num_warps=4"},
       "num_warps is given both"},
      {{"run", "k.py", "add", "--grid", "1", "--backend", "gpu"}, "--backend"},
      {{"run", "k.py", "add", "--grid", "1", "--threads", "0"}, "--threads"},
      {{"run", "k.py", "add", "--grid", "1", "--repeat", "x"}, "--repeat"},
      {{"frobnicate"}, "frobnicate"},
  };
  for (const Usage &u : cases) {
    const CliRun r = run_kiln(u.args);
    CAPTURE(r.err);
    CHECK(r.status == kiln::cli::kExitUsage);
    CHECK(r.err.starts_with("error: "));
    CHECK(contains(r.err, u.says));
    CHECK(r.out.empty());
  }
  CHECK(contains(run_kiln({"run", "k.py", "add"}).err, "run 'kiln run --help'"));
}

TEST_CASE("cli: --help exits 0 and explains VALUE") {
  const CliRun r = run_kiln({"run", "--help"});
  CHECK(r.status == 0);
  CHECK(contains(r.out, "--grid"));
  CHECK(contains(r.out, "zeros:1000x64:f32"));
  CHECK(contains(r.out, "--no-cache"));
}

TEST_CASE("cli: exceptions become one 'error:' sentence and an exit status") {
  auto report = [](auto exception, std::string &err) {
    std::ostringstream s;
    const int status =
        kiln::cli::report_exception(std::make_exception_ptr(exception), s, "kiln run");
    err = s.str();
    return status;
  };
  std::string err;
  CHECK(report(kiln::cli::UsageError("bad thing"), err) == 2);
  CHECK(err == "error: bad thing\nrun 'kiln run --help'\n");
  CHECK(report(kiln::ArgumentError("add_kernel: parameter 'n' expects an int"), err) == 1);
  CHECK(err == "error: add_kernel: parameter 'n' expects an int\n");
  CHECK(report(kiln::RuntimeError("cuInit failed"), err) == 1);
  CHECK(report(std::runtime_error("boom"), err) == 1);
  CHECK(err == "error: boom\n");
  CHECK(report(42, err) == 1);
  CHECK(err.starts_with("error: "));
  CHECK(report(kiln::cli::ExitStatus{3}, err) == 3);
  CHECK(err.empty());

  const kiln::CompileError c("vector_add.py", 12, 5, "undefined name 'offz'", "    x = offz + 1");
  CHECK(report(c, err) == 1);
  CHECK(err.starts_with("error: vector_add.py does not compile\n"));
  CHECK(contains(err, c.what()));
}

TEST_CASE("cli: the cpu staging hands the kernel the host buffer itself") {
  const auto staging = kiln::cli::make_tensor_staging("cpu");
  CHECK(staging->backend() == kiln::Backend::cpu);
  HostTensor t = HostTensor::zeros(DType::f32, {16});
  const kiln::Tensor d = staging->to_device(t);
  CHECK(d.data == t.data());
  CHECK(d.device.backend == kiln::Backend::cpu);
  CHECK(kiln::cli::make_tensor_staging("auto")->backend() == kiln::Backend::cpu);
  // Until the cuda staging exists, asking for it fails clearly (exit 1).
  CHECK_THROWS_AS(kiln::cli::make_tensor_staging("cuda"), kiln::RuntimeError);
}

TEST_CASE("cli: compile times by stage: the first compile's, and the median, min and max of all") {
  kiln::cli::StageTimes times;
  auto compiled = [](std::vector<kiln::StageTime> t) {
    kiln::CompiledKernel k;
    k.times = std::move(t);
    return k;
  };
  times.add(compiled({{"ir", 1}, {"opt", 10}}));
  times.add(compiled({{"ir", 3}, {"opt", 30}}));
  times.add(
      compiled({{"ir", 2}, {"opt", 20}, {"cubin", 6}})); // a stage the others lacked counts 0 there
  const nlohmann::json j = times.json();
  CHECK(j["runs"] == 3);
  CHECK(j["first_ms"]["opt"] == 10.0);
  CHECK(j["median_ms"]["ir"] == 2.0);
  CHECK(j["median_ms"]["total"] == 28.0); // 11, 33, 28
  CHECK(j["min_ms"]["cubin"] == 0.0);
  CHECK(j["max_ms"]["cubin"] == 6.0);
  std::ostringstream out;
  times.print(out, "test");
  CHECK(contains(out.str(), "compile time by stage, ms (test)"));
  CHECK(contains(out.str(), "median (min-max) of 3"));
  CHECK(contains(out.str(), "20.00 (10.00-30.00)"));
}

TEST_CASE("cli: `kiln help [COMMAND]` prints the help, and a misspelt command gets a suggestion") {
  CliRun r = run_kiln({"help"}, true);
  CHECK(r.status == 0);
  CHECK(contains(r.out, "compile"));
  CHECK_FALSE(contains(r.out, "__hidden"));
  r = run_kiln({"help", "run"}, true);
  CHECK(r.status == 0);
  CHECK(contains(r.out, "--grid"));
  CHECK(contains(r.out, "Usage: kiln run"));
  r = run_kiln({"help", "rnu"}, true);
  CHECK(r.status == kiln::cli::kExitUsage);
  CHECK(contains(r.err, "'rnu' is not a kiln command; did you mean 'run'?"));
  r = run_kiln({"complie"}, true);
  CHECK(contains(r.err, "did you mean 'compile'?"));
  // Far from every command: the list, without the hidden one.
  r = run_kiln({"frobnicate"}, true);
  CHECK(contains(r.err, "the commands are run, compile"));
  CHECK_FALSE(contains(r.err, "__hidden"));
}

TEST_CASE("cli: a misspelt option gets a suggestion") {
  CliRun r = run_kiln({"run", "k.py", "add", "--grdi", "1"}, true);
  CHECK(r.status == kiln::cli::kExitUsage);
  CHECK(contains(r.err, "did you mean '--grid'?"));
  r = run_kiln({"compile", "k.py", "add", "--num-wraps", "4"}, true);
  CHECK(contains(r.err, "did you mean '--num-warps'?"));
  r = run_kiln({"run", "k.py", "add", "--grid", "1", "--frobnicate"}, true);
  CHECK(r.status == kiln::cli::kExitUsage);
  CHECK_FALSE(contains(r.err, "did you mean"));
}

TEST_CASE("cli: under --json a failure still prints one JSON object on stdout") {
  CliRun r = run_kiln({"run", "k.py", "add", "--json"}, true);
  CHECK(r.status == kiln::cli::kExitUsage);
  CHECK(contains(r.err, "error: --grid is required"));
  CHECK(r.out.starts_with("{\"error\":\""));
  CHECK(contains(r.out, "--grid is required"));
  CHECK(r.out.ends_with("\"exit_code\":2}\n"));
  r = run_kiln({"run", "/nonexistent/k.py", "add", "--grid", "1", "--json"}, true);
  CHECK(r.status == kiln::cli::kExitFailure);
  CHECK(r.out.starts_with("{\"error\":\""));
  CHECK(contains(r.out, "\"exit_code\":1"));
  // Without --json stdout stays empty.
  CHECK(run_kiln({"run", "k.py", "add"}, true).out.empty());
}

TEST_CASE("cli: --target cuda:sm_NN[a]: sm_90a is sm_90's wgmma target, what LLVM 19 lacks is one "
          "usage error") {
  struct Target {
    const char *target;
    const char *says;
  };
  const Target cases[] = {
      {"cuda:sm_100", "LLVM 19's NVPTX backend does not know sm_100"},
      {"cuda:sm_80a", "'a' after sm_80"},
      {"cuda:sm_90x", "'x' after sm_90"},
      {"cuda:sm_4", "needs a compute capability"},
  };
  for (const Target &t : cases) {
    const CliRun r = run_kiln({"compile", "k.py", "add", "--target", t.target}, true);
    CAPTURE(r.err);
    CHECK(r.status == kiln::cli::kExitUsage);
    CHECK(contains(r.err, t.says));
  }
}
