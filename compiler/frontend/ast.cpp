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

const char *describe(ExprKind kind) {
  switch (kind) {
  case ExprKind::Name:
    return "names";
  case ExprKind::Int:
  case ExprKind::Float:
  case ExprKind::Bool:
  case ExprKind::None:
  case ExprKind::Str:
    return "constants";
  case ExprKind::Attribute:
    return "attribute accesses";
  case ExprKind::Call:
    return "calls";
  case ExprKind::Subscript:
    return "subscripts";
  case ExprKind::Slice:
    return "slices";
  case ExprKind::Tuple:
    return "tuples";
  case ExprKind::List:
    return "lists";
  case ExprKind::BinOp:
  case ExprKind::UnaryOp:
  case ExprKind::BoolOp:
    return "operators";
  case ExprKind::Compare:
    return "comparisons";
  case ExprKind::IfExp:
    return "conditional expressions";
  case ExprKind::Lambda:
    return "lambda expressions";
  case ExprKind::Dict:
    return "dict displays";
  case ExprKind::Set:
    return "set displays";
  case ExprKind::ListComp:
    return "list comprehensions";
  case ExprKind::SetComp:
    return "set comprehensions";
  case ExprKind::DictComp:
    return "dict comprehensions";
  case ExprKind::GeneratorExp:
    return "generator expressions";
  case ExprKind::Await:
    return "'await' expressions";
  case ExprKind::Yield:
  case ExprKind::YieldFrom:
    return "'yield' expressions";
  case ExprKind::NamedExpr:
    return "assignment expressions (':=')";
  case ExprKind::Starred:
    return "starred expressions ('*x')";
  case ExprKind::JoinedStr:
  case ExprKind::FormattedValue:
    return "f-strings";
  case ExprKind::Bytes:
    return "bytes literals";
  case ExprKind::Ellipsis:
    return "Ellipsis literals ('...')";
  case ExprKind::Complex:
    return "complex literals";
  case ExprKind::Comprehension:
    return "comprehensions";
  case ExprKind::MatchValue:
  case ExprKind::MatchSingleton:
  case ExprKind::MatchSequence:
  case ExprKind::MatchMapping:
  case ExprKind::MatchClass:
  case ExprKind::MatchStar:
  case ExprKind::MatchAs:
  case ExprKind::MatchOr:
    return "match patterns";
  case ExprKind::TypeVar:
  case ExprKind::ParamSpec:
  case ExprKind::TypeVarTuple:
    return "type parameters";
  }
  assert(false && "describe: invalid ExprKind value");
  return "?";
}

const char *describe(StmtKind kind) {
  switch (kind) {
  case StmtKind::FunctionDef:
    return "function definitions";
  case StmtKind::Assign:
  case StmtKind::AnnAssign:
  case StmtKind::AugAssign:
    return "assignments";
  case StmtKind::If:
    return "'if' statements";
  case StmtKind::For:
    return "'for' loops";
  case StmtKind::While:
    return "'while' loops";
  case StmtKind::Return:
    return "'return' statements";
  case StmtKind::Pass:
    return "'pass' statements";
  case StmtKind::Break:
    return "'break' statements";
  case StmtKind::Continue:
    return "'continue' statements";
  case StmtKind::ExprStmt:
    return "expression statements";
  case StmtKind::Assert:
    return "'assert' statements";
  case StmtKind::Import:
  case StmtKind::ImportFrom:
    return "imports";
  case StmtKind::AsyncFunctionDef:
    return "'async def' statements";
  case StmtKind::ClassDef:
    return "'class' statements";
  case StmtKind::With:
    return "'with' statements";
  case StmtKind::AsyncWith:
    return "'async with' statements";
  case StmtKind::Try:
    return "'try' statements";
  case StmtKind::TryStar:
    return "'try' statements with 'except*'";
  case StmtKind::Raise:
    return "'raise' statements";
  case StmtKind::Global:
    return "'global' statements";
  case StmtKind::Nonlocal:
    return "'nonlocal' statements";
  case StmtKind::Delete:
    return "'del' statements";
  case StmtKind::AsyncFor:
    return "'async for' loops";
  case StmtKind::Match:
    return "'match' statements";
  case StmtKind::TypeAlias:
    return "'type' statements";
  }
  assert(false && "describe: invalid StmtKind value");
  return "?";
}

} // namespace kiln::frontend
