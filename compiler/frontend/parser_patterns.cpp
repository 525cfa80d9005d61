// The patterns of `case` clauses (PEP 634): literals, captures, wildcards,
// values, groups, sequences, mappings, class patterns, `|` and `as`.
#include "compiler/frontend/parser_impl.hpp"

namespace kiln::frontend {

namespace {

/// `child` is taken by reference so that `make_pattern(k, e->loc, std::move(e))`
/// reads e->loc before e is moved from.
ExprPtr make_pattern(ExprKind kind, Loc loc, ExprPtr &&child = nullptr) {
  auto e = make_expr(kind, loc);
  if (child)
    e->children.push_back(std::move(child));
  return e;
}

} // namespace

/// The pattern of a `case`: a pattern, or an open sequence `a, *rest`.
ExprPtr Parser::parse_case_patterns() {
  const Loc loc = peek().loc;
  ExprPtr first = parse_star_pattern();
  if (!at_op(",")) {
    if (first->kind == ExprKind::MatchStar)
      fail(first->loc, "a star pattern ('*x') can be used only inside a sequence pattern");
    return first;
  }
  auto sequence = make_pattern(ExprKind::MatchSequence, loc, std::move(first));
  while (accept_op(",") && !at_op(":") && !at_keyword("if"))
    sequence->children.push_back(parse_star_pattern());
  return sequence;
}

/// `*name` or `*_` inside a sequence pattern, or any pattern.
ExprPtr Parser::parse_star_pattern() {
  if (!at_op("*"))
    return parse_pattern();
  const Token &star = advance();
  auto e = make_pattern(ExprKind::MatchStar, star.loc);
  const Token &name = expect_name("a name after '*' in the pattern");
  if (name.text != "_")
    e->id = name.text;
  return e;
}

/// `or_pattern as name`, or an or-pattern.
ExprPtr Parser::parse_pattern() {
  NestingGuard guard(*this, peek().loc);
  ExprPtr e = parse_or_pattern();
  if (!at_keyword("as"))
    return e;
  advance();
  const Token &name = expect_name("a name after 'as' in the pattern");
  if (name.text == "_")
    fail(name.loc, "'_' cannot be the target of 'as' in a pattern");
  auto as = make_pattern(ExprKind::MatchAs, e->loc, std::move(e));
  as->id = name.text;
  return as;
}

ExprPtr Parser::parse_or_pattern() {
  ExprPtr first = parse_closed_pattern();
  if (!at_op("|"))
    return first;
  auto e = make_pattern(ExprKind::MatchOr, first->loc, std::move(first));
  while (accept_op("|"))
    e->children.push_back(parse_closed_pattern());
  return e;
}

ExprPtr Parser::parse_closed_pattern() {
  const Token &token = peek();
  switch (token.kind) {
  case TokenKind::Int:
  case TokenKind::Float:
  case TokenKind::Imaginary:
    return make_pattern(ExprKind::MatchValue, token.loc, parse_signed_number());
  case TokenKind::String:
  case TokenKind::Bytes:
    return make_pattern(ExprKind::MatchValue, token.loc, parse_strings());
  case TokenKind::FStringStart:
    fail(token.loc, "a pattern cannot be an f-string; patterns match literals and attributes");
  case TokenKind::Name:
    if (token.text == "None" || token.text == "True" || token.text == "False")
      return make_pattern(ExprKind::MatchSingleton, token.loc, parse_name_atom());
    if (is_keyword(token.text))
      break;
    return parse_value_or_class_pattern();
  case TokenKind::Op:
    if (token.text == "-")
      return make_pattern(ExprKind::MatchValue, token.loc, parse_signed_number());
    if (token.text == "(") {
      advance();
      if (accept_op(")"))
        return make_pattern(ExprKind::MatchSequence, token.loc);
      ExprPtr first = parse_star_pattern();
      if (first->kind != ExprKind::MatchStar && accept_op(")"))
        return first; // only grouping
      // A sequence in parentheses: `(a,)`, `(a, *rest)`.
      auto sequence = make_pattern(ExprKind::MatchSequence, token.loc, std::move(first));
      if (!at_op(","))
        fail_expected("',' or ')' in the pattern");
      while (accept_op(",") && !at_op(")"))
        sequence->children.push_back(parse_star_pattern());
      expect_op(")", "to close the sequence pattern");
      return sequence;
    }
    if (token.text == "[") {
      advance();
      return parse_sequence_pattern("]", token.loc);
    }
    if (token.text == "{")
      return parse_mapping_pattern();
    break;
  default:
    break;
  }
  fail_expected("a pattern");
}

/// The elements of `[...]` after the '[' through the ']'.
ExprPtr Parser::parse_sequence_pattern(std::string_view close, Loc loc) {
  auto sequence = make_pattern(ExprKind::MatchSequence, loc);
  while (!at_op(close)) {
    sequence->children.push_back(parse_star_pattern());
    if (!accept_op(","))
      break;
  }
  expect_op(close, "to close the sequence pattern");
  return sequence;
}

/// A capture `x`, the wildcard `_`, a value `a.b.c` or a class pattern `C(...)`.
ExprPtr Parser::parse_value_or_class_pattern() {
  const Token &name = advance();
  if (!at_op(".") && !at_op("(")) {
    auto capture = make_pattern(ExprKind::MatchAs, name.loc);
    if (name.text != "_")
      capture->id = name.text;
    return capture;
  }
  ExprPtr value = make_expr(ExprKind::Name, name.loc);
  value->id = name.text;
  while (accept_op(".")) {
    const Token &attr = expect_name("an attribute name after '.'");
    auto attribute = make_expr(ExprKind::Attribute, attr.loc);
    attribute->id = attr.text;
    attribute->children.push_back(std::move(value));
    value = std::move(attribute);
  }
  if (at_op("("))
    return parse_class_pattern(std::move(value));
  return make_pattern(ExprKind::MatchValue, name.loc, std::move(value));
}

/// `cls(p, q, key=r)` at the '('.
ExprPtr Parser::parse_class_pattern(ExprPtr cls) {
  const Token &open = advance();
  auto e = make_pattern(ExprKind::MatchClass, cls->loc, std::move(cls));
  while (!at_op(")")) {
    const Token &token = peek();
    if (token.kind == TokenKind::Name && !is_keyword(token.text) && peek(1).is_op("=")) {
      for (const Keyword &other : e->keywords)
        if (other.name == token.text)
          fail(token.loc, "attribute name '" + token.text + "' is repeated in the class pattern");
      advance();
      advance();
      e->keywords.push_back(Keyword{token.text, parse_pattern(), token.loc});
    } else {
      if (!e->keywords.empty())
        fail(token.loc, "a positional pattern cannot follow keyword patterns");
      e->children.push_back(parse_pattern());
    }
    if (!accept_op(","))
      break;
  }
  if (!at_op(")"))
    fail_expected("',' or ')' in the class pattern (it opens on line " +
                  std::to_string(open.loc.line) + ")");
  advance();
  return e;
}

/// `{key: pattern, ..., **rest}` at the '{'.
ExprPtr Parser::parse_mapping_pattern() {
  const Token &open = advance();
  auto e = make_pattern(ExprKind::MatchMapping, open.loc);
  while (!at_op("}")) {
    if (accept_op("**")) {
      e->id = expect_name("a name after '**' in the mapping pattern").text;
      accept_op(",");
      break; // `**rest` comes last
    }
    e->children.push_back(parse_literal_key());
    expect_op(":", "after the key in the mapping pattern");
    e->children.push_back(parse_pattern());
    if (!accept_op(","))
      break;
  }
  expect_op("}", "to close the mapping pattern");
  return e;
}

/// A mapping pattern's key: a literal or a dotted name `a.b`.
ExprPtr Parser::parse_literal_key() {
  const Token &token = peek();
  if (token.kind == TokenKind::String || token.kind == TokenKind::Bytes)
    return parse_strings();
  if (token.is_name("None") || token.is_name("True") || token.is_name("False"))
    return parse_name_atom();
  if (token.kind == TokenKind::Name && !is_keyword(token.text) && peek(1).is_op(".")) {
    ExprPtr pattern = parse_value_or_class_pattern();
    if (pattern->kind != ExprKind::MatchValue)
      fail(token.loc, "a mapping pattern's key must be a literal or a dotted name");
    return std::move(pattern->children[0]);
  }
  if (token.kind == TokenKind::Int || token.kind == TokenKind::Float ||
      token.kind == TokenKind::Imaginary || token.is_op("-"))
    return parse_signed_number();
  fail_expected("a literal or a dotted name as the key of the mapping pattern");
}

/// `1`, `-1.5`, `2j`, `1 + 2j`, `-1 - 2j`: what a literal pattern may be.
ExprPtr Parser::parse_signed_number() {
  ExprPtr e;
  if (at_op("-")) {
    const Token &minus = advance();
    if (!at_kind(TokenKind::Int) && !at_kind(TokenKind::Float) && !at_kind(TokenKind::Imaginary))
      fail_expected("a number after '-' in the pattern");
    e = make_expr(ExprKind::UnaryOp, minus.loc);
    e->op = Op::USub;
    e->children.push_back(parse_number());
  } else {
    e = parse_number();
  }
  if (!at_op("+") && !at_op("-"))
    return e;
  const Token &op = advance();
  if (!at_kind(TokenKind::Imaginary))
    fail_expected("an imaginary number after '" + op.text + "' in the complex literal pattern");
  auto sum = make_expr(ExprKind::BinOp, op.loc);
  sum->op = op.text == "+" ? Op::Add : Op::Sub;
  sum->children.push_back(std::move(e));
  sum->children.push_back(parse_number());
  return sum;
}

} // namespace kiln::frontend
