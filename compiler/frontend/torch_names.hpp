// The few torch names that module-level constants of real kernel files read
// (`MIN = tl.constexpr(torch.finfo(torch.float32).min)`): torch's dtypes and
// the limits torch.finfo / torch.iinfo give for them. Kernels themselves
// never see torch; only the plain-data evaluator asks here.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "compiler/frontend/const_value.hpp"
#include "kiln/dtype.hpp"

namespace kiln::frontend {

/// The dtype torch calls `member` ("float16", "half", "bfloat16", "int64",
/// "long", "float8_e4m3fn", ...); nullopt for anything else.
std::optional<DType> torch_dtype(std::string_view member);

/// `torch.finfo(t).attr` (finfo true) or `torch.iinfo(t).attr`, as torch
/// gives it: max, min, eps, tiny / smallest_normal, bits, resolution.
/// Throws nothing; nullopt with `why` set when torch would raise or the
/// value does not fit a Python int kiln holds.
std::optional<ConstValue> torch_dtype_limit(DType t, bool finfo, std::string_view attr,
                                            std::string &why);

} // namespace kiln::frontend
