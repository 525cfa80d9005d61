// What a compile produces: the binary, every intermediate stage, metadata.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kiln/dtype.hpp"
#include "kiln/options.hpp"

namespace kiln {

/// One parameter the compiled binary takes at launch, in order. Constexpr
/// parameters are folded in and take no slot.
struct LaunchParam {
  std::string name;
  DType dtype;     ///< element type for pointers, value type for scalars
  bool is_pointer; ///< an address (8 bytes) rather than a scalar of `dtype`
};

struct StageTime {
  std::string stage; ///< "parse", "ir", "llir", "opt", "obj", "ptx", "cubin"
  double ms = 0;
};

/// The output of one compile. Immutable once built; safe to share between threads.
struct CompiledKernel {
  std::string name;           ///< the kernel's name
  std::string target;         ///< "cpu:x86_64-pc-linux-gnu:znver3" or "cuda:sm_90"
  std::string binary_kind;    ///< "obj" (cpu) or "cubin" (cuda)
  std::vector<uint8_t> binary;
  std::map<std::string, std::string> stages; ///< "ir", "llir", "ptx", ... as text
  std::string entry;          ///< symbol of the launchable entry point in `binary`
  std::vector<LaunchParam> params;
  std::string specialization; ///< "(x_ptr: *fp32:D, n: i32, BLOCK: constexpr=1024)"
  Options options;
  uint32_t shared_bytes = 0;
  uint64_t scratch_bytes = 0; ///< cpu: memory per running program for blocks too big for its stack
  int registers = -1;   ///< per thread, from the assembler (cuda; -1 if unknown)
  int spill_bytes = -1; ///< spill stores + loads, from the assembler (cuda; -1 if unknown)
  std::vector<StageTime> times;
  std::string hash;           ///< hex SHA-256 of `binary`
  std::string key;            ///< hex compile key (set by the runtime; names the disk cache entry)

  double total_ms() const;
};

} // namespace kiln
