// Helpers of the cache tests: a temporary folder, and runs of
// tests/cache_child.cpp (a process that launches add_kernel through the
// caches its environment names and reports where the binary came from).
#pragma once

#include <doctest/doctest.h>

#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace kiln::testing {

/// A fresh folder under /tmp, removed with its contents at the end.
struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/kiln-cache-test-XXXXXX";
    REQUIRE(::mkdtemp(tmpl));
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
};

/// stdout (and stderr, which the command may redirect) of a shell command.
inline std::string shell_output(const std::string &cmd, int *status = nullptr) {
  FILE *p = ::popen(cmd.c_str(), "r");
  REQUIRE(p);
  std::string out;
  char buf[512];
  while (size_t n = std::fread(buf, 1, sizeof buf, p))
    out.append(buf, n);
  const int s = ::pclose(p);
  if (status)
    *status = s;
  return out;
}

/// What one cache_child run printed.
struct ChildResult {
  std::string source; ///< "compiled", "disk", "remote"; empty on an error
  bool correct = false;
  std::string stages; ///< the stage texts the kernel kept, comma-separated
};

/// Every {"source": ..., "correct": ...} line of `out`, in order.
inline std::vector<ChildResult> child_results(const std::string &out) {
  std::vector<ChildResult> results;
  const std::string tag = "\"source\": \"";
  for (size_t pos = 0; (pos = out.find(tag, pos)) != std::string::npos;) {
    pos += tag.size();
    ChildResult r;
    r.source = out.substr(pos, out.find('"', pos) - pos);
    const size_t end = out.find('}', pos);
    const std::string fields = out.substr(pos, end - pos);
    r.correct = fields.find("\"correct\": true") != std::string::npos;
    const std::string stages_tag = "\"stages\": \"";
    if (const size_t s = fields.find(stages_tag); s != std::string::npos)
      r.stages = fields.substr(s + stages_tag.size(),
                               fields.find('"', s + stages_tag.size()) - s - stages_tag.size());
    results.push_back(r);
  }
  return results;
}

/// The shell words that run cache_child on the CPU backend with `env`.
inline std::string child_command(const std::string &env) {
  return "KILN_BACKEND=cpu " + env + " " + KILN_CACHE_CHILD;
}

} // namespace kiln::testing
