// KILN_DUMP_DIR and KILN_OVERRIDE_DIR (issue 12): a stage file dumped by
// one run, edited by hand and put in the override folder, is what the next
// run compiles; a file LLVM cannot parse is a compile error naming it.
// Runs tests/cache_child.cpp (vector_add's add_kernel, checked) as a process.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/cache_child.hpp"

namespace fs = std::filesystem;

namespace {

struct Run {
  int status = -1;
  std::string out;
};

Run run_child(const std::string &env) {
  Run r;
  r.out = kiln::testing::shell_output(kiln::testing::child_command("KILN_NO_CACHE=1 " + env),
                                      &r.status);
  return r;
}

std::string read(const fs::path &p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

} // namespace

TEST_CASE(
    "override: an edited LLVM IR file replaces the compiler's, and a broken one is a clear error") {
  const kiln::testing::TempDir tmp;
  const fs::path root = tmp.path;
  const fs::path dump = root / "dump", over = root / "override";
  fs::create_directories(over);

  const Run dumped = run_child("KILN_DUMP_DIR=" + dump.string());
  CAPTURE(dumped.out);
  REQUIRE(dumped.status == 0);
  fs::path llir;
  for (const auto &f : fs::recursive_directory_iterator(dump))
    if (f.path().filename() == "add_kernel.llir")
      llir = f.path();
  REQUIRE(!llir.empty());
  std::string text = read(llir);
  // x + y becomes x - y: the child sees a wrong sum, so the override ran.
  size_t n = 0;
  for (size_t pos = 0; (pos = text.find("fadd", pos)) != std::string::npos; pos += 4, ++n)
    text.replace(pos, 4, "fsub");
  REQUIRE(n > 0);
  std::ofstream(over / "add_kernel.llir") << text;
  const Run edited = run_child("KILN_OVERRIDE_DIR=" + over.string());
  CAPTURE(edited.out);
  CHECK(edited.out.find("\"correct\": false") != std::string::npos);

  std::ofstream(over / "add_kernel.llir") << "this is not LLVM IR\n";
  const Run broken = run_child("KILN_OVERRIDE_DIR=" + over.string());
  CAPTURE(broken.out);
  CHECK(broken.out.find("not valid LLVM IR") != std::string::npos);
  CHECK(broken.out.find("add_kernel.llir") != std::string::npos);
}
