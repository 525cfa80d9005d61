// A kernel file's text with line lookup, and the helper that turns a
// location into a CompileError with the source line and a caret.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/error.hpp"

namespace kiln::frontend {

/// A position in a source file; line and col are 1-based (col counts bytes).
struct Loc {
  uint32_t line = 0;
  uint32_t col = 0;
};

/// The text of the kernel or module file at `path` (`what` names it in
/// errors: "kernel file"). Throws RuntimeError for a file that is missing,
/// unreadable, not a regular file (/dev/zero, a fifo, a folder: reading one
/// may never end) or larger than kMaxSourceBytes.
std::string read_source_file(const std::string &path, const char *what);
inline constexpr std::size_t kMaxSourceBytes = 16u << 20;

class SourceFile {
public:
  SourceFile(std::string path, std::string text);

  const std::string &path() const { return path_; }
  const std::string &text() const { return text_; }
  /// The text of 1-based line `n` without its newline; empty if out of range.
  std::string_view line(uint32_t n) const;
  uint32_t line_count() const { return static_cast<uint32_t>(line_starts_.size()); }

  /// A CompileError at `loc` with this file's line and a caret under `loc.col`.
  [[nodiscard]] CompileError error(Loc loc, std::string message) const;

private:
  std::string path_;
  std::string text_;
  std::vector<uint32_t> line_starts_;
};

using SourceFilePtr = std::shared_ptr<const SourceFile>;

} // namespace kiln::frontend
