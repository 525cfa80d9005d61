#include "compiler/frontend/const_value.hpp"

#include <cmath>
#include <cstdio>

#include "compiler/frontend/module_info.hpp"

namespace kiln::frontend {

bool ConstValue::truthy() const {
  switch (kind) {
  case Kind::None: return false;
  case Kind::Int: return i != 0;
  case Kind::Float: return f != 0;
  case Kind::Bool: return b;
  case Kind::Str: return !s.empty();
  case Kind::Function:
  case Kind::DType: return true;
  }
  return false;
}

std::string ConstValue::repr() const {
  switch (kind) {
  case Kind::None: return "None";
  case Kind::Int: return std::to_string(i);
  case Kind::Float: {
    if (std::isinf(f))
      return f > 0 ? "inf" : "-inf";
    if (std::isnan(f))
      return "nan";
    // Python's repr: the shortest string that round-trips.
    char buf[64];
    for (int prec = 1; prec <= 17; ++prec) {
      std::snprintf(buf, sizeof buf, "%.*g", prec, f);
      if (std::strtod(buf, nullptr) == f)
        break;
    }
    std::string out(buf);
    if (out.find_first_of(".eni") == std::string::npos)
      out += ".0";
    return out;
  }
  case Kind::Bool: return b ? "True" : "False";
  case Kind::Str: return "'" + s + "'";
  case Kind::Function: return fn ? fn->name : "<function>";
  case Kind::DType: return std::string(dtype_name(dtype));
  }
  return "?";
}

bool operator==(const ConstValue &a, const ConstValue &b) {
  if (a.kind != b.kind)
    return false;
  switch (a.kind) {
  case ConstValue::Kind::None: return true;
  case ConstValue::Kind::Int: return a.i == b.i;
  case ConstValue::Kind::Float:
    return a.f == b.f || (std::isnan(a.f) && std::isnan(b.f));
  case ConstValue::Kind::Bool: return a.b == b.b;
  case ConstValue::Kind::Str: return a.s == b.s;
  case ConstValue::Kind::Function: return a.fn == b.fn;
  case ConstValue::Kind::DType: return a.dtype == b.dtype;
  }
  return false;
}

} // namespace kiln::frontend
