#include "runtime/arg_packer.hpp"

#include <cstring>
#include <functional>
#include <limits>
#include <string>

#include "kiln/error.hpp"

namespace kiln::runtime {

using compiler::ParamSpec;

namespace {

PackKind pack_kind(const ParamSpec &s) {
  if (s.is_pointer)
    return PackKind::Pointer;
  switch (s.dtype) {
  case DType::i1:
    return PackKind::Bool;
  case DType::i8:
    return PackKind::I8;
  case DType::u8:
    return PackKind::U8;
  case DType::i16:
    return PackKind::I16;
  case DType::u16:
    return PackKind::U16;
  case DType::i32:
    return PackKind::I32;
  case DType::u32:
    return PackKind::U32;
  case DType::i64:
  case DType::u64:
    return PackKind::I64;
  case DType::f64:
    return PackKind::F64;
  default:
    return PackKind::F32;
  }
}

} // namespace

void add_slots(std::vector<PackSlot> &slots, uint16_t param, const ParamSpec &s) {
  if (!s.is_tuple) {
    if (!s.is_constexpr)
      slots.push_back({param, pack_kind(s), PackSlot::kWhole});
    return;
  }
  uint16_t leaf = 0;
  std::function<void(const ParamSpec &)> walk = [&](const ParamSpec &e) {
    if (e.is_tuple) {
      for (const ParamSpec &x : e.elems)
        walk(x);
      return;
    }
    if (!e.is_constexpr)
      slots.push_back({param, pack_kind(e), leaf});
    ++leaf;
  };
  walk(s);
}

namespace {

/// Leaf `n` (depth first, over every leaf) of a tuple argument.
const Arg &tuple_leaf(const Arg &a, uint16_t n) {
  const Arg *found = nullptr;
  uint16_t i = 0;
  auto walk = [&](auto &self, const Arg &x) -> void {
    if (found)
      return;
    if (x.kind() != Arg::Kind::Tuple) {
      if (i++ == n)
        found = &x;
      return;
    }
    for (const Arg &e : x.as_tuple())
      self(self, e);
  };
  walk(walk, a);
  return *found; // the slot was made from this argument's specialization
}

/// An integer argument's value; a bool passed for an int-annotated parameter is 0 or 1.
int64_t int_value(const Arg &a) {
  return a.kind() == Arg::Kind::Bool ? a.as_bool() : a.as_int();
}

/// The value of an argument packed into an integer of `dt`'s width, which
/// must hold it: an annotated `n: tl.int32` given 2**32 would otherwise
/// wrap silently to 0.
template <class T>
T packed_int(const Arg &a, DType dt, const std::string &kernel, const KernelParam &p) {
  const int64_t v = int_value(a);
  if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max()) [[unlikely]]
    throw ArgumentError(kernel + ": argument '" + p.name + "' = " + std::to_string(v) +
                        " is out of range for " + std::string(dtype_name(dt)) + " (" +
                        std::to_string(std::numeric_limits<T>::min()) + " to " +
                        std::to_string(std::numeric_limits<T>::max()) + ")");
  return static_cast<T>(v);
}

template <class T> void put(void *dst, T v) {
  std::memcpy(dst, &v, sizeof v);
}

} // namespace

void pack_args(const std::vector<PackSlot> &slots, const Arg *const *args, uint64_t *storage,
               void **ptrs, int64_t *extents, const std::string &kernel,
               std::span<const KernelParam> params) {
  for (size_t s = 0; s < slots.size(); ++s) {
    const PackSlot slot = slots[s];
    const Arg &a = slot.leaf == PackSlot::kWhole ? *args[slot.param]
                                                 : tuple_leaf(*args[slot.param], slot.leaf);
    void *dst = &storage[s];
    const bool f = a.kind() == Arg::Kind::Float;
    switch (slot.kind) {
    case PackKind::Pointer: {
      if (a.is_mock()) [[unlikely]]
        throw ArgumentError(kernel + ": argument '" + params[slot.param].name +
                            "' is a mock tensor (Arg::mock), which only warms up a kernel; launch "
                            "with a real tensor");
      const void *p = a.as_pointer();
      std::memcpy(dst, &p, sizeof p);
      break;
    }
    case PackKind::I8:
      put(dst, packed_int<int8_t>(a, DType::i8, kernel, params[slot.param]));
      break;
    case PackKind::U8:
      put(dst, packed_int<uint8_t>(a, DType::u8, kernel, params[slot.param]));
      break;
    case PackKind::I16:
      put(dst, packed_int<int16_t>(a, DType::i16, kernel, params[slot.param]));
      break;
    case PackKind::U16:
      put(dst, packed_int<uint16_t>(a, DType::u16, kernel, params[slot.param]));
      break;
    case PackKind::I32:
      put(dst, packed_int<int32_t>(a, DType::i32, kernel, params[slot.param]));
      break;
    case PackKind::U32:
      put(dst, packed_int<uint32_t>(a, DType::u32, kernel, params[slot.param]));
      break;
    case PackKind::I64: {
      const int64_t v = int_value(a);
      std::memcpy(dst, &v, 8);
      break;
    }
    case PackKind::F32: {
      const float v = f ? static_cast<float>(a.as_float()) : static_cast<float>(a.as_int());
      std::memcpy(dst, &v, 4);
      break;
    }
    case PackKind::F64: {
      const double v = f ? a.as_float() : static_cast<double>(a.as_int());
      std::memcpy(dst, &v, 8);
      break;
    }
    case PackKind::Bool: {
      const uint8_t v = a.kind() == Arg::Kind::Bool ? a.as_bool() : a.as_int() != 0;
      std::memcpy(dst, &v, 1);
      break;
    }
    }
    ptrs[s] = dst;
    extents[s] = slot.kind == PackKind::Pointer ? a.extent() : -1;
  }
}

} // namespace kiln::runtime
