#include "compiler/frontend/lexer.hpp"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cstdio>
#include <limits>

namespace kiln::frontend {

namespace {

constexpr std::string_view kKeywords[] = {
    "False", "None",     "True",  "and",    "as",   "assert", "async",  "await",    "break",
    "class", "continue", "def",   "del",    "elif", "else",   "except", "finally",  "for",
    "from",  "global",   "if",    "import", "in",   "is",     "lambda", "nonlocal", "not",
    "or",    "pass",     "raise", "return", "try",  "while",  "with",   "yield",
};

// Longest first, so that the first spelling that matches is the longest one
// (`**=` before `**` before `*`).
constexpr std::string_view kOperators[] = {
    "**=", "//=", ">>=", "<<=", "...", "**", "//", "<<", ">>", "<=", ">=", "==",
    "!=",  "->",  "+=",  "-=",  "*=",  "/=", "%=", "&=", "|=", "^=", "@=", ":=",
    "+",   "-",   "*",   "/",   "%",   "@",  "&",  "|",  "^",  "~",  "<",  ">",
    "(",   ")",   "[",   "]",   "{",   "}",  ",",  ":",  ".",  ";",  "=",
};

// Python stops at 100 levels too ("too many levels of indentation"); the
// limit also bounds the recursion of the parser over nested blocks.
constexpr size_t kMaxIndentLevels = 100;

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_ident_char(char c) {
  return is_ident_start(c) || is_digit(c);
}

/// The value of `c` as a digit in bases up to 36, or -1.
int digit_value(char c) {
  if (is_digit(c))
    return c - '0';
  if (c >= 'a' && c <= 'z')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'Z')
    return c - 'A' + 10;
  return -1;
}

/// value = value * base + digit; false on overflow past 2^64 - 1.
bool accumulate_digit(uint64_t &value, unsigned base, unsigned digit) {
  if (value > (std::numeric_limits<uint64_t>::max() - digit) / base)
    return false;
  value = value * base + digit;
  return true;
}

std::string code_point_name(uint32_t cp) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "U+%04X", cp);
  return buf;
}

void append_utf8(std::string &out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

/// The message for a byte at `pos` that starts no token. Names the character
/// (decoding UTF-8) so that look-alikes such as '×' or a non-breaking space
/// can be told from what the user meant.
std::string invalid_character_message(std::string_view text, size_t pos) {
  const auto lead = static_cast<unsigned char>(text[pos]);
  if (lead < 0x80) {
    if (lead > 0x20 && lead < 0x7F)
      return std::string("invalid character '") + static_cast<char>(lead) + "' (" +
             code_point_name(lead) + ")";
    return "invalid character " + code_point_name(lead);
  }
  const size_t length = lead >= 0xF0 && lead < 0xF8   ? 4
                        : lead >= 0xE0 && lead < 0xF0 ? 3
                        : lead >= 0xC0 && lead < 0xE0 ? 2
                                                      : 0;
  uint32_t cp = length == 4 ? lead & 0x07 : length == 3 ? lead & 0x0F : lead & 0x1F;
  bool valid = length != 0 && pos + length <= text.size();
  for (size_t i = 1; valid && i < length; ++i) {
    const auto cont = static_cast<unsigned char>(text[pos + i]);
    valid = (cont & 0xC0) == 0x80;
    cp = (cp << 6) | (cont & 0x3F);
  }
  if (!valid) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "invalid UTF-8 byte 0x%02X", lead);
    return buf;
  }
  return "invalid character '" + std::string(text.substr(pos, length)) + "' (" +
         code_point_name(cp) + ")";
}

/// Whether a float literal that std::from_chars found out of range is too
/// large (Python gives inf) rather than too small (Python gives 0.0).
/// `literal` has no underscores. The decimal order of magnitude of the first
/// significant digit, plus the exponent, tells which.
bool float_literal_overflows(std::string_view literal) {
  const size_t e = literal.find_first_of("eE");
  const std::string_view mantissa = literal.substr(0, e);
  int64_t exponent = 0;
  if (e != std::string_view::npos) {
    size_t i = e + 1;
    const bool negative = i < literal.size() && literal[i] == '-';
    if (i < literal.size() && (literal[i] == '-' || literal[i] == '+'))
      ++i;
    for (; i < literal.size(); ++i) // saturate: any exponent this large is out of range anyway
      exponent = std::min<int64_t>(exponent * 10 + (literal[i] - '0'), int64_t{1} << 40);
    if (negative)
      exponent = -exponent;
  }
  const size_t point = mantissa.find('.');
  const std::string_view whole = mantissa.substr(0, point);
  const size_t first_whole = whole.find_first_not_of('0');
  if (first_whole != std::string_view::npos)
    return static_cast<int64_t>(whole.size() - first_whole) + exponent > 0;
  const std::string_view fraction =
      point == std::string_view::npos ? std::string_view() : mantissa.substr(point + 1);
  const size_t first_fraction = fraction.find_first_not_of('0');
  if (first_fraction == std::string_view::npos)
    return false; // zero
  return exponent - static_cast<int64_t>(first_fraction) > 0;
}

bool is_string_prefix(std::string_view word) {
  if (word.size() > 2)
    return false;
  std::string lower;
  for (char c : word)
    lower += static_cast<char>(c | 0x20); // ASCII letters only, as is_ident_char guarantees
  static constexpr std::string_view kPrefixes[] = {"r", "u", "b", "f", "br", "rb", "fr", "rf"};
  return std::find(std::begin(kPrefixes), std::end(kPrefixes), lower) != std::end(kPrefixes);
}

class Lexer {
public:
  explicit Lexer(const SourceFile &source) : source_(source), text_(source.text()) {}

  std::vector<Token> run() {
    bool at_line_start = true;
    while (true) {
      // Indentation matters only at the start of a logical line: not inside
      // brackets and not after a backslash continuation.
      if (at_line_start && brackets_.empty()) {
        at_line_start = false;
        if (!read_indentation())
          break;
      }
      skip_spaces();
      if (at_end())
        break;
      const char c = text_[pos_];
      if (c == '#') {
        skip_comment();
      } else if (c == '\n') {
        ++pos_;
        start_next_line();
        if (brackets_.empty()) {
          if (line_has_tokens_)
            push_newline();
          at_line_start = true;
        }
      } else if (c == '\\') {
        read_line_continuation();
      } else {
        read_token();
      }
    }
    finish();
    return std::move(tokens_);
  }

private:
  struct OpenBracket {
    char c;
    Loc loc;
  };

  const SourceFile &source_;
  std::string_view text_;
  size_t pos_ = 0;
  uint32_t line_ = 1;
  size_t line_start_ = 0;
  std::vector<uint32_t> indents_{0}; // widths of the open indentation levels
  std::vector<OpenBracket> brackets_;
  bool line_has_tokens_ = false; // the logical line so far needs a Newline
  Loc prev_end_{1, 1};           // just after the last token, where Newline goes
  size_t prev_end_offset_ = 0;
  std::vector<Token> tokens_;

  bool at_end() const { return pos_ >= text_.size(); }
  char peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  Loc here() const { return {line_, static_cast<uint32_t>(pos_ - line_start_ + 1)}; }
  /// Call with pos_ just past a '\n'.
  void start_next_line() {
    ++line_;
    line_start_ = pos_;
  }
  [[noreturn]] void fail(Loc loc, std::string message) const {
    throw source_.error(loc, std::move(message));
  }

  void push(Token token, size_t begin) {
    token.begin = static_cast<uint32_t>(begin);
    token.end = static_cast<uint32_t>(pos_);
    prev_end_ = here();
    prev_end_offset_ = pos_;
    line_has_tokens_ = true;
    tokens_.push_back(std::move(token));
  }
  void push_marker(TokenKind kind, Loc loc, size_t offset) {
    Token token(kind, loc);
    token.begin = token.end = static_cast<uint32_t>(offset);
    tokens_.push_back(std::move(token));
  }
  void push_newline() {
    push_marker(TokenKind::Newline, prev_end_, prev_end_offset_);
    line_has_tokens_ = false;
  }

  void skip_spaces() {
    // '\r' is skipped as a space so that "\r\n" line ends read as "\n".
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\f' || peek() == '\r'))
      ++pos_;
  }
  void skip_comment() {
    while (!at_end() && peek() != '\n')
      ++pos_;
  }

  /// Measures the indentation of the next non-blank line and pushes the
  /// Indent or Dedent tokens it implies. Blank and comment-only lines do not
  /// count, as in Python. Returns false at the end of the file.
  bool read_indentation() {
    while (true) {
      uint32_t width = 0;
      for (; !at_end(); ++pos_) {
        const char c = peek();
        if (c == ' ')
          ++width;
        else if (c == '\t')
          width = (width / 8 + 1) * 8; // Python's rule: a tab moves to the next multiple of 8
        else if (c == '\f')
          width = 0; // Python's rule: a form feed resets the count
        else if (c != '\r')
          break;
      }
      if (!at_end() && peek() == '#')
        skip_comment();
      if (at_end())
        return false;
      if (peek() == '\n') {
        ++pos_;
        start_next_line();
        continue;
      }
      const Loc loc = here();
      if (width > indents_.back()) {
        if (indents_.size() > kMaxIndentLevels)
          fail(loc, "too many levels of indentation (the limit is 100)");
        indents_.push_back(width);
        push_marker(TokenKind::Indent, loc, pos_);
      }
      while (width < indents_.back()) {
        indents_.pop_back();
        if (width > indents_.back())
          fail(loc, "unindent does not match any outer indentation level");
        push_marker(TokenKind::Dedent, loc, pos_);
      }
      return true;
    }
  }

  void read_line_continuation() {
    const Loc loc = here();
    ++pos_;
    if (peek() == '\r' && peek(1) == '\n')
      ++pos_;
    if (at_end())
      fail(loc, "unexpected end of file after the line continuation character '\\'");
    if (peek() != '\n')
      fail(loc, "unexpected character after the line continuation character '\\'");
    ++pos_;
    start_next_line();
  }

  void read_token() {
    const size_t begin = pos_;
    const Loc loc = here();
    const char c = peek();
    if (is_ident_start(c)) {
      while (is_ident_char(peek()))
        ++pos_;
      const std::string_view word = text_.substr(begin, pos_ - begin);
      if ((peek() == '\'' || peek() == '"') && is_string_prefix(word)) {
        read_string(begin, loc, word);
        return;
      }
      Token token(TokenKind::Name, loc);
      token.text = word;
      push(std::move(token), begin);
    } else if (is_digit(c) || (c == '.' && is_digit(peek(1)))) {
      read_number(begin, loc);
    } else if (c == '\'' || c == '"') {
      read_string(begin, loc, "");
    } else {
      read_operator(begin, loc);
    }
  }

  void read_number(size_t begin, Loc loc) {
    if (peek() == '0' && std::string_view("xXoObB").find(peek(1)) != std::string_view::npos) {
      read_based_int(begin, loc);
      return;
    }
    bool is_float = false;
    read_decimal_digits();
    if (peek() == '.') {
      is_float = true;
      ++pos_;
      read_decimal_digits();
    }
    if (peek() == 'e' || peek() == 'E') {
      is_float = true;
      ++pos_;
      if (peek() == '+' || peek() == '-')
        ++pos_;
      if (!is_digit(peek()))
        fail(loc, "invalid decimal literal: the exponent has no digits");
      read_decimal_digits();
    }
    if (peek() == 'j' || peek() == 'J')
      fail(loc, "complex literals are not supported");
    if (is_ident_char(peek()))
      fail(here(), "invalid decimal literal");

    Token token(is_float ? TokenKind::Float : TokenKind::Int, loc);
    token.text = text_.substr(begin, pos_ - begin);
    std::string digits = token.text;
    std::erase(digits, '_');
    if (is_float) {
      token.float_value = parse_float(digits);
    } else {
      if (digits.size() > 1 && digits[0] == '0' &&
          digits.find_first_not_of('0') != std::string::npos)
        fail(loc, "leading zeros in decimal integer literals are not permitted; use an 0o prefix "
                  "for octal integers");
      for (char d : digits)
        if (!accumulate_digit(token.int_value, 10, static_cast<unsigned>(d - '0')))
          fail(loc, "integer literal too large");
    }
    push(std::move(token), begin);
  }

  /// Digits with single underscores between them ("1_000").
  void read_decimal_digits() {
    while (true) {
      if (is_digit(peek())) {
        ++pos_;
      } else if (peek() == '_' && pos_ > 0 && is_digit(text_[pos_ - 1])) {
        if (!is_digit(peek(1)))
          fail(here(), "invalid decimal literal: '_' must be between digits");
        ++pos_;
      } else {
        return;
      }
    }
  }

  static double parse_float(const std::string &digits) {
    // from_chars, not strtod: strtod reads the decimal point of the C locale,
    // which a host application may have changed.
    double value = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    assert(end == digits.data() + digits.size());
    (void)end;
    if (ec == std::errc::result_out_of_range)
      value = float_literal_overflows(digits) ? std::numeric_limits<double>::infinity() : 0.0;
    return value;
  }

  void read_based_int(size_t begin, Loc loc) {
    const char prefix = static_cast<char>(peek(1) | 0x20);
    const unsigned base = prefix == 'x' ? 16 : prefix == 'o' ? 8 : 2;
    const std::string name = base == 16 ? "hexadecimal" : base == 8 ? "octal" : "binary";
    auto is_base_digit = [&](char c) {
      const int d = digit_value(c);
      return d >= 0 && static_cast<unsigned>(d) < base;
    };
    pos_ += 2;
    Token token(TokenKind::Int, loc);
    bool overflow = false;
    size_t digits = 0;
    while (true) {
      const char c = peek();
      if (c == '_') { // allowed right after the prefix and between digits
        ++pos_;
        if (!is_base_digit(peek()))
          fail(loc, "invalid " + name + " literal");
        continue;
      }
      if (!is_base_digit(c)) {
        if (is_digit(c))
          fail(here(), std::string("invalid digit '") + c + "' in " + name + " literal");
        break;
      }
      overflow |= !accumulate_digit(token.int_value, base, static_cast<unsigned>(digit_value(c)));
      ++digits;
      ++pos_;
    }
    if (digits == 0 || is_ident_char(peek()))
      fail(digits == 0 ? loc : here(), "invalid " + name + " literal");
    if (overflow)
      fail(loc, "integer literal too large");
    token.text = text_.substr(begin, pos_ - begin);
    push(std::move(token), begin);
  }

  void read_string(size_t begin, Loc loc, std::string_view prefix) {
    const auto has = [&](char letter) {
      return std::any_of(prefix.begin(), prefix.end(),
                         [&](char c) { return static_cast<char>(c | 0x20) == letter; });
    };
    if (has('f'))
      fail(loc, "f-strings are not supported");
    if (has('b'))
      fail(loc, "bytes literals are not supported");
    const bool raw = has('r');
    const char quote = peek();
    const bool triple = peek(1) == quote && peek(2) == quote;
    pos_ += triple ? 3 : 1;
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
      if (c == '\n') {
        if (!triple)
          fail(loc, unterminated);
        value += '\n';
        ++pos_;
        start_next_line();
      } else if (c == '\r' && peek(1) == '\n') {
        ++pos_; // "\r\n" in a string reads as "\n", as in Python
      } else if (c == '\\') {
        read_escape(value, raw, loc, unterminated);
      } else {
        value += c;
        ++pos_;
      }
    }
    Token token(TokenKind::String, loc);
    token.text = std::move(value);
    push(std::move(token), begin);
  }

  /// Reads the escape sequence at pos_ (a backslash) into `value`.
  void read_escape(std::string &value, bool raw, Loc string_loc, const char *unterminated) {
    const Loc loc = here();
    ++pos_;
    if (peek() == '\r' && peek(1) == '\n')
      ++pos_;
    if (at_end())
      fail(string_loc, unterminated);
    const char e = peek();
    ++pos_;
    if (e == '\n') { // a backslash-newline continues the string on the next line
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
      append_code_point(value, read_hex_digits(2, loc, "\\x"), loc);
      return;
    case 'u':
      append_code_point(value, read_hex_digits(4, loc, "\\u"), loc);
      return;
    case 'U':
      append_code_point(value, read_hex_digits(8, loc, "\\U"), loc);
      return;
    case 'N':
      fail(loc, "\\N{...} escapes are not supported; write the character itself");
    default:
      break;
    }
    if (e >= '0' && e <= '7') { // up to three octal digits
      uint32_t cp = static_cast<uint32_t>(e - '0');
      for (int i = 1; i < 3 && peek() >= '0' && peek() <= '7'; ++i)
        cp = cp * 8 + static_cast<uint32_t>(text_[pos_++] - '0');
      append_utf8(value, cp);
      return;
    }
    // Python keeps an unknown escape as written (and warns that it is deprecated).
    value += '\\';
    value += e;
  }

  uint32_t read_hex_digits(int count, Loc loc, const char *escape) {
    uint32_t cp = 0;
    for (int i = 0; i < count; ++i) {
      const int d = digit_value(peek());
      if (d < 0 || d >= 16)
        fail(loc, std::string("truncated ") + escape + " escape: it needs " +
                      std::to_string(count) + " hex digits");
      cp = cp * 16 + static_cast<uint32_t>(d);
      ++pos_;
    }
    return cp;
  }

  void append_code_point(std::string &value, uint32_t cp, Loc loc) {
    // Strings are kept as UTF-8, which cannot hold surrogates (Python can).
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp < 0xE000))
      fail(loc, "the escape names " + code_point_name(cp) + ", which is not a valid character");
    append_utf8(value, cp);
  }

  void read_operator(size_t begin, Loc loc) {
    const std::string_view rest = text_.substr(pos_);
    const auto it = std::find_if(std::begin(kOperators), std::end(kOperators),
                                 [&](std::string_view op) { return rest.starts_with(op); });
    if (it == std::end(kOperators))
      fail(loc, invalid_character_message(text_, pos_));
    const std::string_view op = *it;
    pos_ += op.size();
    if (op == "(" || op == "[" || op == "{") {
      brackets_.push_back({op[0], loc});
    } else if (op == ")" || op == "]" || op == "}") {
      if (brackets_.empty())
        fail(loc, "unmatched '" + std::string(op) + "'");
      const OpenBracket open = brackets_.back();
      const char expected = open.c == '(' ? ')' : open.c == '[' ? ']' : '}';
      if (op[0] != expected)
        fail(loc, "closing bracket '" + std::string(op) + "' does not match the opening '" +
                      open.c + "' on line " + std::to_string(open.loc.line));
      brackets_.pop_back();
    }
    Token token(TokenKind::Op, loc);
    token.text = op;
    push(std::move(token), begin);
  }

  void finish() {
    // An unclosed bracket swallows the rest of the file, so the error belongs
    // at the bracket, not at the end of the file.
    if (!brackets_.empty())
      fail(brackets_.back().loc, std::string("'") + brackets_.back().c + "' was never closed");
    if (line_has_tokens_)
      push_newline();
    for (; indents_.size() > 1; indents_.pop_back())
      push_marker(TokenKind::Dedent, prev_end_, prev_end_offset_);
    push_marker(TokenKind::EndOfFile, prev_end_, prev_end_offset_);
  }
};

} // namespace

bool is_keyword(std::string_view name) {
  return std::find(std::begin(kKeywords), std::end(kKeywords), name) != std::end(kKeywords);
}

std::string describe(const Token &token) {
  switch (token.kind) {
  case TokenKind::Name:
  case TokenKind::Int:
  case TokenKind::Float:
  case TokenKind::Op:
    return "'" + token.text + "'";
  case TokenKind::String:
    return "a string literal";
  case TokenKind::Newline:
    return "end of line";
  case TokenKind::Indent:
    return "an indented line";
  case TokenKind::Dedent:
    return "the end of the indented block";
  case TokenKind::EndOfFile:
    return "end of file";
  }
  assert(false && "describe: invalid TokenKind");
  return "?";
}

std::vector<Token> tokenize(const SourceFile &source) {
  return Lexer(source).run();
}

} // namespace kiln::frontend
