#include "compiler/frontend/libdevice_names.hpp"

#include <unordered_map>

#include "compiler/ir/math_fn.hpp"

namespace kiln::frontend {
namespace {

// libdevice names that are not a MathFn of the same name. The rounding-mode
// variants (_rn, _rz, ...) and the fast_ approximations map to the IEEE
// round-to-nearest builtin: on the CPU every one of them is computed to
// nearest (a _rz or fast_ result may differ from the GPU's in the last bit).
const std::unordered_map<std::string_view, std::string_view> &aliases() {
  static const std::unordered_map<std::string_view, std::string_view> table = {
      {"abs", "tl.abs"},           {"fabs", "tl.abs"},          {"floor", "tl.floor"},
      {"ceil", "tl.ceil"},         {"exp", "tl.exp"},           {"exp2", "tl.exp2"},
      {"log", "tl.log"},           {"log2", "tl.log2"},         {"sin", "tl.sin"},
      {"cos", "tl.cos"},           {"sqrt", "tl.sqrt"},         {"rsqrt", "tl.rsqrt"},
      {"erf", "tl.erf"},           {"fma", "tl.fma"},           {"nearbyint", "tl.rint"},
      {"fmin", "tl.minimum"},      {"fmax", "tl.maximum"},      {"isfinited", "tl.isfinited"},
      {"finitef", "tl.isfinited"}, {"umulhi", "tl.umulhi"},     {"div_rn", "tl.div_rn"},
      {"div_rz", "tl.div_rn"},     {"div_rd", "tl.div_rn"},     {"div_ru", "tl.div_rn"},
      {"fdiv", "tl.fdiv"},         {"fast_dividef", "tl.fdiv"}, {"sqrt_rn", "tl.sqrt_rn"},
      {"sqrt_rz", "tl.sqrt_rn"},   {"sqrt_rd", "tl.sqrt_rn"},   {"sqrt_ru", "tl.sqrt_rn"},
      {"rsqrt_rn", "tl.rsqrt"},    {"fma_rn", "tl.fma"},        {"fma_rz", "tl.fma"},
      {"fma_rd", "tl.fma"},        {"fma_ru", "tl.fma"},        {"fast_expf", "tl.exp"},
      {"fast_exp10f", "tl.exp10"}, {"fast_logf", "tl.log"},     {"fast_log2f", "tl.log2"},
      {"fast_log10f", "tl.log10"}, {"fast_sinf", "tl.sin"},     {"fast_cosf", "tl.cos"},
      {"fast_tanf", "tl.tan"},     {"fast_powf", "tl.pow"},     {"powf", "tl.pow"},
      {"powi", "tl.pow"},          {"llrint", "libdevice.llrint"},     {"llround", "libdevice.llround"},
      {"float_as_int", "libdevice.float_as_int"},   {"int_as_float", "libdevice.int_as_float"},
      {"float_as_uint", "libdevice.float_as_uint"}, {"uint_as_float", "libdevice.uint_as_float"},
      {"double_as_longlong", "libdevice.double_as_longlong"},
      {"longlong_as_double", "libdevice.longlong_as_double"},
      {"add_rn", "libdevice.add_rn"},     {"add_rz", "libdevice.add_rn"},     {"add_rd", "libdevice.add_rn"},
      {"add_ru", "libdevice.add_rn"},     {"mul_rn", "libdevice.mul_rn"},     {"mul_rz", "libdevice.mul_rn"},
      {"mul_rd", "libdevice.mul_rn"},     {"mul_ru", "libdevice.mul_rn"},     {"sub_rn", "libdevice.sub_rn"},
      {"sub_rz", "libdevice.sub_rn"},     {"sub_rd", "libdevice.sub_rn"},     {"sub_ru", "libdevice.sub_rn"},
      {"rcp_rn", "libdevice.rcp_rn"},     {"rcp_rz", "libdevice.rcp_rn"},     {"rcp_rd", "libdevice.rcp_rn"},
      {"rcp_ru", "libdevice.rcp_rn"},     {"saturatef", "libdevice.saturatef"}, {"clzll", "tl.clz"},
      {"popcll", "tl.popc"},       {"brevll", "tl.brev"},
  };
  return table;
}

} // namespace

std::optional<std::string> libdevice_builtin(std::string_view name) {
  if (auto it = aliases().find(name); it != aliases().end())
    return std::string(it->second);
  if (ir::math_fn_named(name))
    return "tl." + std::string(name);
  return std::nullopt;
}

} // namespace kiln::frontend
