// A recursive-descent parser for the Python subset of shared/LANGUAGE.md,
// following the structure of Python's own grammar (one function per
// precedence level) so that every accepted expression groups as in Python.
//
// Locations: a statement's loc is its first token (the `def` keyword for a
// FunctionDef). An expression's loc is the token a diagnostic about it should
// point at: the first token for names, literals, tuples, lists and slices;
// the operator for BinOp, UnaryOp, BoolOp and Compare (the first one of a
// chain); `if` for IfExp; the attribute name for Attribute; the function's
// loc for Call (so `tl.load(...)` points at `load`); `[` for Subscript.
#include "compiler/frontend/parser.hpp"

#include <algorithm>
#include <cassert>
#include <span>
#include <string_view>

#include "compiler/frontend/lexer.hpp"

namespace kiln::frontend {

namespace {

// Python statements kiln does not support. Each is reported at its keyword
// instead of failing later with a puzzling message about what follows it.
constexpr std::string_view kUnsupportedStatements[] = {
    "class",    "with", "try",   "except", "finally", "global",
    "nonlocal", "del",  "raise", "async",  "yield",
};

/// "'with' statements are not supported in kernel files", and what to write
/// instead where there is something to say.
std::string unsupported_statement(std::string_view word) {
  std::string message = "'" + std::string(word) + "' statements are not supported in kernel files";
  if (word == "class")
    message += "; a kernel file holds imports, tl.constexpr(...) globals and @triton.jit "
               "functions";
  else if (word == "with")
    message += " (Triton kernels have no context managers); write the body without 'with'";
  else if (word == "try" || word == "except" || word == "finally" || word == "raise")
    message += " (kernels cannot raise or catch exceptions); check conditions with "
               "tl.static_assert or tl.device_assert";
  else if (word == "global" || word == "nonlocal")
    message += "; pass the value as a parameter and return the result";
  return message;
}

struct OpSpelling {
  std::string_view text;
  Op op;
};

constexpr OpSpelling kBitOrOps[] = {{"|", Op::BitOr}};
constexpr OpSpelling kBitXorOps[] = {{"^", Op::BitXor}};
constexpr OpSpelling kBitAndOps[] = {{"&", Op::BitAnd}};
constexpr OpSpelling kShiftOps[] = {{"<<", Op::LShift}, {">>", Op::RShift}};
constexpr OpSpelling kArithOps[] = {{"+", Op::Add}, {"-", Op::Sub}};
constexpr OpSpelling kTermOps[] = {
    {"*", Op::Mul}, {"/", Op::Div}, {"//", Op::FloorDiv}, {"%", Op::Mod}, {"@", Op::MatMul}};
// The left-associative binary operators, loosest first.
constexpr std::span<const OpSpelling> kBinaryLevels[] = {kBitOrOps, kBitXorOps, kBitAndOps,
                                                         kShiftOps, kArithOps,  kTermOps};

constexpr OpSpelling kUnaryOps[] = {{"-", Op::USub}, {"+", Op::UAdd}, {"~", Op::Invert}};
constexpr OpSpelling kCompareOps[] = {{"<", Op::Lt},  {"<=", Op::Le}, {">", Op::Gt},
                                      {">=", Op::Ge}, {"==", Op::Eq}, {"!=", Op::Ne}};
constexpr OpSpelling kAugAssignOps[] = {
    {"+=", Op::Add},       {"-=", Op::Sub},    {"*=", Op::Mul},   {"/=", Op::Div},
    {"//=", Op::FloorDiv}, {"%=", Op::Mod},    {"**=", Op::Pow},  {"<<=", Op::LShift},
    {">>=", Op::RShift},   {"&=", Op::BitAnd}, {"|=", Op::BitOr}, {"^=", Op::BitXor},
    {"@=", Op::MatMul},
};

// Nesting of parentheses and unary operators beyond this is refused, so that
// a hostile or generated file cannot overflow the stack (the parser recurses
// once per level, and so do later passes). Python's limit is similar.
constexpr int kMaxNesting = 100;

ExprPtr make_expr(ExprKind kind, Loc loc) {
  return std::make_unique<Expr>(kind, loc);
}
StmtPtr make_stmt(StmtKind kind, Loc loc) {
  return std::make_unique<Stmt>(kind, loc);
}

/// How an assignment target that is not assignable is named in an error.
std::string describe_target(const Expr &e) {
  switch (e.kind) {
  case ExprKind::Call:
    return "a function call";
  case ExprKind::Int:
  case ExprKind::Float:
  case ExprKind::Str:
    return "a literal";
  case ExprKind::Bool:
    return e.bool_value ? "True" : "False";
  case ExprKind::None:
    return "None";
  case ExprKind::Compare:
    return "a comparison";
  case ExprKind::IfExp:
    return "a conditional expression";
  default:
    return "an expression";
  }
}

class Parser {
public:
  explicit Parser(SourceFilePtr source) : source_(std::move(source)), tokens_(tokenize(*source_)) {}

  Module parse_module() {
    Module module;
    module.source = source_;
    while (peek().kind != TokenKind::EndOfFile)
      parse_statement(module.body);
    return module;
  }

private:
  SourceFilePtr source_;
  const std::vector<Token> tokens_; // never changes, so references into it stay valid
  size_t pos_ = 0;
  uint32_t last_end_ = 0; // end offset of the last consumed token with text
  int nesting_ = 0;

  // ---- tokens ----

  const Token &peek(size_t ahead = 0) const {
    return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)];
  }
  const Token &advance() {
    const Token &token = tokens_[pos_];
    if (token.end > token.begin)
      last_end_ = token.end;
    if (pos_ + 1 < tokens_.size())
      ++pos_;
    return token;
  }
  bool at_op(std::string_view op) const { return peek().is_op(op); }
  bool at_keyword(std::string_view keyword) const { return peek().is_name(keyword); }
  bool accept_op(std::string_view op) {
    if (!at_op(op))
      return false;
    advance();
    return true;
  }
  bool accept_keyword(std::string_view keyword) {
    if (!at_keyword(keyword))
      return false;
    advance();
    return true;
  }
  const OpSpelling *match_op(std::span<const OpSpelling> ops) const {
    for (const OpSpelling &op : ops)
      if (at_op(op.text))
        return &op;
    return nullptr;
  }

  [[noreturn]] void fail(Loc loc, std::string message) const {
    throw source_->error(loc, std::move(message));
  }
  /// "expected <what>, found <the next token>", at the next token.
  [[noreturn]] void fail_expected(const std::string &what) const {
    const Token &found = peek();
    // `:=` is valid Python almost anywhere an expression ends; say that it is
    // unsupported rather than that something else was expected.
    if (found.is_op(":="))
      fail(found.loc, "the walrus operator ':=' is not supported");
    fail(found.loc, "expected " + what + ", found " + describe(found));
  }
  const Token &expect_op(std::string_view op, const std::string &context) {
    if (!at_op(op))
      fail_expected("'" + std::string(op) + "' " + context);
    return advance();
  }
  /// A name that is not a keyword.
  const Token &expect_name(const std::string &what) {
    if (peek().kind != TokenKind::Name || is_keyword(peek().text))
      fail_expected(what);
    return advance();
  }

  /// Counts one level of nesting for as long as it lives.
  class NestingGuard {
  public:
    NestingGuard(Parser &parser, Loc loc) : parser_(parser) {
      if (++parser_.nesting_ > kMaxNesting)
        parser_.fail(loc, "the expression is nested too deeply (more than " +
                              std::to_string(kMaxNesting) + " levels)");
    }
    ~NestingGuard() { --parser_.nesting_; }
    NestingGuard(const NestingGuard &) = delete;
    NestingGuard &operator=(const NestingGuard &) = delete;

  private:
    Parser &parser_;
  };

  // ---- statements ----

  void parse_statement(Body &out) {
    const Token &token = peek();
    if (token.kind == TokenKind::Indent)
      fail(token.loc, "unexpected indent");
    if (token.is_op("@")) {
      out.push_back(parse_decorated());
      return;
    }
    if (token.is_name("def")) {
      out.push_back(parse_function_def({}));
      return;
    }
    if (token.is_name("if")) {
      out.push_back(parse_if());
      return;
    }
    if (token.is_name("for")) {
      out.push_back(parse_for());
      return;
    }
    if (token.is_name("while")) {
      out.push_back(parse_while());
      return;
    }
    if (token.is_name("elif") || token.is_name("else"))
      fail(token.loc, "'" + token.text + "' does not follow an 'if'" +
                          (token.text == "else" ? ", 'for' or 'while'" : "") + " block");
    if (is_match_statement())
      fail(token.loc, "'match' statements are not supported in kernel files");
    parse_simple_line(out);
  }

  /// `match` is a soft keyword: it starts a match statement only when the
  /// logical line ends in ':' (no other line starting with a name does).
  bool is_match_statement() const {
    if (!peek().is_name("match"))
      return false;
    size_t i = pos_;
    while (tokens_[i + 1].kind != TokenKind::Newline && tokens_[i + 1].kind != TokenKind::EndOfFile)
      ++i;
    return i > pos_ && tokens_[i].is_op(":");
  }

  /// Simple statements separated by ';', up to the end of the line.
  void parse_simple_line(Body &out) {
    while (true) {
      out.push_back(parse_small_statement());
      if (!accept_op(";") || peek().kind == TokenKind::Newline)
        break;
    }
    if (peek().kind != TokenKind::Newline)
      fail_expected("end of line after the statement");
    advance();
  }

  StmtPtr parse_small_statement() {
    const Token &token = peek();
    if (token.kind == TokenKind::Name) {
      const std::string &word = token.text;
      if (std::find(std::begin(kUnsupportedStatements), std::end(kUnsupportedStatements), word) !=
          std::end(kUnsupportedStatements))
        fail(token.loc, unsupported_statement(word));
      if (word == "pass" || word == "break" || word == "continue") {
        advance();
        return make_stmt(word == "pass"    ? StmtKind::Pass
                         : word == "break" ? StmtKind::Break
                                           : StmtKind::Continue,
                         token.loc);
      }
      if (word == "return") {
        advance();
        auto stmt = make_stmt(StmtKind::Return, token.loc);
        if (starts_expression(peek()))
          stmt->value = parse_test_list();
        return stmt;
      }
      if (word == "assert") {
        advance();
        auto stmt = make_stmt(StmtKind::Assert, token.loc);
        stmt->test = parse_test();
        if (accept_op(","))
          stmt->value = parse_test();
        return stmt;
      }
      if (word == "import")
        return parse_import();
      if (word == "from")
        return parse_from_import();
    }
    return parse_expression_statement();
  }

  /// An expression statement or an assignment of any of the three kinds.
  StmtPtr parse_expression_statement() {
    const Loc loc = peek().loc;
    ExprPtr first = parse_test_list();

    if (at_op(":")) { // AnnAssign
      if (first->kind == ExprKind::Tuple || first->kind == ExprKind::List)
        fail(first->loc, "only a single target (not a tuple or list) can be annotated");
      check_target(*first);
      advance();
      auto stmt = make_stmt(StmtKind::AnnAssign, loc);
      stmt->annotation = parse_test();
      if (accept_op("="))
        stmt->value = parse_test_list();
      stmt->targets.push_back(std::move(first));
      return stmt;
    }

    if (const OpSpelling *aug = match_op(kAugAssignOps)) {
      if (first->kind == ExprKind::Tuple || first->kind == ExprKind::List)
        fail(first->loc, "augmented assignment ('" + std::string(aug->text) +
                             "') needs a single target, not a tuple or list");
      check_target(*first);
      advance();
      auto stmt = make_stmt(StmtKind::AugAssign, loc);
      stmt->op = aug->op;
      stmt->value = parse_test_list();
      stmt->targets.push_back(std::move(first));
      return stmt;
    }

    if (at_op("=")) { // `a = b = value`: every part but the last is a target
      auto stmt = make_stmt(StmtKind::Assign, loc);
      std::vector<ExprPtr> parts;
      parts.push_back(std::move(first));
      while (accept_op("="))
        parts.push_back(parse_test_list());
      stmt->value = std::move(parts.back());
      parts.pop_back();
      for (const ExprPtr &target : parts)
        check_target(*target);
      stmt->targets = std::move(parts);
      return stmt;
    }

    auto stmt = make_stmt(StmtKind::ExprStmt, loc);
    stmt->value = std::move(first);
    return stmt;
  }

  void check_target(const Expr &e) const {
    switch (e.kind) {
    case ExprKind::Name:
    case ExprKind::Attribute:
    case ExprKind::Subscript:
      return;
    case ExprKind::Tuple:
    case ExprKind::List:
      for (const ExprPtr &child : e.children)
        check_target(*child);
      return;
    default:
      fail(e.loc, "cannot assign to " + describe_target(e));
    }
  }

  StmtPtr parse_import() {
    auto stmt = make_stmt(StmtKind::Import, advance().loc);
    do {
      ImportName name;
      name.name = parse_dotted_name("a module name");
      if (accept_keyword("as"))
        name.alias = expect_name("a name after 'as'").text;
      stmt->names.push_back(std::move(name));
    } while (accept_op(","));
    return stmt;
  }

  StmtPtr parse_from_import() {
    auto stmt = make_stmt(StmtKind::ImportFrom, advance().loc);
    // Relative imports (`from . import x`, `from ..m import x`) keep their
    // dots in `module`; the lexer reads "..." as one token.
    while (at_op(".") || at_op("..."))
      stmt->module += advance().text;
    if (stmt->module.empty() || (peek().kind == TokenKind::Name && !at_keyword("import")))
      stmt->module += parse_dotted_name("a module name after 'from'");
    if (!accept_keyword("import"))
      fail_expected("'import' after the module name");
    if (at_op("*"))
      fail(peek().loc, "'from ... import *' is not supported; import the names you use");
    const bool parenthesized = accept_op("(");
    do {
      if (parenthesized && at_op(")"))
        break; // a trailing comma
      ImportName name;
      name.name = expect_name("a name to import").text;
      if (accept_keyword("as"))
        name.alias = expect_name("a name after 'as'").text;
      stmt->names.push_back(std::move(name));
    } while (accept_op(","));
    if (parenthesized)
      expect_op(")", "to close the list of imported names");
    return stmt;
  }

  std::string parse_dotted_name(const std::string &what) {
    std::string name = expect_name(what).text;
    while (accept_op("."))
      name += "." + expect_name("a name after '.'").text;
    return name;
  }

  StmtPtr parse_decorated() {
    std::vector<ExprPtr> decorators;
    while (accept_op("@")) {
      decorators.push_back(parse_test());
      if (peek().kind != TokenKind::Newline)
        fail_expected("end of line after the decorator");
      advance();
    }
    if (at_keyword("def"))
      return parse_function_def(std::move(decorators));
    if (at_keyword("class") || at_keyword("async"))
      fail(peek().loc, unsupported_statement(peek().text));
    fail_expected("'def' after the decorator");
  }

  StmtPtr parse_function_def(std::vector<ExprPtr> decorators) {
    const Token &def = advance();
    auto fn = make_stmt(StmtKind::FunctionDef, def.loc);
    fn->decorators = std::move(decorators);
    fn->def_line = def.loc.line;
    fn->source_begin = def.begin - (def.loc.col - 1);
    fn->id = expect_name("a function name after 'def'").text;
    expect_op("(", "after the function name");
    parse_params(*fn);
    expect_op(")", "to close the parameter list");
    if (accept_op("->"))
      parse_test(); // the return annotation: accepted, as Triton ignores it too
    expect_op(":", "after the function signature");
    fn->body = parse_block("the function definition", def);
    // Through the end of the line of the body's last token, so that the
    // function's text ends with a newline and a trailing comment stays in.
    const std::string &text = source_->text();
    const size_t newline = text.find('\n', last_end_);
    fn->source_end =
        static_cast<uint32_t>(newline == std::string::npos ? text.size() : newline + 1);
    return fn;
  }

  void parse_params(Stmt &fn) {
    while (!at_op(")")) {
      const Token &token = peek();
      if (token.is_op("*") || token.is_op("**")) {
        const std::string name = token.text + (peek(1).kind == TokenKind::Name ? peek(1).text : "");
        if (name == "*")
          fail(token.loc, "keyword-only parameters ('*') are not supported in kernel functions");
        fail(token.loc,
             "variadic parameters ('" + name + "') are not supported in kernel functions");
      }
      if (token.is_op("/"))
        fail(token.loc, "positional-only parameters ('/') are not supported in kernel functions");
      Param param;
      param.loc = token.loc;
      param.name = expect_name("a parameter name").text;
      for (const Param &other : fn.params)
        if (other.name == param.name)
          fail(param.loc, "duplicate parameter '" + param.name + "' in function '" + fn.id + "'");
      if (accept_op(":"))
        param.annotation = parse_test();
      if (accept_op("="))
        param.default_value = parse_test();
      else if (!fn.params.empty() && fn.params.back().default_value)
        fail(param.loc,
             "parameter '" + param.name + "' without a default follows a parameter with a default");
      fn.params.push_back(std::move(param));
      if (!accept_op(",")) {
        if (!at_op(")"))
          fail_expected("',' or ')' in the parameter list");
        break;
      }
    }
  }

  /// The body of a compound statement, after its ':'. `header` is the
  /// statement's keyword; `what` names the statement in errors.
  Body parse_block(const std::string &what, const Token &header) {
    Body body;
    if (peek().kind != TokenKind::Newline) { // `if x: pass`
      parse_simple_line(body);
      return body;
    }
    advance();
    if (peek().kind != TokenKind::Indent)
      fail_expected("an indented block after " + what + " on line " +
                    std::to_string(header.loc.line));
    advance();
    while (peek().kind != TokenKind::Dedent)
      parse_statement(body);
    advance();
    return body;
  }

  StmtPtr parse_if() {
    const Token &keyword = advance();
    auto stmt = make_stmt(StmtKind::If, keyword.loc);
    stmt->test = parse_test();
    expect_op(":", "after the if condition");
    stmt->body = parse_block("the 'if' statement", keyword);
    // An elif chain nests: each elif is an If alone in the previous orelse.
    // Built iteratively, so a long chain costs no stack here.
    Stmt *tail = stmt.get();
    while (at_keyword("elif")) {
      const Token &elif = advance();
      auto branch = make_stmt(StmtKind::If, elif.loc);
      branch->test = parse_test();
      expect_op(":", "after the elif condition");
      branch->body = parse_block("the 'elif' clause", elif);
      Stmt *next = branch.get();
      tail->orelse.push_back(std::move(branch));
      tail = next;
    }
    if (at_keyword("else"))
      tail->orelse = parse_else();
    return stmt;
  }

  Body parse_else() {
    const Token &keyword = advance();
    expect_op(":", "after 'else'");
    return parse_block("the 'else' clause", keyword);
  }

  StmtPtr parse_for() {
    const Token &keyword = advance();
    auto stmt = make_stmt(StmtKind::For, keyword.loc);
    // The target is parsed below the comparisons, or `in` would be read as
    // the membership operator.
    ExprPtr target = parse_list_of([this] { return parse_binary(0); });
    check_target(*target);
    stmt->targets.push_back(std::move(target));
    if (!accept_keyword("in"))
      fail_expected("'in' after the for loop's target");
    stmt->value = parse_test_list();
    expect_op(":", "after the for header");
    stmt->body = parse_block("the 'for' statement", keyword);
    if (at_keyword("else"))
      stmt->orelse = parse_else();
    return stmt;
  }

  StmtPtr parse_while() {
    const Token &keyword = advance();
    auto stmt = make_stmt(StmtKind::While, keyword.loc);
    stmt->test = parse_test();
    expect_op(":", "after the while condition");
    stmt->body = parse_block("the 'while' statement", keyword);
    if (at_keyword("else"))
      stmt->orelse = parse_else();
    return stmt;
  }

  // ---- expressions ----

  /// Whether `token` can begin an expression (used to tell a trailing comma
  /// from a comma before another element).
  static bool starts_expression(const Token &token) {
    switch (token.kind) {
    case TokenKind::Name:
      return !is_keyword(token.text) || token.text == "True" || token.text == "False" ||
             token.text == "None" || token.text == "not" || token.text == "lambda" ||
             token.text == "await" || token.text == "yield";
    case TokenKind::Int:
    case TokenKind::Float:
    case TokenKind::String:
      return true;
    case TokenKind::Op:
      return token.text == "(" || token.text == "[" || token.text == "{" || token.text == "-" ||
             token.text == "+" || token.text == "~" || token.text == "..." || token.text == "*";
    default:
      return false;
    }
  }

  /// `elem` or `elem, elem, ...` (a bare tuple, trailing comma allowed).
  template <class ParseElement> ExprPtr parse_list_of(ParseElement parse_element) {
    const Loc loc = peek().loc;
    ExprPtr first = parse_element();
    if (!at_op(","))
      return first;
    auto tuple = make_expr(ExprKind::Tuple, loc);
    tuple->children.push_back(std::move(first));
    while (accept_op(",") && starts_expression(peek()))
      tuple->children.push_back(parse_element());
    return tuple;
  }

  ExprPtr parse_test_list() {
    return parse_list_of([this] { return parse_test(); });
  }

  /// A full expression: `body if test else orelse`, or an or-expression.
  ExprPtr parse_test() {
    NestingGuard guard(*this, peek().loc);
    ExprPtr body = parse_or();
    if (!at_keyword("if"))
      return body;
    auto e = make_expr(ExprKind::IfExp, advance().loc);
    ExprPtr test = parse_or();
    if (!accept_keyword("else"))
      fail_expected("'else' in the conditional expression");
    ExprPtr orelse = parse_test();
    e->children.push_back(std::move(test));
    e->children.push_back(std::move(body));
    e->children.push_back(std::move(orelse));
    return e;
  }

  ExprPtr parse_or() { return parse_bool_op("or", Op::Or, &Parser::parse_and); }
  ExprPtr parse_and() { return parse_bool_op("and", Op::And, &Parser::parse_not); }

  /// `a op b op c` as one BoolOp with three children, as in Python's ast.
  ExprPtr parse_bool_op(std::string_view keyword, Op op, ExprPtr (Parser::*parse_operand)()) {
    ExprPtr first = (this->*parse_operand)();
    if (!at_keyword(keyword))
      return first;
    auto e = make_expr(ExprKind::BoolOp, peek().loc);
    e->op = op;
    e->children.push_back(std::move(first));
    while (accept_keyword(keyword))
      e->children.push_back((this->*parse_operand)());
    return e;
  }

  ExprPtr parse_not() {
    if (!at_keyword("not"))
      return parse_comparison();
    const Token &token = advance();
    NestingGuard guard(*this, token.loc);
    auto e = make_expr(ExprKind::UnaryOp, token.loc);
    e->op = Op::Not;
    e->children.push_back(parse_not());
    return e;
  }

  /// The comparison operator at the next token(s), consumed; false if none.
  bool accept_compare_op(Op &op) {
    if (const OpSpelling *spelling = match_op(kCompareOps)) {
      op = spelling->op;
    } else if (at_keyword("in")) {
      op = Op::In;
    } else if (at_keyword("is")) {
      op = peek(1).is_name("not") ? Op::IsNot : Op::Is;
      if (op == Op::IsNot)
        advance();
    } else if (at_keyword("not")) {
      advance();
      if (!at_keyword("in"))
        fail_expected("'in' after 'not' in the comparison");
      op = Op::NotIn;
    } else {
      return false;
    }
    advance();
    return true;
  }

  /// `a < b <= c` is one Compare with two ops, as in Python's ast.
  ExprPtr parse_comparison() {
    ExprPtr first = parse_binary(0);
    const Loc loc = peek().loc;
    Op op;
    if (!accept_compare_op(op))
      return first;
    auto e = make_expr(ExprKind::Compare, loc);
    e->children.push_back(std::move(first));
    do {
      e->cmp_ops.push_back(op);
      e->children.push_back(parse_binary(0));
    } while (accept_compare_op(op));
    return e;
  }

  /// The left-associative binary operators at kBinaryLevels[level] and tighter.
  ExprPtr parse_binary(size_t level) {
    if (level == std::size(kBinaryLevels))
      return parse_factor();
    ExprPtr lhs = parse_binary(level + 1);
    while (const OpSpelling *op = match_op(kBinaryLevels[level])) {
      auto e = make_expr(ExprKind::BinOp, advance().loc);
      e->op = op->op;
      e->children.push_back(std::move(lhs));
      e->children.push_back(parse_binary(level + 1));
      lhs = std::move(e);
    }
    return lhs;
  }

  /// Unary - + ~, which bind looser than ** on their right: -2**2 is -(2**2).
  ExprPtr parse_factor() {
    const OpSpelling *op = match_op(kUnaryOps);
    if (!op)
      return parse_power();
    const Token &token = advance();
    NestingGuard guard(*this, token.loc);
    auto e = make_expr(ExprKind::UnaryOp, token.loc);
    e->op = op->op;
    e->children.push_back(parse_factor());
    return e;
  }

  /// `a ** b`, right-associative; the exponent may carry a unary sign (2**-1).
  ExprPtr parse_power() {
    ExprPtr base = parse_primary();
    if (!at_op("**"))
      return base;
    const Token &token = advance();
    NestingGuard guard(*this, token.loc);
    auto e = make_expr(ExprKind::BinOp, token.loc);
    e->op = Op::Pow;
    e->children.push_back(std::move(base));
    e->children.push_back(parse_factor());
    return e;
  }

  /// An atom followed by attribute accesses, calls and subscripts.
  ExprPtr parse_primary() {
    ExprPtr e = parse_atom();
    while (true) {
      if (accept_op(".")) {
        const Token &name = expect_name("an attribute name after '.'");
        auto attribute = make_expr(ExprKind::Attribute, name.loc);
        attribute->id = name.text;
        attribute->children.push_back(std::move(e));
        e = std::move(attribute);
      } else if (at_op("(")) {
        e = parse_call(std::move(e));
      } else if (at_op("[")) {
        e = parse_subscript(std::move(e));
      } else {
        return e;
      }
    }
  }

  ExprPtr parse_call(ExprPtr function) {
    const Token &open = advance();
    auto call = make_expr(ExprKind::Call, function->loc);
    call->children.push_back(std::move(function));
    while (!at_op(")")) {
      const Token &token = peek();
      if (token.is_op("*") || token.is_op("**"))
        fail(token.loc, "argument unpacking ('" + token.text + "') is not supported in calls");
      if (token.kind == TokenKind::Name && !is_keyword(token.text) && peek(1).is_op("=")) {
        for (const Keyword &other : call->keywords)
          if (other.name == token.text)
            fail(token.loc, "keyword argument '" + token.text + "' is given twice");
        advance();
        advance();
        call->keywords.push_back(Keyword{token.text, parse_test(), token.loc});
      } else {
        if (!call->keywords.empty())
          fail(token.loc, "a positional argument cannot follow keyword arguments");
        call->children.push_back(parse_test());
        if (at_keyword("for"))
          fail(peek().loc, "generator expressions are not supported");
      }
      if (!accept_op(","))
        break;
    }
    if (!at_op(")"))
      fail_expected("',' or ')' after the call argument (the call opens on line " +
                    std::to_string(open.loc.line) + ")");
    advance();
    return call;
  }

  ExprPtr parse_subscript(ExprPtr value) {
    const Token &open = advance();
    auto e = make_expr(ExprKind::Subscript, open.loc);
    e->children.push_back(std::move(value));
    do {
      if (at_op("]") && e->children.size() > 1)
        break; // a trailing comma
      e->children.push_back(parse_index());
    } while (accept_op(","));
    expect_op("]", "to close the subscript");
    return e;
  }

  /// One index of a subscript: an expression or a slice `lo:hi:step`.
  ExprPtr parse_index() {
    const Loc loc = peek().loc;
    ExprPtr lo;
    if (!at_op(":")) {
      lo = parse_test();
      if (!at_op(":"))
        return lo;
    }
    advance();
    auto slice = make_expr(ExprKind::Slice, loc);
    auto bound_follows = [this] { return !at_op(":") && !at_op(",") && !at_op("]"); };
    ExprPtr hi = bound_follows() ? parse_test() : nullptr;
    ExprPtr step;
    if (accept_op(":") && bound_follows())
      step = parse_test();
    slice->children.push_back(std::move(lo));
    slice->children.push_back(std::move(hi));
    slice->children.push_back(std::move(step));
    return slice;
  }

  ExprPtr parse_atom() {
    const Token &token = peek();
    switch (token.kind) {
    case TokenKind::Name:
      return parse_name_atom();
    case TokenKind::Int: {
      auto e = make_expr(ExprKind::Int, advance().loc);
      e->int_value = token.int_value;
      return e;
    }
    case TokenKind::Float: {
      auto e = make_expr(ExprKind::Float, advance().loc);
      e->float_value = token.float_value;
      return e;
    }
    case TokenKind::String: { // adjacent literals concatenate: "a" "b" is "ab"
      auto e = make_expr(ExprKind::Str, token.loc);
      while (peek().kind == TokenKind::String)
        e->id += advance().text;
      return e;
    }
    case TokenKind::Op:
      if (token.text == "(")
        return parse_parenthesized();
      if (token.text == "[")
        return parse_list();
      if (token.text == "{")
        fail(token.loc, "dict and set displays are not supported");
      if (token.text == "...")
        fail(token.loc, "'...' (Ellipsis) is not supported");
      if (token.text == "*") {
        // After an operator (`x + * 2`) a '*' is a typo, not a starred expression.
        const Token &prev = tokens_[pos_ > 0 ? pos_ - 1 : 0];
        if (pos_ > 0 && prev.kind == TokenKind::Op && !prev.is_op(",") && !prev.is_op("(") &&
            !prev.is_op("[") && !prev.is_op("="))
          fail(token.loc, "expected an expression after '" + prev.text + "', found '*'");
        fail(token.loc, "starred expressions ('*x') are not supported");
      }
      break;
    default:
      break;
    }
    fail_expected("an expression");
  }

  ExprPtr parse_name_atom() {
    const Token &token = peek();
    const std::string &word = token.text;
    if (word == "True" || word == "False") {
      auto e = make_expr(ExprKind::Bool, advance().loc);
      e->bool_value = word == "True";
      return e;
    }
    if (word == "None")
      return make_expr(ExprKind::None, advance().loc);
    if (word == "lambda")
      fail(token.loc, "lambda expressions are not supported; define a @triton.jit function and "
                      "call it");
    if (word == "await" || word == "yield")
      fail(token.loc, "'" + word + "' expressions are not supported");
    if (is_keyword(word))
      fail_expected("an expression");
    auto e = make_expr(ExprKind::Name, advance().loc);
    e->id = word;
    return e;
  }

  /// `(e)`, `()`, `(a,)`, `(a, b)`.
  ExprPtr parse_parenthesized() {
    const Token &open = advance();
    if (accept_op(")"))
      return make_expr(ExprKind::Tuple, open.loc);
    ExprPtr first = parse_test();
    if (at_keyword("for"))
      fail(peek().loc, "generator expressions are not supported");
    if (accept_op(")"))
      return first; // only grouping: the inner expression keeps its own loc
    if (!at_op(","))
      fail_expected("')' to close the '(' on line " + std::to_string(open.loc.line));
    auto tuple = make_expr(ExprKind::Tuple, open.loc);
    tuple->children.push_back(std::move(first));
    parse_elements(*tuple, ")", "tuple");
    return tuple;
  }

  ExprPtr parse_list() {
    const Token &open = advance();
    auto list = make_expr(ExprKind::List, open.loc);
    if (accept_op("]"))
      return list;
    list->children.push_back(parse_test());
    if (at_keyword("for"))
      fail(peek().loc, "list comprehensions are not supported");
    if (accept_op("]"))
      return list;
    if (!at_op(","))
      fail_expected("',' or ']' in the list");
    parse_elements(*list, "]", "list");
    return list;
  }

  /// The rest of a tuple or list display, from the comma after its first
  /// element through the closing bracket.
  void parse_elements(Expr &display, std::string_view close, const std::string &what) {
    while (accept_op(",") && !at_op(close))
      display.children.push_back(parse_test());
    if (!at_op(close))
      fail_expected("',' or '" + std::string(close) + "' in the " + what);
    advance();
  }
};

} // namespace

Module parse(SourceFilePtr source) {
  assert(source && "parse: null SourceFile");
  return Parser(std::move(source)).parse_module();
}

} // namespace kiln::frontend
