// The compiler's stages, in the order Compilation runs them. The one list:
// the async pool builds a task-graph node per name from it.
#pragma once

#include <array>
#include <string_view>

namespace kiln::compiler {

inline constexpr std::array<std::string_view, 3> kStageNames = {"frontend", "optimize", "codegen"};

} // namespace kiln::compiler
