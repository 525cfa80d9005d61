// A shell command line run in a child with a time limit, so that a hang
// fails rather than stalls the suite; shared by the tests that run the kiln
// binary.
#pragma once

#include <doctest/doctest.h>

#include <stdio.h>
#include <sys/wait.h>

#include <string>

namespace kiln::test {

struct Child {
  int status = -1;    ///< the exit status, or 128 + the signal that ended it
  std::string output; ///< stdout and stderr together
};

/// Runs `cmd` under `timeout timeout_s` and collects what it prints.
inline Child shell(const std::string &cmd, int timeout_s = 60) {
  Child c;
  FILE *pipe = popen(("timeout " + std::to_string(timeout_s) + " " + cmd + " 2>&1").c_str(), "r");
  REQUIRE(pipe);
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe))
    c.output.append(buf, n);
  const int st = pclose(pipe);
  c.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return c;
}

} // namespace kiln::test
