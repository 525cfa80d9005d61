// The public API's lifetime and device traps (issue 13), written as a host
// program would meet them: a Launcher or LaunchResult kept past the handles
// it came from, and tensors labelled with another device than the launch's.
// Run under ASan, the lifetime cases read freed memory on the old code.
#include <doctest/doctest.h>

#include <string>
#include <thread>
#include <vector>

#include <kiln/kiln.hpp>

namespace {

const std::string kAddFile = std::string(KILN_SHARED_DIR) + "/kernels/vector_add.py";

std::string read_add_source() {
  return "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
         "def fill(out_ptr, n, BLOCK: tl.constexpr):\n"
         "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
         "    tl.store(out_ptr + offs, offs.to(tl.float32), mask=offs < n)\n";
}

struct CpuBackend {
  kiln::Device before = kiln::current_device();
  CpuBackend() { kiln::set_device(kiln::Device{kiln::Backend::cpu, 0}); }
  ~CpuBackend() { kiln::set_device(before); }
};

} // namespace

TEST_CASE("api traps: a Launcher outlives the Kernel and Module it came from") {
  CpuBackend cpu;
  std::vector<float> out(100, -1.0f);
  auto launcher = [] {
    kiln::Module m = kiln::Module::from_string(read_add_source(), "fill.py");
    return m.kernel("fill")[{1}];
  }(); // the Module and Kernel handles are gone here
  const kiln::LaunchResult r = launcher(out.data(), 100, kiln::arg("BLOCK", 128));
  REQUIRE(r.kernel != nullptr);
  CHECK(r.kernel->name == "fill");
  CHECK(out[99] == 99.0f);
}

TEST_CASE("api traps: a LaunchResult keeps its kernel alive when the Module was a temporary") {
  CpuBackend cpu;
  std::vector<float> out(16, -1.0f);
  const kiln::LaunchResult r = kiln::Module::from_string(read_add_source(), "fill.py")
                                   .kernel("fill")[{1}](out.data(), 16, kiln::arg("BLOCK", 16));
  REQUIRE(r.kernel != nullptr);
  CHECK(r.kernel->name == "fill");
  CHECK(kiln::Kernel::repr(*r.kernel).starts_with("fill["));
  CHECK(out[15] == 15.0f);

  const kiln::LaunchResult w =
      kiln::Module::from_string(read_add_source(), "fill.py")
          .kernel("fill")
          .warmup_with(kiln::Arg::mock(kiln::DType::f32), 16, kiln::arg("BLOCK", 16));
  REQUIRE(w.kernel != nullptr);
  CHECK(w.kernel->name == "fill");
}

TEST_CASE("api traps: a tensor labelled with another device than the launch's is refused") {
  CpuBackend cpu;
  kiln::Module m = kiln::Module::from_file(kAddFile);
  kiln::Kernel add = m.kernel("add_kernel");
  std::vector<float> x(8, 1.0f), y(8, 2.0f), out(8, -1.0f);
  const kiln::Device cuda0{kiln::Backend::cuda, 0};
  const kiln::Device host{kiln::Backend::cpu, 0};

  // Labelled cuda:0, launched on the CPU: refused before anything runs,
  // naming the argument and both devices.
  const kiln::Tensor on_gpu(out.data(), {8}, cuda0);
  try {
    add[{1}](x.data(), y.data(), on_gpu, 8, kiln::arg("BLOCK", 8));
    FAIL("a cuda:0 tensor launched on the cpu");
  } catch (const kiln::ArgumentError &e) {
    const std::string what = e.what();
    CHECK(what.find("'out_ptr'") != std::string::npos);
    CHECK(what.find("cuda:0") != std::string::npos);
    CHECK(what.find("launch is on cpu") != std::string::npos);
  }
  CHECK(out[0] == -1.0f);

  // The same through DLPack.
  int64_t shape[1] = {8};
  DLTensor dl{};
  dl.data = x.data();
  dl.device = {kDLCUDA, 0};
  dl.ndim = 1;
  dl.dtype = {kDLFloat, 32, 1};
  dl.shape = shape;
  const DLTensor *dlp = &dl;
  CHECK_THROWS_WITH_AS(add[{1}](dlp, y.data(), out.data(), 8, kiln::arg("BLOCK", 8)),
                       doctest::Contains("'x_ptr' is a tensor on cuda:0"), kiln::ArgumentError);

  // Warmup launches nothing, so it takes any device's tensors.
  CHECK(add.warmup_with(on_gpu, y.data(), out.data(), 8, kiln::arg("BLOCK", 8)).kernel != nullptr);

  // Labelled cpu, unlabelled, and raw pointers launch on the CPU.
  add[{1}](kiln::Tensor(x.data(), {8}, host), kiln::Tensor(y.data(), {8}), out.data(), 8,
           kiln::arg("BLOCK", 8));
  CHECK(out[7] == 3.0f);
}

TEST_CASE("api traps: the device check looks inside tuples") {
  CpuBackend cpu;
  kiln::Module m = kiln::Module::from_string(
      "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
      "def pair(p, n, BLOCK: tl.constexpr):\n"
      "    offs = tl.arange(0, BLOCK)\n"
      "    tl.store(p[0] + offs, tl.load(p[1] + offs, mask=offs < n), mask=offs < n)\n",
      "pair.py");
  std::vector<float> a(4, 0.0f), b(4, 5.0f);
  const kiln::Tensor gpu_b(b.data(), {4}, kiln::Device{kiln::Backend::cuda, 1});
  CHECK_THROWS_WITH_AS(
      m.kernel("pair")[{1}](kiln::tuple(a.data(), gpu_b), 4, kiln::arg("BLOCK", 4)),
      doctest::Contains("'p' is a tensor on cuda:1"), kiln::ArgumentError);
  m.kernel("pair")[{1}](kiln::tuple(a.data(), b.data()), 4, kiln::arg("BLOCK", 4));
  CHECK(a[3] == 5.0f);
}

TEST_CASE("api traps: the current device is per thread, as in the seed") {
  CpuBackend cpu; // this thread: cpu
  const kiln::Device cuda1{kiln::Backend::cuda, 1};
  kiln::Device seen_there{}, seen_after{};
  std::thread other([&] {
    kiln::set_device(cuda1);
    seen_there = kiln::current_device();
  });
  other.join();
  seen_after = kiln::current_device();
  CHECK(seen_there == cuda1);
  CHECK(seen_after == kiln::Device{kiln::Backend::cpu, 0}); // not moved by the other thread

  // A launch here still runs on this thread's device.
  std::vector<float> out(16, -1.0f);
  kiln::Module::from_string(read_add_source(), "fill.py")
      .kernel("fill")[{1}](out.data(), 16, kiln::arg("BLOCK", 16));
  CHECK(out[15] == 15.0f);
}
