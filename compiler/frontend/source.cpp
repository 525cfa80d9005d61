#include "compiler/frontend/source.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <limits>

namespace kiln::frontend {

std::string read_source_file(const std::string &path, const char *what) {
  auto fail = [&](const std::string &why) {
    return RuntimeError(std::string("cannot read ") + what + " '" + path + "': " + why);
  };
  // One open, one fstat and one read for a kernel file: a disk-cache hit
  // reads its source each time, and the stat, size and stream calls this
  // replaces cost more than a small kernel's whole lookup. O_NONBLOCK so a
  // fifo is refused below rather than waited on (no effect on a file).
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    throw fail("no such file or not readable");
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    throw fail("no such file or not readable");
  if (!S_ISREG(st.st_mode))
    throw fail(std::string("it is ") +
               (S_ISDIR(st.st_mode) ? "a directory" : "not a regular file") +
               ", not a Python source file");
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size > kMaxSourceBytes)
    throw RuntimeError(std::string(what) + " '" + path + "' is " + std::to_string(size) +
                       " bytes; kernel files of more than " +
                       std::to_string(kMaxSourceBytes >> 20) + " MiB are refused");
  // One byte more than fstat said: when a read returns exactly the size
  // fstat gave, short of the buffer, that is the whole file and no read
  // for the end follows (the common case: one read). A file that changed
  // size meanwhile is read on to its end, up to the limit.
  std::string text(static_cast<size_t>(size) + 1, '\0');
  size_t done = 0;
  for (;;) {
    if (done == text.size()) {
      if (text.size() > kMaxSourceBytes)
        throw RuntimeError(std::string(what) + " '" + path + "' grew past " +
                           std::to_string(kMaxSourceBytes >> 20) +
                           " MiB while it was read; kernel files that large are refused");
      text.resize(std::min<size_t>(text.size() * 2, kMaxSourceBytes + 1));
    }
    const ssize_t n = ::read(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      throw RuntimeError("error while reading " + std::string(what) + " '" + path + "'");
    if (n == 0)
      break;
    done += static_cast<size_t>(n);
    if (done == size && done < text.size())
      break;
  }
  text.resize(done);
  return text;
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
