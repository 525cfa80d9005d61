#include "compiler/frontend/ast.hpp"

#include <cassert>

namespace kiln::frontend {

const char *op_spelling(Op op) {
  // No default case: -Wswitch then flags an operator added without a spelling.
  switch (op) {
  case Op::Add:
    return "+";
  case Op::Sub:
    return "-";
  case Op::Mul:
    return "*";
  case Op::Div:
    return "/";
  case Op::FloorDiv:
    return "//";
  case Op::Mod:
    return "%";
  case Op::Pow:
    return "**";
  case Op::LShift:
    return "<<";
  case Op::RShift:
    return ">>";
  case Op::BitAnd:
    return "&";
  case Op::BitOr:
    return "|";
  case Op::BitXor:
    return "^";
  case Op::MatMul:
    return "@";
  case Op::USub:
    return "-";
  case Op::UAdd:
    return "+";
  case Op::Not:
    return "not";
  case Op::Invert:
    return "~";
  case Op::And:
    return "and";
  case Op::Or:
    return "or";
  case Op::Lt:
    return "<";
  case Op::Le:
    return "<=";
  case Op::Gt:
    return ">";
  case Op::Ge:
    return ">=";
  case Op::Eq:
    return "==";
  case Op::Ne:
    return "!=";
  case Op::Is:
    return "is";
  case Op::IsNot:
    return "is not";
  case Op::In:
    return "in";
  case Op::NotIn:
    return "not in";
  }
  assert(false && "op_spelling: invalid Op value");
  return "?";
}

} // namespace kiln::frontend
