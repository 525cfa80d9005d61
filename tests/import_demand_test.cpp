// Import demand (compiler/frontend/import_demand.hpp): a kernel file's
// imports are loaded only for the names some kernel can reach, as in a
// project whose kernel files import its host code (vLLM's `vllm.envs`,
// `vllm.platforms`); what kernels do reach still works through every import
// form real files use.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <kiln/kiln.hpp>

#include "compiler/frontend/import_demand.hpp"
#include "compiler/frontend/parser.hpp"
#include "tests/temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using kiln::frontend::ImportDemand;
using kiln::frontend::Need;

std::string write(const kiln::test::TempDir &dir, const std::string &rel, const std::string &text) {
  const fs::path p = dir.path / rel;
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
  return fs::weakly_canonical(p).string();
}

kiln::frontend::Module parse_file(const std::string &path) {
  return kiln::frontend::parse(std::make_shared<const kiln::frontend::SourceFile>(
      path, kiln::frontend::read_source_file(path, "kernel")));
}

// A package laid out like vLLM's: the kernel file imports host helpers whose
// own imports reach a heavy module (and a broken one) that no kernel needs.
void write_host_package(const kiln::test::TempDir &dir) {
  write(dir, "pkg/__init__.py", "");
  write(dir, "pkg/heavy.py", "import torch\nfrom .broken import *\n\n\nclass Engine:\n    pass\n");
  write(dir, "pkg/broken.py", "x = (\n");
  write(dir, "pkg/consts.py", "SCALE = 3\nUNUSED = 7\n");
  write(dir, "pkg/envs.py",
        "import os\nfrom .heavy import Engine\n\nDEBUG = os.environ.get('X')\n");
  write(dir, "pkg/host.py", R"(import triton.language as tl
from .heavy import Engine
from .consts import SCALE


def make_engine():
    return Engine()


FACTOR = tl.constexpr(SCALE * 2)
)");
}

const char *const kHostKernel = R"(import torch
import triton
import triton.language as tl
import pkg.envs as envs
from pkg.host import make_engine, FACTOR


@triton.jit
def scale_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * FACTOR)


def launch(x):
    if envs.DEBUG:
        make_engine()
)";

} // namespace

TEST_CASE("import demand: a host helper's own imports are never loaded") {
  kiln::test::TempDir dir;
  write_host_package(dir);
  const std::string root = write(dir, "pkg/k.py", kHostKernel);
  ImportDemand demand(parse_file(root), {});
  const std::string pkg = fs::weakly_canonical(dir.path / "pkg").string();
  // FACTOR is read by the kernel: host.py's assignment, hence consts' SCALE.
  REQUIRE(demand.find(pkg + "/host.py") != nullptr);
  CHECK(demand.find(pkg + "/host.py")->needs("FACTOR"));
  CHECK(demand.find(pkg + "/host.py")->needs("SCALE"));
  REQUIRE(demand.find(pkg + "/consts.py") != nullptr);
  CHECK(demand.find(pkg + "/consts.py")->needs("SCALE"));
  CHECK_FALSE(demand.find(pkg + "/consts.py")->needs("UNUSED"));
  // make_engine is bound (a name of the root) but never run: its Engine,
  // and the module envs whose attributes only host code reads, load nothing.
  CHECK_FALSE(demand.find(pkg + "/host.py")->needs("Engine"));
  CHECK(demand.find(pkg + "/heavy.py") == nullptr);
  CHECK(demand.find(pkg + "/broken.py") == nullptr);
  CHECK(demand.root().needs("envs"));
}

TEST_CASE("import demand: the kernel of a file whose host imports are never loaded runs") {
  kiln::test::TempDir dir;
  write_host_package(dir);
  const std::string root = write(dir, "pkg/k.py", kHostKernel);
  kiln::Module m = kiln::Module::from_file(root);
  std::vector<float> x{1, 2, 3, 4}, out(4);
  m.kernel("scale_kernel")[{1}](x.data(), out.data(), kiln::arg("BLOCK", 4));
  for (int i = 0; i < 4; ++i)
    CHECK(out[i] == x[i] * 6);
}

TEST_CASE(
    "import demand: names a kernel reaches through modules, heuristics and star imports load") {
  kiln::test::TempDir dir;
  write(dir, "lib/__init__.py", "");
  // A heuristic calls an imported plain function whose body reads a table
  // (a list: data, not a constant) from a third module: all three must load.
  write(dir, "lib/tables.py", "SIZES = [4, 8]\n");
  write(
      dir, "lib/tuning.py",
      "from .tables import SIZES\n\n\ndef pick(n):\n    return SIZES[0] if n <= 4 else SIZES[1]\n");
  // A module read by attribute (`ops.act.relu`), re-exporting from a fourth.
  write(dir, "lib/ops/__init__.py", "from . import act\n");
  write(dir, "lib/ops/act.py", "from .impl import relu\n");
  write(dir, "lib/ops/impl.py", R"(import triton
import triton.language as tl
from ..consts import ZERO


@triton.jit
def relu(x):
    return tl.where(x > ZERO, x, ZERO)
)");
  write(dir, "lib/consts.py", "import triton.language as tl\n\nZERO = tl.constexpr(0.0)\n");
  // The kernels, star-imported by the file the user loads.
  write(dir, "lib/kernels.py", R"(import triton
import triton.language as tl
from .tuning import pick
from . import ops
from .dep import twice


@triton.heuristics({"BLOCK": lambda args: pick(args["n"])})
@triton.jit
def relu_twice_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, twice(ops.act.relu(x)), mask=mask)
)");
  write(dir, "lib/dep.py", "import triton\n\n\n@triton.jit\ndef twice(x):\n    return x * 2\n");
  const std::string root = write(dir, "lib/api.py", "import torch\nfrom .kernels import *\n");
  kiln::Module m = kiln::Module::from_file(root);
  std::vector<float> x{-1, 2, -3, 4}, out(4, -9);
  m.kernel("relu_twice_kernel")[{1}](x.data(), out.data(), 4);
  for (int i = 0; i < 4; ++i)
    CHECK(out[i] == 2 * std::max(x[i], 0.0f));
}

TEST_CASE(
    "import demand: files importing each other, and an import under an if that a flag decides") {
  kiln::test::TempDir dir;
  write(dir, "cyc/__init__.py", "");
  // vLLM's triton_utils: `tl` is bound under an if whose test is imported.
  write(dir, "cyc/flags.py", "import os\n\nHAS_TRITON = True\nDEBUG = os.environ.get('DEBUG')\n");
  write(dir, "cyc/lang.py", R"(from .flags import HAS_TRITON

if HAS_TRITON:
    import triton.language as tl
else:
    tl = None
)");
  write(dir, "cyc/b.py", R"(import triton
from .lang import tl
from .a import OFFSET


@triton.jit
def shift(x):
    return tl.maximum(x, 0.0) + OFFSET
)");
  const std::string root = write(dir, "cyc/a.py", R"(import triton
import triton.language as tl

OFFSET = tl.constexpr(5.0)  # before the import of b, which reads it back (as Python needs)

from .b import shift  # noqa: E402


@triton.jit
def shift_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, shift(tl.load(x_ptr + offs)))
)");
  ImportDemand demand(parse_file(root), {});
  const std::string pkg = fs::weakly_canonical(dir.path / "cyc").string();
  REQUIRE(demand.find(pkg + "/flags.py") != nullptr);
  CHECK(demand.find(pkg + "/flags.py")->needs("HAS_TRITON"));
  CHECK_FALSE(demand.find(pkg + "/flags.py")->needs("DEBUG"));
  kiln::Module m = kiln::Module::from_file(root);
  std::vector<float> x{1, 2, 3, 4}, out(4);
  m.kernel("shift_kernel")[{1}](x.data(), out.data(), kiln::arg("BLOCK", 4));
  for (int i = 0; i < 4; ++i)
    CHECK(out[i] == x[i] + 5);
}
