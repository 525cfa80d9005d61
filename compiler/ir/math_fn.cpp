#include "compiler/ir/math_fn.hpp"

#include <array>

namespace kiln::ir {
namespace {

using D = MathDomain;
using R = MathResult;

// In the enum's order (checked by math_fn_info).
constexpr std::array<MathFnInfo, kNumMathFns> kTable = {{
    {MathFn::Tan, "tan", 1, D::Float, R::Same},
    {MathFn::Asin, "asin", 1, D::Float, R::Same},
    {MathFn::Acos, "acos", 1, D::Float, R::Same},
    {MathFn::Atan, "atan", 1, D::Float, R::Same},
    {MathFn::Sinh, "sinh", 1, D::Float, R::Same},
    {MathFn::Cosh, "cosh", 1, D::Float, R::Same},
    {MathFn::Tanh, "tanh", 1, D::Float, R::Same},
    {MathFn::Asinh, "asinh", 1, D::Float, R::Same},
    {MathFn::Acosh, "acosh", 1, D::Float, R::Same},
    {MathFn::Atanh, "atanh", 1, D::Float, R::Same},
    {MathFn::Log10, "log10", 1, D::Float, R::Same},
    {MathFn::Log1p, "log1p", 1, D::Float, R::Same},
    {MathFn::Expm1, "expm1", 1, D::Float, R::Same},
    {MathFn::Exp10, "exp10", 1, D::Float, R::Same},
    {MathFn::Cbrt, "cbrt", 1, D::Float, R::Same},
    {MathFn::Rcbrt, "rcbrt", 1, D::Float, R::Same},
    {MathFn::Erfc, "erfc", 1, D::Float, R::Same},
    {MathFn::Erfinv, "erfinv", 1, D::Float, R::Same},
    {MathFn::Lgamma, "lgamma", 1, D::Float, R::Same},
    {MathFn::Tgamma, "tgamma", 1, D::Float, R::Same},
    {MathFn::Trunc, "trunc", 1, D::Float, R::Same},
    {MathFn::Rint, "rint", 1, D::Float, R::Same},
    {MathFn::Round, "round", 1, D::Float, R::Same},
    {MathFn::Sinpi, "sinpi", 1, D::Float, R::Same},
    {MathFn::Cospi, "cospi", 1, D::Float, R::Same},
    {MathFn::J0, "j0", 1, D::Float, R::Same},
    {MathFn::J1, "j1", 1, D::Float, R::Same},
    {MathFn::Y0, "y0", 1, D::Float, R::Same},
    {MathFn::Y1, "y1", 1, D::Float, R::Same},
    {MathFn::Pow, "pow", 2, D::Float, R::Same},
    {MathFn::Atan2, "atan2", 2, D::Float, R::Same},
    {MathFn::Hypot, "hypot", 2, D::Float, R::Same},
    {MathFn::Copysign, "copysign", 2, D::Float, R::Same},
    {MathFn::Fmod, "fmod", 2, D::Float, R::Same},
    {MathFn::Remainder, "remainder", 2, D::Float, R::Same},
    {MathFn::Fdim, "fdim", 2, D::Float, R::Same},
    {MathFn::Nextafter, "nextafter", 2, D::Float, R::Same},
    {MathFn::IsNan, "isnan", 1, D::Float, R::Int32},
    {MathFn::IsInf, "isinf", 1, D::Float, R::Int32},
    {MathFn::IsFinite, "isfinited", 1, D::Float, R::Int32},
    {MathFn::Signbit, "signbit", 1, D::Float, R::Int32},
    {MathFn::Clz, "clz", 1, D::Int, R::Int32},
    {MathFn::Popc, "popc", 1, D::Int, R::Int32},
    {MathFn::Brev, "brev", 1, D::Int, R::Same},
}};

constexpr bool in_enum_order() {
  for (int i = 0; i < kNumMathFns; ++i)
    if (static_cast<int>(kTable[i].fn) != i)
      return false;
  return true;
}
static_assert(in_enum_order(), "kTable must list MathFn in enum order");

} // namespace

const MathFnInfo &math_fn_info(MathFn fn) {
  return kTable[static_cast<int>(fn)];
}

std::optional<MathFn> math_fn_named(std::string_view name) {
  for (const MathFnInfo &i : kTable)
    if (name == i.name)
      return i.fn;
  return std::nullopt;
}

} // namespace kiln::ir
