// Tests of the lexer (and of SourceFile / CompileError, which it reports
// through): tokens, indentation, literals, and lexical errors with their
// exact locations and messages.
#include <doctest/doctest.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "compiler/frontend/lexer.hpp"

namespace kf = kiln::frontend;
using kf::Token;
using kf::TokenKind;

namespace {

std::vector<Token> lex(const std::string &text) {
  const kf::SourceFile file("test.py", text);
  return kf::tokenize(file);
}

/// The tokens of `text` on one line: names, numbers and operators as
/// written, strings in double quotes, layout tokens in capitals.
std::string dump(const std::string &text) {
  std::string out;
  for (const Token &token : lex(text)) {
    if (!out.empty())
      out += ' ';
    switch (token.kind) {
    case TokenKind::Name:
    case TokenKind::Int:
    case TokenKind::Float:
    case TokenKind::Imaginary:
    case TokenKind::Op:
      out += token.text;
      break;
    case TokenKind::String:
      out += '"' + token.text + '"';
      break;
    case TokenKind::Bytes:
      out += "b\"" + token.text + '"';
      break;
    case TokenKind::FStringStart:
      out += "FSTART(" + token.text + ")";
      break;
    case TokenKind::FStringMiddle:
      out += "<" + token.text + ">";
      break;
    case TokenKind::FStringEnd:
      out += "FEND";
      break;
    case TokenKind::Newline:
      out += "NL";
      break;
    case TokenKind::Indent:
      out += "INDENT";
      break;
    case TokenKind::Dedent:
      out += "DEDENT";
      break;
    case TokenKind::EndOfFile:
      out += "EOF";
      break;
    }
  }
  return out;
}

std::optional<kiln::CompileError> lex_error(const std::string &text) {
  try {
    lex(text);
  } catch (const kiln::CompileError &e) {
    return e;
  }
  return std::nullopt;
}

const Token &single(const std::vector<Token> &tokens) {
  // one token, then NEWLINE and EOF
  REQUIRE(tokens.size() == 3);
  return tokens[0];
}

uint64_t int_value(const std::string &literal) {
  const auto tokens = lex(literal);
  const Token &token = single(tokens);
  REQUIRE(token.kind == TokenKind::Int);
  return token.int_value;
}

double float_value(const std::string &literal) {
  const auto tokens = lex(literal);
  const Token &token = single(tokens);
  REQUIRE(token.kind == TokenKind::Float);
  return token.float_value;
}

std::string string_value(const std::string &literal) {
  const auto tokens = lex(literal);
  const Token &token = single(tokens);
  REQUIRE(token.kind == TokenKind::String);
  return token.text;
}

} // namespace

TEST_CASE("lexer: SourceFile splits lines and locates errors") {
  const kf::SourceFile file("k.py", "a = 1\n\tb = 2\r\nlast");
  CHECK(file.line_count() == 3);
  CHECK(file.line(1) == "a = 1");
  CHECK(file.line(2) == "\tb = 2"); // the '\r' of a Windows line end is dropped
  CHECK(file.line(3) == "last");
  CHECK(file.line(0).empty());
  CHECK(file.line(4).empty());
  CHECK(kf::SourceFile("k.py", "x\n").line_count() == 1); // a final newline starts no line
  CHECK(kf::SourceFile("k.py", "").line_count() == 0);

  const kiln::CompileError e = file.error({2, 3}, "bad b");
  CHECK(e.file() == "k.py");
  CHECK(e.line() == 2);
  CHECK(e.col() == 3);
  CHECK(e.message() == "bad b");
  // The caret counts bytes: the tab is one column and is not expanded.
  CHECK(std::string(e.what()) == "k.py:2:3: bad b\n    \tb = 2\n      ^");
}

TEST_CASE("lexer: CompileError without a source line has no caret") {
  const kiln::CompileError e("k.py", 7, 1, "something is wrong", "");
  CHECK(std::string(e.what()) == "k.py:7:1: something is wrong");
  const kf::SourceFile file("k.py", "x\n");
  CHECK(std::string(file.error({9, 1}, "past the end").what()) == "k.py:9:1: past the end");
}

TEST_CASE("lexer: names, operators and delimiters") {
  CHECK(dump("x = a.b(c, d) ** 2 // 3") == "x = a . b ( c , d ) ** 2 // 3 NL EOF");
  CHECK(dump("a //= b; c **= d; e >>= 1; f <<= 2") ==
        "a //= b ; c **= d ; e >>= 1 ; f <<= 2 NL EOF");
  CHECK(dump("x+=1-=2*=3/=4%=5&=6|=7^=8@=9") ==
        "x += 1 -= 2 *= 3 /= 4 %= 5 &= 6 |= 7 ^= 8 @= 9 NL EOF");
  CHECK(dump("a<=b>=c==d!=e<f>g<<h>>i") == "a <= b >= c == d != e < f > g << h >> i NL EOF");
  CHECK(dump("def f() -> int: ...") == "def f ( ) -> int : ... NL EOF");
  CHECK(dump("(n := 1) @ m ~x {}") == "( n := 1 ) @ m ~ x { } NL EOF");
  CHECK(dump("_private __dunder__ x1 BLOCK_M") == "_private __dunder__ x1 BLOCK_M NL EOF");
  CHECK(dump("") == "EOF");
  CHECK(dump("\n\n  \n# only a comment\n") == "EOF");
}

TEST_CASE("lexer: keywords are names that is_keyword knows") {
  const auto tokens = lex("def if None match");
  CHECK(tokens[0].kind == TokenKind::Name);
  CHECK(kf::is_keyword("def"));
  CHECK(kf::is_keyword("None"));
  CHECK(kf::is_keyword("lambda"));
  CHECK_FALSE(kf::is_keyword("match")); // a soft keyword
  CHECK_FALSE(kf::is_keyword("tl"));
  // Python 3.12's keyword.kwlist, whole, and names one letter off them.
  for (const char *k :
       {"False", "None",     "True",  "and",    "as",   "assert", "async",  "await",    "break",
        "class", "continue", "def",   "del",    "elif", "else",   "except", "finally",  "for",
        "from",  "global",   "if",    "import", "in",   "is",     "lambda", "nonlocal", "not",
        "or",    "pass",     "raise", "return", "try",  "while",  "with",   "yield"}) {
    CAPTURE(k);
    CHECK(kf::is_keyword(k));
    const std::string s = k;
    CHECK_FALSE(kf::is_keyword(s + "_"));
    CHECK_FALSE(kf::is_keyword(s.substr(0, s.size() - 1)));
    CHECK_FALSE(kf::is_keyword(std::string(1, static_cast<char>(s[0] ^ 0x20)) + s.substr(1)));
  }
  for (const char *n : {"", "_", "type", "case", "print", "none", "TRUE", "self", "elsewhere"})
    CHECK_FALSE(kf::is_keyword(n));
  CHECK(kf::describe(tokens[0]) == "'def'");
  CHECK(kf::describe(tokens[4]) == "end of line");
  CHECK(kf::describe(tokens[5]) == "end of file");
}

TEST_CASE("lexer: token locations and offsets") {
  const auto tokens = lex("x = 1\n  # note\nyy  = 'ab'  # c\n");
  REQUIRE(tokens.size() == 9);
  CHECK(tokens[0].loc.line == 1);
  CHECK(tokens[0].loc.col == 1);
  CHECK(tokens[2].loc.col == 5);
  // NEWLINE sits just after the line's last token.
  CHECK(tokens[3].kind == TokenKind::Newline);
  CHECK(tokens[3].loc.line == 1);
  CHECK(tokens[3].loc.col == 6);
  CHECK(tokens[4].text == "yy");
  CHECK(tokens[4].loc.line == 3);
  CHECK(tokens[4].loc.col == 1);
  CHECK(tokens[4].begin == 15);
  CHECK(tokens[4].end == 17);
  CHECK(tokens[6].kind == TokenKind::String);
  CHECK(tokens[6].loc.col == 7);
  CHECK(tokens[6].end - tokens[6].begin == 4); // the quotes are part of the token
  CHECK(tokens[7].kind == TokenKind::Newline);
  CHECK(tokens[7].loc.col == 11);
}

TEST_CASE("lexer: indentation gives INDENT and DEDENT") {
  CHECK(dump("if a:\n    if b:\n        x\ny\n") ==
        "if a : NL INDENT if b : NL INDENT x NL DEDENT DEDENT y NL EOF");
  // Levels close one by one, and all close at the end of the file.
  CHECK(dump("a\n  b\n    c\n  d\n") == "a NL INDENT b NL INDENT c NL DEDENT d NL DEDENT EOF");
  CHECK(dump("if a:\n    b") == "if a : NL INDENT b NL DEDENT EOF");

  const auto tokens = lex("if a:\n    b\nc\n");
  CHECK(tokens[4].kind == TokenKind::Indent);
  CHECK(tokens[4].loc.line == 2);
  CHECK(tokens[4].loc.col == 5);
  CHECK(tokens[7].kind == TokenKind::Dedent);
  CHECK(tokens[7].loc.line == 3);
}

TEST_CASE("lexer: blank lines and comments do not count for indentation") {
  const std::string text = "def f():\n"
                           "\n"
                           "    # a comment at the body's indentation\n"
                           "  # a comment at another\n"
                           "    x = 1   # trailing\n"
                           "        \n"
                           "    y = 2\n"
                           "# at column 1\n";
  CHECK(dump(text) == "def f ( ) : NL INDENT x = 1 NL y = 2 NL DEDENT EOF");
}

TEST_CASE("lexer: a tab advances to the next multiple of 8") {
  CHECK(dump("if a:\n\tb\n        c\n") == "if a : NL INDENT b NL c NL DEDENT EOF");
  CHECK(dump("if a:\n  \tb\n        c\n") == "if a : NL INDENT b NL c NL DEDENT EOF");
}

TEST_CASE("lexer: brackets join lines") {
  CHECK(dump("x = (1,\n     2)\ny = [\n  3,\n]\nz = {\n}\n") ==
        "x = ( 1 , 2 ) NL y = [ 3 , ] NL z = { } NL EOF");
  // Comments and blank lines inside brackets are fine too.
  CHECK(dump("f(a,  # first\n\n  b)\n") == "f ( a , b ) NL EOF");
}

TEST_CASE("lexer: backslash continues a line") {
  CHECK(dump("x = 1 + \\\n    2\n") == "x = 1 + 2 NL EOF");
  CHECK(dump("if a and \\\n  b:\n    c\n") == "if a and b : NL INDENT c NL DEDENT EOF");
}

TEST_CASE("lexer: Windows line ends") {
  CHECK(dump("if a:\r\n    b\r\n\r\nc\r\n") == "if a : NL INDENT b NL DEDENT c NL EOF");
}

TEST_CASE("lexer: a '\\r' alone ends a line, as Python reads old Mac files") {
  CHECK(dump("if a:\r    b\r\rc\r") == "if a : NL INDENT b NL DEDENT c NL EOF");
  const auto tokens = lex("x = '''a\rb'''\ry # c\rz\\\r+ 1");
  CHECK(tokens[2].text == "a\nb");
  CHECK(tokens[4].text == "y");
  CHECK(tokens[4].loc.line == 3);
  CHECK(tokens[6].text == "z");
  CHECK(tokens[6].loc.line == 4);
  CHECK(tokens[8].loc.line == 5);
  const kf::SourceFile file("test.py", "a\rb\r\nc");
  CHECK(file.line_count() == 3);
  CHECK(file.line(2) == "b");
  CHECK(file.line(3) == "c");
}

TEST_CASE("lexer: integer literals") {
  CHECK(int_value("0") == 0);
  CHECK(int_value("00") == 0);
  CHECK(int_value("42") == 42);
  CHECK(int_value("1_000_000") == 1000000);
  CHECK(int_value("0xFF") == 255);
  CHECK(int_value("0XdeadBEEF") == 0xdeadbeef);
  CHECK(int_value("0x_ff_ff") == 0xffff);
  CHECK(int_value("0o17") == 15);
  CHECK(int_value("0b1010") == 10);
  CHECK(int_value("0B_1") == 1);
  CHECK(int_value("18446744073709551615") == 18446744073709551615ull);
  CHECK(int_value("0xFFFF_FFFF_FFFF_FFFF") == 18446744073709551615ull);
  CHECK(lex("0xFF")[0].text == "0xFF"); // the spelling, for messages
}

TEST_CASE("lexer: integer literals beyond 64 bits keep their spelling") {
  // Python's ints have no bound; the IR generator refuses what does not fit
  // in int64 where a kernel uses it.
  const std::string big_binary = "0b1" + std::string(64, '0');
  for (const std::string text : {"18446744073709551616", "0x1_0000_0000_0000_0000"}) {
    CAPTURE(text);
    const auto tokens = lex(text);
    const Token &token = single(tokens);
    CHECK(token.kind == TokenKind::Int);
    CHECK(token.big_int);
    CHECK(token.int_value == UINT64_MAX);
    CHECK(token.text == text);
  }
  CHECK(lex(big_binary)[0].big_int);
  CHECK_FALSE(lex("18446744073709551615")[0].big_int);
}

TEST_CASE("lexer: imaginary literals") {
  const std::pair<const char *, double> cases[] = {{"3j", 3.0}, {"2.5J", 2.5},    {"1e3j", 1000.0},
                                                   {"0j", 0.0}, {"0777j", 777.0}, {".5j", 0.5}};
  for (const auto &[text, value] : cases) {
    CAPTURE(text);
    const auto tokens = lex(text);
    const Token &token = single(tokens);
    CHECK(token.kind == TokenKind::Imaginary);
    CHECK(token.float_value == value);
    CHECK(token.text == text);
  }
}

TEST_CASE("lexer: a keyword right after a number still splits from it, as in Python") {
  CHECK(dump("1if x else 2") == "1 if x else 2 NL EOF");
  CHECK(dump("0x1for") == "0x1f or NL EOF");
}

TEST_CASE("lexer: float literals") {
  CHECK(float_value("1.") == 1.0);
  CHECK(float_value(".5") == 0.5);
  CHECK(float_value("0.") == 0.0);
  CHECK(float_value("1e-5") == 1e-5);
  CHECK(float_value("1.5e+3") == 1500.0);
  CHECK(float_value("2E3") == 2000.0);
  CHECK(float_value("1_000.0") == 1000.0);
  CHECK(float_value("1_0.2_5e1_0") == 10.25e10);
  CHECK(float_value("1e-6") == 1e-6);
  // As in Python: overflow gives inf, underflow gives 0.
  CHECK(std::isinf(float_value("1e999")));
  CHECK(float_value("1e-999") == 0.0);
  CHECK(float_value("0.0001e-320") == 0.0);
  CHECK(dump("x[1:2] 1..real") == "x [ 1 : 2 ] 1. . real NL EOF");
}

TEST_CASE("lexer: malformed numbers") {
  struct Case {
    const char *text;
    unsigned col;
    const char *message;
  };
  const Case cases[] = {
      {"x = 0777", 5,
       "leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal "
       "integers"},
      {"x = 1__0", 6, "invalid decimal literal: '_' must be between digits"},
      {"x = 10_", 7, "invalid decimal literal: '_' must be between digits"},
      {"x = 0b102", 9, "invalid digit '2' in binary literal"},
      {"x = 0o8", 7, "invalid digit '8' in octal literal"},
      {"x = 0x", 5, "invalid hexadecimal literal"},
      {"x = 0xfg", 8, "invalid hexadecimal literal"},
      {"x = 1e", 5, "invalid decimal literal: the exponent has no digits"},
      {"x = 1abc", 6, "invalid decimal literal"},
  };
  for (const Case &c : cases) {
    CAPTURE(c.text);
    const auto e = lex_error(c.text);
    REQUIRE(e);
    CHECK(e->line() == 1);
    CHECK(e->col() == c.col);
    CHECK(e->message() == c.message);
  }
}

TEST_CASE("lexer: string literals") {
  CHECK(string_value("'abc'") == "abc");
  CHECK(string_value("\"it's\"") == "it's");
  CHECK(string_value(R"('a\nb\tc\\d\'e\"f')") == "a\nb\tc\\d'e\"f");
  CHECK(string_value(R"("\x41\101\u00e9\U0001F600")") == "AA\xC3\xA9\xF0\x9F\x98\x80");
  CHECK(string_value(R"('\d')") == "\\d"); // unknown escapes stay, as in Python
  CHECK(string_value(R"(r'\n\'')") == "\\n\\'");
  CHECK(string_value(R"(R"a\b")") == "a\\b");
  CHECK(string_value("u'x'") == "x");
  CHECK(string_value("'''one\ntwo ' \"\" '''") == "one\ntwo ' \"\" ");
  CHECK(string_value("\"\"\"doc\"\"\"") == "doc");
  CHECK(string_value("'a\\\nb'") == "ab"); // backslash-newline continues the string
  CHECK(string_value("''") == "");
  // Adjacent literals stay separate tokens; the parser joins them.
  CHECK(dump("'a' \"b\"") == "\"a\" \"b\" NL EOF");
  // A triple-quoted string spanning lines moves the line count on.
  const auto tokens = lex("x = '''a\nb'''\ny\n");
  CHECK(tokens[4].text == "y");
  CHECK(tokens[4].loc.line == 3);
}

TEST_CASE("lexer: bytes literals") {
  const auto tokens = lex(R"(b'a\x00\xff\101\n\u00e9\N{X}' Rb'\d')");
  REQUIRE(tokens.size() == 4);
  CHECK(tokens[0].kind == TokenKind::Bytes);
  CHECK(tokens[0].text == std::string("a\0\xFF"
                                      "A\n\\u00e9\\N{X}",
                                      16));
  CHECK(tokens[1].kind == TokenKind::Bytes);
  CHECK(tokens[1].text == "\\d");
  const auto e = lex_error("x = b'\xC3\xA9'");
  REQUIRE(e);
  CHECK(e->col() == 7);
  CHECK(e->message() == "bytes can only contain ASCII literal characters");
}

TEST_CASE("lexer: f-strings split into start, text, field tokens and end (PEP 701)") {
  CHECK(dump("f'a{x}b'") == "FSTART(f') <a> { x } <b> FEND NL EOF");
  CHECK(dump(R"(RF"{{x}}\n")") == R"(FSTART(RF") <{x}\n> FEND NL EOF)");
  CHECK(dump("f'{x!r:>{w}.2f}'") == "FSTART(f') { x ! r : <>> { w } <.2f> } FEND NL EOF");
  CHECK(dump("f'{a[1:2]} {x:=3} {a!=b}'") ==
        "FSTART(f') { a [ 1 : 2 ] } < > { x : <=3> } < > { a != b } FEND NL EOF");
  // Python 3.12: a field may reuse the f-string's quotes and nest f-strings.
  CHECK(dump(R"(f"{"a" + f"{b}"}")") ==
        R"(FSTART(f") { "a" + FSTART(f") { b } FEND } FEND NL EOF)");
  // A field may span lines, as may the text of a triple-quoted f-string.
  const auto tokens = lex("f'''a\n{\nx\n}'''\ny\n");
  CHECK(tokens[1].kind == TokenKind::FStringMiddle);
  CHECK(tokens[1].text == "a\n");
  CHECK(tokens[7].text == "y");
  CHECK(tokens[7].loc.line == 5);
  // `\{` is no escape: the backslash stays and the brace opens a field.
  CHECK(dump(R"(f'\{x}')") == R"(FSTART(f') <\> { x } FEND NL EOF)");
}

TEST_CASE("lexer: f-string errors") {
  struct Case {
    const char *text;
    unsigned col;
    const char *message;
  };
  const Case cases[] = {
      {"x = f'a}'", 8, "f-string: single '}' is not allowed"},
      {"x = f'abc", 5, "unterminated f-string literal"},
      {"x = f'{x:abc'", 13, "f-string: expecting '}' to close the replacement field"},
      {"x = f'''{x", 5, "unterminated f-string literal"},
      {"x = f'a\nb'", 5, "unterminated f-string literal"},
  };
  for (const Case &c : cases) {
    CAPTURE(c.text);
    const auto e = lex_error(c.text);
    REQUIRE(e);
    CHECK(e->col() == c.col);
    CHECK(e->message() == c.message);
  }
}

TEST_CASE("lexer: names may be non-ASCII, look-alike symbols stay invalid") {
  CHECK(dump("caf\xC3\xA9 = \xCE\xB1\xCE\xB2") == "caf\xC3\xA9 = \xCE\xB1\xCE\xB2 NL EOF");
  const auto e = lex_error("x = a \xC2\xA0 b"); // a non-breaking space
  REQUIRE(e);
  CHECK(e->message() == "invalid character '\xC2\xA0' (U+00A0)");
  CHECK(dump("\xEF\xBB\xBFx") == "x NL EOF"); // a UTF-8 byte order mark is skipped
}

TEST_CASE("lexer: unterminated strings") {
  auto e = lex_error("a = 1\nx = 'abc\ny = 2\n");
  REQUIRE(e);
  CHECK(e->line() == 2);
  CHECK(e->col() == 5);
  CHECK(e->message() == "unterminated string literal");
  CHECK(std::string(e->what()) == "test.py:2:5: unterminated string literal\n"
                                  "    x = 'abc\n"
                                  "        ^");
  e = lex_error("x = \"abc\\\"");
  REQUIRE(e);
  CHECK(e->message() == "unterminated string literal");
  e = lex_error("def f():\n    '''doc\n    x = 1\n");
  REQUIRE(e);
  CHECK(e->line() == 2);
  CHECK(e->col() == 5);
  CHECK(e->message() == "unterminated triple-quoted string literal");
}

TEST_CASE("lexer: bad escapes") {
  auto e = lex_error(R"(x = 'ab\x4')");
  REQUIRE(e);
  CHECK(e->col() == 8);
  CHECK(e->message() == "truncated \\x escape: it needs 2 hex digits");
  e = lex_error(R"(x = '\N')");
  REQUIRE(e);
  CHECK(e->message() == "malformed \\N character escape: expected '{' after \\N");
  e = lex_error(R"(x = '\N{DASH')");
  REQUIRE(e);
  CHECK(e->message() == "malformed \\N character escape: expected '}' after the character name");
  e = lex_error(R"(x = '\U00110000')");
  REQUIRE(e);
  CHECK(e->message() == "the escape names U+110000, which is beyond U+10FFFF");
}

TEST_CASE("lexer: escapes Python reads that kiln keeps as written or encodes as WTF-8") {
  // kiln has no table of Unicode character names: \N{...} stays as written.
  CHECK(string_value(R"('\N{EM DASH}')") == R"(\N{EM DASH})");
  // A lone surrogate is valid in a Python string; kiln encodes it as UTF-8
  // would encode any other code point (WTF-8).
  CHECK(string_value(R"('\ud800')") == "\xED\xA0\x80");
}

TEST_CASE("lexer: invalid characters") {
  auto e = lex_error("x = 1\ny = a $ b\n");
  REQUIRE(e);
  CHECK(e->line() == 2);
  CHECK(e->col() == 7);
  CHECK(e->message() == "invalid character '$' (U+0024)");
  CHECK(std::string(e->what()) == "test.py:2:7: invalid character '$' (U+0024)\n"
                                  "    y = a $ b\n"
                                  "          ^");
  e = lex_error("y = a ! b");
  REQUIRE(e);
  CHECK(e->message() == "invalid character '!' (U+0021)");
  e = lex_error("y = a \xC3\x97 b"); // '×' instead of '*'
  REQUIRE(e);
  CHECK(e->col() == 7);
  CHECK(e->message() == "invalid character '\xC3\x97' (U+00D7)");
  e = lex_error(std::string("y = \0", 5));
  REQUIRE(e);
  CHECK(e->message() == "invalid character U+0000");
  e = lex_error("y = \xFF");
  REQUIRE(e);
  CHECK(e->message() == "invalid UTF-8 byte 0xFF");
}

TEST_CASE("lexer: inconsistent dedent") {
  const auto e = lex_error("if a:\n        b\n    c\n");
  REQUIRE(e);
  CHECK(e->line() == 3);
  CHECK(e->col() == 5);
  CHECK(e->message() == "unindent does not match any outer indentation level");
}

TEST_CASE("lexer: too many indentation levels") {
  std::string text;
  for (int i = 0; i < 102; ++i)
    text += std::string(i, ' ') + "if a:\n";
  const auto e = lex_error(text);
  REQUIRE(e);
  CHECK(e->line() == 102);
  CHECK(e->message() == "too many levels of indentation (the limit is 100)");
}

TEST_CASE("lexer: bracket errors") {
  auto e = lex_error("x = f(a,\n      b\ny = 2\n");
  REQUIRE(e);
  CHECK(e->line() == 1);
  CHECK(e->col() == 6);
  CHECK(e->message() == "'(' was never closed");
  e = lex_error("x = [(a, b]\n");
  REQUIRE(e);
  CHECK(e->col() == 11);
  CHECK(e->message() == "closing bracket ']' does not match the opening '(' on line 1");
  e = lex_error("x = a)\n");
  REQUIRE(e);
  CHECK(e->col() == 6);
  CHECK(e->message() == "unmatched ')'");
}

TEST_CASE("lexer: backslash errors") {
  auto e = lex_error("x = 1 \\ + 2\n");
  REQUIRE(e);
  CHECK(e->col() == 7);
  CHECK(e->message() == "unexpected character after the line continuation character '\\'");
  e = lex_error("x = 1 \\");
  REQUIRE(e);
  CHECK(e->message() == "unexpected end of file after the line continuation character '\\'");
}
