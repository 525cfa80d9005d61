#include "compiler/frontend/libdevice_names.hpp"

#include <unordered_map>
#include <utility>

#include "compiler/ir/math_fn.hpp"

namespace kiln::frontend {
namespace {

// libdevice names that are not a MathFn of the same name. The rounding-mode
// variants (_rn, _rz, ...) and the fast_ approximations map to the IEEE
// round-to-nearest builtin: on the CPU every one of them is computed to
// nearest (a _rz or fast_ result may differ from the GPU's in the last bit).
const std::unordered_map<std::string_view, std::string_view> &aliases() {
  static const std::unordered_map<std::string_view, std::string_view> table = {
      {"abs", "tl.abs"},
      {"fabs", "tl.abs"},
      {"floor", "tl.floor"},
      {"ceil", "tl.ceil"},
      {"exp", "tl.exp"},
      {"exp2", "tl.exp2"},
      {"log", "tl.log"},
      {"log2", "tl.log2"},
      {"sin", "tl.sin"},
      {"cos", "tl.cos"},
      {"sqrt", "tl.sqrt"},
      {"rsqrt", "tl.rsqrt"},
      {"erf", "tl.erf"},
      {"fma", "tl.fma"},
      {"nearbyint", "tl.rint"},
      {"fmin", "tl.minimum"},
      {"fmax", "tl.maximum"},
      {"isfinited", "tl.isfinited"},
      {"finitef", "tl.isfinited"},
      {"umulhi", "tl.umulhi"},
      {"div_rn", "tl.div_rn"},
      {"div_rz", "tl.div_rn"},
      {"div_rd", "tl.div_rn"},
      {"div_ru", "tl.div_rn"},
      {"fdiv", "tl.fdiv"},
      {"fast_dividef", "tl.fdiv"},
      {"sqrt_rn", "tl.sqrt_rn"},
      {"sqrt_rz", "tl.sqrt_rn"},
      {"sqrt_rd", "tl.sqrt_rn"},
      {"sqrt_ru", "tl.sqrt_rn"},
      {"rsqrt_rn", "tl.rsqrt"},
      {"fma_rn", "tl.fma"},
      {"fma_rz", "tl.fma"},
      {"fma_rd", "tl.fma"},
      {"fma_ru", "tl.fma"},
      {"fast_expf", "tl.exp"},
      {"fast_exp10f", "tl.exp10"},
      {"fast_logf", "tl.log"},
      {"fast_log2f", "tl.log2"},
      {"fast_log10f", "tl.log10"},
      {"fast_sinf", "tl.sin"},
      {"fast_cosf", "tl.cos"},
      {"fast_tanf", "tl.tan"},
      {"fast_powf", "tl.pow"},
      {"powf", "tl.pow"},
      {"powi", "tl.pow"},
      {"llrint", "libdevice.llrint"},
      {"llround", "libdevice.llround"},
      {"float_as_int", "libdevice.float_as_int"},
      {"int_as_float", "libdevice.int_as_float"},
      {"float_as_uint", "libdevice.float_as_uint"},
      {"uint_as_float", "libdevice.uint_as_float"},
      {"double_as_longlong", "libdevice.double_as_longlong"},
      {"longlong_as_double", "libdevice.longlong_as_double"},
      {"add_rn", "libdevice.add_rn"},
      {"add_rz", "libdevice.add_rn"},
      {"add_rd", "libdevice.add_rn"},
      {"add_ru", "libdevice.add_rn"},
      {"mul_rn", "libdevice.mul_rn"},
      {"mul_rz", "libdevice.mul_rn"},
      {"mul_rd", "libdevice.mul_rn"},
      {"mul_ru", "libdevice.mul_rn"},
      {"sub_rn", "libdevice.sub_rn"},
      {"sub_rz", "libdevice.sub_rn"},
      {"sub_rd", "libdevice.sub_rn"},
      {"sub_ru", "libdevice.sub_rn"},
      {"rcp_rn", "libdevice.rcp_rn"},
      {"rcp_rz", "libdevice.rcp_rn"},
      {"rcp_rd", "libdevice.rcp_rn"},
      {"rcp_ru", "libdevice.rcp_rn"},
      {"saturatef", "libdevice.saturatef"},
      {"clzll", "tl.clz"},
      {"popcll", "tl.popc"},
      {"brevll", "tl.brev"},
      {"umul64hi", "tl.umulhi"},
      {"ldexp", "libdevice.ldexp"},
      {"scalbn", "libdevice.ldexp"},
      {"ffs", "libdevice.ffs"},
      {"ffsll", "libdevice.ffs"},
      {"mulhi", "libdevice.mulhi"},
      {"hadd", "libdevice.hadd"},
      {"rhadd", "libdevice.rhadd"},
      {"normcdf", "libdevice.normcdf"},
      {"normcdfinv", "libdevice.normcdfinv"},
      {"erfcinv", "libdevice.erfcinv"},
      {"erfcx", "libdevice.erfcx"},
      {"rhypot", "libdevice.rhypot"},
      {"norm3d", "libdevice.norm3d"},
      {"rnorm3d", "libdevice.rnorm3d"},
      {"norm4d", "libdevice.norm4d"},
      {"rnorm4d", "libdevice.rnorm4d"},
  };
  return table;
}

std::optional<DType> conversion_kind(std::string_view k) {
  static const std::pair<std::string_view, DType> kinds[] = {
      {"float", DType::f32}, {"double", DType::f64}, {"int", DType::i32},
      {"uint", DType::u32},  {"ll", DType::i64},     {"ull", DType::u64}};
  for (const auto &[name, t] : kinds)
    if (k == name)
      return t;
  return std::nullopt;
}

} // namespace

std::optional<LibdeviceConversion> libdevice_conversion(std::string_view name) {
  const size_t two = name.find('2');
  if (two == std::string_view::npos || name.size() < two + 5 || name[name.size() - 3] != '_' ||
      name[name.size() - 2] != 'r')
    return std::nullopt;
  const char mode = name.back();
  const auto from = conversion_kind(name.substr(0, two));
  const auto to = conversion_kind(name.substr(two + 1, name.size() - 3 - two - 1));
  if (!from || !to || from == to || std::string_view("nzdu").find(mode) == std::string_view::npos ||
      (is_float(*from) == is_float(*to) && !(is_float(*from) && *to == DType::f32)))
    return std::nullopt;
  return LibdeviceConversion{*from, *to, mode};
}

std::optional<std::string> libdevice_builtin(std::string_view name) {
  if (auto it = aliases().find(name); it != aliases().end())
    return std::string(it->second);
  if (libdevice_conversion(name))
    return "libdevice." + std::string(name);
  if (ir::math_fn_named(name))
    return "tl." + std::string(name);
  return std::nullopt;
}

} // namespace kiln::frontend
