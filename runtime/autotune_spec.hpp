// The autotuning data in both its forms: the frontend's AutotuneInfo (what
// the decorator says, values as ConstValue) and the public AutotuneSpec
// (values as Arg), one from the other, so that configs given from C++
// (Kernel::autotune(spec)) tune as a decorator's do.
#pragma once

#include <vector>

#include "compiler/frontend/decorators.hpp"
#include "kiln/autotune.hpp"
#include "kiln/kernel.hpp"

namespace kiln::runtime {

/// The public form of a decorator's data.
AutotuneSpec public_spec(const frontend::AutotuneInfo &info);
/// One config in public form.
Config public_config(const frontend::AutotuneConfig &c);

/// The frontend form of configs given from C++ for kernel `name` with
/// `params`. Throws ArgumentError for no configs, a name that is not a
/// parameter (in a config, the key, reset_to_zero or restore_value), a
/// value that cannot be a constexpr (a pointer, a tuple), or a Python
/// pre_hook flag (C++ hooks are AutotuneCallbacks).
frontend::AutotuneInfo frontend_info(const AutotuneSpec &spec, const std::string &name,
                                     const std::vector<KernelParam> &params);

} // namespace kiln::runtime
