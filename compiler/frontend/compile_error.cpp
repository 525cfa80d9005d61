#include "kiln/error.hpp"

namespace kiln {

namespace {

// what() is built once, here, so that it can be returned as a stable
// `const char *` without any lazy (and thread-unsafe) formatting later.
std::string format_compile_error(const std::string &file, unsigned line, unsigned col,
                                 const std::string &message, const std::string &source_line) {
  std::string out = file + ":" + std::to_string(line) + ":" + std::to_string(col) + ": " + message;
  if (source_line.empty())
    return out;
  // The caret counts bytes, like `col`; tabs in the line are not expanded.
  out += "\n    ";
  out += source_line;
  out += "\n    ";
  out.append(col > 1 ? col - 1 : 0, ' ');
  out += '^';
  return out;
}

} // namespace

CompileError::CompileError(std::string file, unsigned line, unsigned col, std::string message,
                           std::string source_line)
    : Error(format_compile_error(file, line, col, message, source_line)), file_(std::move(file)),
      line_(line), col_(col), message_(std::move(message)) {}

} // namespace kiln
