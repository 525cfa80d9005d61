// The functions of Triton's libdevice module (triton.language.extra.libdevice,
// also reached as tl.extra.libdevice and triton.language.extra.cuda.libdevice)
// and the kiln builtin each one is. Module-level aliases
// (`tanh = libdevice.tanh`) resolve through the same table.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kiln::frontend {

/// The builtin ("tl.tanh") that libdevice's `name` ("tanh", "fast_expf",
/// "fma_rn") is, or nullopt when kiln does not implement it yet.
std::optional<std::string> libdevice_builtin(std::string_view name);

} // namespace kiln::frontend
