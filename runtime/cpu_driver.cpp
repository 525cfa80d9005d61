#include "runtime/cpu_driver.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "compiler/cpu/object_loader.hpp"
#include "kiln/error.hpp"

namespace kiln::runtime {

namespace {

class CpuBinary final : public LoadedBinary {
public:
  explicit CpuBinary(std::unique_ptr<cpu::LoadedObject> o) : object(std::move(o)) {}
  std::unique_ptr<cpu::LoadedObject> object;
};

} // namespace

CpuDriver::CpuDriver() : loader_(cpu::ObjectLoader::create()) {}
CpuDriver::~CpuDriver() = default;

compiler::Target CpuDriver::target(int) const { return compiler::Target::host(); }

std::unique_ptr<LoadedBinary> CpuDriver::load(const CompiledKernel &k, int) {
  if (k.binary_kind != "obj")
    throw RuntimeError("kernel '" + k.name + "' was compiled for " + k.target + ", not for the CPU");
  return std::make_unique<CpuBinary>(loader_->load(k.binary, k.entry));
}

void CpuDriver::launch(const LoadedBinary &b, Grid grid, void **args, Stream) {
  const cpu::EntryFn entry = static_cast<const CpuBinary &>(b).object->entry();
  const uint32_t g[3] = {grid.x, grid.y, grid.z};
  const uint64_t n = grid.size();
  if (n == 1) {
    entry(args, g, 0, 1);
    return;
  }
  // Programs are independent; oneTBB splits the linear range adaptively.
  tbb::parallel_for(tbb::blocked_range<uint64_t>(0, n),
                    [&](const tbb::blocked_range<uint64_t> &r) { entry(args, g, r.begin(), r.end()); });
}

} // namespace kiln::runtime
