// Debug aids: device_assert checked in debug builds on the CPU, and
// KILN_DUMP_DIR's stage files (through the compiler's dump_dir, which is
// what the knob sets).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include <kiln/kiln.hpp>

#include "compiler/compile.hpp"
#include "compiler/frontend/parser.hpp"

namespace {

const char *const kAssertKernel = R"(import triton
import triton.language as tl


@triton.jit
def check(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.device_assert(x >= 0, "x must be non-negative")
    tl.store(x_ptr + offs, x * 2, mask=offs < n)
)";

} // namespace

TEST_CASE("debug: a failed device_assert in a debug launch is an error naming the file, line and message") {
  kiln::Module m = kiln::Module::from_string(kAssertKernel, "check.py");
  kiln::Kernel k = m.kernel("check");
  std::vector<int32_t> good = {1, 2, 3}, bad = {1, -2, 3};
  k[{1}](good.data(), 3, kiln::arg("BLOCK", 16), kiln::arg("debug", true));
  CHECK(good == std::vector<int32_t>{2, 4, 6});
  CHECK_THROWS_WITH_AS(k[{1}](bad.data(), 3, kiln::arg("BLOCK", 16), kiln::arg("debug", true)),
                       "device assertion failed at check.py:9: x must be non-negative", kiln::RuntimeError);
  // Without debug the assert is not compiled in, as in Triton.
  std::vector<int32_t> unchecked = {1, -2, 3};
  k[{1}](unchecked.data(), 3, kiln::arg("BLOCK", 16));
  CHECK(unchecked == std::vector<int32_t>{2, -4, 6});
}

TEST_CASE("debug: a dump folder gets every stage of a compile") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "kiln_dump_test";
  fs::remove_all(dir);
  auto src = std::make_shared<const kiln::frontend::SourceFile>("check.py", kAssertKernel);
  auto info = kiln::frontend::ModuleInfo::analyze(kiln::frontend::parse(src));
  kiln::compiler::CompileRequest req;
  req.module = info;
  req.function = info->function("check");
  kiln::compiler::ParamSpec ptr, n, block;
  ptr.is_pointer = true;
  ptr.dtype = kiln::DType::i32;
  n.dtype = kiln::DType::i32;
  block.is_constexpr = true;
  block.value = kiln::frontend::ConstValue::of_int(16);
  req.params = {ptr, n, block};
  req.target = kiln::compiler::Target::host();
  req.dump_dir = dir.string();
  kiln::compiler::compile(req);

  REQUIRE(fs::is_directory(dir));
  const fs::path sub = fs::directory_iterator(dir)->path();
  CHECK(sub.filename().string().rfind("check.", 0) == 0);
  for (const char *f : {"check.ir", "check.unopt.llir", "check.llir", "check.obj"}) {
    INFO(f);
    CHECK(fs::file_size(sub / f) > 0);
  }
  std::ifstream ir(sub / "check.ir");
  const std::string text((std::istreambuf_iterator<char>(ir)), {});
  CHECK(text.find("kernel @check(") != std::string::npos);
  fs::remove_all(dir);
}
