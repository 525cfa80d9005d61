// The median of a sample and its extremes: how `kiln bench` and `kiln
// compile --repeat` report repeated timings.
#pragma once

#include <algorithm>
#include <cassert>
#include <vector>

namespace kiln::cli {

struct Summary {
  double median = 0, min = 0, max = 0;
};

inline Summary summarize(std::vector<double> v) {
  assert(!v.empty());
  std::sort(v.begin(), v.end());
  const std::size_t mid = v.size() / 2;
  return {v.size() % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2, v.front(), v.back()};
}

} // namespace kiln::cli
