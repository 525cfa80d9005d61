// The syntax tree of a kernel file: the Python subset of shared/LANGUAGE.md.
//
// One node type for expressions and one for statements, each tagged by kind,
// with children in vectors. The tree is what the parser saw, with source
// locations; meaning (types, constexpr folding, what `tl.x` is) is decided
// later by the IR generator. Nodes are immutable once parsed and shared
// read-only between compiles on many threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compiler/frontend/source.hpp"

namespace kiln::frontend {

struct Expr;
struct Stmt;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

enum class ExprKind : uint8_t {
  Name,      // id
  Int,       // int_value (a literal's magnitude; `-1` is UnaryOp(USub, Int 1))
  Float,     // float_value
  Bool,      // bool_value
  None,      //
  Str,       // id holds the string's value (quotes and escapes resolved)
  Attribute, // children[0].id
  Call,      // children[0](children[1..], keywords)
  Subscript, // children[0][children[1..]]; each index an Expr, Slice or None
  Slice,     // `lo:hi:step`; children = {lo, hi, step}, each may be null
  Tuple,     // children (also a parenthesised tuple and a bare `a, b`)
  List,      // children
  BinOp,     // children[0] op children[1]
  UnaryOp,   // op children[0]
  Compare,   // children[0] cmp_ops[0] children[1] cmp_ops[1] children[2] ...
  BoolOp,    // children[0] op children[1] op ... (op is And or Or)
  IfExp,     // children = {test, body, orelse}: `body if test else orelse`
};

enum class Op : uint8_t {
  // binary
  Add, Sub, Mul, Div, FloorDiv, Mod, Pow, LShift, RShift, BitAnd, BitOr, BitXor, MatMul,
  // unary
  USub, UAdd, Not, Invert,
  // boolean
  And, Or,
  // comparison
  Lt, Le, Gt, Ge, Eq, Ne, Is, IsNot, In, NotIn,
};

/// The Python spelling of an operator ("+", "//", "not", "is not", ...).
const char *op_spelling(Op op);

struct Keyword {
  std::string name;
  ExprPtr value;
  Loc loc;
};

struct Expr {
  ExprKind kind;
  Loc loc;
  std::string id;
  uint64_t int_value = 0;
  double float_value = 0;
  bool bool_value = false;
  Op op = Op::Add;
  std::vector<Op> cmp_ops;
  std::vector<ExprPtr> children; // entries may be null only inside a Slice
  std::vector<Keyword> keywords;

  Expr(ExprKind k, Loc l) : kind(k), loc(l) {}
};

enum class StmtKind : uint8_t {
  FunctionDef, // see FunctionDef fields
  Assign,      // targets = value (`a = b = v` has two targets; a target may be a Tuple)
  AnnAssign,   // targets[0]: annotation = value (value may be null)
  AugAssign,   // targets[0] op= value
  If,          // if test: body else: orelse (elif is an If inside orelse)
  For,         // for targets[0] in value: body (orelse non-empty only if written)
  While,       // while test: body
  Return,      // return value (value may be null; `return a, b` is a Tuple)
  Pass,
  Break,
  Continue,
  ExprStmt,    // value (a call, or a docstring)
  Assert,      // assert test, value (the message; may be null)
  Import,      // import names[i].name as names[i].alias
  ImportFrom,  // from module import names[i].name as names[i].alias
  Unsupported, // any other Python statement (class, with, try, global, ...): id names it
};

struct ImportName {
  std::string name;  // dotted: "triton.language"
  std::string alias; // empty when there is no `as`
};

struct Param {
  std::string name;
  ExprPtr annotation; // may be null
  ExprPtr default_value; // may be null
  Loc loc;
};

struct Stmt {
  StmtKind kind;
  Loc loc;

  // expressions
  std::vector<ExprPtr> targets;
  ExprPtr value;
  ExprPtr test;
  ExprPtr annotation;
  Op op = Op::Add;

  // nested statements
  Body body;
  Body orelse;

  // Import / ImportFrom
  std::string module;
  std::vector<ImportName> names;

  // FunctionDef
  std::string id; // function name (also the construct's name for Unsupported)
  std::vector<Param> params;
  std::vector<ExprPtr> decorators;
  uint32_t def_line = 0;    // line of `def` (after decorators)
  uint32_t source_begin = 0; // byte offset of the `def` keyword's line start
  uint32_t source_end = 0;   // byte offset one past the function's last line

  Stmt(StmtKind k, Loc l) : kind(k), loc(l) {}
};

/// One parsed kernel file.
struct Module {
  SourceFilePtr source;
  Body body;
};

} // namespace kiln::frontend
