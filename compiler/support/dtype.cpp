#include "kiln/dtype.hpp"

#include <array>

namespace kiln {

namespace {

struct DTypeInfo {
  std::size_t size;
  const char *name;  // Triton's specialization spelling
  const char *short_name;
};

constexpr std::array<DTypeInfo, kNumDTypes> kInfo = {{
    {1, "i1", "i1"},
    {1, "i8", "i8"},
    {2, "i16", "i16"},
    {4, "i32", "i32"},
    {8, "i64", "i64"},
    {1, "u8", "u8"},
    {2, "u16", "u16"},
    {4, "u32", "u32"},
    {8, "u64", "u64"},
    {2, "fp16", "f16"},
    {2, "bf16", "bf16"},
    {4, "fp32", "f32"},
    {8, "fp64", "f64"},
    {1, "fp8e4nv", "f8e4nv"},
    {1, "fp8e5", "f8e5"},
    {1, "fp8e4b15", "f8e4b15"},
    {1, "fp8e4b8", "f8e4b8"},
    {1, "fp8e5b16", "f8e5b16"},
}};

} // namespace

std::size_t dtype_size(DType t) { return kInfo[static_cast<int>(t)].size; }
std::string_view dtype_name(DType t) { return kInfo[static_cast<int>(t)].name; }
std::string_view dtype_short_name(DType t) { return kInfo[static_cast<int>(t)].short_name; }

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
