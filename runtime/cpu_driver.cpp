#include "runtime/cpu_driver.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "async/tsan_handoff.hpp"
#include "compiler/cpu/object_loader.hpp"
#include "kiln/error.hpp"
#include "runtime/spec_key.hpp"

#include <atomic>
#include <cstddef>
#include <cstring>
#include <memory>
#include <new>

namespace kiln::runtime {

namespace {

class CpuBinary final : public LoadedBinary {
public:
  CpuBinary(std::unique_ptr<cpu::LoadedObject> o, std::size_t n, uint64_t scratch)
      : object(std::move(o)), params(n), scratch_bytes(scratch) {}
  std::unique_ptr<cpu::LoadedObject> object;
  std::size_t params;
  uint64_t scratch_bytes;
};

/// This thread's scratch memory for the programs it runs (their big
/// blocks): grown when a kernel needs more, then reused by every program
/// and launch on the thread, so a launch allocates only the first time.
void *thread_scratch(uint64_t bytes) {
  struct Scratch {
    std::unique_ptr<std::byte[], void (*)(std::byte *)> p{
        nullptr, [](std::byte *b) { ::operator delete[](b, std::align_val_t(64)); }};
    uint64_t capacity = 0;
  };
  thread_local Scratch s;
  if (bytes == 0)
    return nullptr;
  if (s.capacity < bytes) {
    s.p.reset(static_cast<std::byte *>(::operator new[](bytes, std::align_val_t(64))));
    s.capacity = bytes;
  }
  return s.p.get();
}

/// Where a failed device_assert or, in debug mode, an out-of-bounds access
/// leaves its message (see lower_tile_ir.hpp).
struct AssertRecord {
  std::atomic<int32_t> failed{0};
  int32_t out_of_bounds = 0; ///< 1: an access outside its tensor (offset, extent say where)
  const char *message = nullptr;
  int64_t offset = 0, extent = 0;
  const int64_t *extents = nullptr; ///< each argument's tensor size in bytes, -1 unknown (debug)
};
static_assert(offsetof(AssertRecord, out_of_bounds) == 4 && offsetof(AssertRecord, message) == 8 &&
              offsetof(AssertRecord, offset) == 16 && offsetof(AssertRecord, extent) == 24 &&
              offsetof(AssertRecord, extents) == 32);

} // namespace

CpuDriver::CpuDriver() : loader_(cpu::ObjectLoader::create()) {}
CpuDriver::~CpuDriver() = default;

compiler::Target CpuDriver::target(int) const { return compiler::Target::host(); }

std::unique_ptr<LoadedBinary> CpuDriver::load(const CompiledKernel &k, int) {
  if (k.binary_kind != "obj")
    throw RuntimeError("kernel '" + k.name + "' was compiled for " + k.target + ", not for the CPU");
  if (k.params.size() > kMaxParams)
    throw RuntimeError("kernel '" + k.name + "' has too many parameters");
  return std::make_unique<CpuBinary>(loader_->load(k.binary, k.entry), k.params.size(),
                                     k.scratch_bytes);
}

void CpuDriver::launch(const LoadedBinary &b, Grid grid, void **args, Stream) {
  const auto &cb = static_cast<const CpuBinary &>(b);
  const cpu::EntryFn entry = cb.object->entry();
  AssertRecord record;
  void *packed[kMaxParams + 1];
  std::memcpy(packed, args, cb.params * sizeof(void *));
  packed[cb.params] = &record;
  record.extents = static_cast<const int64_t *>(args[cb.params]);
  const uint32_t g[3] = {grid.x, grid.y, grid.z};
  const uint64_t n = grid.size();
  if (n == 1) {
    entry(packed, g, 0, 1, thread_scratch(cb.scratch_bytes));
  } else {
    // Programs are independent; oneTBB splits the linear range adaptively.
    // The launching thread's writes (the arguments' data) reach the workers,
    // and theirs come back, through oneTBB: said to TSan (a JIT kernel's
    // memcpy of an input written just before the launch looked racy).
    char handoff = 0;
    async::tsan_release(&handoff);
    tbb::parallel_for(tbb::blocked_range<uint64_t>(0, n),
                      [&](const tbb::blocked_range<uint64_t> &r) {
                        async::tsan_acquire(&handoff);
                        entry(packed, g, r.begin(), r.end(), thread_scratch(cb.scratch_bytes));
                        async::tsan_release(&handoff);
                      });
    async::tsan_acquire(&handoff);
  }
  if (record.failed.load(std::memory_order_acquire)) {
    if (record.out_of_bounds)
      throw RuntimeError(std::string(record.message) + ": byte offset " +
                         std::to_string(record.offset) + " of a tensor of " +
                         std::to_string(record.extent) + " bytes");
    throw RuntimeError(std::string("device assertion failed at ") + record.message);
  }
}

} // namespace kiln::runtime
