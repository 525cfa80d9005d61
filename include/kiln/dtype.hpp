// Element types of tensors and kernel values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace kiln {

/// The scalar element types of the kernel language (shared/LANGUAGE.md).
/// The fp8 types are Triton's: f8e4nv (e4m3fn: bias 7, no inf, max 448),
/// f8e5 (e5m2: IEEE-like, bias 15), f8e4b15 (bias 15, no inf or NaN),
/// f8e4b8 and f8e5b16 (the "fnuz" kinds: bias 8 / 16, NaN is 0x80, no -0).
enum class DType : uint8_t {
  i1, i8, i16, i32, i64, u8, u16, u32, u64, f16, bf16, f32, f64,
  f8e4nv, f8e5, f8e4b15, f8e4b8, f8e5b16
};

inline constexpr int kNumDTypes = 18;

/// Bytes per element (i1 is stored as one byte).
std::size_t dtype_size(DType t);
/// Triton's spelling in a specialization: "i1", "i32", "u8", "fp16", "bf16", "fp32", "fp8e4nv".
std::string_view dtype_name(DType t);
/// The short spelling of the CLI and .npy handling: "i1", "i32", "f16", "bf16", "f32".
std::string_view dtype_short_name(DType t);
/// The triton.language name: "float16" (as in `tl.float16`).
std::string_view dtype_language_name(DType t);
/// Parses "tl.float16" / "triton.language.float16"; nullopt for anything else.
std::optional<DType> parse_language_dtype(std::string_view s);
/// Parses either spelling ("fp32" or "f32", "i32", "bf16", "u1"=i1); nullopt if unknown.
std::optional<DType> parse_dtype(std::string_view s);

inline bool is_float(DType t) { return t >= DType::f16; }
inline bool is_signed_int(DType t) { return t >= DType::i8 && t <= DType::i64; }
inline bool is_unsigned_int(DType t) { return t >= DType::u8 && t <= DType::u64; }
inline bool is_int(DType t) { return t <= DType::u64; }
inline bool is_fp8(DType t) { return t >= DType::f8e4nv; }

template <class T> inline constexpr bool kUnsupportedElementType = false;

/// The DType of a C++ element type, for typed raw pointers. Anything else
/// (`long long`, `char`, a struct) stops the build here with a message
/// rather than failing to link.
template <class T> constexpr DType dtype_of() {
  static_assert(kUnsupportedElementType<T>,
                "kiln: no kiln::DType for this pointer's element type; pass a pointer to bool, "
                "(u)int8_t..(u)int64_t, float or double, or a kiln::Tensor with an explicit "
                "DType (char: int8_t/uint8_t; long long: int64_t)");
  return DType::i64;
}
template <> constexpr DType dtype_of<bool>() { return DType::i1; }
template <> constexpr DType dtype_of<int8_t>() { return DType::i8; }
template <> constexpr DType dtype_of<int16_t>() { return DType::i16; }
template <> constexpr DType dtype_of<int32_t>() { return DType::i32; }
template <> constexpr DType dtype_of<int64_t>() { return DType::i64; }
template <> constexpr DType dtype_of<uint8_t>() { return DType::u8; }
template <> constexpr DType dtype_of<uint16_t>() { return DType::u16; }
template <> constexpr DType dtype_of<uint32_t>() { return DType::u32; }
template <> constexpr DType dtype_of<uint64_t>() { return DType::u64; }
template <> constexpr DType dtype_of<float>() { return DType::f32; }
template <> constexpr DType dtype_of<double>() { return DType::f64; }

} // namespace kiln
