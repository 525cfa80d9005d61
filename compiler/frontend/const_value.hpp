// A compile-time (constexpr) value: what `tl.constexpr` params, module
// globals and Python literals are while the IR generator folds them.
#pragma once

#include <cstdint>
#include <string>

#include "kiln/dtype.hpp"

namespace kiln::frontend {

struct JitFunctionInfo;

struct ConstValue {
  enum class Kind : uint8_t { None, Int, Float, Bool, Str, Function, DType };

  Kind kind = Kind::None;
  int64_t i = 0;
  double f = 0;
  bool b = false;
  std::string s;
  const JitFunctionInfo *fn = nullptr;
  kiln::DType dtype = kiln::DType::i32; ///< Kind::DType (`OUT_DTYPE=tl.float16`)

  static ConstValue none() { return {}; }
  static ConstValue of_int(int64_t v) {
    ConstValue c;
    c.kind = Kind::Int;
    c.i = v;
    return c;
  }
  static ConstValue of_float(double v) {
    ConstValue c;
    c.kind = Kind::Float;
    c.f = v;
    return c;
  }
  static ConstValue of_bool(bool v) {
    ConstValue c;
    c.kind = Kind::Bool;
    c.b = v;
    return c;
  }
  static ConstValue of_str(std::string v) {
    ConstValue c;
    c.kind = Kind::Str;
    c.s = std::move(v);
    return c;
  }
  static ConstValue of_dtype(kiln::DType t) {
    ConstValue c;
    c.kind = Kind::DType;
    c.dtype = t;
    return c;
  }
  static ConstValue of_function(const JitFunctionInfo *fn) {
    ConstValue c;
    c.kind = Kind::Function;
    c.fn = fn;
    return c;
  }

  bool is_number() const { return kind == Kind::Int || kind == Kind::Float || kind == Kind::Bool; }
  /// Python truthiness.
  bool truthy() const;
  double as_double() const { return kind == Kind::Float ? f : kind == Kind::Bool ? b : double(i); }
  /// Python's repr: "1024", "1e-05", "True", "None", "'relu'", the function's name,
  /// "fp16" (as Triton prints a dtype).
  std::string repr() const;

  friend bool operator==(const ConstValue &a, const ConstValue &b);
};

} // namespace kiln::frontend
