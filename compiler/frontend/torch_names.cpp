#include "compiler/frontend/torch_names.hpp"

#include <cmath>
#include <cstdint>
#include <limits>

namespace kiln::frontend {

namespace {

struct TorchDType {
  std::string_view name;
  DType type;
};

constexpr TorchDType kTorchDTypes[] = {
    {"bool", DType::i1},
    {"int8", DType::i8},
    {"int16", DType::i16},
    {"short", DType::i16},
    {"int32", DType::i32},
    {"int", DType::i32},
    {"int64", DType::i64},
    {"long", DType::i64},
    {"uint8", DType::u8},
    {"uint16", DType::u16},
    {"uint32", DType::u32},
    {"uint64", DType::u64},
    {"float16", DType::f16},
    {"half", DType::f16},
    {"bfloat16", DType::bf16},
    {"float32", DType::f32},
    {"float", DType::f32},
    {"float64", DType::f64},
    {"double", DType::f64},
    {"float8_e4m3fn", DType::f8e4nv},
    {"float8_e5m2", DType::f8e5},
    {"float8_e4m3fnuz", DType::f8e4b8},
    {"float8_e5m2fnuz", DType::f8e5b16},
};

/// A float format as finfo describes it: mantissa bits (without the
/// implicit one), the exponent of the smallest normal, and the largest value.
struct FloatFormat {
  int bits, mantissa, min_exp;
  double max;
  int resolution_digits;
};

std::optional<FloatFormat> float_format(DType t) {
  switch (t) {
  case DType::f16:
    return FloatFormat{16, 10, -14, 65504.0, 3};
  case DType::bf16:
    return FloatFormat{16, 7, -126, 3.3895313892515355e38, 2};
  case DType::f32:
    return FloatFormat{32, 23, -126, std::numeric_limits<float>::max(), 6};
  case DType::f64:
    return FloatFormat{64, 52, -1022, std::numeric_limits<double>::max(), 15};
  case DType::f8e4nv:
    return FloatFormat{8, 3, -6, 448.0, 1};
  case DType::f8e5:
    return FloatFormat{8, 2, -14, 57344.0, 1};
  case DType::f8e4b8:
    return FloatFormat{8, 3, -7, 240.0, 1};
  case DType::f8e5b16:
    return FloatFormat{8, 2, -15, 57344.0, 1};
  default:
    return std::nullopt;
  }
}

} // namespace

std::optional<DType> torch_dtype(std::string_view member) {
  for (const TorchDType &d : kTorchDTypes)
    if (d.name == member)
      return d.type;
  return std::nullopt;
}

std::optional<ConstValue> torch_dtype_limit(DType t, bool finfo, std::string_view attr,
                                            std::string &why) {
  if (finfo) {
    const std::optional<FloatFormat> f = float_format(t);
    if (!f) {
      why = "torch.finfo() takes a floating point dtype";
      return std::nullopt;
    }
    if (attr == "max")
      return ConstValue::of_float(f->max);
    if (attr == "min")
      return ConstValue::of_float(-f->max);
    if (attr == "eps")
      return ConstValue::of_float(std::ldexp(1.0, -f->mantissa));
    if (attr == "tiny" || attr == "smallest_normal")
      return ConstValue::of_float(std::ldexp(1.0, f->min_exp));
    if (attr == "bits")
      return ConstValue::of_int(f->bits);
    if (attr == "resolution")
      return ConstValue::of_float(std::pow(10.0, -f->resolution_digits));
    why = "torch.finfo has no attribute '" + std::string(attr) +
          "' kiln knows (max, min, eps, tiny, bits)";
    return std::nullopt;
  }
  if (!is_int(t) || t == DType::i1) {
    why = "torch.iinfo() takes an integer dtype";
    return std::nullopt;
  }
  const int bits = static_cast<int>(dtype_size(t)) * 8;
  if (attr == "bits")
    return ConstValue::of_int(bits);
  const bool is_signed = is_signed_int(t);
  if (attr == "min")
    return ConstValue::of_int(is_signed ? std::numeric_limits<int64_t>::min() >> (64 - bits) : 0);
  if (attr == "max") {
    if (t == DType::u64) {
      why = "torch.iinfo(torch.uint64).max does not fit the 64-bit signed integers kiln evaluates";
      return std::nullopt;
    }
    return ConstValue::of_int(is_signed ? std::numeric_limits<int64_t>::max() >> (64 - bits)
                                        : (int64_t{1} << bits) - 1);
  }
  why = "torch.iinfo has no attribute '" + std::string(attr) + "' (max, min, bits)";
  return std::nullopt;
}

} // namespace kiln::frontend
