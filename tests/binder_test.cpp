// The binder and specializer (DESIGN.md §2 "Arguments and specialization",
// the seed's binder / specialize_impl), read back through what a user sees:
// `kernel.warmup(args).kernel->specialization`.
//
// The kernels here have empty bodies: what is under test is how arguments
// turn into (type, attribute) pairs, not code generation, and an empty
// kernel compiles in a few milliseconds. Every row of a table compiles at
// most one specialization; rows that bind the same way share it.
#include <doctest/doctest.h>

#include <climits>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <kiln/kiln.hpp>

namespace {

constexpr const char *kSource = R"(
import triton
import triton.language as tl


@triton.jit
def one_ptr(x_ptr):
    pass


@triton.jit
def one_int(n):
    pass


@triton.jit
def one_float(f):
    pass


@triton.jit
def const_ptr(x_ptr: tl.const, y_ptr):
    pass


@triton.jit
def add_like(x_ptr, n, BLOCK: tl.constexpr = 1024):
    pass


@triton.jit(do_not_specialize=["n"])
def dns_by_name(n, m):
    pass


@triton.jit(do_not_specialize=[0])
def dns_by_index(n, m):
    pass


@triton.jit(do_not_specialize_on_alignment=["x_ptr", "n"])
def dns_alignment(x_ptr, n):
    pass


@triton.jit
def annotated(x: tl.int64, f: tl.float32, u: tl.uint32):
    pass


@triton.jit
def constexprs(A: tl.constexpr, B: tl.constexpr, C: tl.constexpr, D: tl.constexpr):
    pass


@triton.jit
def defaults(x_ptr, n=16, FLAG: tl.constexpr = True, SCALE: tl.constexpr = 0.5):
    pass


@triton.jit
def identity(x):
    return x


@triton.jit
def higher_order(x_ptr, FN: tl.constexpr):
    pass
)";

const kiln::Module &module() {
  static const kiln::Module m = kiln::Module::from_string(kSource, "binder_test.py");
  return m;
}

/// The kernels live as long as the test binary: a compiled kernel (what
/// LaunchResult::kernel points at) belongs to its Kernel, and the Module
/// keeps only weak references to its kernels. The map is leaked on purpose:
/// a Kernel destroyed after main() returns would unload its binaries from a
/// CPU driver that the runtime's static Context has already destroyed.
const kiln::Kernel &kernel(const std::string &name) {
  static auto *kernels = new std::map<std::string, kiln::Kernel>;
  auto it = kernels->find(name);
  if (it == kernels->end())
    it = kernels->emplace(name, module().kernel(name)).first;
  return it->second;
}

/// Memory for pointer arguments: 64-byte aligned, so base + 0 is 16-byte
/// aligned and base + 4 bytes is not. Never dereferenced (warmup only).
alignas(64) unsigned char g_buffer[256];
void *aligned() { return g_buffer; }
void *unaligned() { return g_buffer + 4; }
template <class T> T *typed(void *p) { return static_cast<T *>(p); }

std::string spec_of(const kiln::Kernel &k, const std::vector<kiln::Arg> &args) {
  const kiln::LaunchResult r = k.warmup(args);
  REQUIRE(r.kernel != nullptr);
  return r.kernel->specialization;
}

struct Row {
  const char *what;
  const char *kernel;
  std::vector<kiln::Arg> args;
  std::string want;
};

void check_rows(const std::vector<Row> &rows) {
  for (const Row &row : rows) {
    const std::string what = row.what;
    CAPTURE(what);
    try {
      CHECK(spec_of(kernel(row.kernel), row.args) == row.want);
    } catch (const kiln::Error &e) {
      FAIL_CHECK(row.what << " threw: " << e.what());
    }
  }
}

using kiln::arg;
using kiln::Arg;
using kiln::DType;

} // namespace

TEST_CASE("binder: pointers specialize on dtype and 16-byte alignment") {
  check_rows({
      {"aligned float*", "one_ptr", {typed<float>(aligned())}, "(x_ptr: *fp32:D)"},
      {"float* + 4 bytes", "one_ptr", {typed<float>(unaligned())}, "(x_ptr: *fp32)"},
      {"const float* is still *fp32", "one_ptr", {static_cast<const float *>(typed<float>(aligned()))},
       "(x_ptr: *fp32:D)"},
      {"double*", "one_ptr", {typed<double>(aligned())}, "(x_ptr: *fp64:D)"},
      {"int8_t*", "one_ptr", {typed<int8_t>(aligned())}, "(x_ptr: *i8:D)"},
      {"uint8_t* unaligned", "one_ptr", {typed<uint8_t>(unaligned())}, "(x_ptr: *u8)"},
      {"int16_t*", "one_ptr", {typed<int16_t>(aligned())}, "(x_ptr: *i16:D)"},
      {"int32_t*", "one_ptr", {typed<int32_t>(aligned())}, "(x_ptr: *i32:D)"},
      {"int64_t*", "one_ptr", {typed<int64_t>(aligned())}, "(x_ptr: *i64:D)"},
      {"uint32_t*", "one_ptr", {typed<uint32_t>(aligned())}, "(x_ptr: *u32:D)"},
      {"bool*", "one_ptr", {typed<bool>(aligned())}, "(x_ptr: *i1:D)"},
      {"Tensor fp16", "one_ptr", {kiln::Tensor(aligned(), DType::f16, {8})}, "(x_ptr: *fp16:D)"},
      {"Tensor bf16 unaligned", "one_ptr", {kiln::Tensor(unaligned(), DType::bf16, {8})}, "(x_ptr: *bf16)"},
      {"Tensor i8", "one_ptr", {kiln::Tensor(aligned(), DType::i8, {8})}, "(x_ptr: *i8:D)"},
      {"Tensor of a typed pointer", "one_ptr", {kiln::Tensor(typed<int32_t>(aligned()), {4})}, "(x_ptr: *i32:D)"},
      {"mock fp32 (MockTensor)", "one_ptr", {Arg::mock(DType::f32)}, "(x_ptr: *fp32:D)"},
      {"mock bf16", "one_ptr", {Arg::mock(DType::bf16)}, "(x_ptr: *bf16:D)"},
      {"tl.const makes *k", "const_ptr", {typed<float>(aligned()), typed<float>(aligned())},
       "(x_ptr: *kfp32:D, y_ptr: *fp32:D)"},
      {"tl.const unaligned fp16", "const_ptr",
       {kiln::Tensor(unaligned(), DType::f16), kiln::Tensor(unaligned(), DType::f16)},
       "(x_ptr: *kfp16, y_ptr: *fp16)"},
  });
}

TEST_CASE("binder: a DLPack tensor binds like a kiln::Tensor of its dtype") {
  int64_t shape[1] = {8};
  DLTensor t{};
  t.data = aligned();
  t.device = {kDLCPU, 0};
  t.ndim = 1;
  t.dtype = {kDLFloat, 16, 1};
  t.shape = shape;
  // A const pointer: Arg(T *) would take a `DLTensor *` as a typed pointer.
  const DLTensor *dl = &t;
  CHECK(spec_of(kernel("one_ptr"), {Arg(dl)}) == "(x_ptr: *fp16:D)");
  t.byte_offset = 4; // the address a kernel sees is data + byte_offset
  CHECK(spec_of(kernel("one_ptr"), {Arg(dl)}) == "(x_ptr: *fp16)");
  t.byte_offset = 0;
  t.dtype = {kDLBfloat, 16, 1};
  CHECK(spec_of(kernel("one_ptr"), {Arg(dl)}) == "(x_ptr: *bf16:D)");
  t.dtype = {kDLFloat, 8, 1}; // fp8 has no kiln dtype
  CHECK_THROWS_AS(spec_of(kernel("one_ptr"), {Arg(dl)}), kiln::ArgumentError);
}

TEST_CASE("binder: the tl.const annotation is accepted only as the module analysis allows") {
  // `tl.const` marks a read-only pointer. Spelled through the full module
  // path it means the same; an unknown tl.* annotation is a CompileError at
  // load time, not at launch.
  const kiln::Module m = kiln::Module::from_string(R"(
import triton
import triton.language as tl

@triton.jit
def k(x_ptr: triton.language.const):
    pass
)");
  CHECK(m.kernel("k").params()[0].is_const);
  CHECK(spec_of(m.kernel("k"), {typed<float>(aligned())}) == "(x_ptr: *kfp32:D)");
  // An unknown tl.* annotation is an error when the kernel is used, not at load.
  const kiln::Module bad = kiln::Module::from_string(R"(
import triton
import triton.language as tl

@triton.jit
def k(x_ptr: tl.constant):
    pass
)");
  CHECK_THROWS_AS(bad.kernel("k"), kiln::CompileError);
  // The KernelParam of the shared module reports the annotation as written.
  const kiln::KernelParam &p = kernel("const_ptr").params()[0];
  CHECK(p.annotation == "tl.const");
  CHECK(p.is_const);
  CHECK_FALSE(p.is_constexpr);
  CHECK_FALSE(kernel("const_ptr").params()[1].is_const);
}

TEST_CASE("binder: integers pick i32, i64 or u64 and specialize on 1 and on divisibility by 16") {
  const int64_t over_i32 = int64_t{INT32_MAX} + 1;
  const uint64_t over_i64 = uint64_t{INT64_MAX} + 1;
  check_rows({
      {"17", "one_int", {17}, "(n: i32)"},
      {"16", "one_int", {16}, "(n: i32:D)"},
      {"32", "one_int", {32}, "(n: i32:D)"},
      {"0 is divisible by 16", "one_int", {0}, "(n: i32:D)"},
      {"-16", "one_int", {-16}, "(n: i32:D)"},
      {"-17", "one_int", {-17}, "(n: i32)"},
      {"1", "one_int", {1}, "(n: constexpr=1)"},
      {"1 as uint8_t", "one_int", {uint8_t{1}}, "(n: constexpr=1)"},
      {"1 as int64_t", "one_int", {int64_t{1}}, "(n: constexpr=1)"},
      {"INT32_MAX", "one_int", {int64_t{INT32_MAX}}, "(n: i32)"},
      {"INT32_MIN (a multiple of 16)", "one_int", {int64_t{INT32_MIN}}, "(n: i32:D)"},
      {"INT32_MAX + 1 (a power of two)", "one_int", {over_i32}, "(n: i64:D)"},
      {"INT32_MAX + 2", "one_int", {over_i32 + 1}, "(n: i64)"},
      {"INT32_MIN - 1", "one_int", {int64_t{INT32_MIN} - 1}, "(n: i64)"},
      {"INT64_MAX as uint64_t is still i64", "one_int", {uint64_t{INT64_MAX}}, "(n: i64)"},
      {"INT64_MAX + 1 as uint64_t", "one_int", {over_i64}, "(n: u64:D)"},
      {"UINT64_MAX", "one_int", {UINT64_MAX}, "(n: u64)"},
      {"a small uint32_t binds as a signed int", "one_int", {uint32_t{17}}, "(n: i32)"},
  });
}

TEST_CASE("binder: do_not_specialize, by name and by index") {
  check_rows({
      {"by name: 1 stays i32", "dns_by_name", {1, 1}, "(n: i32, m: constexpr=1)"},
      {"by name: 16 has no D", "dns_by_name", {16, 16}, "(n: i32, m: i32:D)"},
      {"by name: still i64 when large", "dns_by_name", {int64_t{1} << 40, 17}, "(n: i64, m: i32)"},
      {"by index: 1 stays i32", "dns_by_index", {1, 1}, "(n: i32, m: constexpr=1)"},
      {"by index: 16 has no D", "dns_by_index", {16, 16}, "(n: i32, m: i32:D)"},
  });
  const auto &params = kernel("dns_by_index").params();
  CHECK(params[0].do_not_specialize);
  CHECK_FALSE(params[1].do_not_specialize);
}

TEST_CASE("binder: do_not_specialize_on_alignment drops D but keeps the value 1") {
  check_rows({
      {"aligned pointer, 16", "dns_alignment", {typed<float>(aligned()), 16}, "(x_ptr: *fp32, n: i32)"},
      {"1 still becomes a constexpr", "dns_alignment", {typed<float>(aligned()), 1},
       "(x_ptr: *fp32, n: constexpr=1)"},
  });
  CHECK(kernel("dns_alignment").params()[0].do_not_specialize_on_alignment);
  // The two aligned/unaligned pointers bind to one compiled kernel.
  const auto a = kernel("dns_alignment").warmup_with(typed<float>(aligned()), 17);
  const auto b = kernel("dns_alignment").warmup_with(typed<float>(unaligned()), 17);
  CHECK(a.kernel == b.kernel);
}

TEST_CASE("binder: floats, bools and None") {
  check_rows({
      {"float", "one_float", {1.5f}, "(f: fp32)"},
      {"double is fp32 too", "one_float", {2.5}, "(f: fp32)"},
      {"1.0 is not specialized on value", "one_float", {1.0}, "(f: fp32)"},
      {"16.0 gets no D", "one_float", {16.0}, "(f: fp32)"},
      {"0.0", "one_float", {0.0f}, "(f: fp32)"},
      {"nullptr is constexpr None", "one_float", {nullptr}, "(f: constexpr=None)"},
      {"a default Arg is None", "one_float", {Arg()}, "(f: constexpr=None)"},
  });
  // One compile serves every float value.
  CHECK(kernel("one_float").warmup_with(1.0).kernel == kernel("one_float").warmup_with(-3.25).kernel);
  // Bools are never specialized on their value.
  CHECK(kernel("one_float").warmup_with(true).kernel == kernel("one_float").warmup_with(false).kernel);
}

TEST_CASE("binder: a bool is spelled u1 in the specialization, as DESIGN.md §2 and Triton spell it" *
          doctest::may_fail()) {
  // DESIGN.md §2: "bool: `u1`". The runtime's JSON (serialize_specialization_data)
  // writes u1, but CompiledKernel::specialization (and so the hooks' repr)
  // prints the DType name "i1" (compiler/compile.cpp ParamSpec::type_str).
  const std::string spec = spec_of(kernel("one_float"), {true});
  CHECK(spec == "(f: u1)");
}

TEST_CASE("binder: annotations fix the type") {
  check_rows({
      {"5 as tl.int64", "annotated", {5, 2.0, 3}, "(x: i64, f: fp32, u: u32)"},
      {"16 as tl.int64 keeps D", "annotated", {16, 2.0, 32}, "(x: i64:D, f: fp32, u: u32:D)"},
      {"1 as tl.int64 is not a constexpr", "annotated", {1, 1.0, 1}, "(x: i64, f: fp32, u: u32)"},
      {"an int for a tl.float32 is fp32 without D", "annotated", {5, 16, 3}, "(x: i64, f: fp32, u: u32)"},
      {"True for an int annotation is that int type, not u1", "annotated", {true, 2.0, false}, "(x: i64, f: fp32, u: u32)"},
  });
  CHECK(kernel("annotated").params()[0].annotation == "tl.int64");
  // A tensor for a scalar annotation and a float for an integer one are errors.
  CHECK_THROWS_AS(kernel("annotated").warmup_with(typed<float>(aligned()), 1.0, 3), kiln::ArgumentError);
  CHECK_THROWS_AS(kernel("annotated").warmup_with(2.5, 1.0, 3), kiln::ArgumentError);
}

TEST_CASE("binder: constexpr parameters are specialized on their value") {
  check_rows({
      {"ints", "constexprs", {1024, 0, -7, 1}, "(A: constexpr=1024, B: constexpr=0, C: constexpr=-7, D: constexpr=1)"},
      {"float, bool, None", "constexprs", {0.5, true, false, nullptr},
       "(A: constexpr=0.5, B: constexpr=True, C: constexpr=False, D: constexpr=None)"},
      {"a whole float", "constexprs", {2.0, 3, 4, 5},
       "(A: constexpr=2.0, B: constexpr=3, C: constexpr=4, D: constexpr=5)"},
  });
  CHECK(kernel("constexprs").params()[0].is_constexpr);
  // Each value is its own key.
  CHECK(kernel("constexprs").warmup_with(1, 2, 3, 4).kernel != kernel("constexprs").warmup_with(1, 2, 3, 5).kernel);
  // A value too large for a constexpr int is an error, not a wrong key.
  CHECK_THROWS_AS(kernel("constexprs").warmup_with(UINT64_MAX, 2, 3, 4), kiln::ArgumentError);
}

TEST_CASE("binder: a jit function passed as an argument is a constexpr naming it") {
  const kiln::Kernel fn = kernel("identity");
  CHECK(spec_of(kernel("higher_order"), {typed<float>(aligned()), fn}) == "(x_ptr: *fp32:D, FN: constexpr=identity)");
  // ...to a runtime parameter too, as Triton does for any jit function argument.
  CHECK(spec_of(kernel("one_int"), {fn}) == "(n: constexpr=identity)");
}

TEST_CASE("binder: defaults apply to parameters left out") {
  check_rows({
      {"BLOCK defaults to 1024", "add_like", {typed<float>(aligned()), 17}, "(x_ptr: *fp32:D, n: i32, BLOCK: constexpr=1024)"},
      {"BLOCK given", "add_like", {typed<float>(aligned()), 17, 128}, "(x_ptr: *fp32:D, n: i32, BLOCK: constexpr=128)"},
      {"every default", "defaults", {typed<float>(aligned())},
       "(x_ptr: *fp32:D, n: i32:D, FLAG: constexpr=True, SCALE: constexpr=0.5)"},
      {"a runtime default overridden", "defaults", {typed<float>(aligned()), 17},
       "(x_ptr: *fp32:D, n: i32, FLAG: constexpr=True, SCALE: constexpr=0.5)"},
      {"a later default by keyword", "defaults", {typed<float>(aligned()), arg("SCALE", 2.0)},
       "(x_ptr: *fp32:D, n: i32:D, FLAG: constexpr=True, SCALE: constexpr=2.0)"},
  });
  const auto &params = kernel("defaults").params();
  CHECK_FALSE(params[0].has_default);
  CHECK(params[1].has_default);
  CHECK(params[3].has_default);
}

TEST_CASE("binder: positional and keyword arguments bind the same way") {
  const kiln::Kernel &k = kernel("add_like");
  float *x = typed<float>(aligned());
  const auto positional = k.warmup_with(x, 17, 256);
  const auto keywords = k.warmup_with(arg("BLOCK", 256), arg("n", 17), arg("x_ptr", x));
  const auto mixed = k.warmup_with(x, arg("BLOCK", 256), arg("n", 17));
  REQUIRE(positional.kernel);
  CHECK(positional.kernel->specialization == "(x_ptr: *fp32:D, n: i32, BLOCK: constexpr=256)");
  CHECK(keywords.kernel == positional.kernel);
  CHECK(mixed.kernel == positional.kernel);
}

TEST_CASE("binder: options are part of the key and are checked") {
  const kiln::Kernel &k = kernel("add_like");
  float *x = typed<float>(aligned());
  const auto plain = k.warmup_with(x, 17);
  const auto warps4 = k.warmup_with(x, 17, arg("num_warps", 4));
  const auto warps8 = k.warmup_with(x, 17, arg("num_warps", 8));
  const auto stages2 = k.warmup_with(x, 17, arg("num_stages", 2));
  REQUIRE(plain.kernel);
  REQUIRE(warps8.kernel);
  REQUIRE(stages2.kernel);
  CHECK(plain.kernel->options.num_warps == 4);
  CHECK(plain.kernel->options.num_stages == 3);
  CHECK(warps4.kernel == plain.kernel); // the default spelled out is the same key
  CHECK(warps8.kernel != plain.kernel);
  CHECK(warps8.kernel->options.num_warps == 8);
  CHECK(warps8.kernel->key != plain.kernel->key);
  CHECK(stages2.kernel != plain.kernel);
  CHECK(stages2.kernel != warps8.kernel);
  CHECK(stages2.kernel->options.num_stages == 2);
  CHECK(stages2.kernel->key != plain.kernel->key);
  // The specialization itself is the same; only the options differ.
  CHECK(warps8.kernel->specialization == plain.kernel->specialization);

  CHECK_THROWS_WITH_AS(k.warmup_with(x, 17, arg("num_warps", 3)), doctest::Contains("num_warps"), kiln::ArgumentError);
  CHECK_THROWS_AS(k.warmup_with(x, 17, arg("num_warps", 0)), kiln::ArgumentError);
  CHECK_THROWS_AS(k.warmup_with(x, 17, arg("num_warps", 64)), kiln::ArgumentError);
  CHECK_THROWS_AS(k.warmup_with(x, 17, arg("num_warps", 4.0)), kiln::ArgumentError);
  CHECK_THROWS_AS(k.warmup_with(x, 17, arg("num_stages", 0)), kiln::ArgumentError);
  CHECK_THROWS_AS(k.warmup_with(x, 17, arg("num_ctas", 2)), kiln::ArgumentError);
  CHECK_THROWS_AS(k.warmup_with(x, 17, arg("debug", 1.5)), kiln::ArgumentError);
}

TEST_CASE("binder: Triton's maxnreg, launch_cooperative_grid and launch_pdl take their defaults") {
  const kiln::Kernel &k = kernel("add_like");
  float *x = typed<float>(aligned());
  const auto plain = k.warmup_with(x, 17);
  // The seed's defaults spelled out are what kiln does: the same binary.
  CHECK(k.warmup_with(x, 17, arg("maxnreg", nullptr)).kernel == plain.kernel);
  CHECK(k.warmup_with(x, 17, arg("launch_cooperative_grid", false)).kernel == plain.kernel);
  CHECK(k.warmup_with(x, 17, arg("launch_pdl", false)).kernel == plain.kernel);
  // Asking for the feature is refused by name, not "unrecognised".
  for (const char *name : {"maxnreg", "launch_cooperative_grid", "launch_pdl"}) {
    CAPTURE(name);
    const kiln::Arg value = std::string_view(name) == "maxnreg" ? kiln::Arg(128) : kiln::Arg(true);
    const std::string why =
        std::string("option ") + name + " is a Triton launch option kiln does not support yet";
    CHECK_THROWS_WITH_AS(k.warmup_with(x, 17, arg(name, value)), doctest::Contains(why.c_str()),
                         kiln::ArgumentError);
  }
}

TEST_CASE("binder: @jit(debug=True) turns debug on unless the launch says otherwise") {
  const kiln::Module m = kiln::Module::from_string(R"(
import triton
import triton.language as tl

@triton.jit(debug=True)
def k(x_ptr):
    pass
)");
  CHECK(m.kernel("k").warmup_with(typed<float>(aligned())).kernel->options.debug);
  CHECK_FALSE(m.kernel("k").warmup_with(typed<float>(aligned()), arg("debug", false)).kernel->options.debug);
}

TEST_CASE("binder: argument errors name the kernel and the parameter") {
  const kiln::Kernel &k = kernel("add_like");
  float *x = typed<float>(aligned());
  SUBCASE("an unknown keyword") {
    CHECK_THROWS_WITH_AS(k.warmup_with(x, 17, arg("BLOK", 64)),
                         doctest::Contains("Keyword argument BLOK was specified but unrecognised"), kiln::ArgumentError);
  }
  SUBCASE("a missing argument") {
    CHECK_THROWS_WITH_AS(k.warmup_with(x), doctest::Contains("'n'"), kiln::ArgumentError);
    CHECK_THROWS_WITH_AS(k.warmup_with(x), doctest::Contains("add_like"), kiln::ArgumentError);
  }
  SUBCASE("too many arguments") {
    CHECK_THROWS_WITH_AS(k.warmup_with(x, 17, 64, 5), doctest::Contains("add_like"), kiln::ArgumentError);
  }
  SUBCASE("the same parameter twice") {
    CHECK_THROWS_WITH_AS(k.warmup_with(x, 17, arg("n", 18)), doctest::Contains("'n'"), kiln::ArgumentError);
  }
  SUBCASE("a tensor for a constexpr") {
    CHECK_THROWS_WITH_AS(k.warmup_with(x, 17, typed<float>(aligned())), doctest::Contains("BLOCK"),
                         kiln::ArgumentError);
  }
}

TEST_CASE("binder: a kernel with 129 parameters launches (mamba3's forward kernel has as many), "
          "257 is a clear error") {
  auto source_with = [](int n) {
    std::string s =
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef many(out_ptr";
    for (int i = 1; i < n; ++i)
      s += ", a" + std::to_string(i);
    s += "):\n    tl.store(out_ptr, a1 + a" + std::to_string(n - 1) + ")\n";
    return s;
  };
  constexpr int kParams = 129;
  const kiln::Module m = kiln::Module::from_string(source_with(kParams), "many.py");
  float out = 0;
  std::vector<kiln::Arg> args{kiln::Arg(&out)};
  for (int i = 1; i < kParams; ++i)
    args.emplace_back(i * 1.0f);
  m.kernel("many").run(args, kiln::Grid{1});
  CHECK(out == 1.0f + (kParams - 1));

  const kiln::Module over = kiln::Module::from_string(source_with(257), "over.py");
  CHECK_THROWS_WITH_AS(over.kernel("many"),
                       doctest::Contains("has 257 parameters; kiln supports at most 256"),
                       kiln::ArgumentError);
}
