#include "compiler/frontend/source.hpp"

#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

namespace kiln::frontend {

std::string read_source_file(const std::string &path, const char *what) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st))
    throw RuntimeError(std::string("cannot read ") + what + " '" + path +
                       "': no such file or not readable");
  if (!fs::is_regular_file(st))
    throw RuntimeError(std::string("cannot read ") + what + " '" + path + "': it is " +
                       (fs::is_directory(st) ? "a directory" : "not a regular file") +
                       ", not a Python source file");
  const auto size = fs::file_size(path, ec);
  if (!ec && size > kMaxSourceBytes)
    throw RuntimeError(std::string(what) + " '" + path + "' is " + std::to_string(size) +
                       " bytes; kernel files of more than " +
                       std::to_string(kMaxSourceBytes >> 20) + " MiB are refused");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw RuntimeError(std::string("cannot read ") + what + " '" + path +
                       "': no such file or not readable");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad())
    throw RuntimeError("error while reading " + std::string(what) + " '" + path + "'");
  return ss.str();
}

SourceFile::SourceFile(std::string path, std::string text)
    : path_(std::move(path)), text_(std::move(text)) {
  // Offsets and locations are 32-bit to keep tokens and AST nodes small; no
  // kernel file comes near 4 GiB, but a user could still pass one.
  if (text_.size() >= std::numeric_limits<uint32_t>::max())
    throw CompileError(path_, 1, 1, "the file is too large (4 GiB or more) to be a kernel file",
                       "");
  // A line starts at offset 0 and after every newline ("\n", "\r\n", or a
  // '\r' alone as Python reads old Mac files), except that a final newline
  // ends the last line rather than starting an empty one.
  if (!text_.empty())
    line_starts_.push_back(0);
  for (size_t i = 0; i + 1 < text_.size(); ++i)
    if (text_[i] == '\n' || (text_[i] == '\r' && text_[i + 1] != '\n'))
      line_starts_.push_back(static_cast<uint32_t>(i + 1));
}

std::string_view SourceFile::line(uint32_t n) const {
  if (n == 0 || n > line_starts_.size())
    return {};
  const size_t begin = line_starts_[n - 1];
  // The '\r' of a "\r\n" is not part of the line and would garble the
  // caret display.
  size_t end = text_.find_first_of("\r\n", begin);
  if (end == std::string::npos)
    end = text_.size();
  return std::string_view(text_).substr(begin, end - begin);
}

CompileError SourceFile::error(Loc loc, std::string message) const {
  return CompileError(path_, loc.line, loc.col, std::move(message), std::string(line(loc.line)));
}

} // namespace kiln::frontend
