// Text checks the tests share: does a message hold a phrase, and what a
// call threw.
#pragma once

#include <string>

namespace kiln::test {

inline bool contains(const std::string &s, const std::string &part) {
  return s.find(part) != std::string::npos;
}

/// what() of the exception of type E that `f` throws ("" when none).
template <class E, class F> std::string error_of(F &&f) {
  try {
    f();
  } catch (const E &e) {
    return e.what();
  }
  return "";
}

} // namespace kiln::test
