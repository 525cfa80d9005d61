// String literals: implicit concatenation of adjacent literals, and
// f-strings (JoinedStr / FormattedValue) from the lexer's f-string tokens.
#include "compiler/frontend/parser_impl.hpp"

namespace kiln::frontend {

namespace {

/// Ends the literal text collected so far as one Str part; Python's tree
/// merges adjacent literal text and has no empty parts.
void flush_text(std::vector<ExprPtr> &parts, std::string &text, Loc loc) {
  if (text.empty())
    return;
  auto part = make_expr(ExprKind::Str, loc);
  part->id = std::move(text);
  text.clear();
  parts.push_back(std::move(part));
}

} // namespace

/// Adjacent literals concatenate: "a" "b" is "ab", "a" f"{b}" a JoinedStr.
ExprPtr Parser::parse_strings() {
  const Token &first = peek();
  const bool bytes = first.kind == TokenKind::Bytes;
  bool fstring = false;
  std::vector<ExprPtr> parts;
  std::string text;
  while (at_kind(TokenKind::String) || at_kind(TokenKind::Bytes) ||
         at_kind(TokenKind::FStringStart)) {
    const Token &token = peek();
    if ((token.kind == TokenKind::Bytes) != bytes)
      fail(token.loc, "cannot mix bytes and nonbytes literals");
    if (token.kind == TokenKind::FStringStart) {
      fstring = true;
      parse_fstring(parts, text);
    } else {
      text += advance().text;
    }
  }
  if (!fstring) {
    auto e = make_expr(bytes ? ExprKind::Bytes : ExprKind::Str, first.loc);
    e->id = std::move(text);
    return e;
  }
  flush_text(parts, text, first.loc);
  auto e = make_expr(ExprKind::JoinedStr, first.loc);
  e->children = std::move(parts);
  return e;
}

/// One f-string, from FStringStart through FStringEnd. Literal text goes to
/// `text` (it may continue in the next literal), fields to `parts`.
void Parser::parse_fstring(std::vector<ExprPtr> &parts, std::string &text) {
  advance(); // FStringStart
  while (true) {
    const Token &token = peek();
    if (token.kind == TokenKind::FStringMiddle) {
      text += advance().text;
    } else if (token.kind == TokenKind::FStringEnd) {
      advance();
      return;
    } else {
      ExprPtr field = parse_replacement_field(text);
      flush_text(parts, text, token.loc);
      parts.push_back(std::move(field));
    }
  }
}

/// `{value=!r:spec}` at the '{'. The text of a debugging field (`{x = }`)
/// is appended to `text`, as Python puts it before the value.
ExprPtr Parser::parse_replacement_field(std::string &text) {
  const Token &open = expect_op("{", "in the f-string");
  NestingGuard guard(*this, open.loc);
  ExprPtr value = at_keyword("yield") ? parse_yield() : parse_star_expressions();
  check_not_starred(*value);
  auto field = make_expr(ExprKind::FormattedValue, value->loc);
  bool debug = false;
  if (at_op("=")) {
    advance();
    debug = true;
    // The expression as written, with the '=' and the spaces around it.
    text += source_->text().substr(open.end, peek().begin - open.end);
  }
  if (accept_op("!")) {
    const Token &conversion = peek();
    if (conversion.kind != TokenKind::Name ||
        (conversion.text != "r" && conversion.text != "s" && conversion.text != "a"))
      fail(conversion.loc, "f-string: the conversion after '!' must be 's', 'r' or 'a'");
    if (conversion.begin != tokens_[pos_ - 1].end)
      fail(conversion.loc, "f-string: the conversion must come right after the '!'");
    field->id = advance().text;
  }
  ExprPtr spec;
  if (at_op(":"))
    spec = parse_format_spec(advance().loc);
  expect_op("}", "to close the f-string's replacement field");
  // `{x=}` shows the repr unless a conversion or a format spec says otherwise.
  if (debug && field->id.empty() && !spec)
    field->id = "r";
  field->children.push_back(std::move(value));
  field->children.push_back(std::move(spec));
  return field;
}

/// The format spec after ':', up to the field's '}': literal text with
/// nested fields (`{x:{width}.{precision}f}`).
ExprPtr Parser::parse_format_spec(Loc loc) {
  auto spec = make_expr(ExprKind::JoinedStr, loc);
  std::string text;
  while (true) {
    const Token &token = peek();
    if (token.kind == TokenKind::FStringMiddle) {
      text += advance().text;
    } else if (token.is_op("{")) {
      ExprPtr field = parse_replacement_field(text);
      flush_text(spec->children, text, token.loc);
      spec->children.push_back(std::move(field));
    } else {
      break;
    }
  }
  flush_text(spec->children, text, loc);
  return spec;
}

} // namespace kiln::frontend
