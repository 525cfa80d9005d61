// Expressions, from the loosest level (tuples, lambdas, conditional
// expressions) down to atoms, displays and comprehensions.
#include "compiler/frontend/parser_impl.hpp"

#include <optional>

namespace kiln::frontend {

namespace {

/// A left-associative binary operator and its level, 0 the loosest:
/// | ^ & (<< >>) (+ -) (* / // % @).
struct BinaryOperator {
  Op op;
  int level;
};

/// The binary operator `t` spells, if it is one: settled by its first
/// character and length, where a pass over each level's spellings after
/// every operand was a tenth of the parse.
std::optional<BinaryOperator> binary_operator(const Token &t) {
  if (t.kind != TokenKind::Op)
    return std::nullopt;
  const std::string &s = t.text;
  if (s.size() == 1)
    switch (s[0]) {
    case '|':
      return BinaryOperator{Op::BitOr, 0};
    case '^':
      return BinaryOperator{Op::BitXor, 1};
    case '&':
      return BinaryOperator{Op::BitAnd, 2};
    case '+':
      return BinaryOperator{Op::Add, 4};
    case '-':
      return BinaryOperator{Op::Sub, 4};
    case '*':
      return BinaryOperator{Op::Mul, 5};
    case '/':
      return BinaryOperator{Op::Div, 5};
    case '%':
      return BinaryOperator{Op::Mod, 5};
    case '@':
      return BinaryOperator{Op::MatMul, 5};
    default:
      return std::nullopt;
    }
  if (s.size() == 2 && s[0] == s[1])
    switch (s[0]) {
    case '<':
      return BinaryOperator{Op::LShift, 3};
    case '>':
      return BinaryOperator{Op::RShift, 3};
    case '/':
      return BinaryOperator{Op::FloorDiv, 5};
    default:
      return std::nullopt;
    }
  return std::nullopt;
}

constexpr OpSpelling kUnaryOps[] = {{"-", Op::USub}, {"+", Op::UAdd}, {"~", Op::Invert}};
constexpr OpSpelling kCompareOps[] = {{"<", Op::Lt},  {"<=", Op::Le}, {">", Op::Gt},
                                      {">=", Op::Ge}, {"==", Op::Eq}, {"!=", Op::Ne}};

ExprPtr make_starred(Loc loc, ExprPtr value) {
  auto e = make_expr(ExprKind::Starred, loc);
  e->children.push_back(std::move(value));
  return e;
}

} // namespace

/// Whether `token` can begin an expression (used to tell a trailing comma
/// from a comma before another element).
bool Parser::starts_expression(const Token &token) const {
  const std::string_view t = token.text;
  switch (token.kind) {
  case TokenKind::Name:
    return !is_keyword(t) || t == "True" || t == "False" || t == "None" || t == "not" ||
           t == "lambda" || t == "await" || t == "yield";
  case TokenKind::Int:
  case TokenKind::Float:
  case TokenKind::Imaginary:
  case TokenKind::String:
  case TokenKind::Bytes:
  case TokenKind::FStringStart:
    return true;
  case TokenKind::Op:
    return t == "(" || t == "[" || t == "{" || t == "-" || t == "+" || t == "~" || t == "..." ||
           t == "*";
  default:
    return false;
  }
}

ExprPtr Parser::parse_list_of(ExprPtr (Parser::*parse_element)()) {
  const Loc loc = peek().loc;
  ExprPtr first = (this->*parse_element)();
  if (!at_op(","))
    return first;
  auto tuple = make_expr(ExprKind::Tuple, loc);
  tuple->children.push_back(std::move(first));
  while (accept_op(",") && starts_expression(peek()))
    tuple->children.push_back((this->*parse_element)());
  return tuple;
}

/// `a, *b` where a tuple may hold starred elements: assignments, `return`,
/// `for ... in`, expression statements.
ExprPtr Parser::parse_star_expressions() {
  return parse_list_of(&Parser::parse_star_expression);
}

ExprPtr Parser::parse_star_expression() {
  if (!at_op("*"))
    return parse_test();
  const Token &star = advance();
  return make_starred(star.loc, parse_binary(0));
}

/// An element of a display: `*x`, `x := v` or an expression.
ExprPtr Parser::parse_star_named() {
  if (!at_op("*"))
    return parse_named();
  const Token &star = advance();
  return make_starred(star.loc, parse_binary(0));
}

/// A target of `for`, of a comprehension or of `with ... as`; parsed below
/// the comparisons, or `in` would be read as the membership operator.
ExprPtr Parser::parse_star_target() {
  if (!at_op("*"))
    return parse_binary(0);
  const Token &star = advance();
  return make_starred(star.loc, parse_binary(0));
}

ExprPtr Parser::parse_test_list() {
  return parse_list_of(&Parser::parse_test);
}

/// `name := value` or an expression, where Python allows the walrus.
ExprPtr Parser::parse_named() {
  if (peek().kind == TokenKind::Name && peek(1).is_op(":=") && !is_keyword(peek().text)) {
    const Token &name = advance();
    const Token &walrus = advance();
    NestingGuard guard(*this, walrus.loc);
    auto e = make_expr(ExprKind::NamedExpr, name.loc);
    auto target = make_expr(ExprKind::Name, name.loc);
    target->id = name.text;
    e->children.push_back(std::move(target));
    e->children.push_back(parse_test());
    return e;
  }
  ExprPtr e = parse_test();
  if (at_op(":="))
    fail(peek().loc, "the target of ':=' must be a name");
  return e;
}

/// A full expression: a lambda, `body if test else orelse`, or an or-expression.
ExprPtr Parser::parse_test() {
  if (at_keyword("lambda"))
    return parse_lambda();
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

/// `yield`, `yield value`, `yield a, *b` or `yield from value`.
ExprPtr Parser::parse_yield() {
  const Token &keyword = advance();
  NestingGuard guard(*this, keyword.loc);
  if (accept_keyword("from")) {
    auto e = make_expr(ExprKind::YieldFrom, keyword.loc);
    e->children.push_back(parse_test());
    return e;
  }
  auto e = make_expr(ExprKind::Yield, keyword.loc);
  if (starts_expression(peek()) && !at_keyword("yield")) {
    e->children.push_back(parse_star_expressions());
    check_not_starred(*e->children[0]);
  }
  return e;
}

ExprPtr Parser::parse_or() {
  return parse_bool_op("or", Op::Or, &Parser::parse_and);
}
ExprPtr Parser::parse_and() {
  return parse_bool_op("and", Op::And, &Parser::parse_not);
}

/// `a op b op c` as one BoolOp with three children, as in Python's ast.
ExprPtr Parser::parse_bool_op(std::string_view keyword, Op op, ExprPtr (Parser::*parse_operand)()) {
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

ExprPtr Parser::parse_not() {
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
bool Parser::accept_compare_op(Op &op) {
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
ExprPtr Parser::parse_comparison() {
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

/// The left-associative binary operators of `level` and tighter, by
/// precedence climbing: an operand costs one look at the token after it,
/// not one per level.
ExprPtr Parser::parse_binary(int level) {
  ExprPtr lhs = parse_factor();
  ChainDepth chain(*this);
  for (std::optional<BinaryOperator> b; (b = binary_operator(peek())) && b->level >= level;) {
    chain.add(peek().loc);
    auto e = make_expr(ExprKind::BinOp, advance().loc);
    e->op = b->op;
    e->children.reserve(2);
    e->children.push_back(std::move(lhs));
    e->children.push_back(parse_binary(b->level + 1));
    lhs = std::move(e);
  }
  return lhs;
}

/// Unary - + ~, which bind looser than ** on their right: -2**2 is -(2**2).
ExprPtr Parser::parse_factor() {
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

/// `[await] primary ** factor`, right-associative; the exponent may carry a
/// unary sign (2**-1).
ExprPtr Parser::parse_power() {
  ExprPtr base;
  if (at_keyword("await")) {
    const Token &keyword = advance();
    NestingGuard guard(*this, keyword.loc);
    base = make_expr(ExprKind::Await, keyword.loc);
    base->children.push_back(parse_primary());
  } else {
    base = parse_primary();
  }
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
ExprPtr Parser::parse_primary() {
  ExprPtr e = parse_atom();
  ChainDepth chain(*this);
  while (true) {
    if (at_op(".") || at_op("(") || at_op("["))
      chain.add(peek().loc);
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

ExprPtr Parser::parse_call(ExprPtr function) {
  const Token &open = advance();
  auto call = make_expr(ExprKind::Call, function->loc);
  // The function and most calls' arguments in one allocation, not the
  // vector's growth through 1, 2 and 4 (allocations are a quarter of a parse).
  call->children.reserve(4);
  call->children.push_back(std::move(function));
  parse_arguments(*call, open);
  return call;
}

/// Call arguments after the '(' through the ')': positional ones and `*x`
/// into call.children, `name=value` and `**x` into call.keywords.
void Parser::parse_arguments(Expr &call, const Token &open) {
  const size_t first_argument = call.children.size();
  bool keyword_unpacking = false; // a `**x` was seen
  while (!at_op(")")) {
    const Token &token = peek();
    if (token.is_op("*")) {
      if (keyword_unpacking)
        fail(token.loc, "iterable argument unpacking ('*') cannot follow keyword argument "
                        "unpacking ('**')");
      advance();
      call.children.push_back(make_starred(token.loc, parse_test()));
    } else if (token.is_op("**")) {
      advance();
      call.keywords.push_back(Keyword{"", parse_test(), token.loc});
      keyword_unpacking = true;
    } else if (token.kind == TokenKind::Name && !is_keyword(token.text) && peek(1).is_op("=")) {
      for (const Keyword &other : call.keywords)
        if (other.name == token.text)
          fail(token.loc, "keyword argument '" + token.text + "' is given twice");
      advance();
      advance();
      call.keywords.push_back(Keyword{token.text, parse_test(), token.loc});
    } else {
      if (!call.keywords.empty())
        fail(token.loc, keyword_unpacking ? "a positional argument cannot follow keyword "
                                            "argument unpacking ('**')"
                                          : "a positional argument cannot follow keyword "
                                            "arguments");
      ExprPtr argument = parse_named();
      if (at_comprehension()) {
        // `f(x for x in y)`: the call's parentheses are the generator's.
        const Loc loc = peek().loc;
        auto generator = make_expr(ExprKind::GeneratorExp, argument->loc);
        generator->children.push_back(std::move(argument));
        parse_comprehension_clauses(*generator);
        if (call.children.size() != first_argument || !call.keywords.empty() || !at_op(")"))
          fail(loc, "a generator expression must be parenthesized unless it is the only "
                    "argument");
        argument = std::move(generator);
      }
      call.children.push_back(std::move(argument));
    }
    if (!accept_op(","))
      break;
  }
  if (!at_op(")"))
    fail_expected("',' or ')' after the call argument (the call opens on line " +
                  std::to_string(open.loc.line) + ")");
  advance();
}

ExprPtr Parser::parse_subscript(ExprPtr value) {
  const Token &open = advance();
  auto e = make_expr(ExprKind::Subscript, open.loc);
  e->children.reserve(2);
  e->children.push_back(std::move(value));
  do {
    if (at_op("]") && e->children.size() > 1)
      break; // a trailing comma
    e->children.push_back(parse_index());
  } while (accept_op(","));
  expect_op("]", "to close the subscript");
  return e;
}

/// One index of a subscript: an expression, `*x`, or a slice `lo:hi:step`.
ExprPtr Parser::parse_index() {
  const Loc loc = peek().loc;
  if (at_op("*"))
    return parse_star_named();
  ExprPtr lo;
  if (!at_op(":")) {
    lo = parse_named();
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

ExprPtr Parser::parse_atom() {
  const Token &token = peek();
  switch (token.kind) {
  case TokenKind::Name:
    return parse_name_atom();
  case TokenKind::Int:
  case TokenKind::Float:
  case TokenKind::Imaginary:
    return parse_number();
  case TokenKind::String:
  case TokenKind::Bytes:
  case TokenKind::FStringStart:
    return parse_strings();
  case TokenKind::Op:
    if (token.is_op("("))
      return parse_parenthesized();
    if (token.is_op("["))
      return parse_list();
    if (token.is_op("{"))
      return parse_brace();
    if (token.is_op("..."))
      return make_expr(ExprKind::Ellipsis, advance().loc);
    if (token.is_op("*")) {
      // After an operator (`x + * 2`) a '*' is a typo, not a starred expression.
      const Token &prev = tokens_[pos_ > 0 ? pos_ - 1 : 0];
      if (pos_ > 0 && prev.kind == TokenKind::Op && !prev.is_op(",") && !prev.is_op("(") &&
          !prev.is_op("[") && !prev.is_op("="))
        fail(token.loc, "expected an expression after '" + prev.text + "', found '*'");
      fail(token.loc,
           "a starred expression ('*x') can be used only inside a tuple, list, set or call");
    }
    break;
  default:
    break;
  }
  fail_expected("an expression");
}

ExprPtr Parser::parse_name_atom() {
  const Token &token = peek();
  const std::string_view word = token.text;
  if (word == "True" || word == "False") {
    auto e = make_expr(ExprKind::Bool, advance().loc);
    e->bool_value = word == "True";
    return e;
  }
  if (word == "None")
    return make_expr(ExprKind::None, advance().loc);
  if (is_keyword(word))
    fail_expected("an expression");
  auto e = make_expr(ExprKind::Name, advance().loc);
  e->id = word;
  return e;
}

ExprPtr Parser::parse_number() {
  const Token &token = advance();
  if (token.kind == TokenKind::Int) {
    auto e = make_expr(ExprKind::Int, token.loc);
    e->int_value = token.int_value;
    if (token.big_int)
      e->id = token.text;
    return e;
  }
  auto e =
      make_expr(token.kind == TokenKind::Float ? ExprKind::Float : ExprKind::Complex, token.loc);
  e->float_value = token.float_value;
  return e;
}

/// `(e)`, `()`, `(a,)`, `(a, b)`, `(yield x)`, `(x for x in y)`.
ExprPtr Parser::parse_parenthesized() {
  const Token &open = advance();
  const std::string close_message = "')' to close the '(' on line " + std::to_string(open.loc.line);
  if (accept_op(")"))
    return make_expr(ExprKind::Tuple, open.loc);
  if (at_keyword("yield")) {
    ExprPtr e = parse_yield();
    if (!accept_op(")"))
      fail_expected(close_message);
    return e;
  }
  ExprPtr first = parse_star_named();
  if (at_comprehension()) {
    check_not_starred(*first);
    auto generator = make_expr(ExprKind::GeneratorExp, open.loc);
    generator->children.push_back(std::move(first));
    parse_comprehension_clauses(*generator);
    if (!accept_op(")"))
      fail_expected(close_message);
    return generator;
  }
  if (accept_op(")")) {
    check_not_starred(*first);
    return first; // only grouping: the inner expression keeps its own loc
  }
  if (!at_op(","))
    fail_expected(close_message);
  auto tuple = make_expr(ExprKind::Tuple, open.loc);
  tuple->children.push_back(std::move(first));
  parse_elements(*tuple, ")", "tuple");
  return tuple;
}

/// `[]`, `[a, *b]`, `[x for x in y]`.
ExprPtr Parser::parse_list() {
  const Token &open = advance();
  auto list = make_expr(ExprKind::List, open.loc);
  if (accept_op("]"))
    return list;
  list->children.push_back(parse_star_named());
  if (at_comprehension()) {
    check_not_starred(*list->children[0]);
    list->kind = ExprKind::ListComp;
    parse_comprehension_clauses(*list);
    expect_op("]", "to close the list comprehension");
    return list;
  }
  if (accept_op("]"))
    return list;
  if (!at_op(","))
    fail_expected("',' or ']' in the list");
  parse_elements(*list, "]", "list");
  return list;
}

/// Dicts and sets: `{}`, `{k: v, **d}`, `{k: v for ...}`, `{a, *b}`, `{x for ...}`.
ExprPtr Parser::parse_brace() {
  const Token &open = advance();
  auto e = make_expr(ExprKind::Dict, open.loc);
  if (accept_op("}"))
    return e;
  // The first entry decides what the display is.
  if (accept_op("**")) {
    e->children.push_back(nullptr);
    e->children.push_back(parse_binary(0));
  } else {
    ExprPtr first = parse_star_named();
    if (!accept_op(":") || first->kind == ExprKind::Starred) {
      e->kind = ExprKind::Set;
      e->children.push_back(std::move(first));
      if (at_comprehension()) {
        check_not_starred(*e->children[0]);
        e->kind = ExprKind::SetComp;
        parse_comprehension_clauses(*e);
        expect_op("}", "to close the set comprehension");
        return e;
      }
      if (accept_op("}"))
        return e;
      if (!at_op(","))
        fail_expected("',' or '}' in the set");
      parse_elements(*e, "}", "set");
      return e;
    }
    e->children.push_back(std::move(first));
    e->children.push_back(parse_test());
    if (at_comprehension()) {
      e->kind = ExprKind::DictComp;
      parse_comprehension_clauses(*e);
      expect_op("}", "to close the dict comprehension");
      return e;
    }
  }
  while (accept_op(",") && !at_op("}")) {
    if (accept_op("**")) {
      e->children.push_back(nullptr);
      e->children.push_back(parse_binary(0));
      continue;
    }
    e->children.push_back(parse_test());
    expect_op(":", "after the dict key");
    e->children.push_back(parse_test());
  }
  if (!at_op("}"))
    fail_expected("',' or '}' in the dict");
  advance();
  return e;
}

bool Parser::at_comprehension() const {
  return at_keyword("for") || (at_keyword("async") && peek(1).is_name("for"));
}

void Parser::parse_comprehension_clauses(Expr &comp) {
  while (at_comprehension()) {
    const Token &first = peek();
    auto clause = make_expr(ExprKind::Comprehension, first.loc);
    clause->bool_value = accept_keyword("async");
    advance(); // 'for'
    ExprPtr target = parse_list_of(&Parser::parse_star_target);
    check_target(*target);
    clause->children.push_back(std::move(target));
    expect_keyword("in", "after the comprehension's target");
    clause->children.push_back(parse_or());
    while (accept_keyword("if"))
      clause->children.push_back(parse_or());
    comp.children.push_back(std::move(clause));
  }
}

/// The rest of a tuple, list or set display, from the comma after its
/// first element through the closing bracket.
void Parser::parse_elements(Expr &display, std::string_view close, const std::string &what) {
  while (accept_op(",") && !at_op(close))
    display.children.push_back(parse_star_named());
  if (!at_op(close))
    fail_expected("',' or '" + std::string(close) + "' in the " + what);
  advance();
}

} // namespace kiln::frontend
