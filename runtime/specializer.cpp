// Specialization (the seed's specialize_impl): each argument's (type,
// attribute) pair as a compile sees it, and the same facts as words of the
// in-memory launch key. push_key is on the launch hot path: no allocation,
// no strings, no locks.
#include <bit>

#include "kiln/error.hpp"
#include "runtime/jit_function.hpp"

namespace kiln::runtime {

using compiler::ParamSpec;
using frontend::ConstValue;

uint64_t string_word(const char *s) {
  return SpecKey::string_hash(s);
}

namespace {

enum Tag : uint64_t {
  kPtr = 1,
  kInt = 2,
  kFloat = 3,
  kBool = 4,
  kConst = 5,
  kTuple = 6,
  kDescriptor = 7
};

bool fits_i32(int64_t v) {
  return v >= INT32_MIN && v <= INT32_MAX;
}

/// One word per option, so that no value can spill into another's bits.
void push_options(const Options &o, SpecKey &key) {
  key.push(static_cast<uint32_t>(o.num_warps));
  key.push(static_cast<uint32_t>(o.num_stages));
  key.push(static_cast<uint32_t>(o.num_ctas));
  key.push(uint64_t(o.enable_fp_fusion) | uint64_t(o.debug) << 1);
}

ParamSpec constant(ConstValue v) {
  ParamSpec s;
  s.is_constexpr = true;
  s.value = v;
  return s;
}

/// Which of a host descriptor's shape dims (bit d) and strides but the last
/// (bit n + d) are multiples of 16: the `D` attribute of each, as integer
/// arguments get it, so that a block's rows stay 16-byte aligned and its
/// bounds mask is uniform over a 16-byte vector (on the GPU: vector loads,
/// cp.async pipelines). Zero where the parameter does not specialize.
uint64_t descriptor_divisibility(std::span<const Arg> parts, bool align) {
  const size_t n = (parts.size() - 2) / 3;
  uint64_t bits = 0;
  if (!align)
    return bits;
  for (size_t d = 0; d < n; ++d)
    bits |= uint64_t(parts[1 + d].as_int() % 16 == 0) << d;
  for (size_t d = 0; d + 1 < n; ++d)
    bits |= uint64_t(parts[1 + n + d].as_int() % 16 == 0) << (n + d);
  return bits;
}

/// A host descriptor's parts (Arg::descriptor's layout) as one parameter:
/// the shape and strides are runtime values with the `D` attribute each;
/// the base's alignment and the last stride of 1 are what TensorDescriptor
/// guarantees; the block dims and padding are part of the type.
ParamSpec descriptor_spec(const Arg &a, bool align) {
  const std::span<const Arg> parts = a.as_tuple();
  const size_t n = (parts.size() - 2) / 3;
  const uint64_t divisible = descriptor_divisibility(parts, align);
  ParamSpec s;
  s.is_tuple = s.is_descriptor = true;
  s.dtype = parts[0].dtype();
  ParamSpec base;
  base.is_pointer = true;
  base.dtype = s.dtype;
  base.divisible16 = true;
  s.elems.push_back(base);
  for (size_t i = 0; i + 1 < 2 * n; ++i) {
    ParamSpec i64;
    i64.dtype = DType::i64;
    i64.divisible16 = (divisible >> i) & 1;
    s.elems.push_back(i64);
  }
  s.elems.push_back(constant(ConstValue::of_int(1)));
  for (size_t d = 0; d < n; ++d)
    s.elems.push_back(constant(ConstValue::of_int(parts[1 + 2 * n + d].as_int())));
  s.elems.push_back(constant(ConstValue::of_bool(parts.back().as_bool())));
  return s;
}

} // namespace

// ---- specialization ----

ParamSpec JitFunction::param_spec(unsigned i, const Arg &a) const {
  return spec_of(info_.params[i], a);
}

ParamSpec JitFunction::spec_of(const frontend::ParamInfo &p, const Arg &a) const {
  if (a.is_descriptor()) {
    if (p.is_constexpr)
      arg_error("parameter '" + p.name +
                "' is tl.constexpr; a tensor descriptor is a runtime argument");
    return descriptor_spec(a, !p.do_not_specialize && !p.do_not_specialize_on_alignment);
  }
  ParamSpec s;
  if (a.kind() == Arg::Kind::Tuple) {
    // Triton specializes a tuple's elements one by one, each as it would a
    // parameter of the tuple's kind (constexpr or not).
    s.is_tuple = true;
    for (const Arg &e : a.as_tuple())
      s.elems.push_back(spec_of(p, e));
    return s;
  }
  if (p.is_constexpr) {
    s.is_constexpr = true;
    switch (a.kind()) {
    case Arg::Kind::None:
      s.value = ConstValue::none();
      break;
    case Arg::Kind::Int:
      s.value = ConstValue::of_int(a.as_int());
      break;
    case Arg::Kind::UInt:
      arg_error("constexpr '" + p.name + "' does not fit in int64");
    case Arg::Kind::Float:
      s.value = ConstValue::of_float(a.as_float());
      break;
    case Arg::Kind::Bool:
      s.value = ConstValue::of_bool(a.as_bool());
      break;
    case Arg::Kind::Function:
      s.value = ConstValue::of_function(&a.as_function()->info());
      break;
    case Arg::Kind::Str:
      s.value = ConstValue::of_str(a.as_str());
      break;
    case Arg::Kind::DType:
      s.value = ConstValue::of_dtype(a.dtype());
      break;
    case Arg::Kind::Tuple:
      break; // handled above
    case Arg::Kind::Pointer:
      arg_error("parameter '" + p.name + "' is tl.constexpr; pass a value, not a tensor");
    }
    return s;
  }
  const bool align = !p.do_not_specialize && !p.do_not_specialize_on_alignment;
  switch (a.kind()) {
  case Arg::Kind::Pointer:
    if (p.annotated_type)
      arg_error("parameter '" + p.name + "' is annotated as a scalar but got a tensor");
    s.is_pointer = true;
    s.dtype = a.dtype();
    s.is_const = p.is_const;
    s.divisible16 = align && (reinterpret_cast<uintptr_t>(a.as_pointer()) % 16 == 0);
    return s;
  case Arg::Kind::Int: {
    const int64_t v = a.as_int();
    if (p.annotated_type) {
      s.dtype = *p.annotated_type;
    } else if (v == 1 && !p.do_not_specialize) {
      s.is_constexpr = true;
      s.value = ConstValue::of_int(1);
      return s;
    } else {
      s.dtype = fits_i32(v) ? DType::i32 : DType::i64;
    }
    s.divisible16 = align && is_int(s.dtype) && v % 16 == 0;
    return s;
  }
  case Arg::Kind::UInt:
    s.dtype = p.annotated_type ? *p.annotated_type : DType::u64;
    s.divisible16 = align && is_int(s.dtype) && a.as_uint() % 16 == 0;
    return s;
  case Arg::Kind::Float:
    s.dtype = p.annotated_type ? *p.annotated_type : DType::f32;
    if (!kiln::is_float(s.dtype))
      arg_error("parameter '" + p.name + "' is annotated as " + std::string(dtype_name(s.dtype)) +
                " but got a float");
    return s;
  case Arg::Kind::Bool: // `n: tl.int32` given True is an i32, as in Triton
    s.dtype = p.annotated_type ? *p.annotated_type : DType::i1;
    return s;
  case Arg::Kind::None:
    s.is_constexpr = true;
    s.value = ConstValue::none();
    return s;
  case Arg::Kind::Function:
    s.is_constexpr = true;
    s.value = ConstValue::of_function(&a.as_function()->info());
    return s;
  case Arg::Kind::Str: // strings and dtypes are always constexprs in Triton
    s.is_constexpr = true;
    s.value = ConstValue::of_str(a.as_str());
    return s;
  case Arg::Kind::DType:
    s.is_constexpr = true;
    s.value = ConstValue::of_dtype(a.dtype());
    return s;
  case Arg::Kind::Tuple:
    break; // handled above
  }
  return s;
}

void JitFunction::specialize(const Bound &b, SpecKey &key) const {
  const unsigned np = static_cast<unsigned>(params_.size());
  for (unsigned i = 0; i < np; ++i)
    push_key(info_.params[i], *b.args[i], key);
  push_options(b.options, key);
}

void JitFunction::push_key(const frontend::ParamInfo &p, const Arg &a, SpecKey &key) const {
  // Tensors, the most common argument, without building a ParamSpec: the
  // same word spec_of's pointer case gives (the launch hot path).
  if (a.kind() == Arg::Kind::Pointer && !p.is_constexpr && !p.annotated_type) {
    const bool align = !p.do_not_specialize && !p.do_not_specialize_on_alignment;
    const bool d16 = align && reinterpret_cast<uintptr_t>(a.as_pointer()) % 16 == 0;
    key.push(kPtr | uint64_t(a.dtype()) << 8 | uint64_t(d16) << 16 | uint64_t(p.is_const) << 17);
    return;
  }
  if (a.is_descriptor()) {
    const std::span<const Arg> parts = a.as_tuple();
    const size_t n = (parts.size() - 2) / 3;
    const bool align = !p.do_not_specialize && !p.do_not_specialize_on_alignment;
    key.push(kDescriptor | uint64_t(parts[0].dtype()) << 8 | uint64_t(n) << 16 |
             uint64_t(parts.back().as_bool()) << 20 | descriptor_divisibility(parts, align) << 24);
    for (size_t d = 0; d < n; ++d)
      key.push(static_cast<uint64_t>(parts[1 + 2 * n + d].as_int()));
    return;
  }
  if (a.kind() == Arg::Kind::Tuple) {
    key.push(kTuple | uint64_t(a.as_tuple().size()) << 8);
    for (const Arg &e : a.as_tuple())
      push_key(p, e, key);
    return;
  }
  const ParamSpec s = spec_of(p, a);
  if (!s.is_constexpr) {
    const Tag tag = s.is_pointer              ? kPtr
                    : kiln::is_float(s.dtype) ? kFloat
                    : s.dtype == DType::i1    ? kBool
                                              : kInt;
    key.push(tag | uint64_t(s.dtype) << 8 | uint64_t(s.divisible16) << 16 |
             uint64_t(s.is_const) << 17);
    return;
  }
  key.push(kConst | uint64_t(s.value.kind) << 8);
  switch (s.value.kind) {
  case ConstValue::Kind::Int:
    key.push(static_cast<uint64_t>(s.value.i));
    break;
  case ConstValue::Kind::Float:
    key.push(std::bit_cast<uint64_t>(s.value.f));
    break;
  case ConstValue::Kind::Bool:
    key.push(s.value.b);
    break;
  case ConstValue::Kind::Function:
    for (uint64_t w : a.as_function()->key_words())
      key.push(w);
    break;
  case ConstValue::Kind::Str:
    key.push_string(a.as_str());
    break;
  case ConstValue::Kind::DType:
    key.push(static_cast<uint64_t>(s.value.dtype));
    break;
  default:
    key.push(0);
    break;
  }
}

} // namespace kiln::runtime
