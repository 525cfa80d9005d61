// The syntax tree of a Python file: the full Python 3.12 grammar.
//
// One node type for expressions and one for statements, each tagged by kind,
// with children in vectors; kinds are named after the classes of CPython's
// `ast` module. The tree is what the parser saw, with source locations;
// meaning (types, constexpr folding, what `tl.x` is) is decided later by the
// IR generator, which accepts only the subset of shared/LANGUAGE.md inside a
// jit function. Nodes are immutable once parsed and shared read-only between
// compiles on many threads.
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
  Name,           // id
  Int,            // int_value (a literal's magnitude; `-1` is UnaryOp(USub, Int 1)); a literal
                  // beyond 64 bits keeps its spelling in id, and int_value is UINT64_MAX
  Float,          // float_value
  Bool,           // bool_value
  None,           //
  Str,            // id holds the string's value (quotes and escapes resolved; UTF-8, a lone
                  // surrogate as WTF-8; `\N{name}` stays as written: kiln has no Unicode names)
  Attribute,      // children[0].id
  Call,           // children[0](children[1..], keywords); an argument may be Starred, and a
                  // keyword with an empty name is `**value`
  Subscript,      // children[0][children[1..]]; each index an Expr, Slice or None
  Slice,          // `lo:hi:step`; children = {lo, hi, step}, each may be null
  Tuple,          // children (also a parenthesised tuple and a bare `a, b`)
  List,           // children
  BinOp,          // children[0] op children[1]
  UnaryOp,        // op children[0]
  Compare,        // children[0] cmp_ops[0] children[1] cmp_ops[1] children[2] ...
  BoolOp,         // children[0] op children[1] op ... (op is And or Or)
  IfExp,          // children = {test, body, orelse}: `body if test else orelse`
  Lambda,         // `lambda params: children[0]` (params have no annotations)
  Dict,           // children = {key0, value0, key1, value1, ...}; a null key is `**value`
  Set,            // children
  ListComp,       // children = {elt, Comprehension...}
  SetComp,        // children = {elt, Comprehension...}
  DictComp,       // children = {key, value, Comprehension...}
  GeneratorExp,   // children = {elt, Comprehension...}
  Await,          // children[0]
  Yield,          // children = {value}, or none for a bare `yield`
  YieldFrom,      // children[0]
  NamedExpr,      // children = {target (a Name), value}: `target := value`
  Starred,        // `*children[0]`
  JoinedStr,      // an f-string: children are Str and FormattedValue parts, none empty
  FormattedValue, // `{children[0]!id:children[1]}`: id is the conversion ("", "r", "s"
                  // or "a"); children[1] is the format spec (a JoinedStr) or null
  Bytes,          // id holds the bytes
  Ellipsis,       // `...`
  Complex,        // an imaginary literal: float_value is its imaginary part (`2j`)

  // Not expressions: parts of Python's grammar that CPython's ast gives
  // classes of their own, kept as Exprs so that they share one layout.
  Comprehension, // `for children[0] in children[1] if children[2] if ...`; bool_value: async
  // match patterns (children are patterns unless said otherwise)
  MatchValue,     // children[0] is the value expression
  MatchSingleton, // children[0] is a None or Bool
  MatchSequence,  // `[p, q, *rest]` (children; a MatchStar at most once)
  MatchMapping,   // `{k0: p0, k1: p1, **id}`: children = {k0, p0, k1, p1, ...}; id may be empty
  MatchClass,     // `children[0](children[1..], keywords)`: children[0] is the class expression
  MatchStar,      // `*id` (id is empty for `*_`)
  MatchAs,        // `children[0] as id`; no children: a capture `id`, or `_` when id is empty
  MatchOr,        // `children[0] | children[1] | ...`
  // type parameters (PEP 695): id is the name
  TypeVar,      // `id` or `id: children[0]` (the bound)
  ParamSpec,    // `**id`
  TypeVarTuple, // `*id`
};

// One line per group of operators.
// clang-format off
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
// clang-format on

/// The Python spelling of an operator ("+", "//", "not", "is not", ...).
const char *op_spelling(Op op);

/// How a diagnostic names expressions of `kind`, in the plural: "lambda
/// expressions", "f-strings", "dict displays".
const char *describe(ExprKind kind);

struct Keyword {
  std::string name; // empty for `**value`
  ExprPtr value;
  Loc loc;
};

enum class ParamKind : uint8_t {
  Positional,     // `a` (positional or keyword)
  PositionalOnly, // before `/`
  VarPositional,  // `*args`
  KeywordOnly,    // after `*` or `*args`
  VarKeyword,     // `**kwargs`
};

struct Param {
  std::string name;
  ExprPtr annotation;    // may be null
  ExprPtr default_value; // may be null
  Loc loc;
  ParamKind kind = ParamKind::Positional;
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
  std::vector<ExprPtr> children; // null entries: a Slice's absent bounds, a Dict's `**`
                                 // keys, a FormattedValue's absent format spec
  std::vector<Keyword> keywords;
  std::vector<Param> params; // Lambda

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
  ExprStmt,         // value (a call, or a docstring)
  Assert,           // assert test, value (the message; may be null)
  Import,           // import names[i].name as names[i].alias
  ImportFrom,       // from module import names[i].name as names[i].alias (`*` is a name)
  AsyncFunctionDef, // `async def`, with the fields of FunctionDef
  ClassDef,         // class id[type_params](targets..., keywords): body; with decorators,
                    // def_line, source_begin and source_end as for FunctionDef
  With,             // with items: body
  AsyncWith,        // async with items: body
  Try,              // try: body, handlers, else: orelse, finally: finalbody
  TryStar,          // the same with `except*` handlers
  Raise,            // raise value from test (both may be null)
  Global,           // global names[i].name
  Nonlocal,         // nonlocal names[i].name
  Delete,           // del targets
  AsyncFor,         // async for, with the fields of For
  Match,            // match value: cases
  TypeAlias,        // type targets[0][type_params] = value
};

/// How a diagnostic names statements of `kind`, in the plural: "'with'
/// statements", "'async for' loops".
const char *describe(StmtKind kind);

struct ImportName {
  std::string name;  // dotted: "triton.language"
  std::string alias; // empty when there is no `as`
};

struct WithItem {
  ExprPtr context_expr;
  ExprPtr optional_vars; // the target after `as`; may be null
};

struct ExceptHandler {
  Loc loc;          // the `except` keyword
  ExprPtr type;     // may be null: a bare `except:`
  std::string name; // after `as`; may be empty
  Body body;
};

struct MatchCase {
  ExprPtr pattern;
  ExprPtr guard; // after `if`; may be null
  Body body;
};

struct Stmt {
  StmtKind kind;
  Loc loc; // the first token (`def`/`class` for a decorated definition, `async` for async ones)

  // expressions
  std::vector<ExprPtr> targets;
  ExprPtr value;
  ExprPtr test;
  ExprPtr annotation; // also a FunctionDef's return annotation (may be null)
  Op op = Op::Add;

  // nested statements
  Body body;
  Body orelse;
  Body finalbody;                      // Try, TryStar
  std::vector<ExceptHandler> handlers; // Try, TryStar
  std::vector<WithItem> items;         // With, AsyncWith
  std::vector<MatchCase> cases;        // Match

  // Import / ImportFrom / Global / Nonlocal
  std::string module;
  std::vector<ImportName> names;

  // FunctionDef (also AsyncFunctionDef, and ClassDef where said above)
  std::string id;            // the function's (or class's) name
  std::vector<Param> params; // every parameter, in source order; see ParamKind
  std::vector<ExprPtr> decorators;
  std::vector<ExprPtr> type_params; // TypeVar, ParamSpec, TypeVarTuple; also TypeAlias
  std::vector<Keyword> keywords;    // ClassDef: `metaclass=M`, `**kw`
  uint32_t def_line = 0;            // line of `def` (after decorators)
  uint32_t source_begin = 0;        // byte offset of the `def` keyword's line start
  uint32_t source_end = 0;          // byte offset one past the function's last line

  Stmt(StmtKind k, Loc l) : kind(k), loc(l) {}
};

/// One parsed Python file.
struct Module {
  SourceFilePtr source;
  Body body;
};

} // namespace kiln::frontend
