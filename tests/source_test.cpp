// Tests of read_source_file (compiler/frontend/source.cpp): a kernel file is
// read whole with one open, fstat and read, and what is not a regular file
// is refused with the same messages as before, a fifo without waiting for
// a writer.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "compiler/frontend/source.hpp"

namespace kf = kiln::frontend;
namespace fs = std::filesystem;

namespace {

/// A private folder for one test case, removed after it.
struct Folder {
  fs::path path;
  Folder() {
    std::string templ = (fs::temp_directory_path() / "kiln-source-XXXXXX").string();
    path = ::mkdtemp(templ.data());
  }
  ~Folder() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string write(const std::string &name, const std::string &text) const {
    const std::string p = (path / name).string();
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
};

std::string error_of(const std::string &path) {
  try {
    kf::read_source_file(path, "kernel file");
  } catch (const kiln::RuntimeError &e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST_CASE("read_source_file returns the file's bytes exactly") {
  const Folder f;
  const std::string text = "import triton\r\n\n@triton.jit\ndef k(x):\n    pass\n\xef\xbb\xbf" +
                           std::string("\0tail", 5);
  CHECK(kf::read_source_file(f.write("k.py", text), "kernel file") == text);
  CHECK(kf::read_source_file(f.write("empty.py", ""), "kernel file").empty());
  // Larger than any first guess a reader might make.
  const std::string big(300000, 'x');
  CHECK(kf::read_source_file(f.write("big.py", big), "kernel file") == big);
}

TEST_CASE("read_source_file refuses a missing file, a folder, a fifo and a file over the limit") {
  const Folder f;
  const std::string missing = error_of((f.path / "nope.py").string());
  CHECK(missing.find("cannot read kernel file") != std::string::npos);
  CHECK(missing.find("no such file or not readable") != std::string::npos);
  CHECK(error_of(f.path.string()).find("it is a directory, not a Python source file") !=
        std::string::npos);
  // Opening a fifo for reading would wait for a writer: it must be refused
  // at once (the test would hang otherwise).
  const std::string fifo = (f.path / "fifo.py").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(error_of(fifo).find("it is not a regular file") != std::string::npos);
  CHECK(error_of("/dev/zero").find("not a regular file") != std::string::npos);
  const std::string over = f.write("over.py", std::string(kf::kMaxSourceBytes + 1, '#'));
  CHECK(error_of(over).find("MiB are refused") != std::string::npos);
  CHECK(kf::read_source_file(f.write("limit.py", std::string(kf::kMaxSourceBytes, '#')), "module")
            .size() == kf::kMaxSourceBytes);
}
