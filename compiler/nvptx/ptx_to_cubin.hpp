// PTX to cubin in-process with nvJitLink, loaded with dlopen (it is 99 MB and
// the GPU machine already has it), with `ptxas` on PATH as a fallback.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln::nvptx {

struct Cubin {
  std::vector<uint8_t> image;
  std::string via; ///< "nvJitLink" or "ptxas"
  std::string log; ///< the assembler's info log (registers, spills)
  int registers = -1;   ///< "Used N registers"
  int spill_bytes = -1; ///< "N bytes spill stores, M bytes spill loads": N + M (or "N bytes lmem")
};

/// Assembles `ptx` for sm_`sm`. Returns nullopt with `why` set when neither
/// nvJitLink nor ptxas is available; throws kiln::Error when the PTX is rejected.
std::optional<Cubin> ptx_to_cubin(const std::string &ptx, int sm, std::string *why);

/// Starts nvJitLink's one-time initialization (about 250 ms on first use) on
/// a background thread, so that the first real compile does not pay for it.
void warm_up_nvjitlink(int sm);

} // namespace kiln::nvptx
