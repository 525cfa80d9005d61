#include "kiln/dtype.hpp"

#include <array>

namespace kiln {

namespace {

struct DTypeInfo {
  std::size_t size;
  const char *name;  // Triton's specialization spelling
  const char *short_name;
  const char *language_name; // the triton.language attribute: tl.float16
};

constexpr std::array<DTypeInfo, kNumDTypes> kInfo = {{
    {1, "i1", "i1", "int1"},
    {1, "i8", "i8", "int8"},
    {2, "i16", "i16", "int16"},
    {4, "i32", "i32", "int32"},
    {8, "i64", "i64", "int64"},
    {1, "u8", "u8", "uint8"},
    {2, "u16", "u16", "uint16"},
    {4, "u32", "u32", "uint32"},
    {8, "u64", "u64", "uint64"},
    {2, "fp16", "f16", "float16"},
    {2, "bf16", "bf16", "bfloat16"},
    {4, "fp32", "f32", "float32"},
    {8, "fp64", "f64", "float64"},
    {1, "fp8e4nv", "f8e4nv", "float8e4nv"},
    {1, "fp8e5", "f8e5", "float8e5"},
    {1, "fp8e4b15", "f8e4b15", "float8e4b15"},
    {1, "fp8e4b8", "f8e4b8", "float8e4b8"},
    {1, "fp8e5b16", "f8e5b16", "float8e5b16"},
}};

} // namespace

std::size_t dtype_size(DType t) { return kInfo[static_cast<int>(t)].size; }
std::string_view dtype_name(DType t) { return kInfo[static_cast<int>(t)].name; }
std::string_view dtype_short_name(DType t) { return kInfo[static_cast<int>(t)].short_name; }
std::string_view dtype_language_name(DType t) { return kInfo[static_cast<int>(t)].language_name; }

std::optional<DType> parse_language_dtype(std::string_view s) {
  for (std::string_view prefix : {"tl.", "triton.language."})
    if (s.substr(0, prefix.size()) == prefix) {
      s.remove_prefix(prefix.size());
      for (int i = 0; i < kNumDTypes; ++i)
        if (s == kInfo[i].language_name)
          return static_cast<DType>(i);
    }
  return std::nullopt;
}

std::optional<DType> parse_dtype(std::string_view s) {
  if (s == "u1" || s == "bool")
    return DType::i1;
  for (int i = 0; i < kNumDTypes; ++i)
    if (s == kInfo[i].name || s == kInfo[i].short_name)
      return static_cast<DType>(i);
  if (s == "float32")
    return DType::f32;
  if (s == "float16")
    return DType::f16;
  return std::nullopt;
}

} // namespace kiln
