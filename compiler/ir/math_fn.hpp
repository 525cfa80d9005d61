// The elementwise math functions of tl.math and libdevice that are one IR op
// each (OpKind::Math). The frontend types calls with this table and every
// backend lowers them (compiler/llvm/math_library.cpp); functions that Triton
// builds from other ops (sigmoid, softmax, clamp, ...) are not here.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace kiln::ir {

enum class MathFn : uint8_t {
  // float -> float
  Tan, Asin, Acos, Atan, Sinh, Cosh, Tanh, Asinh, Acosh, Atanh,
  Log10, Log1p, Expm1, Exp10, Cbrt, Rcbrt, Erfc, Erfinv, Lgamma, Tgamma,
  Trunc, Rint, Round, Sinpi, Cospi, J0, J1, Y0, Y1,
  // (float, float) -> float
  Pow, Atan2, Hypot, Copysign, Fmod, Remainder, Fdim, Nextafter,
  // float -> int32 (0 or 1), as libdevice's __nv_isnanf & co.
  IsNan, IsInf, IsFinite, Signbit,
  // integer -> int32 (clz, popc) or the same type (brev)
  Clz, Popc, Brev,
};

inline constexpr int kNumMathFns = static_cast<int>(MathFn::Brev) + 1;

/// What the operands must be and what the result is.
enum class MathDomain : uint8_t { Float, Int };
enum class MathResult : uint8_t { Same, Int32 };

struct MathFnInfo {
  MathFn fn;
  const char *name; ///< libdevice's name without __nv_ and the f suffix: "tanh"
  int arity;
  MathDomain domain;
  MathResult result;
};

const MathFnInfo &math_fn_info(MathFn fn);
/// The function called `name` ("tanh", "isnan"), if it is one of the table.
std::optional<MathFn> math_fn_named(std::string_view name);

} // namespace kiln::ir
