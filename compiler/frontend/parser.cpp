// Statements, and the token helpers every part of the parser uses.
#include "compiler/frontend/parser.hpp"

#include <algorithm>
#include <cassert>

#include "compiler/frontend/parser_impl.hpp"

namespace kiln::frontend {

namespace {

constexpr OpSpelling kAugAssignOps[] = {
    {"+=", Op::Add},       {"-=", Op::Sub},    {"*=", Op::Mul},   {"/=", Op::Div},
    {"//=", Op::FloorDiv}, {"%=", Op::Mod},    {"**=", Op::Pow},  {"<<=", Op::LShift},
    {">>=", Op::RShift},   {"&=", Op::BitAnd}, {"|=", Op::BitOr}, {"^=", Op::BitXor},
    {"@=", Op::MatMul},
};

// Recursion of the expression parser beyond this is refused (parentheses,
// unary operators, lambdas, ...), so that a hostile or generated file cannot
// overflow the stack: the parser recurses once per level, and so do later
// passes. Python's limit is similar. Chains of binary operators and trailers
// are built without recursion, but later passes recurse over them too, so
// they count towards kMaxDepth.
constexpr int kMaxNesting = 100;
constexpr int kMaxDepth = 1000;

/// How an assignment target that is not assignable is named in an error.
std::string describe_target(const Expr &e) {
  switch (e.kind) {
  case ExprKind::Call:
    return "a function call";
  case ExprKind::Int:
  case ExprKind::Float:
  case ExprKind::Str:
  case ExprKind::Bytes:
  case ExprKind::Complex:
  case ExprKind::JoinedStr:
  case ExprKind::Ellipsis:
    return "a literal";
  case ExprKind::Bool:
    return e.bool_value ? "True" : "False";
  case ExprKind::None:
    return "None";
  case ExprKind::Compare:
    return "a comparison";
  case ExprKind::IfExp:
    return "a conditional expression";
  case ExprKind::Lambda:
    return "a lambda";
  case ExprKind::NamedExpr:
    return "a named expression";
  case ExprKind::Await:
    return "an await expression";
  case ExprKind::Yield:
  case ExprKind::YieldFrom:
    return "a yield expression";
  case ExprKind::ListComp:
  case ExprKind::SetComp:
  case ExprKind::DictComp:
  case ExprKind::GeneratorExp:
    return "a comprehension";
  case ExprKind::Dict:
  case ExprKind::Set:
    return "a display";
  default:
    return "an expression";
  }
}

} // namespace

Parser::Parser(SourceFilePtr source) : source_(std::move(source)), tokens_(tokenize(*source_)) {}

Module Parser::parse_module() {
  Module module;
  module.source = source_;
  while (peek().kind != TokenKind::EndOfFile)
    parse_statement(module.body);
  return module;
}

// ---- tokens ----

const Token &Parser::advance() {
  const Token &token = tokens_[pos_];
  if (token.end > token.begin)
    last_end_ = token.end;
  if (pos_ + 1 < tokens_.size())
    ++pos_;
  return token;
}

bool Parser::accept_op(std::string_view op) {
  if (!at_op(op))
    return false;
  advance();
  return true;
}

bool Parser::accept_keyword(std::string_view keyword) {
  if (!at_keyword(keyword))
    return false;
  advance();
  return true;
}

const OpSpelling *Parser::match_op(std::span<const OpSpelling> ops) const {
  // Asked at every precedence level after every operand: a line's end or a
  // keyword is settled before the loop, another operator by its length and
  // first character (Token::is_op).
  const Token &t = peek();
  if (t.kind != TokenKind::Op)
    return nullptr;
  for (const OpSpelling &op : ops)
    if (t.is_op(op.text))
      return &op;
  return nullptr;
}

void Parser::fail(Loc loc, std::string message) const {
  throw source_->error(loc, std::move(message));
}

void Parser::fail_expected(const std::string &what) const {
  const Token &found = peek();
  fail(found.loc, "expected " + what + ", found " + describe(found));
}

const Token &Parser::expect_op(std::string_view op, const std::string &context) {
  if (!at_op(op))
    fail_expected("'" + std::string(op) + "' " + context);
  return advance();
}

const Token &Parser::expect_name(const std::string &what) {
  if (peek().kind != TokenKind::Name || is_keyword(peek().text))
    fail_expected(what);
  return advance();
}

void Parser::expect_keyword(std::string_view keyword, const std::string &context) {
  if (!accept_keyword(keyword))
    fail_expected("'" + std::string(keyword) + "' " + context);
}

Parser::NestingGuard::NestingGuard(Parser &parser, Loc loc) : parser_(parser) {
  ++parser_.depth_;
  if (++parser_.nesting_ > kMaxNesting || parser_.depth_ > kMaxDepth)
    parser_.fail(loc, parser_.nesting_ > kMaxNesting
                          ? "the expression is nested too deeply (more than " +
                                std::to_string(kMaxNesting) + " levels)"
                          : "the expression is nested too deeply (more than " +
                                std::to_string(kMaxDepth) + " operators and levels)");
}

Parser::NestingGuard::~NestingGuard() {
  --parser_.nesting_;
  --parser_.depth_;
}

void Parser::ChainDepth::add(Loc loc) {
  ++held_;
  if (++parser_.depth_ > kMaxDepth)
    parser_.fail(loc, "the expression is nested too deeply (more than " +
                          std::to_string(kMaxDepth) + " operators and levels)");
}

// ---- statements ----

void Parser::parse_statement(Body &out) {
  const Token &token = peek();
  if (token.kind == TokenKind::Indent)
    fail(token.loc, "unexpected indent");
  if (token.is_op("@")) {
    out.push_back(parse_decorated());
    return;
  }
  if (token.kind == TokenKind::Name) {
    const std::string_view word = token.text;
    if (word == "def") {
      out.push_back(parse_function_def({}, nullptr));
      return;
    }
    if (word == "class") {
      out.push_back(parse_class_def({}));
      return;
    }
    if (word == "if") {
      out.push_back(parse_if());
      return;
    }
    if (word == "for") {
      out.push_back(parse_for(nullptr));
      return;
    }
    if (word == "while") {
      out.push_back(parse_while());
      return;
    }
    if (word == "try") {
      out.push_back(parse_try());
      return;
    }
    if (word == "with") {
      out.push_back(parse_with(nullptr));
      return;
    }
    if (word == "async") {
      const Token &async = advance();
      if (at_keyword("def"))
        out.push_back(parse_function_def({}, &async));
      else if (at_keyword("for"))
        out.push_back(parse_for(&async));
      else if (at_keyword("with"))
        out.push_back(parse_with(&async));
      else
        fail_expected("'def', 'for' or 'with' after 'async'");
      return;
    }
    if (word == "elif" || word == "else")
      fail(token.loc, "'" + token.text + "' does not follow an 'if'" +
                          (word == "else" ? ", 'for', 'while' or 'try'" : "") + " block");
    if (word == "except" || word == "finally")
      fail(token.loc, "'" + token.text + "' does not follow a 'try' block");
    if (is_match_statement()) {
      out.push_back(parse_match());
      return;
    }
  }
  parse_simple_line(out);
}

/// `match` is a soft keyword: it starts a match statement only when the
/// logical line ends in ':' (no other line starting with a name does).
bool Parser::is_match_statement() const {
  if (!peek().is_name("match"))
    return false;
  size_t i = pos_;
  while (tokens_[i + 1].kind != TokenKind::Newline && tokens_[i + 1].kind != TokenKind::EndOfFile)
    ++i;
  return i > pos_ && tokens_[i].is_op(":");
}

/// `type` is a soft keyword: `type X = ...` and `type X[T] = ...` are type
/// aliases, while `type = 1` and `type(x)` use the name.
bool Parser::is_type_alias() const {
  return peek().is_name("type") && peek(1).kind == TokenKind::Name && !is_keyword(peek(1).text) &&
         (peek(2).is_op("=") || peek(2).is_op("["));
}

/// Simple statements separated by ';', up to the end of the line.
void Parser::parse_simple_line(Body &out) {
  while (true) {
    out.push_back(parse_small_statement());
    if (!accept_op(";") || peek().kind == TokenKind::Newline)
      break;
  }
  if (peek().kind != TokenKind::Newline)
    fail_expected("end of line after the statement");
  advance();
}

StmtPtr Parser::parse_small_statement() {
  const Token &token = peek();
  if (token.kind == TokenKind::Name) {
    const std::string_view word = token.text;
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
      if (starts_expression(peek())) {
        stmt->value = parse_star_expressions();
        check_not_starred(*stmt->value);
      }
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
    if (word == "raise")
      return parse_raise();
    if (word == "global")
      return parse_name_list(StmtKind::Global);
    if (word == "nonlocal")
      return parse_name_list(StmtKind::Nonlocal);
    if (word == "del")
      return parse_del();
    if (is_type_alias())
      return parse_type_alias();
  }
  return parse_expression_statement();
}

ExprPtr Parser::parse_assigned_value() {
  if (at_keyword("yield"))
    return parse_yield();
  ExprPtr value = parse_star_expressions();
  check_not_starred(*value);
  return value;
}

/// An expression statement or an assignment of any of the three kinds.
StmtPtr Parser::parse_expression_statement() {
  const Loc loc = peek().loc;
  ExprPtr first = at_keyword("yield") ? parse_yield() : parse_star_expressions();

  if (at_op(":")) { // AnnAssign
    if (first->kind == ExprKind::Tuple || first->kind == ExprKind::List)
      fail(first->loc, "only a single target (not a tuple or list) can be annotated");
    check_single_target(*first, "annotated");
    advance();
    auto stmt = make_stmt(StmtKind::AnnAssign, loc);
    stmt->annotation = parse_test();
    if (accept_op("="))
      stmt->value = parse_assigned_value();
    stmt->targets.push_back(std::move(first));
    return stmt;
  }

  if (const OpSpelling *aug = match_op(kAugAssignOps)) {
    if (first->kind == ExprKind::Tuple || first->kind == ExprKind::List)
      fail(first->loc, "augmented assignment ('" + std::string(aug->text) +
                           "') needs a single target, not a tuple or list");
    check_single_target(*first, "augmented");
    advance();
    auto stmt = make_stmt(StmtKind::AugAssign, loc);
    stmt->op = aug->op;
    stmt->value = parse_assigned_value();
    stmt->targets.push_back(std::move(first));
    return stmt;
  }

  if (at_op("=")) { // `a = b = value`: every part but the last is a target
    auto stmt = make_stmt(StmtKind::Assign, loc);
    std::vector<ExprPtr> parts;
    parts.push_back(std::move(first));
    while (accept_op("="))
      parts.push_back(at_keyword("yield") ? parse_yield() : parse_star_expressions());
    stmt->value = std::move(parts.back());
    parts.pop_back();
    check_not_starred(*stmt->value);
    for (const ExprPtr &target : parts)
      check_target(*target);
    stmt->targets = std::move(parts);
    return stmt;
  }

  check_not_starred(*first);
  auto stmt = make_stmt(StmtKind::ExprStmt, loc);
  stmt->value = std::move(first);
  return stmt;
}

StmtPtr Parser::parse_import() {
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

StmtPtr Parser::parse_from_import() {
  auto stmt = make_stmt(StmtKind::ImportFrom, advance().loc);
  // Relative imports (`from . import x`, `from ..m import x`) keep their
  // dots in `module`; the lexer reads "..." as one token.
  while (at_op(".") || at_op("..."))
    stmt->module += advance().text;
  if (stmt->module.empty() || (peek().kind == TokenKind::Name && !at_keyword("import")))
    stmt->module += parse_dotted_name("a module name after 'from'");
  if (!accept_keyword("import"))
    fail_expected("'import' after the module name");
  if (at_op("*")) {
    advance();
    stmt->names.push_back(ImportName{"*", ""});
    return stmt;
  }
  const bool parenthesized = accept_op("(");
  do {
    if (parenthesized && at_op(")") && !stmt->names.empty())
      break; // a trailing comma
    ImportName name;
    name.name = expect_name("a name to import").text;
    if (accept_keyword("as"))
      name.alias = expect_name("a name after 'as'").text;
    stmt->names.push_back(std::move(name));
  } while (accept_op(","));
  if (parenthesized)
    expect_op(")", "to close the list of imported names");
  else if (!stmt->names.empty() && tokens_[pos_ - 1].is_op(","))
    fail(tokens_[pos_ - 1].loc, "trailing comma not allowed without surrounding parentheses");
  return stmt;
}

std::string Parser::parse_dotted_name(const std::string &what) {
  std::string name = expect_name(what).text;
  while (accept_op("."))
    name += "." + expect_name("a name after '.'").text;
  return name;
}

StmtPtr Parser::parse_name_list(StmtKind kind) {
  const Token &keyword = advance();
  auto stmt = make_stmt(kind, keyword.loc);
  do
    stmt->names.push_back(ImportName{expect_name("a name after '" + keyword.text + "'").text, ""});
  while (accept_op(","));
  return stmt;
}

StmtPtr Parser::parse_raise() {
  auto stmt = make_stmt(StmtKind::Raise, advance().loc);
  if (starts_expression(peek())) {
    stmt->value = parse_test();
    if (accept_keyword("from"))
      stmt->test = parse_test();
  }
  return stmt;
}

StmtPtr Parser::parse_del() {
  auto stmt = make_stmt(StmtKind::Delete, advance().loc);
  // `del a, b` deletes two targets, `del (a, b)` one tuple of them.
  do {
    if (!starts_expression(peek()))
      break; // a trailing comma
    ExprPtr target = parse_binary(0);
    check_del_target(*target);
    stmt->targets.push_back(std::move(target));
  } while (accept_op(","));
  if (stmt->targets.empty())
    fail_expected("a name to delete");
  return stmt;
}

StmtPtr Parser::parse_type_alias() {
  auto stmt = make_stmt(StmtKind::TypeAlias, advance().loc);
  const Token &name = advance();
  auto target = make_expr(ExprKind::Name, name.loc);
  target->id = name.text;
  stmt->targets.push_back(std::move(target));
  if (at_op("["))
    parse_type_params(stmt->type_params);
  expect_op("=", "after the type alias's name");
  stmt->value = parse_test();
  return stmt;
}

// ---- targets ----

void Parser::check_target(const Expr &e, bool starred_allowed) const {
  switch (e.kind) {
  case ExprKind::Name:
  case ExprKind::Attribute:
  case ExprKind::Subscript:
    return;
  case ExprKind::Starred:
    if (!starred_allowed)
      fail(e.loc, "a starred assignment target must be in a list or tuple");
    check_target(*e.children[0]);
    return;
  case ExprKind::Tuple:
  case ExprKind::List: {
    bool starred = false;
    for (const ExprPtr &child : e.children) {
      if (child->kind == ExprKind::Starred) {
        if (starred)
          fail(child->loc, "multiple starred expressions in assignment");
        starred = true;
      }
      check_target(*child, true);
    }
    return;
  }
  default:
    fail(e.loc, "cannot assign to " + describe_target(e));
  }
}

void Parser::check_del_target(const Expr &e) const {
  switch (e.kind) {
  case ExprKind::Name:
  case ExprKind::Attribute:
  case ExprKind::Subscript:
    return;
  case ExprKind::Tuple:
  case ExprKind::List:
    for (const ExprPtr &child : e.children)
      check_del_target(*child);
    return;
  default:
    fail(e.loc, "cannot delete " + describe_target(e));
  }
}

void Parser::check_single_target(const Expr &e, const std::string &what) const {
  if (e.kind == ExprKind::Name || e.kind == ExprKind::Attribute || e.kind == ExprKind::Subscript)
    return;
  if (e.kind == ExprKind::Starred)
    fail(e.loc, "a starred expression cannot be the target of an " + what + " assignment");
  fail(e.loc, "cannot assign to " + describe_target(e));
}

/// `*x` is an expression only inside a tuple, list, set or call.
void Parser::check_not_starred(const Expr &e) const {
  if (e.kind == ExprKind::Starred)
    fail(e.loc, "a starred expression ('*x') can be used only inside a tuple, list, set or call");
}

// ---- compound statements ----

/// The body of a compound statement, after its ':'. `header` is the
/// statement's keyword; `what` names the statement in errors.
Body Parser::parse_block(const std::string &what, const Token &header) {
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

StmtPtr Parser::parse_if() {
  const Token &keyword = advance();
  auto stmt = make_stmt(StmtKind::If, keyword.loc);
  stmt->test = parse_named();
  expect_op(":", "after the if condition");
  stmt->body = parse_block("the 'if' statement", keyword);
  // An elif chain nests: each elif is an If alone in the previous orelse.
  // Built iteratively, so a long chain costs no stack here.
  Stmt *tail = stmt.get();
  while (at_keyword("elif")) {
    const Token &elif = advance();
    auto branch = make_stmt(StmtKind::If, elif.loc);
    branch->test = parse_named();
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

Body Parser::parse_else() {
  const Token &keyword = advance();
  expect_op(":", "after 'else'");
  return parse_block("the 'else' clause", keyword);
}

StmtPtr Parser::parse_for(const Token *async) {
  const Token &keyword = advance();
  auto stmt = make_stmt(async ? StmtKind::AsyncFor : StmtKind::For, (async ? *async : keyword).loc);
  // The target is parsed below the comparisons, or `in` would be read as
  // the membership operator.
  ExprPtr target = parse_list_of(&Parser::parse_star_target);
  check_target(*target);
  stmt->targets.push_back(std::move(target));
  if (!accept_keyword("in"))
    fail_expected("'in' after the for loop's target");
  stmt->value = parse_star_expressions();
  check_not_starred(*stmt->value);
  expect_op(":", "after the for header");
  stmt->body = parse_block("the 'for' statement", keyword);
  if (at_keyword("else"))
    stmt->orelse = parse_else();
  return stmt;
}

StmtPtr Parser::parse_while() {
  const Token &keyword = advance();
  auto stmt = make_stmt(StmtKind::While, keyword.loc);
  stmt->test = parse_named();
  expect_op(":", "after the while condition");
  stmt->body = parse_block("the 'while' statement", keyword);
  if (at_keyword("else"))
    stmt->orelse = parse_else();
  return stmt;
}

StmtPtr Parser::parse_try() {
  const Token &keyword = advance();
  auto stmt = make_stmt(StmtKind::Try, keyword.loc);
  expect_op(":", "after 'try'");
  stmt->body = parse_block("the 'try' statement", keyword);
  bool plain = false; // an `except` handler was seen
  bool star = false;  // an `except*` handler was seen
  while (at_keyword("except")) {
    const Token &except = advance();
    ExceptHandler handler;
    handler.loc = except.loc;
    const bool is_star = accept_op("*");
    if ((is_star && plain) || (!is_star && star))
      fail(except.loc, "cannot have both 'except' and 'except*' on the same 'try'");
    (is_star ? star : plain) = true;
    if (is_star || !at_op(":")) {
      handler.type = parse_test();
      if (at_op(","))
        fail(peek().loc, "multiple exception types must be parenthesized");
      if (accept_keyword("as"))
        handler.name = expect_name("a name after 'as'").text;
    }
    expect_op(":", "after the except clause");
    handler.body = parse_block("the 'except' clause", except);
    stmt->handlers.push_back(std::move(handler));
  }
  if (star)
    stmt->kind = StmtKind::TryStar;
  if (at_keyword("else")) {
    if (stmt->handlers.empty())
      fail(peek().loc, "'else' after 'try' needs an 'except' clause before it");
    stmt->orelse = parse_else();
  }
  if (at_keyword("finally")) {
    const Token &finally = advance();
    expect_op(":", "after 'finally'");
    stmt->finalbody = parse_block("the 'finally' clause", finally);
  }
  if (stmt->handlers.empty() && stmt->finalbody.empty())
    fail_expected("'except' or 'finally' after the try block on line " +
                  std::to_string(keyword.loc.line));
  return stmt;
}

/// Whether `with (` opens a parenthesized list of items (`with (a as b,
/// c):`), which Python tells from a parenthesized expression (`with (a, b)
/// as c:`) by the ':' right after the matching ')'.
bool Parser::with_items_parenthesized() const {
  if (!peek(1).is_op("("))
    return false;
  int depth = 0;
  for (size_t i = pos_ + 1; i < tokens_.size(); ++i) {
    const Token &t = tokens_[i];
    if (t.kind == TokenKind::Newline || t.kind == TokenKind::EndOfFile)
      return false;
    if (t.is_op("(") || t.is_op("[") || t.is_op("{"))
      ++depth;
    else if ((t.is_op(")") || t.is_op("]") || t.is_op("}")) && --depth == 0)
      return i + 1 < tokens_.size() && tokens_[i + 1].is_op(":");
  }
  return false;
}

WithItem Parser::parse_with_item() {
  WithItem item;
  item.context_expr = parse_test();
  if (accept_keyword("as")) {
    item.optional_vars = parse_star_target();
    check_target(*item.optional_vars);
  }
  return item;
}

StmtPtr Parser::parse_with(const Token *async) {
  const bool parenthesized = with_items_parenthesized();
  const Token &keyword = advance();
  auto stmt =
      make_stmt(async ? StmtKind::AsyncWith : StmtKind::With, (async ? *async : keyword).loc);
  if (parenthesized) {
    advance();
    do {
      if (at_op(")") && !stmt->items.empty())
        break; // a trailing comma
      stmt->items.push_back(parse_with_item());
    } while (accept_op(","));
    expect_op(")", "to close the list of context managers");
  } else {
    do
      stmt->items.push_back(parse_with_item());
    while (accept_op(","));
  }
  expect_op(":", "after the with statement's context managers");
  stmt->body = parse_block("the 'with' statement", keyword);
  return stmt;
}

StmtPtr Parser::parse_match() {
  const Token &keyword = advance();
  auto stmt = make_stmt(StmtKind::Match, keyword.loc);
  // The subject: `match x:`, `match a, *b:`.
  const Loc subject_loc = peek().loc;
  ExprPtr first = parse_star_named();
  if (at_op(",")) {
    auto tuple = make_expr(ExprKind::Tuple, subject_loc);
    tuple->children.push_back(std::move(first));
    while (accept_op(",") && !at_op(":"))
      tuple->children.push_back(parse_star_named());
    first = std::move(tuple);
  }
  check_not_starred(*first);
  stmt->value = std::move(first);
  expect_op(":", "after the match subject");
  if (!at_kind(TokenKind::Newline))
    fail_expected("end of line after 'match ...:' (cases go on the lines below)");
  advance();
  if (!at_kind(TokenKind::Indent))
    fail_expected("an indented block of 'case' clauses after the match statement on line " +
                  std::to_string(keyword.loc.line));
  advance();
  while (!at_kind(TokenKind::Dedent)) {
    if (!at_keyword("case"))
      fail_expected("'case' in the match statement");
    const Token &case_token = advance();
    MatchCase match_case;
    match_case.pattern = parse_case_patterns();
    if (accept_keyword("if"))
      match_case.guard = parse_named();
    expect_op(":", "after the case pattern");
    match_case.body = parse_block("the 'case' clause", case_token);
    stmt->cases.push_back(std::move(match_case));
  }
  advance();
  return stmt;
}

Module parse(SourceFilePtr source) {
  assert(source && "parse: null SourceFile");
  return Parser(std::move(source)).parse_module();
}

} // namespace kiln::frontend
