// Issue 17: no input kills the host process. Every input here once ended the
// process with a signal, so each runs in a child (the kiln binary), and the
// suite survives a regression to report it.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

struct Child {
  int status = -1;    ///< the exit status, or 128 + the signal that ended it
  std::string output; ///< stdout and stderr together
};

/// Runs `kiln ARGS` (a shell word list) in a child process from a scratch
/// folder, with a time limit so that a hang fails rather than stalls.
Child kiln(const std::string &args) {
  const std::string cmd = "cd '" + std::filesystem::temp_directory_path().string() +
                          "' && timeout 60 '" KILN_BIN "' " + args + " 2>&1";
  Child c;
  FILE *pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe);
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe))
    c.output.append(buf, n);
  const int st = pclose(pipe);
  c.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return c;
}

/// A kernel file (or any text) in a fresh temporary file; its path.
std::string write_temp(const std::string &name, const std::string &text) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("kiln-reliability-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  std::ofstream(path) << text;
  return path.string();
}

[[maybe_unused]] bool contains(const std::string &s, const std::string &part) {
  return s.find(part) != std::string::npos;
}

const std::string kShared = KILN_SHARED_DIR;

} // namespace

TEST_CASE(
    "issue 17.1: a 2^20-element softmax row runs on several programs (blocks off the stack)") {
  const Child c =
      kiln("run " + kShared +
           "/kernels/softmax.py softmax_kernel --grid 4 out_ptr=zeros:4x1048576:f32 "
           "in_ptr=zeros:4x1048576:f32 in_stride=1048576 out_stride=1048576 n_cols=1048576 "
           "BLOCK=1048576 --json");
  INFO(c.output);
  CHECK(c.status == 0);
}

TEST_CASE("issue 17.1: a 1024x1024 block runs, on one program and on several") {
  const std::string file = write_temp("big2d.py", R"(import triton
import triton.language as tl


@triton.jit
def add_row_sums(x_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr):
    pid = tl.program_id(0)
    rows = tl.arange(0, R)[:, None]
    cols = tl.arange(0, C)[None, :]
    x = tl.load(x_ptr + pid * R * C + rows * C + cols)
    y = x + 1.0 + tl.sum(x, axis=1)[:, None]
    tl.store(out_ptr + pid * R * C + rows * C + cols, y)
)");
  const std::string out = std::filesystem::path(file).parent_path() / "out.npy";
  for (const char *grid : {"1", "3"}) {
    CAPTURE(grid);
    const Child c = kiln(
        "run " + file + " add_row_sums --grid " + grid +
        " x_ptr=zeros:3x1024x1024:f32 out_ptr=zeros:3x1024x1024:f32 R=1024 C=1024 --out out_ptr=" +
        out);
    INFO(c.output);
    REQUIRE(c.status == 0);
    // Every element of the programs that ran is 0 + 1 + 0.
    std::ifstream in(out, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    REQUIRE(bytes.size() > 3u * 1024 * 1024 * 4);
    const char *data = bytes.data() + bytes.size() - 3u * 1024 * 1024 * 4;
    const size_t ran = std::stoul(grid) * 1024 * 1024;
    float first = 0, last = 0;
    std::memcpy(&first, data, 4);
    std::memcpy(&last, data + (ran - 1) * 4, 4);
    CHECK(first == 1.0f);
    CHECK(last == 1.0f);
  }
}
