// How a kernel's parameters are specialized for one compile.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "compiler/frontend/module_info.hpp"

namespace kiln::compiler {

/// How one parameter is specialized: Triton's (type, attribute) pair.
struct ParamSpec {
  bool is_constexpr = false;
  frontend::ConstValue value; ///< when is_constexpr
  DType dtype = DType::i32;   ///< element type (pointers) or value type (scalars)
  bool is_pointer = false;
  bool is_const = false;      ///< `*k` pointer
  bool divisible16 = false;   ///< the `D` attribute
  bool is_tuple = false;      ///< a tuple argument: `elems` specialize its elements
  /// A host tensor descriptor (also is_tuple): `elems` are its base pointer,
  /// shape and strides (i64; the last stride the constant 1), block dims
  /// and padding (true: NaN) as constants; `dtype` is the base's.
  bool is_descriptor = false;
  std::vector<ParamSpec> elems;

  /// A descriptor's block dims and padding, read from `elems`.
  std::vector<int64_t> block_shape() const;
  bool nan_padding() const;

  /// Triton's spelling: "*fp32", "*kfp16", "i32", "fp32", "u1", "constexpr",
  /// "tensordesc<fp16[64, 64]>" (",nan" before the `>` for NaN padding).
  std::string type_str() const;
  /// The whole specialization as a repr shows it: "*fp32:D", "constexpr=128",
  /// "(i32, constexpr=1, *fp16)", "tensordesc<fp16[64, 64]>:D".
  std::string str() const;
  friend bool operator==(const ParamSpec &, const ParamSpec &) = default;
};

/// The values of the module globals the kernel was compiled with, by name.
using GlobalValues = std::map<std::string, frontend::GlobalInfo>;

/// The current globals of other modules a kernel reaches (a callee's own
/// module); a module not listed reads the values it was analysed with.
using ModuleGlobals = std::map<const frontend::ModuleInfo *, GlobalValues>;

/// A module global a compile read: which module, which name.
using GlobalRef = std::pair<const frontend::ModuleInfo *, std::string>;

} // namespace kiln::compiler
