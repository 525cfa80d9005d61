// String, bytes and f-string literals. An f-string is not one token: as in
// Python 3.12 (PEP 701) the lexer emits FStringStart, the literal parts as
// FStringMiddle, and the ordinary tokens of each replacement field between
// '{' and '}' ops, then FStringEnd; so a field may hold any expression,
// quotes of the enclosing f-string and nested f-strings included.
#include <algorithm>
#include <cstdio>

#include "compiler/frontend/lexer_impl.hpp"
#include "compiler/frontend/utf8.hpp"

namespace kiln::frontend {

void Lexer::read_string(size_t begin, Loc loc, std::string_view prefix) {
  const auto has = [&](char letter) {
    return std::any_of(prefix.begin(), prefix.end(),
                       [&](char c) { return static_cast<char>(c | 0x20) == letter; });
  };
  const bool raw = has('r');
  const bool bytes = has('b');
  const char quote = peek();
  const bool triple = peek(1) == quote && peek(2) == quote;
  pos_ += triple ? 3 : 1;
  if (has('f')) {
    Token start(TokenKind::FStringStart, loc);
    start.text = text_.substr(begin, pos_ - begin);
    push(std::move(start), begin);
    fstrings_.push_back({FStringFrame::Mode::Literal, quote, triple, raw, 0, loc});
    return;
  }
  const char *unterminated =
      triple ? "unterminated triple-quoted string literal" : "unterminated string literal";
  std::string value;
  while (true) {
    if (at_end())
      fail(loc, unterminated);
    const char c = peek();
    if (c == quote && (!triple || (peek(1) == quote && peek(2) == quote))) {
      pos_ += triple ? 3 : 1;
      break;
    }
    if (at_line_end()) {
      if (!triple)
        fail(loc, unterminated);
      value += '\n';
      ++pos_;
      start_next_line();
    } else if (c == '\r' && peek(1) == '\n') {
      ++pos_; // "\r\n" in a string reads as "\n", as in Python
    } else if (c == '\\') {
      read_escape(value, raw, bytes, loc, unterminated);
    } else {
      if (bytes && static_cast<unsigned char>(c) >= 0x80)
        fail(here(), "bytes can only contain ASCII literal characters");
      value += c;
      ++pos_;
    }
  }
  Token token(bytes ? TokenKind::Bytes : TokenKind::String, loc);
  token.text = std::move(value);
  push(std::move(token), begin);
}

void Lexer::read_fstring_text() {
  const FStringFrame frame = fstrings_.back();
  const bool spec = frame.mode == FStringFrame::Mode::Spec;
  const size_t begin = pos_;
  const Loc loc = here();
  const char *unterminated = frame.triple ? "unterminated triple-quoted f-string literal"
                                          : "unterminated f-string literal";
  std::string value;
  const auto flush = [&] {
    if (value.empty())
      return;
    Token middle(TokenKind::FStringMiddle, loc);
    middle.text = std::move(value);
    push(std::move(middle), begin);
  };
  while (true) {
    if (at_end())
      fail(frame.loc, unterminated);
    const char c = peek();
    if (c == frame.quote && (!frame.triple || (peek(1) == c && peek(2) == c))) {
      if (spec)
        fail(here(), "f-string: expecting '}' to close the replacement field");
      flush();
      const size_t end_begin = pos_;
      const Loc end_loc = here();
      pos_ += frame.triple ? 3 : 1;
      Token end(TokenKind::FStringEnd, end_loc);
      end.text = text_.substr(end_begin, pos_ - end_begin);
      push(std::move(end), end_begin);
      fstrings_.pop_back();
      return;
    }
    if (c == '{' || c == '}') {
      // `{{` and `}}` are literal braces, except in a format spec, where
      // Python reads `{` as a nested field.
      if (!spec && peek(1) == c) {
        value += c;
        pos_ += 2;
        continue;
      }
      flush();
      const size_t brace_begin = pos_;
      const Loc brace_loc = here();
      ++pos_;
      if (c == '{') {
        brackets_.push_back({'{', brace_loc});
        push_op("{", brace_begin, brace_loc);
        FStringFrame field = frame;
        field.mode = FStringFrame::Mode::Field;
        field.depth = brackets_.size();
        fstrings_.push_back(field);
        return;
      }
      if (!spec)
        fail(brace_loc, "f-string: single '}' is not allowed");
      push_op("}", brace_begin, brace_loc);
      brackets_.pop_back();
      fstrings_.pop_back(); // the spec
      fstrings_.pop_back(); // and the field it belongs to
      return;
    }
    if (at_line_end()) {
      if (!frame.triple)
        fail(spec ? here() : frame.loc,
             spec ? "f-string: newlines are not allowed in the format spec of a single-quoted "
                    "f-string"
                  : unterminated);
      value += '\n';
      ++pos_;
      start_next_line();
    } else if (c == '\r' && peek(1) == '\n') {
      ++pos_;
    } else if (c == '\\' && (peek(1) == '{' || peek(1) == '}')) {
      // Not an escape: the backslash stays and the brace keeps its meaning.
      value += '\\';
      ++pos_;
    } else if (c == '\\') {
      read_escape(value, frame.raw, false, frame.loc, unterminated);
    } else {
      value += c;
      ++pos_;
    }
  }
}

void Lexer::close_field(size_t begin, Loc loc) {
  ++pos_;
  push_op("}", begin, loc);
  brackets_.pop_back();
  fstrings_.pop_back();
}

/// Reads the escape sequence at pos_ (a backslash) into `value`.
void Lexer::read_escape(std::string &value, bool raw, bool bytes, Loc string_loc,
                        const char *unterminated) {
  const Loc loc = here();
  ++pos_;
  if (peek() == '\r' && peek(1) == '\n')
    ++pos_;
  if (at_end())
    fail(string_loc, unterminated);
  const bool newline = at_line_end();
  const char e = peek();
  ++pos_;
  if (newline) { // a backslash-newline continues the string on the next line
    start_next_line();
    if (raw)
      value += "\\\n";
    return;
  }
  if (raw) { // the backslash stays, but still keeps a quote from ending the string
    value += '\\';
    value += e;
    return;
  }
  switch (e) {
  case '\\':
    value += '\\';
    return;
  case '\'':
    value += '\'';
    return;
  case '"':
    value += '"';
    return;
  case 'n':
    value += '\n';
    return;
  case 't':
    value += '\t';
    return;
  case 'r':
    value += '\r';
    return;
  case 'a':
    value += '\a';
    return;
  case 'b':
    value += '\b';
    return;
  case 'f':
    value += '\f';
    return;
  case 'v':
    value += '\v';
    return;
  case 'x':
    if (bytes)
      value += static_cast<char>(read_hex_digits(2, loc, "\\x"));
    else
      append_code_point(value, read_hex_digits(2, loc, "\\x"), loc);
    return;
  case 'u':
  case 'U':
    if (bytes)
      break; // not an escape in bytes
    append_code_point(value, read_hex_digits(e == 'u' ? 4 : 8, loc, e == 'u' ? "\\u" : "\\U"), loc);
    return;
  case 'N':
    if (bytes)
      break;
    // kiln has no table of Unicode character names, so `\N{EM DASH}` stays
    // as written in the value; it is checked only for its shape.
    if (peek() != '{')
      fail(loc, "malformed \\N character escape: expected '{' after \\N");
    value += "\\N";
    while (peek() != '}') {
      if (at_end() || peek() == '\n' || peek() == '\r' || peek() == '\'' || peek() == '"')
        fail(loc, "malformed \\N character escape: expected '}' after the character name");
      value += text_[pos_++];
    }
    value += text_[pos_++];
    return;
  default:
    break;
  }
  if (e >= '0' && e <= '7') { // up to three octal digits
    uint32_t cp = static_cast<uint32_t>(e - '0');
    for (int i = 1; i < 3 && peek() >= '0' && peek() <= '7'; ++i)
      cp = cp * 8 + static_cast<uint32_t>(text_[pos_++] - '0');
    if (bytes)
      value += static_cast<char>(cp & 0xFF);
    else
      append_utf8(value, cp);
    return;
  }
  // Python keeps an unknown escape as written (and warns that it is deprecated).
  value += '\\';
  if (bytes || static_cast<unsigned char>(e) < 0x80) {
    if (bytes && static_cast<unsigned char>(e) >= 0x80)
      fail(loc, "bytes can only contain ASCII literal characters");
    value += e;
    return;
  }
  // A non-ASCII character after the backslash: keep all of its bytes.
  --pos_;
  const CodePoint cp = decode_utf8(text_, pos_);
  const size_t length = std::max<size_t>(cp.length, 1);
  value += text_.substr(pos_, length);
  pos_ += length;
}

uint32_t Lexer::read_hex_digits(int count, Loc loc, const char *escape) {
  uint32_t cp = 0;
  for (int i = 0; i < count; ++i) {
    const int d = digit_value(peek());
    if (d < 0 || d >= 16)
      fail(loc, std::string("truncated ") + escape + " escape: it needs " + std::to_string(count) +
                    " hex digits");
    cp = cp * 16 + static_cast<uint32_t>(d);
    ++pos_;
  }
  return cp;
}

void Lexer::append_code_point(std::string &value, uint32_t cp, Loc loc) {
  if (cp > 0x10FFFF)
    fail(loc, "the escape names " + code_point_name(cp) + ", which is beyond U+10FFFF");
  append_utf8(value, cp);
}

} // namespace kiln::frontend
