// One launch argument, as the binder sees it.
//
// An Arg is a small trivially-copyable value (no allocation): launches build
// an array of them on the stack. Implicit constructors cover what a Triton
// user would pass from Python: tensors, integers of every width, floats,
// bools, None (nullptr), a jit function (for higher-order kernels), and by
// name with kiln::arg("BLOCK", 1024) for constexprs, defaults and options.
#pragma once

#include <array>
#include <concepts>
#include <span>
#include <utility>
#include <cstdint>
#include <type_traits>

#include "kiln/dtype.hpp"
#include "kiln/tensor.hpp"

namespace kiln {

class Kernel;
namespace runtime {
class JitFunction;
}

class Arg {
public:
  enum class Kind : uint8_t { None, Int, UInt, Float, Bool, Pointer, Function, Str, DType, Tuple };

  /// None, as an argument left out would be.
  Arg() = default;
  Arg(std::nullptr_t) : kind_(Kind::None) {}
  Arg(bool b) : kind_(Kind::Bool) { u_.b = b; }
  template <std::signed_integral T>
    requires(!std::same_as<T, bool>)
  Arg(T v) : kind_(Kind::Int) {
    u_.i = v;
  }
  template <std::unsigned_integral T>
    requires(!std::same_as<T, bool>)
  Arg(T v) {
    // Values that fit int64 behave as Python ints would; larger ones are u64.
    if (static_cast<uint64_t>(v) <= static_cast<uint64_t>(INT64_MAX)) {
      kind_ = Kind::Int;
      u_.i = static_cast<int64_t>(v);
    } else {
      kind_ = Kind::UInt;
      u_.u = v;
    }
  }
  Arg(float v) : kind_(Kind::Float), dtype_(DType::f32) { u_.f = v; }
  Arg(double v) : kind_(Kind::Float), dtype_(DType::f32) { u_.f = v; }
  Arg(const Tensor &t)
      : kind_(Kind::Pointer), dtype_(t.dtype),
        device_(t.labelled() ? static_cast<uint8_t>(1 + static_cast<uint8_t>(t.device.backend))
                             : 0),
        device_index_(static_cast<int16_t>(t.device.index)),
        extent_(t.ndim > 0 ? static_cast<int64_t>(t.nbytes()) : -1) {
    u_.p = t.data;
  }
  template <class T>
    requires(!std::is_void_v<T> && !std::is_same_v<std::remove_const_t<T>, DLTensor>)
  Arg(T *p) : kind_(Kind::Pointer), dtype_(dtype_of<std::remove_const_t<T>>()) {
    u_.p = p;
  }
  Arg(const Kernel &fn);
  /// A string constexpr (`ACTIVATION="leaky_relu"`); a constexpr in Triton
  /// whatever the parameter's annotation. `s` must outlive the launch call.
  Arg(const char *s) : kind_(Kind::Str) { u_.s = s; }
  /// A dtype constexpr (`OUT_DTYPE=tl.float16`): kiln::arg("OUT_DTYPE", kiln::DType::f16).
  Arg(DType t) : kind_(Kind::DType), dtype_(t) {}
  Arg(const DLTensor *t);
  Arg(DLTensor *t) : Arg(static_cast<const DLTensor *>(t)) {}

  /// A tuple (`(x_ptr, n)`, nested as needed): Triton specializes each
  /// element as it would a parameter. `elems` must outlive the launch call;
  /// kiln::tuple(...) below owns them for one call.
  static Arg tuple(std::span<const Arg> elems) {
    Arg a;
    a.kind_ = Kind::Tuple;
    a.count_ = static_cast<uint16_t>(elems.size());
    a.u_.elems = elems.data();
    return a;
  }

  /// A host tensor descriptor's parts (kiln::TensorDescriptor makes them):
  /// base, shape..., strides..., block_shape..., padding (true: NaN). A
  /// tuple to the argument packer, one descriptor to the specializer.
  static Arg descriptor(std::span<const Arg> parts) {
    Arg a = tuple(parts);
    a.count_ |= kDescriptorMark;
    return a;
  }
  bool is_descriptor() const { return kind_ == Kind::Tuple && (count_ & kDescriptorMark); }

  /// A pointer argument known only by its element type, for warmup (Triton's
  /// MockTensor): it specializes as an aligned pointer and is never launched.
  static Arg mock(DType t) {
    Arg a(nullptr);
    a.kind_ = Kind::Pointer;
    a.dtype_ = t;
    a.count_ = kMockMark;
    return a;
  }
  /// An Arg::mock, which a launch refuses.
  bool is_mock() const { return kind_ == Kind::Pointer && count_ == kMockMark; }

  Kind kind() const { return kind_; }
  DType dtype() const { return dtype_; }
  /// The parameter this argument binds to by name, or nullptr for positional.
  const char *name() const { return name_; }
  int64_t as_int() const { return u_.i; }
  uint64_t as_uint() const { return u_.u; }
  double as_float() const { return u_.f; }
  bool as_bool() const { return u_.b; }
  const void *as_pointer() const { return u_.p; }
  const runtime::JitFunction *as_function() const { return u_.fn; }
  const char *as_str() const { return u_.s; }
  /// Pointer: the bytes of the tensor it came from (a Tensor with a shape),
  /// which debug launches check accesses against; -1 when unknown.
  int64_t extent() const { return extent_; }
  /// Pointer: whether it came from a labelled Tensor (or DLPack), so that a
  /// launch can check device() against its own device.
  bool has_device() const { return device_ != 0; }
  Device device() const { return Device{static_cast<Backend>(device_ - 1), device_index_}; }
  std::span<const Arg> as_tuple() const {
    return {u_.elems, static_cast<size_t>(count_ & ~kDescriptorMark)};
  }

private:
  friend Arg arg(const char *name, Arg value);

  static constexpr uint16_t kMockMark = 1;            ///< in count_ of a Pointer: Arg::mock
  static constexpr uint16_t kDescriptorMark = 0x8000; ///< in count_ of a Tuple: Arg::descriptor
  Kind kind_ = Kind::None;
  DType dtype_ = DType::i64;
  uint16_t count_ = 0; ///< Tuple: the number of elements
  uint8_t device_ = 0; ///< Pointer: 0 unlabelled, else 1 + the Tensor's Backend
  int16_t device_index_ = 0;
  int64_t extent_ = -1;
  const char *name_ = nullptr;
  union {
    int64_t i;
    uint64_t u;
    double f;
    bool b;
    const void *p;
    const runtime::JitFunction *fn;
    const char *s;
    const Arg *elems;
  } u_{};
};

/// A named argument: a parameter by name (`arg("BLOCK", 1024)`) or a launch
/// option (`arg("num_warps", 8)`). `name` must outlive the launch call.
inline Arg arg(const char *name, Arg value) {
  value.name_ = name;
  return value;
}

static_assert(std::is_trivially_copyable_v<Arg>);
static_assert(sizeof(Arg) <= 32, "launches build arrays of Args on the stack");

/// The elements of a tuple argument, alive for the call they are passed to:
/// `kernel[{g}](kiln::tuple(x, y), n)` or `kiln::arg("shape", kiln::tuple(4, 8))`.
template <size_t N> struct TupleArgs {
  std::array<Arg, N> elems;
  operator Arg() const { return Arg::tuple(elems); }
};
template <class... A> TupleArgs<sizeof...(A)> tuple(A &&...elems) {
  return {{Arg(std::forward<A>(elems))...}};
}

} // namespace kiln
