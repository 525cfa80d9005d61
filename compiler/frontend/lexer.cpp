#include "compiler/frontend/lexer.hpp"

#include <algorithm>
#include <array>
#include <cassert>
#include <charconv>
#include <cstdio>
#include <limits>

#include "compiler/frontend/lexer_impl.hpp"
#include "compiler/frontend/utf8.hpp"

namespace kiln::frontend {

namespace {

// Longest first, so that the first spelling that matches is the longest one
// (`**=` before `**` before `*`).
constexpr std::string_view kOperators[] = {
    "**=", "//=", ">>=", "<<=", "...", "**", "//", "<<", ">>", "<=", ">=", "==",
    "!=",  "->",  "+=",  "-=",  "*=",  "/=", "%=", "&=", "|=", "^=", "@=", ":=",
    "+",   "-",   "*",   "/",   "%",   "@",  "&",  "|",  "^",  "~",  "<",  ">",
    "(",   ")",   "[",   "]",   "{",   "}",  ",",  ":",  ".",  ";",  "=",
};

constexpr uint8_t kNoOperator = 0xFF;
/// For each first character, the indices in kOperators of the spellings
/// that start with it, longest first (no character starts more than four).
constexpr auto kOperatorsByFirst = [] {
  std::array<std::array<uint8_t, 4>, 256> t{};
  for (auto &row : t)
    row.fill(kNoOperator);
  for (uint8_t i = 0; i < std::size(kOperators); ++i) {
    auto &row = t[static_cast<unsigned char>(kOperators[i][0])];
    size_t k = 0;
    while (row[k] != kNoOperator)
      ++k;
    row[k] = i;
  }
  return t;
}();

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

/// Whether a non-ASCII code point may be part of an identifier. Python's
/// rule is Unicode's XID_Start / XID_Continue; without Unicode's tables this
/// accepts every code point outside the blocks of punctuation, symbols,
/// spaces and private use, so that letters of any script are names and a
/// look-alike such as '×' or a non-breaking space stays an invalid character.
/// Python also NFKC-normalizes such names (`ｗｉｄｔｈ` is `width`); kiln
/// keeps them as written.
bool is_identifier_code_point(uint32_t cp) {
  struct Range {
    uint32_t lo, hi;
  };
  static constexpr Range kNotIdentifiers[] = {
      {0x80, 0xA9},     {0xAB, 0xB4},       {0xB6, 0xB9},        {0xBB, 0xBF},     {0xD7, 0xD7},
      {0xF7, 0xF7},     {0x2000, 0x206F},   {0x20A0, 0x20CF},    {0x2190, 0x2BFF}, {0x3000, 0x3004},
      {0x3008, 0x3020}, {0xD800, 0xF8FF},   {0xFE10, 0xFE19},    {0xFE30, 0xFE4F}, {0xFEFF, 0xFEFF},
      {0xFF01, 0xFF0F}, {0xFF1A, 0xFF20},   {0xFF3B, 0xFF3E},    {0xFF40, 0xFF40}, {0xFF5B, 0xFF65},
      {0xFFF0, 0xFFFF}, {0x1F000, 0x1FAFF}, {0xF0000, 0x10FFFF},
  };
  return std::none_of(std::begin(kNotIdentifiers), std::end(kNotIdentifiers),
                      [&](const Range &r) { return cp >= r.lo && cp <= r.hi; });
}

/// value = value * base + digit; false on overflow past 2^64 - 1.
bool accumulate_digit(uint64_t &value, unsigned base, unsigned digit) {
  if (value > (std::numeric_limits<uint64_t>::max() - digit) / base)
    return false;
  value = value * base + digit;
  return true;
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
  const CodePoint cp = decode_utf8(text, pos);
  if (cp.length == 0) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "invalid UTF-8 byte 0x%02X", lead);
    return buf;
  }
  return "invalid character '" + std::string(text.substr(pos, cp.length)) + "' (" +
         code_point_name(cp.value) + ")";
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

double parse_float(const std::string &digits) {
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

bool is_string_prefix(std::string_view word) {
  if (word.size() > 2)
    return false;
  std::string lower;
  for (char c : word)
    lower += static_cast<char>(c | 0x20); // ASCII letters only, as is_ident_char guarantees
  static constexpr std::string_view kPrefixes[] = {"r", "u", "b", "f", "br", "rb", "fr", "rf"};
  return std::find(std::begin(kPrefixes), std::end(kPrefixes), lower) != std::end(kPrefixes);
}

} // namespace

Lexer::Lexer(const SourceFile &source) : source_(source), text_(source.text()) {
  // A UTF-8 byte order mark is not part of the program, as in Python.
  if (text_.starts_with("\xEF\xBB\xBF"))
    pos_ = line_start_ = 3;
}

std::vector<Token> Lexer::run() {
  // About one token per three bytes of source (the shared kernel files:
  // one per 2.9 to 3.4 bytes before line and indent tokens): growing the
  // vector by doublings moved each token several times.
  tokens_.reserve(text_.size() * 2 / 5 + 16);
  bool at_line_start = true;
  while (true) {
    if (!fstrings_.empty() && fstrings_.back().mode != FStringFrame::Mode::Field) {
      read_fstring_text();
      continue;
    }
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
    } else if (at_line_end()) {
      ++pos_;
      start_next_line();
      if (brackets_.empty()) {
        if (line_has_tokens_)
          push_newline();
        at_line_start = true;
      }
    } else if (c == '\\') {
      read_line_continuation();
    } else if (!read_field_delimiter()) {
      read_token();
    }
  }
  finish();
  return std::move(tokens_);
}

void Lexer::fail(Loc loc, std::string message) const {
  throw source_.error(loc, std::move(message));
}

Token &Lexer::emit(TokenKind kind, Loc loc, size_t begin) {
  Token &token = tokens_.emplace_back(kind, loc);
  token.begin = static_cast<uint32_t>(begin);
  token.end = static_cast<uint32_t>(pos_);
  prev_end_ = here();
  prev_end_offset_ = pos_;
  line_has_tokens_ = true;
  return token;
}

void Lexer::push(Token token, size_t begin) {
  Token &placed = emit(token.kind, token.loc, begin);
  placed.text = std::move(token.text);
  placed.int_value = token.int_value;
  placed.float_value = token.float_value;
  placed.big_int = token.big_int;
}

void Lexer::push_op(std::string_view op, size_t begin, Loc loc) {
  emit(TokenKind::Op, loc, begin).text = op;
}

void Lexer::push_marker(TokenKind kind, Loc loc, size_t offset) {
  Token token(kind, loc);
  token.begin = token.end = static_cast<uint32_t>(offset);
  tokens_.push_back(std::move(token));
}

void Lexer::push_newline() {
  push_marker(TokenKind::Newline, prev_end_, prev_end_offset_);
  line_has_tokens_ = false;
}

void Lexer::skip_spaces() {
  // The '\r' of "\r\n" is skipped as a space, so that the line ends at the "\n".
  while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\f' || at_crlf()))
    ++pos_;
}

void Lexer::skip_comment() {
  while (!at_end() && !at_line_end())
    ++pos_;
}

/// Measures the indentation of the next non-blank line and pushes the
/// Indent or Dedent tokens it implies. Blank and comment-only lines do not
/// count, as in Python. Returns false at the end of the file.
bool Lexer::read_indentation() {
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
      else if (!at_crlf())
        break;
    }
    if (!at_end() && peek() == '#')
      skip_comment();
    if (at_end())
      return false;
    if (at_line_end()) {
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

void Lexer::read_line_continuation() {
  const Loc loc = here();
  ++pos_;
  if (peek() == '\r' && peek(1) == '\n')
    ++pos_;
  if (at_end())
    fail(loc, "unexpected end of file after the line continuation character '\\'");
  if (!at_line_end())
    fail(loc, "unexpected character after the line continuation character '\\'");
  ++pos_;
  start_next_line();
}

size_t Lexer::identifier_char_length(size_t at) const {
  if (at >= text_.size())
    return 0;
  const char c = text_[at];
  if (is_ident_char(c))
    return 1;
  if (static_cast<unsigned char>(c) < 0x80)
    return 0;
  const CodePoint cp = decode_utf8(text_, at);
  return cp.length != 0 && is_identifier_code_point(cp.value) ? cp.length : 0;
}

void Lexer::read_token() {
  const size_t begin = pos_;
  const Loc loc = here();
  const char c = peek();
  if (is_ident_start(c) ||
      (static_cast<unsigned char>(c) >= 0x80 && identifier_char_length(pos_))) {
    // ASCII runs in a tight loop; identifier_char_length only for the rest.
    while (true) {
      while (pos_ < text_.size() && is_ident_char(text_[pos_]))
        ++pos_;
      const size_t n =
          static_cast<unsigned char>(peek()) >= 0x80 ? identifier_char_length(pos_) : 0;
      if (n == 0)
        break;
      pos_ += n;
    }
    const std::string_view word = text_.substr(begin, pos_ - begin);
    if ((peek() == '\'' || peek() == '"') && is_string_prefix(word)) {
      read_string(begin, loc, word);
      return;
    }
    emit(TokenKind::Name, loc, begin).text = word;
  } else if (is_digit(c) || (c == '.' && is_digit(peek(1)))) {
    read_number(begin, loc);
  } else if (c == '\'' || c == '"') {
    read_string(begin, loc, "");
  } else {
    read_operator(begin, loc);
  }
}

void Lexer::read_number(size_t begin, Loc loc) {
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
  const bool imaginary = peek() == 'j' || peek() == 'J';
  std::string digits(text_.substr(begin, pos_ - begin));
  std::erase(digits, '_');
  if (imaginary)
    ++pos_;
  if (is_ident_char(peek()) && !keyword_follows())
    fail(here(), "invalid decimal literal");

  Token token(imaginary ? TokenKind::Imaginary : is_float ? TokenKind::Float : TokenKind::Int, loc);
  token.text = text_.substr(begin, pos_ - begin);
  if (imaginary || is_float) {
    token.float_value = parse_float(digits);
  } else {
    if (digits.size() > 1 && digits[0] == '0' && digits.find_first_not_of('0') != std::string::npos)
      fail(loc, "leading zeros in decimal integer literals are not permitted; use an 0o prefix "
                "for octal integers");
    for (char d : digits)
      token.big_int |= !accumulate_digit(token.int_value, 10, static_cast<unsigned>(d - '0'));
    if (token.big_int)
      token.int_value = std::numeric_limits<uint64_t>::max();
  }
  push(std::move(token), begin);
}

bool Lexer::keyword_follows() const {
  // Python still reads `1if x else 2` and `0x1for` as a number and a keyword
  // (with a warning since 3.12), so old code keeps parsing.
  static constexpr std::string_view kAfterNumber[] = {"and", "else", "for", "if",
                                                      "in",  "is",   "not", "or"};
  const std::string_view rest = text_.substr(pos_);
  return std::any_of(std::begin(kAfterNumber), std::end(kAfterNumber),
                     [&](std::string_view k) { return rest.starts_with(k); });
}

/// Digits with single underscores between them ("1_000").
void Lexer::read_decimal_digits() {
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

void Lexer::read_based_int(size_t begin, Loc loc) {
  const char prefix = static_cast<char>(peek(1) | 0x20);
  const unsigned base = prefix == 'x' ? 16 : prefix == 'o' ? 8 : 2;
  const std::string name = base == 16 ? "hexadecimal" : base == 8 ? "octal" : "binary";
  auto is_base_digit = [&](char c) {
    const int d = digit_value(c);
    return d >= 0 && static_cast<unsigned>(d) < base;
  };
  pos_ += 2;
  Token token(TokenKind::Int, loc);
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
    token.big_int |=
        !accumulate_digit(token.int_value, base, static_cast<unsigned>(digit_value(c)));
    ++digits;
    ++pos_;
  }
  if (digits == 0 || (is_ident_char(peek()) && !keyword_follows()))
    fail(digits == 0 ? loc : here(), "invalid " + name + " literal");
  if (token.big_int)
    token.int_value = std::numeric_limits<uint64_t>::max();
  token.text = text_.substr(begin, pos_ - begin);
  push(std::move(token), begin);
}

void Lexer::read_operator(size_t begin, Loc loc) {
  // Only the spellings that start with this character, longest first,
  // compared a character at a time (none is longer than three): a walk of
  // the whole table, then memcmp calls, were a fifth of a fresh process's
  // parse.
  const char *rest = text_.data() + pos_;
  const size_t left = text_.size() - pos_;
  std::string_view op;
  for (const uint8_t i : kOperatorsByFirst[static_cast<unsigned char>(rest[0])]) {
    if (i == kNoOperator)
      break;
    const std::string_view o = kOperators[i];
    if (o.size() <= left && (o.size() < 2 || o[1] == rest[1]) &&
        (o.size() < 3 || o[2] == rest[2])) {
      op = o;
      break;
    }
  }
  if (op.empty())
    fail(loc, invalid_character_message(text_, pos_));
  pos_ += op.size();
  if (op.size() == 1) {
    switch (op[0]) {
    case '(':
    case '[':
    case '{':
      brackets_.push_back({op[0], loc});
      break;
    case ')':
    case ']':
    case '}': {
      if (brackets_.empty())
        fail(loc, "unmatched '" + std::string(op) + "'");
      const OpenBracket open = brackets_.back();
      const char expected = open.c == '(' ? ')' : open.c == '[' ? ']' : '}';
      if (op[0] != expected)
        fail(loc, "closing bracket '" + std::string(op) + "' does not match the opening '" +
                      open.c + "' on line " + std::to_string(open.loc.line));
      brackets_.pop_back();
      break;
    }
    default:
      break;
    }
  }
  push_op(op, begin, loc);
}

bool Lexer::read_field_delimiter() {
  if (fstrings_.empty() || brackets_.size() != fstrings_.back().depth)
    return false;
  const size_t begin = pos_;
  const Loc loc = here();
  const char c = peek();
  if (c == '}') {
    close_field(begin, loc);
  } else if (c == ':') { // `{x:>10}`: even `:=` starts the format spec here, as in Python
    ++pos_;
    push_op(":", begin, loc);
    FStringFrame spec = fstrings_.back();
    spec.mode = FStringFrame::Mode::Spec;
    fstrings_.push_back(spec);
  } else if (c == '!' && peek(1) != '=') { // `{x!r}`
    ++pos_;
    push_op("!", begin, loc);
  } else {
    return false;
  }
  return true;
}

void Lexer::finish() {
  if (!fstrings_.empty())
    fail(fstrings_.back().loc, "unterminated f-string literal");
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

int digit_value(char c) {
  if (is_digit(c))
    return c - '0';
  if (c >= 'a' && c <= 'z')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'Z')
    return c - 'A' + 10;
  return -1;
}

bool is_keyword(std::string_view n) {
  // By length, so that the compares are against literals of that length
  // (the compiler makes them integer compares): the parser asks this of
  // nearly every name it meets.
  switch (n.size()) {
  case 2:
    return n == "as" || n == "if" || n == "in" || n == "is" || n == "or";
  case 3:
    return n == "and" || n == "def" || n == "del" || n == "for" || n == "not" || n == "try";
  case 4:
    return n == "None" || n == "True" || n == "elif" || n == "else" || n == "from" || n == "pass" ||
           n == "with";
  case 5:
    return n == "False" || n == "async" || n == "await" || n == "break" || n == "class" ||
           n == "raise" || n == "while" || n == "yield";
  case 6:
    return n == "assert" || n == "except" || n == "global" || n == "import" || n == "lambda" ||
           n == "return";
  case 7:
    return n == "finally";
  case 8:
    return n == "continue" || n == "nonlocal";
  default:
    return false;
  }
}

std::string describe(const Token &token) {
  switch (token.kind) {
  case TokenKind::Name:
  case TokenKind::Int:
  case TokenKind::Float:
  case TokenKind::Imaginary:
  case TokenKind::Op:
    return "'" + token.text + "'";
  case TokenKind::String:
    return "a string literal";
  case TokenKind::Bytes:
    return "a bytes literal";
  case TokenKind::FStringStart:
    return "an f-string";
  case TokenKind::FStringMiddle:
    return "f-string text";
  case TokenKind::FStringEnd:
    return "the end of the f-string";
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
