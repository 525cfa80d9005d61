// The functions of Triton's libdevice module (triton.language.extra.libdevice,
// also reached as tl.extra.libdevice and triton.language.extra.cuda.libdevice)
// and the kiln builtin each one is. Module-level aliases
// (`tanh = libdevice.tanh`) resolve through the same table.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "kiln/dtype.hpp"

namespace kiln::frontend {

/// The builtin ("tl.tanh") that libdevice's `name` ("tanh", "fast_expf",
/// "fma_rn") is, or nullopt when kiln does not implement it yet.
std::optional<std::string> libdevice_builtin(std::string_view name);

/// A conversion of libdevice with a rounding mode (float2int_rn: f32 to i32,
/// 'n'earest; also 'z'ero, 'd'own, 'u'p): one float side, one integer side,
/// or double2float.
struct LibdeviceConversion {
  DType from, to;
  char mode;
};
std::optional<LibdeviceConversion> libdevice_conversion(std::string_view name);

} // namespace kiln::frontend
