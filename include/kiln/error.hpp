// Errors kiln reports to its users.
//
// Following Halide's split by whose fault an error is: CompileError for a
// kernel the user wrote, ArgumentError for a launch the user got wrong,
// RuntimeError for the environment (driver, files, caches). Internal
// invariants are asserts, never exceptions. Every message says what went
// wrong, where, and how to fix it.
#pragma once

#include <stdexcept>
#include <string>

namespace kiln {

/// Base of every exception kiln throws.
class Error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// A kernel file that does not parse or does not type-check. what() is
///   file:line:col: message
///       source line
///       ^
class CompileError : public Error {
public:
  CompileError(std::string file, unsigned line, unsigned col, std::string message,
               std::string source_line);

  const std::string &file() const { return file_; }
  unsigned line() const { return line_; }
  unsigned col() const { return col_; }
  /// The one-sentence message without location and caret.
  const std::string &message() const { return message_; }

private:
  std::string file_;
  unsigned line_, col_;
  std::string message_;
};

/// A launch or warmup whose arguments do not fit the kernel: names the
/// kernel, the parameter and what was expected.
class ArgumentError : public Error {
public:
  using Error::Error;
};

/// The environment failed: a driver call, a file, a cache.
class RuntimeError : public Error {
public:
  using Error::Error;
};

} // namespace kiln
