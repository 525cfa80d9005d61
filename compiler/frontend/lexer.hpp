// The lexer: Python source text to tokens, with the INDENT / DEDENT /
// NEWLINE tokens that Python's tokenizer derives from indentation and line
// ends, and f-strings split as Python 3.12 splits them (PEP 701): a start
// token, literal parts, and the tokens of each replacement field between
// '{' and '}'. The text is read as UTF-8, whatever a `# coding:` line says.
// The parser (parser.hpp) is its only client.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/frontend/source.hpp"

namespace kiln::frontend {

enum class TokenKind : uint8_t {
  Name,          // identifiers and keywords alike (the parser tells them apart); text
  Int,           // int_value; text is the spelling ("0xFF", "1_000"); big_int when the
                 // value needs more than 64 bits (int_value is then UINT64_MAX)
  Float,         // float_value; text is the spelling
  Imaginary,     // float_value is the imaginary part of `2.5j`; text is the spelling
  String,        // text is the value: quotes removed, escapes resolved
  Bytes,         // text is the value of a b'...' literal
  FStringStart,  // text is the prefix and opening quotes as written (`rf"""`)
  FStringMiddle, // text is a literal part's value (escapes and `{{` resolved)
  FStringEnd,    // text is the closing quotes
  Op,            // operators and delimiters ("+", "//=", "(", "->", "...", and "!" before an
                 // f-string conversion); text
  Newline,       // the end of a logical line
  Indent,        // a line indented deeper than the one before
  Dedent,        // one per indentation level a line closes
  EndOfFile,     // always the last token
};

struct Token {
  TokenKind kind;
  Loc loc;            // the first byte of the token (for Newline: just after the line's last token)
  uint32_t begin = 0; // byte offsets of the token in the file: [begin, end);
  uint32_t end = 0;   // empty for Newline, Indent, Dedent and EndOfFile
  std::string text;
  uint64_t int_value = 0;
  double float_value = 0;
  bool big_int = false;

  Token(TokenKind k, Loc l) : kind(k), loc(l) {}

  // The parser asks these of every token against many spellings (each
  // precedence level's operators): the length and the first character
  // settle nearly every mismatch without a call to memcmp.
  bool is_op(std::string_view op) const { return kind == TokenKind::Op && spelled(op); }
  bool is_name(std::string_view name) const { return kind == TokenKind::Name && spelled(name); }

private:
  bool spelled(std::string_view s) const {
    if (text.size() != s.size() || s.empty() || text[0] != s[0])
      return false;
    // Spellings are short: a loop the compiler inlines, not a memcmp call.
    for (size_t i = 1; i < s.size(); ++i)
      if (text[i] != s[i])
        return false;
    return true;
  }
};

/// Whether `name` is a reserved Python keyword (`def`, `if`, `None`, ...); soft
/// keywords such as `match` are not.
bool is_keyword(std::string_view name);

/// The token as a syntax error names it: "'x'", "')'", "end of line", ...
std::string describe(const Token &token);

/// All tokens of the file, ending with EndOfFile. Throws CompileError at the
/// first lexical error. Safe to call from several threads.
std::vector<Token> tokenize(const SourceFile &source);

} // namespace kiln::frontend
