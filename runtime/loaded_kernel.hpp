// A compiled kernel loaded on a device, with what a launch needs to pack
// arguments and check globals without looking anything up.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "compiler/specialization.hpp"
#include "kiln/compiled_kernel.hpp"
#include "kiln/kernel.hpp"
#include "runtime/driver.hpp"

namespace kiln::runtime {

/// How one launch parameter is written into the argument buffer.
/// Signed and unsigned integers pack alike; their kinds differ only in the
/// range a value must lie in.
enum class PackKind : uint8_t { Pointer, I8, U8, I16, U16, I32, U32, I64, F32, F64, Bool };

struct PackSlot {
  static constexpr uint16_t kWhole = 0xffff;
  uint16_t param; ///< index of the kernel parameter
  PackKind kind;
  uint16_t leaf = kWhole; ///< for a tuple parameter: which leaf (depth first over all leaves)
};

class ModuleState;

/// A module global a compile read, and the value it used.
struct UsedGlobal {
  std::weak_ptr<ModuleState> module; ///< expired: nobody can change it any more
  std::string name;
  frontend::ConstValue value;
};

struct LoadedKernel {
  CompiledKernel compiled;
  std::unique_ptr<LoadedBinary> binary;
  std::vector<compiler::ParamSpec> specs;
  std::vector<PackSlot> slots;
  /// Module globals the compile read, with the values it used.
  std::vector<UsedGlobal> used_globals;
  /// ModuleState::globals_version() when `used_globals` were last seen current.
  std::atomic<uint64_t> globals_version{0};
};

} // namespace kiln::runtime
