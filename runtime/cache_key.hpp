// Cache keys: the function key (the seed's JITFunction.cache_key) and the
// compile key that names a compiled binary on disk and in remote caches.
#pragma once

#include <string>

#include "compiler/specialization.hpp"
#include "compiler/target.hpp"
#include "kiln/options.hpp"

namespace kiln::runtime {

/// Hex SHA-256 over the function's source, the keys of every jit function
/// it calls (transitively; a placeholder breaks cycles), its first line, and
/// the values of the constexpr globals it reads.
std::string function_cache_key(const frontend::JitFunctionInfo &fn, const compiler::GlobalValues &globals);

/// Hex SHA-256 of everything that decides a binary: the function key, the
/// specialization, the options, the target and kiln's version.
std::string compile_key(const std::string &function_key, const std::string &specialization,
                        const Options &options, const compiler::Target &target);

} // namespace kiln::runtime
