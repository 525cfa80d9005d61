// kiln's parser against CPython's on the whole Python standard library: for
// every .py file of the stdlib that the machine's python3 parses, kiln's tree
// (frontend/ast_dump.cpp) must print exactly as CPython's `ast` does
// (tests/tools/ast_canon.py, which also documents the few normalisations).
// Python prints all files' dumps in one process, so the test stays fast.
#include <doctest/doctest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/frontend/ast_dump.hpp"
#include "compiler/frontend/parser.hpp"

#ifndef KILN_SOURCE_DIR
#define KILN_SOURCE_DIR "."
#endif

namespace kf = kiln::frontend;

namespace {

/// $KILN_STDLIB_PYTHON when set (to check against another Python's stdlib
/// and grammar, e.g. a 3.12 one), else Debian's python3 (its stdlib is what
/// scripts/bootstrap installs), else the first python3 on PATH; empty when
/// there is none.
std::string find_python() {
  if (const char *python = std::getenv("KILN_STDLIB_PYTHON"); python && *python)
    return python;
  if (std::filesystem::exists("/usr/bin/python3"))
    return "/usr/bin/python3";
  if (std::system("command -v python3 >/dev/null 2>&1") == 0)
    return "python3";
  return "";
}

std::string run(const std::string &command) {
  std::string out;
  FILE *pipe = popen(command.c_str(), "r");
  REQUIRE(pipe);
  std::array<char, 1 << 16> buffer;
  while (const size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe))
    out.append(buffer.data(), n);
  CHECK(pclose(pipe) == 0);
  return out;
}

std::string read_file(const std::filesystem::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct FileDump {
  std::string path; // relative to the stdlib's root
  std::string cpython;
};

/// Splits ast_canon.py's --stdlib output into its root and one dump per file.
std::vector<FileDump> split(const std::string &output, std::string &root) {
  std::vector<FileDump> files;
  std::istringstream in(output);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("@ROOT ", 0) == 0)
      root = line.substr(6);
    else if (line.rfind("### ", 0) == 0)
      files.push_back({line.substr(4), ""});
    else if (!files.empty())
      files.back().cpython += line + "\n";
  }
  return files;
}

/// The first line where the two dumps differ, both versions, shortened.
std::string first_difference(const std::string &kiln, const std::string &cpython) {
  std::istringstream a(kiln), b(cpython);
  std::string la, lb;
  for (int n = 1;; ++n) {
    const bool more_a = static_cast<bool>(std::getline(a, la));
    const bool more_b = static_cast<bool>(std::getline(b, lb));
    if (!more_a && !more_b)
      return "(no difference)";
    if (!more_a || !more_b || la != lb) {
      auto cut = [](const std::string &s) { return s.size() > 400 ? s.substr(0, 400) + "..." : s; };
      return "dump line " + std::to_string(n) + "\n      kiln:    " + (more_a ? cut(la) : "<end>") +
             "\n      CPython: " + (more_b ? cut(lb) : "<end>");
    }
  }
}

} // namespace

TEST_CASE("stdlib: kiln parses every file of Python's standard library as CPython does") {
  const std::string python = find_python();
  if (python.empty()) {
    std::printf("[SKIP] no python3 here to compare kiln's parser with\n");
    return;
  }
  std::string root;
  const std::vector<FileDump> files =
      split(run(python + " " KILN_SOURCE_DIR "/tests/tools/ast_canon.py --stdlib"), root);
  REQUIRE(!root.empty());
  REQUIRE(files.size() > 100);

  size_t compared = 0, skipped = 0;
  std::vector<std::string> failures;
  for (const FileDump &file : files) {
    if (file.cpython.rfind("!SKIP", 0) == 0) { // CPython itself cannot parse it
      ++skipped;
      continue;
    }
    ++compared;
    const std::filesystem::path path = std::filesystem::path(root) / file.path;
    std::string kiln;
    try {
      kiln = kf::dump(kf::parse(std::make_shared<kf::SourceFile>(path.string(), read_file(path))));
    } catch (const kiln::CompileError &e) {
      failures.push_back(file.path + ": kiln refuses it: " + e.what());
      continue;
    }
    if (kiln != file.cpython)
      failures.push_back(file.path + ": " + first_difference(kiln, file.cpython));
  }
  std::printf("stdlib (%s): %zu files compared, %zu identical to CPython's tree, %zu skipped "
              "(CPython cannot parse them)\n",
              root.c_str(), compared, compared - failures.size(), skipped);
  std::string report;
  for (size_t i = 0; i < failures.size() && i < 25; ++i)
    report += "  " + failures[i] + "\n";
  INFO(failures.size() << " files differ; the first ones:\n" << report);
  CHECK(failures.empty());
}
