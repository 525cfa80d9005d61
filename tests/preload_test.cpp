// Warmup, serialize_specialization_data and preload (DESIGN.md §2 "Warmup
// and preload"), plus the two launch details a warm cache depends on: empty
// grids and grid functions (§2 "Launch").
//
// A "fresh Module of the same file" is what a second process would have: the
// same source, its own kernels and caches.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <kiln/hooks.hpp>
#include <kiln/kiln.hpp>

namespace {

std::string vector_add_path() { return std::string(KILN_SHARED_DIR) + "/kernels/vector_add.py"; }

struct HookGuard {
  HookGuard() { kiln::hooks() = kiln::Hooks{}; }
  ~HookGuard() { kiln::hooks() = kiln::Hooks{}; }
};

} // namespace

TEST_CASE("preload: serialize_specialization_data writes the kernel, its args and options as JSON") {
  const kiln::Module m = kiln::Module::from_file(vector_add_path());
  const kiln::Kernel add = m.kernel("add_kernel");
  std::vector<float> x(64), y(64), out(64);
  const kiln::LaunchResult r =
      add[{1}](x.data(), y.data(), out.data(), 50, kiln::arg("BLOCK", 64), kiln::arg("num_warps", 2));
  REQUIRE(r.kernel);
  const std::string text = add.serialize_specialization_data(r);
  nlohmann::json j;
  REQUIRE_NOTHROW(j = nlohmann::json::parse(text));
  CHECK(j["kernel"] == "add_kernel");
  CHECK(j["file"] == vector_add_path());
  CHECK(j["key"] == r.kernel->key);
  CHECK(j["args"] == nlohmann::json{{"x_ptr", "*fp32:D"},
                                    {"y_ptr", "*fp32:D"},
                                    {"out_ptr", "*fp32:D"},
                                    {"n", "i32"},
                                    {"BLOCK", 64}});
  CHECK(j["options"]["num_warps"] == 2);
  CHECK(j["options"]["num_stages"] == 3);
  CHECK(j["options"]["num_ctas"] == 1);
  CHECK(j["options"]["enable_fp_fusion"] == true);
  CHECK(j["options"]["debug"] == false);

  // A result that did not compile anything cannot be serialized; nor can
  // another kernel's.
  CHECK_THROWS_AS(add.serialize_specialization_data(kiln::LaunchResult{}), kiln::ArgumentError);
  const kiln::Kernel axpy = m.kernel("axpy_kernel");
  CHECK_THROWS_AS(axpy.serialize_specialization_data(r), kiln::ArgumentError);
}

TEST_CASE("preload: a fresh Module of the same file compiles the same key and specialization") {
  HookGuard guard;
  const kiln::Module first = kiln::Module::from_file(vector_add_path());
  const kiln::Kernel add = first.kernel("add_kernel");
  std::vector<float> x(100), y(100), out(100);
  std::vector<std::string> lines;
  std::vector<const kiln::CompiledKernel *> originals;
  // A few specializations: unaligned, divisible n, constexpr n = 1, options.
  originals.push_back(add[{1}](x.data(), y.data(), out.data(), 100, kiln::arg("BLOCK", 128)).kernel);
  originals.push_back(add[{1}](x.data() + 1, y.data(), out.data(), 17, kiln::arg("BLOCK", 32)).kernel);
  originals.push_back(add[{1}](x.data(), y.data(), out.data(), 1, kiln::arg("BLOCK", 16)).kernel);
  originals.push_back(
      add.warmup_with(x.data(), y.data(), out.data(), 64, kiln::arg("BLOCK", 64), kiln::arg("num_stages", 2)).kernel);
  for (const kiln::CompiledKernel *k : originals) {
    REQUIRE(k);
    lines.push_back(add.serialize_specialization_data(kiln::LaunchResult{k, kiln::BinarySource::memory, {}}));
  }
  CHECK(originals[1]->specialization == "(x_ptr: *fp32, y_ptr: *fp32:D, out_ptr: *fp32:D, n: i32, BLOCK: constexpr=32)");
  CHECK(originals[2]->specialization ==
        "(x_ptr: *fp32:D, y_ptr: *fp32:D, out_ptr: *fp32:D, n: constexpr=1, BLOCK: constexpr=16)");

  const kiln::Module second = kiln::Module::from_file(vector_add_path());
  const kiln::Kernel again = second.kernel("add_kernel");
  int compiles = 0;
  kiln::hooks().jit_post_compile_hook = [&](const kiln::CompileEvent &e) {
    ++compiles;
    CHECK(e.warmup);
  };
  for (size_t i = 0; i < lines.size(); ++i) {
    CAPTURE(lines[i]);
    const kiln::LaunchResult r = again.preload(lines[i]);
    REQUIRE(r.kernel);
    CHECK(r.kernel != originals[i]);
    CHECK(r.kernel->key == originals[i]->key);
    CHECK(r.kernel->specialization == originals[i]->specialization);
    CHECK(r.kernel->options == originals[i]->options);
    CHECK(again.serialize_specialization_data(r) == lines[i]);
  }
  CHECK(compiles == 4);
  // Preloading again is a memory hit.
  CHECK(again.preload(lines[0]).kernel->key == originals[0]->key);
  CHECK(compiles == 4);

  // A real launch that matches a preloaded specialization compiles nothing.
  std::vector<float> a(100, 1.0f), b(100, 2.0f), c(100, 0.0f);
  const kiln::LaunchResult r = again[{1}](a.data(), b.data(), c.data(), 100, kiln::arg("BLOCK", 128));
  CHECK(compiles == 4);
  CHECK(r.source == kiln::BinarySource::memory);
  CHECK(c[99] == 3.0f);
}

TEST_CASE("preload: annotated scalars of every width round-trip (fp64, u32, i8, i16, u8, u16)") {
  HookGuard guard;
  const char *const source = R"(
import triton
import triton.language as tl

@triton.jit
def scalars(out_ptr, a: tl.float64, b: tl.uint32, c: tl.int8, d: tl.int16, e: tl.uint8, f: tl.uint16):
    tl.store(out_ptr, a + b + c + d + e + f)
)";
  const kiln::Module m = kiln::Module::from_string(source, "scalars.py");
  const kiln::Kernel k = m.kernel("scalars");
  const kiln::LaunchResult r =
      k.warmup_with(kiln::Arg::mock(kiln::DType::f64), 2.5, 7, 3, 32, 5, 17);
  REQUIRE(r.kernel);
  CHECK(r.kernel->specialization ==
        "(out_ptr: *fp64:D, a: fp64, b: u32, c: i8, d: i16:D, e: u8, f: u16)");
  const std::string data = k.serialize_specialization_data(r);
  const kiln::Module fresh = kiln::Module::from_string(source, "scalars.py");
  const kiln::LaunchResult again = fresh.kernel("scalars").preload(data);
  REQUIRE(again.kernel);
  CHECK(again.kernel->specialization == r.kernel->specialization);
  CHECK(again.kernel->key == r.kernel->key);
}

TEST_CASE("preload: a jit function passed as a constexpr round-trips by name") {
  const std::string path = std::string(KILN_SHARED_DIR) + "/kernels/composition.py";
  const kiln::Module first = kiln::Module::from_file(path);
  const kiln::Kernel apply = first.kernel("apply_activation");
  const kiln::Kernel relu = first.kernel("relu");
  std::vector<float> x = {-2, -1, 0, 1, 2, 3, -4, 5}, out(8, 9.0f);
  const kiln::LaunchResult r = apply[{1}](x.data(), out.data(), 8, relu, kiln::arg("BLOCK", 8));
  REQUIRE(r.kernel);
  CHECK(out == std::vector<float>{0, 0, 0, 1, 2, 3, 0, 5});
  const std::string line = apply.serialize_specialization_data(r);
  CHECK(nlohmann::json::parse(line)["args"]["ACT"] == "relu");

  const kiln::Module second = kiln::Module::from_file(path);
  const kiln::Kernel apply2 = second.kernel("apply_activation"); // owns what `again` points at
  const kiln::LaunchResult again = apply2.preload(line);
  REQUIRE(again.kernel);
  CHECK(again.kernel->key == r.kernel->key);
  CHECK(again.kernel->specialization == r.kernel->specialization);
}

TEST_CASE("preload: data for another kernel or malformed data is an ArgumentError") {
  const kiln::Module m = kiln::Module::from_file(vector_add_path());
  const kiln::Kernel add = m.kernel("add_kernel");
  const kiln::Kernel axpy = m.kernel("axpy_kernel");
  const kiln::LaunchResult r = add.warmup_with(kiln::Arg::mock(kiln::DType::f32), kiln::Arg::mock(kiln::DType::f32),
                                               kiln::Arg::mock(kiln::DType::f32), 64, kiln::arg("BLOCK", 64));
  REQUIRE(r.kernel);
  const std::string line = add.serialize_specialization_data(r);

  try {
    axpy.preload(line);
    FAIL("preload of add_kernel's data into axpy_kernel must throw");
  } catch (const kiln::ArgumentError &e) {
    const std::string what = e.what();
    CAPTURE(what);
    CHECK(what.find("add_kernel") != std::string::npos);
    CHECK(what.find("axpy_kernel") != std::string::npos);
  }
  CHECK_THROWS_AS(add.preload("{not json"), kiln::ArgumentError);
  CHECK_THROWS_AS(add.preload(""), kiln::ArgumentError);
  CHECK_THROWS_AS(add.preload("[1, 2]"), kiln::ArgumentError);
  CHECK_THROWS_AS(add.preload(R"({"kernel": "add_kernel"})"), kiln::ArgumentError);
  CHECK_THROWS_AS(add.preload(R"({"kernel": "add_kernel", "args": [1]})"), kiln::ArgumentError);
  CHECK_THROWS_AS(add.preload(R"({"kernel": "add_kernel", "args": {"x_ptr": "*fp99"}})"), kiln::ArgumentError);
  CHECK_THROWS_AS(add.preload(R"({"kernel": "add_kernel", "args": {"nope": "i32"}})"), kiln::ArgumentError);
  // The parameters are all still required.
  CHECK_THROWS_AS(add.preload(R"({"kernel": "add_kernel", "args": {"x_ptr": "*fp32:D"}})"), kiln::ArgumentError);
  nlohmann::json bad_option = nlohmann::json::parse(line);
  bad_option["options"]["num_warps"] = "4";
  CHECK_THROWS_AS(add.preload(bad_option.dump()), kiln::ArgumentError);
  bad_option["options"]["num_warps"] = 3;
  CHECK_THROWS_AS(add.preload(bad_option.dump()), kiln::ArgumentError);
  bad_option["options"] = {{"warps", 4}};
  CHECK_THROWS_WITH_AS(add.preload(bad_option.dump()), doctest::Contains("Keyword argument warps was specified but unrecognised"),
                       kiln::ArgumentError);
}

TEST_CASE("preload: well-formed JSON of the wrong shape is an ArgumentError, not a json exception") {
  const kiln::Module m = kiln::Module::from_file(vector_add_path());
  const kiln::Kernel add = m.kernel("add_kernel");
  CHECK_THROWS_AS(add.preload(R"({"kernel": "add_kernel", "args": {"n": [1]}})"), kiln::ArgumentError);
  CHECK_THROWS_AS(add.preload(R"({"kernel": 5, "args": {}})"), kiln::ArgumentError);
  CHECK_THROWS_AS(add.preload(R"({"kernel": ["add_kernel"], "args": {}})"), kiln::ArgumentError);
}

TEST_CASE("preload: warmup with mock pointers specializes them as aligned") {
  const kiln::Module m = kiln::Module::from_file(vector_add_path());
  const kiln::Kernel add = m.kernel("add_kernel");
  const kiln::LaunchResult r = add.warmup_with(kiln::Arg::mock(kiln::DType::f32), kiln::Arg::mock(kiln::DType::f32),
                                               kiln::Arg::mock(kiln::DType::f32), 1000, kiln::arg("BLOCK", 256));
  REQUIRE(r.kernel);
  CHECK(r.kernel->specialization == "(x_ptr: *fp32:D, y_ptr: *fp32:D, out_ptr: *fp32:D, n: i32, BLOCK: constexpr=256)");
  // The warmed binary is the one aligned real pointers use.
  alignas(16) float x[8] = {}, y[8] = {}, out[8] = {};
  CHECK(add.warmup_with(x, y, out, 1000, kiln::arg("BLOCK", 256)).kernel == r.kernel);
  // A mock of another dtype is another specialization.
  const kiln::LaunchResult h = add.warmup_with(kiln::Arg::mock(kiln::DType::f16), kiln::Arg::mock(kiln::DType::f16),
                                               kiln::Arg::mock(kiln::DType::f16), 1000, kiln::arg("BLOCK", 256));
  REQUIRE(h.kernel);
  CHECK(h.kernel->specialization == "(x_ptr: *fp16:D, y_ptr: *fp16:D, out_ptr: *fp16:D, n: i32, BLOCK: constexpr=256)");
}

TEST_CASE("preload: an empty grid launch is a no-op") {
  const kiln::Module m = kiln::Module::from_file(vector_add_path());
  const kiln::Kernel add = m.kernel("add_kernel");
  std::vector<float> x(64, 1.0f), y(64, 2.0f), out(64, -1.0f);
  for (const kiln::Grid g : {kiln::Grid(0), kiln::Grid(4, 0), kiln::Grid(1, 1, 0)}) {
    const kiln::LaunchResult r = add[g](x.data(), y.data(), out.data(), 64, kiln::arg("BLOCK", 64));
    CHECK(r.kernel != nullptr); // compiled, just not launched
    CHECK(out[0] == -1.0f);
  }
  // A grid function may return an empty grid too.
  const kiln::GridFn none = [](const kiln::BoundArgs &) { return kiln::Grid(0); };
  add[none](x.data(), y.data(), out.data(), 64, kiln::arg("BLOCK", 64));
  CHECK(out[0] == -1.0f);
  add[{1}](x.data(), y.data(), out.data(), 64, kiln::arg("BLOCK", 64));
  CHECK(out[63] == 3.0f);
}

TEST_CASE("preload: a grid function is computed from the bound arguments") {
  const kiln::Module m = kiln::Module::from_file(vector_add_path());
  const kiln::Kernel add = m.kernel("add_kernel");
  const int n = 1000;
  std::vector<float> x(n), y(n), out(n, -1.0f);
  for (int i = 0; i < n; ++i) {
    x[i] = float(i);
    y[i] = float(2 * i);
  }
  int calls = 0;
  const kiln::GridFn grid = [&](const kiln::BoundArgs &args) {
    ++calls;
    CHECK(args.values().size() == 4 + 1);
    return kiln::Grid(static_cast<uint32_t>(kiln::cdiv(args["n"].as_int(), args["BLOCK"].as_int())));
  };
  add[grid](x.data(), y.data(), out.data(), n, kiln::arg("BLOCK", 128));
  CHECK(calls == 1);
  bool all = true;
  for (int i = 0; i < n; ++i)
    all &= out[i] == float(3 * i);
  CHECK(all); // 8 programs covered all 1000 elements
  // Warmup does not evaluate the grid.
  add.warmup_with(x.data(), y.data(), out.data(), n, kiln::arg("BLOCK", 128));
  CHECK(calls == 1);
  // A grid function asking for a parameter the kernel does not have is an error.
  const kiln::GridFn bad = [](const kiln::BoundArgs &args) { return kiln::Grid(uint32_t(args["N"].as_int())); };
  CHECK_THROWS_AS(add[bad](x.data(), y.data(), out.data(), n, kiln::arg("BLOCK", 128)), kiln::ArgumentError);
}
