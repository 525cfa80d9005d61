// The lexer's state machine, shared by lexer.cpp (layout, names, numbers,
// operators) and lexer_strings.cpp (string, bytes and f-string literals).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/frontend/lexer.hpp"

namespace kiln::frontend {

/// The value of `c` as a digit in bases up to 36, or -1.
int digit_value(char c);

class Lexer {
public:
  explicit Lexer(const SourceFile &source);

  std::vector<Token> run();

private:
  struct OpenBracket {
    char c;
    Loc loc;
  };

  /// Where the lexer is inside f-strings. Each f-string pushes a Literal
  /// frame; each replacement field a Field frame above it (tokens as usual);
  /// a `:` at the field's own bracket level a Spec frame above that (literal
  /// text again, in which `{` opens a nested field). The quote fields repeat
  /// the f-string's, so that the top frame alone says how text ends.
  struct FStringFrame {
    enum class Mode : uint8_t { Literal, Field, Spec } mode;
    char quote;
    bool triple;
    bool raw;
    size_t depth; // Field: brackets_.size() with the field's '{' open
    Loc loc;      // the f-string's first character, for "unterminated" errors
  };

  const SourceFile &source_;
  std::string_view text_;
  size_t pos_ = 0;
  uint32_t line_ = 1;
  size_t line_start_ = 0;
  std::vector<uint32_t> indents_{0}; // widths of the open indentation levels
  std::vector<OpenBracket> brackets_;
  std::vector<FStringFrame> fstrings_;
  bool line_has_tokens_ = false; // the logical line so far needs a Newline
  Loc prev_end_{1, 1};           // just after the last token, where Newline goes
  size_t prev_end_offset_ = 0;
  std::vector<Token> tokens_;

  bool at_end() const { return pos_ >= text_.size(); }
  char peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  Loc here() const { return {line_, static_cast<uint32_t>(pos_ - line_start_ + 1)}; }
  /// Whether a line ends at pos_: at a "\n", or at a '\r' alone, which
  /// Python reads as a newline too (old Mac files).
  bool at_line_end() const { return peek() == '\n' || (peek() == '\r' && peek(1) != '\n'); }
  /// Whether pos_ is at the '\r' of a "\r\n", which the "\n" ends.
  bool at_crlf() const { return peek() == '\r' && peek(1) == '\n'; }
  /// Call with pos_ just past a '\n'.
  void start_next_line() {
    ++line_;
    line_start_ = pos_;
  }
  [[noreturn]] void fail(Loc loc, std::string message) const;

  /// The next token, built in place in the vector: a Token is 80 bytes,
  /// and building one aside cost a move into the argument and another in.
  Token &emit(TokenKind kind, Loc loc, size_t begin);
  void push(Token token, size_t begin);
  void push_op(std::string_view op, size_t begin, Loc loc);
  void push_marker(TokenKind kind, Loc loc, size_t offset);
  void push_newline();

  // lexer.cpp
  void skip_spaces();
  void skip_comment();
  bool read_indentation();
  void read_line_continuation();
  void read_token();
  size_t identifier_char_length(size_t at) const;
  void read_number(size_t begin, Loc loc);
  void read_decimal_digits();
  bool keyword_follows() const;
  void read_based_int(size_t begin, Loc loc);
  void read_operator(size_t begin, Loc loc);
  /// A character with a meaning of its own at the top level of an f-string
  /// replacement field (`}`, `:`, `!`); false if the field has none here.
  bool read_field_delimiter();
  void finish();

  // lexer_strings.cpp
  void read_string(size_t begin, Loc loc, std::string_view prefix);
  void read_fstring_text();
  void close_field(size_t begin, Loc loc);
  void read_escape(std::string &value, bool raw, bool bytes, Loc string_loc,
                   const char *unterminated);
  uint32_t read_hex_digits(int count, Loc loc, const char *escape);
  void append_code_point(std::string &value, uint32_t cp, Loc loc);
};

} // namespace kiln::frontend
