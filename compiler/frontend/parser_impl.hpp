// The parser's class, shared by its source files, one per part of Python's
// grammar: parser.cpp (statements), parser_defs.cpp (functions, classes,
// lambdas: parameters, decorators, type parameters), parser_expr.cpp
// (expressions), parser_strings.cpp (string literals and f-strings) and
// parser_patterns.cpp (the patterns of `match`).
//
// A recursive-descent parser following the structure of Python's own
// grammar (one function per precedence level) so that everything accepted
// groups as in Python. Locations: a statement's loc is its first token (the
// `def` or `class` keyword of a decorated definition). An expression's loc
// is the token a diagnostic about it should point at: the first token for
// names, literals, displays and slices; the operator for BinOp, UnaryOp,
// BoolOp and Compare (the first one of a chain); `if` for IfExp; the
// attribute name for Attribute; the function's loc for Call (so
// `tl.load(...)` points at `load`); `[` for Subscript.
//
// What it accepts is what CPython's parser (ast.parse) accepts, checked on
// the standard library by tests/stdlib_parse_test.cpp, with these
// deliberate differences: a few errors CPython reports only when compiling
// are reported here (a duplicate parameter, a repeated keyword argument, a
// starred expression outside a tuple, list, set or call); expressions
// nested more than 100 levels (or chains of more than 1000 operators) are
// refused to bound the stack.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/frontend/ast.hpp"
#include "compiler/frontend/lexer.hpp"

namespace kiln::frontend {

struct OpSpelling {
  std::string_view text;
  Op op;
};

inline ExprPtr make_expr(ExprKind kind, Loc loc) {
  return std::make_unique<Expr>(kind, loc);
}
inline StmtPtr make_stmt(StmtKind kind, Loc loc) {
  return std::make_unique<Stmt>(kind, loc);
}

class Parser {
public:
  explicit Parser(SourceFilePtr source);

  Module parse_module();

private:
  SourceFilePtr source_;
  const std::vector<Token> tokens_; // never changes, so references into it stay valid
  size_t pos_ = 0;
  uint32_t last_end_ = 0; // end offset of the last consumed token with text
  int nesting_ = 0;       // recursion levels of the expression parser now open
  int depth_ = 0;         // nesting_ plus the operators and trailers of open chains

  // ---- tokens (parser.cpp) ----

  const Token &peek(size_t ahead = 0) const {
    return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)];
  }
  const Token &advance();
  bool at_op(std::string_view op) const { return peek().is_op(op); }
  bool at_keyword(std::string_view keyword) const { return peek().is_name(keyword); }
  bool at_kind(TokenKind kind) const { return peek().kind == kind; }
  bool accept_op(std::string_view op);
  bool accept_keyword(std::string_view keyword);
  const OpSpelling *match_op(std::span<const OpSpelling> ops) const;

  [[noreturn]] void fail(Loc loc, std::string message) const;
  /// "expected <what>, found <the next token>", at the next token.
  [[noreturn]] void fail_expected(const std::string &what) const;
  const Token &expect_op(std::string_view op, const std::string &context);
  /// A name that is not a keyword.
  const Token &expect_name(const std::string &what);
  void expect_keyword(std::string_view keyword, const std::string &context);

  /// Counts one level of recursion for as long as it lives; refuses input
  /// nested so deeply that the parser, or a later pass recursing over the
  /// tree, could overflow the stack.
  class NestingGuard {
  public:
    NestingGuard(Parser &parser, Loc loc);
    ~NestingGuard();
    NestingGuard(const NestingGuard &) = delete;
    NestingGuard &operator=(const NestingGuard &) = delete;

  private:
    Parser &parser_;
  };

  /// The depth a left-associative chain (`a + b + c`, `a.b(c)[d]`) adds to
  /// the tree: one level per operator or trailer, released with the chain.
  class ChainDepth {
  public:
    explicit ChainDepth(Parser &parser) : parser_(parser) {}
    ~ChainDepth() { parser_.depth_ -= held_; }
    ChainDepth(const ChainDepth &) = delete;
    ChainDepth &operator=(const ChainDepth &) = delete;
    void add(Loc loc);

  private:
    Parser &parser_;
    int held_ = 0;
  };

  // ---- statements (parser.cpp) ----

  void parse_statement(Body &out);
  bool is_match_statement() const;
  bool is_type_alias() const;
  void parse_simple_line(Body &out);
  StmtPtr parse_small_statement();
  StmtPtr parse_expression_statement();
  /// The right-hand side of an assignment: a yield expression or star expressions.
  ExprPtr parse_assigned_value();
  StmtPtr parse_import();
  StmtPtr parse_from_import();
  std::string parse_dotted_name(const std::string &what);
  StmtPtr parse_name_list(StmtKind kind);
  StmtPtr parse_raise();
  StmtPtr parse_del();
  StmtPtr parse_type_alias();
  Body parse_block(const std::string &what, const Token &header);
  StmtPtr parse_if();
  Body parse_else();
  StmtPtr parse_for(const Token *async);
  StmtPtr parse_while();
  StmtPtr parse_try();
  StmtPtr parse_with(const Token *async);
  WithItem parse_with_item();
  bool with_items_parenthesized() const;
  StmtPtr parse_match();

  // targets (parser.cpp)
  void check_target(const Expr &e, bool starred_allowed = false) const;
  void check_del_target(const Expr &e) const;
  void check_single_target(const Expr &e, const std::string &what) const;
  void check_not_starred(const Expr &e) const;

  // ---- definitions (parser_defs.cpp) ----

  StmtPtr parse_decorated();
  StmtPtr parse_function_def(std::vector<ExprPtr> decorators, const Token *async);
  StmtPtr parse_class_def(std::vector<ExprPtr> decorators);
  /// Sets source_begin and def_line from the definition's first token.
  void begin_definition(Stmt &def, const Token &first, const Token &keyword) const;
  /// Sets source_end: through the end of the line of the body's last token.
  void end_definition(Stmt &def) const;
  /// Parameters up to `close` (")" for def, ":" for lambda).
  void parse_params(std::vector<Param> &params, std::string_view close, bool annotations,
                    const std::string &owner);
  void parse_type_params(std::vector<ExprPtr> &out);
  ExprPtr parse_lambda();

  // ---- expressions (parser_expr.cpp) ----

  bool starts_expression(const Token &token) const;
  /// `elem` or `elem, elem, ...` (a bare tuple, trailing comma allowed).
  ExprPtr parse_list_of(ExprPtr (Parser::*parse_element)());
  ExprPtr parse_star_expressions();
  ExprPtr parse_star_expression();
  ExprPtr parse_star_named();
  ExprPtr parse_star_target();
  ExprPtr parse_test_list();
  ExprPtr parse_named();
  ExprPtr parse_test();
  ExprPtr parse_yield();
  ExprPtr parse_or();
  ExprPtr parse_and();
  ExprPtr parse_bool_op(std::string_view keyword, Op op, ExprPtr (Parser::*parse_operand)());
  ExprPtr parse_not();
  bool accept_compare_op(Op &op);
  ExprPtr parse_comparison();
  ExprPtr parse_binary(int level);
  ExprPtr parse_factor();
  ExprPtr parse_power();
  ExprPtr parse_primary();
  ExprPtr parse_call(ExprPtr function);
  void parse_arguments(Expr &call, const Token &open);
  ExprPtr parse_subscript(ExprPtr value);
  ExprPtr parse_index();
  ExprPtr parse_atom();
  ExprPtr parse_name_atom();
  ExprPtr parse_number();
  ExprPtr parse_parenthesized();
  ExprPtr parse_list();
  ExprPtr parse_brace();
  bool at_comprehension() const;
  /// The `for ... in ... if ...` clauses after a comprehension's element.
  void parse_comprehension_clauses(Expr &comp);
  void parse_elements(Expr &display, std::string_view close, const std::string &what);

  // ---- strings (parser_strings.cpp) ----

  ExprPtr parse_strings();
  void parse_fstring(std::vector<ExprPtr> &parts, std::string &pending);
  ExprPtr parse_replacement_field(std::string &pending);
  ExprPtr parse_format_spec(Loc loc);

  // ---- patterns (parser_patterns.cpp) ----

  ExprPtr parse_case_patterns();
  ExprPtr parse_pattern();
  ExprPtr parse_or_pattern();
  ExprPtr parse_closed_pattern();
  ExprPtr parse_star_pattern();
  ExprPtr parse_sequence_pattern(std::string_view close, Loc loc);
  ExprPtr parse_mapping_pattern();
  ExprPtr parse_class_pattern(ExprPtr cls);
  ExprPtr parse_value_or_class_pattern();
  ExprPtr parse_signed_number();
  ExprPtr parse_literal_key();
};

} // namespace kiln::frontend
