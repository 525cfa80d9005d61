// UTF-8 encoding and decoding of single code points, for the lexer (string
// escapes, identifiers, messages about stray characters) and the tree dump.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kiln::frontend {

/// Appends `cp` (at most 0x10FFFF) as UTF-8. Surrogates are encoded like any
/// other code point ("WTF-8"), because a Python string can hold them
/// ('\ud800') and kiln keeps string values as bytes.
void append_utf8(std::string &out, uint32_t cp);

/// "U+00D7": how messages name a code point.
std::string code_point_name(uint32_t cp);

struct CodePoint {
  uint32_t value = 0;
  size_t length = 0; // bytes; 0 when text[pos] does not start a valid sequence
};

/// The code point whose encoding starts at text[pos] (pos < text.size()).
/// Accepts what append_utf8 writes, surrogates included.
CodePoint decode_utf8(std::string_view text, size_t pos);

} // namespace kiln::frontend
